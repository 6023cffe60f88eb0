// Loads the edge build of BayesRetry's core (wasm32-unknown-unknown, no_std) in
// Node and checks that it makes the decisions it makes natively.
// Usage: node wasm-smoke/smoke.mjs MODULE.wasm [--max-bytes N]
// With --max-bytes, a module larger than N bytes fails the check.
import { readFileSync } from "node:fs";
import assert from "node:assert/strict";

const [path, flag, limit] = process.argv.slice(2);
const maxBytes = flag === "--max-bytes" ? Number(limit) : Infinity;
if (!path || (flag !== undefined && !(maxBytes > 0))) {
  console.error("usage: node smoke.mjs MODULE.wasm [--max-bytes N]");
  process.exit(64);
}
const { instance } = await WebAssembly.instantiate(readFileSync(path), {});
const w = instance.exports;
const close = (actual, expected, tol, what) =>
  assert.ok(Math.abs(actual - expected) <= tol, `${what}: ${actual} is not within ${tol} of ${expected}`);

// The special functions: I_0.5(2, 3) is 11/16 exactly, and the quantile inverts it.
close(w.smoke_inc_beta(0.5, 2, 3), 11 / 16, 1e-15, "I_0.5(2, 3)");
close(w.smoke_quantile(2, 3, 11 / 16), 0.5, 1e-14, "quantile of Beta(2, 3) at 11/16");
assert.ok(Number.isNaN(w.smoke_inc_beta(0.5, -1, 3)), "a negative shape is NaN, not a trap");

// Learning: 429s that recover are worth retrying, 500s that do not are not.
w.smoke_reset();
for (let i = 0; i < 18; i++) w.smoke_observe(429, 1, 1);
for (let i = 0; i < 2; i++) w.smoke_observe(429, 1, 0);
for (let i = 0; i < 1; i++) w.smoke_observe(500, 1, 1);
for (let i = 0; i < 19; i++) w.smoke_observe(500, 1, 0);
assert.equal(w.smoke_decide(429, 1, 10, 1), 1, "a 429 that recovers is retried");
close(w.smoke_last_probability(), 19 / 22, 1e-12, "P(success) after 18 of 20 429s recovered");
assert.equal(w.smoke_last_reason(), 1, "retried for a positive expected value");
assert.equal(w.smoke_decide(500, 1, 10, 1), 0, "a 500 that does not recover is not retried");
close(w.smoke_last_probability(), 2 / 22, 1e-12, "P(success) after 1 of 20 500s recovered");
assert.equal(w.smoke_last_reason(), 2, "stopped for a negative expected value");
assert.equal(w.smoke_decide(500, 1, 1000, 1), 1, "a success worth 1000 attempts is worth a 9 % chance");
assert.equal(w.smoke_decide(429, 4, 10, 1), 0, "the fourth failure hits the attempt cap");
assert.equal(w.smoke_last_reason(), 3, "stopped by the attempt cap");
assert.equal(w.smoke_decide(429, 1, -1, 1), -1, "a negative success value is refused");

// The breaker: a run of failures opens a fresh default breaker at the 58th, the
// first at which the 95 % upper bound of Beta(1, 1 + n) falls below 5 %; and a
// successful probe after the cooldown closes it again.
assert.equal(w.smoke_breaker_failures_to_open(200), 58, "the default breaker opens at the 58th failure");
assert.equal(w.smoke_breaker_failures_to_open(57), 58, "57 failures leave it closed");
assert.equal(w.smoke_breaker_recovers(), 1, "a probe's success closes the breaker");

// The budget: 5 per window lets exactly 5 of 8 retries through.
assert.equal(w.smoke_budget_spent(5, 8), 5);

// The backoff: 200 ms doubling, capped at 10 s.
assert.deepEqual([1, 2, 3, 8].map((n) => w.smoke_backoff_ms(n)), [200, 400, 800, 10000]);

// Decay: one half-life leaves half the evidence.
close(w.smoke_decay_factor(1000, 1000), 0.5, 1e-15, "decay over one half-life");

const size = readFileSync(path).length;
assert.ok(size <= maxBytes, `the module is ${size} bytes, over the limit of ${maxBytes}`);
console.log(`wasm smoke test passed: ${size} bytes (${(size / 1024).toFixed(1)} KiB)`);
