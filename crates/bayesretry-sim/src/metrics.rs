//! The metrics of §6, computed from a run's log.

use serde::Serialize;

use crate::scenario::SECOND;
use crate::trace::{CallRecord, RunLog};

/// The metrics of one run over a set of calls (one endpoint, or all).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Metrics {
    /// C: calls.
    pub calls: u64,
    /// A: attempts.
    pub attempts: u64,
    /// S: successful calls.
    pub successes: u64,
    /// R: retries, the attempts after the first of each call (A − C, less the
    /// calls refused before their first attempt).
    pub retries: u64,
    /// S / C.
    pub success_rate: f64,
    /// A / C.
    pub amplification: f64,
    /// Retries that failed.
    pub wasted_retries: u64,
    /// Retries on calls that never succeeded.
    pub hopeless_retries: u64,
    /// Retries started before the server's Retry-After had expired (a count;
    /// [`retry_after_compliance`](Metrics::retry_after_compliance) is the share).
    pub retry_after_violations: u64,
    /// Calls ended by a local refusal (breaker or throttle).
    pub refused_calls: u64,
    /// S8: refused calls to the healthy shards.
    pub collateral_failures: u64,
    /// Completion time (waits included) of the calls: p50, ms.
    pub latency_p50_ms: f64,
    /// p99, ms.
    pub latency_p99_ms: f64,
    /// p99.9, ms.
    pub latency_p999_ms: f64,
    /// Brier score of the predicted success probability of each retry made.
    pub brier: Option<f64>,
    /// S4/S5: seconds from the outage start until the retry rate fell below
    /// 10 % of a retry-everything rate (outage length when it never did).
    pub time_to_detect_s: Option<f64>,
}

impl Metrics {
    /// Net value `V·S − c·A` per 1000 calls, c = 1.
    pub fn net_value(&self, value: f64) -> f64 {
        if self.calls == 0 {
            return 0.0;
        }
        let v = (value * self.successes as f64 - self.attempts as f64) / self.calls as f64;
        v * 1000.0
    }

    /// Retry-After compliance: the share of retries issued early (goal 0).
    pub fn retry_after_compliance(&self) -> f64 {
        if self.retries == 0 {
            return 0.0;
        }
        self.retry_after_violations as f64 / self.retries as f64
    }
}

/// An outage window to measure detection against: [start, end) in us.
pub(crate) type Window = (u64, u64);

/// What [`compute`] needs of a group of calls (every call, or one
/// endpoint's) besides the log: the Brier sums of its retries, and the outage
/// window time to detect is measured in, if any.
pub(crate) struct Group {
    pub(crate) brier: (f64, u64),
    pub(crate) outage: Option<Window>,
}

/// The metrics of every finished call (`pooled`) and of the finished calls
/// of each endpoint (`endpoints[i]` for endpoint `i`; none listed for a
/// scenario of one endpoint), with `collateral` marking the calls whose
/// refusals are collateral.
///
/// One pass over the log for all the groups, not one per group: S0 has seven
/// over its 6 000 calls, pooled and per endpoint. The pooled counts are the
/// sums of the endpoints' (and of the calls of no listed endpoint), integers
/// added exactly; its completion times are theirs together, the same values
/// in another order, so the same quantiles.
pub(crate) fn compute(
    log: &RunLog,
    pooled: Group,
    endpoints: &[Group],
    max_attempts: u32,
    collateral: impl Fn(&CallRecord) -> bool,
) -> (Metrics, Vec<Metrics>) {
    // one tally per endpoint, and a last one for calls of no listed endpoint
    let mut tallies: Vec<Tally> = (0..=endpoints.len()).map(|_| Tally::default()).collect();
    let others = endpoints.len();
    for rec in log.calls.iter().filter(|r| r.done) {
        let at = usize::from(rec.endpoint).min(others);
        if let Some(tally) = tallies.get_mut(at) {
            tally.add(rec, &collateral);
        }
    }
    let mut all = Tally {
        latencies: Vec::with_capacity(tallies.iter().map(|t| t.latencies.len()).sum()),
        ..Tally::default()
    };
    for tally in &tallies {
        all.merge(tally);
    }
    let mut per_endpoint = Vec::with_capacity(endpoints.len());
    for (i, (group, tally)) in endpoints.iter().zip(tallies).enumerate() {
        let mut m = tally.finish(group.brier);
        if let Some(window) = group.outage {
            let ep = u8::try_from(i).unwrap_or(u8::MAX);
            let filter = |r: &CallRecord| r.endpoint == ep;
            // as `compute`: no time to detect for an endpoint without a call
            if log.calls.iter().any(filter) {
                m.time_to_detect_s = Some(time_to_detect(log, ep, &filter, window, max_attempts));
            }
        }
        per_endpoint.push(m);
    }
    let mut m = all.finish(pooled.brier);
    if let Some(window) = pooled.outage {
        let filter = |_: &CallRecord| true;
        m.time_to_detect_s = log
            .calls
            .first()
            .map(|r| time_to_detect(log, r.endpoint, &filter, window, max_attempts));
    }
    (m, per_endpoint)
}

/// The counts of a group of calls and their completion times (microseconds),
/// before the rates and the quantiles.
#[derive(Default)]
struct Tally {
    m: Metrics,
    latencies: Vec<u64>,
}

impl Tally {
    /// Counts one finished call.
    #[inline]
    fn add(&mut self, rec: &CallRecord, collateral: &impl Fn(&CallRecord) -> bool) {
        let m = &mut self.m;
        m.calls += 1;
        m.attempts += u64::from(rec.attempts);
        let retries = u64::from(rec.attempts.saturating_sub(1));
        m.retries += retries;
        m.wasted_retries += u64::from(rec.failed_retries);
        m.retry_after_violations += u64::from(rec.early_retries);
        if rec.success {
            m.successes += 1;
        } else {
            m.hopeless_retries += retries;
        }
        if rec.refused {
            m.refused_calls += 1;
            if collateral(rec) {
                m.collateral_failures += 1;
            }
        }
        self.latencies
            .push(rec.end_us.saturating_sub(rec.arrival_us));
    }

    /// Adds `other`'s calls to these.
    fn merge(&mut self, other: &Tally) {
        let (m, o) = (&mut self.m, &other.m);
        m.calls += o.calls;
        m.attempts += o.attempts;
        m.retries += o.retries;
        m.wasted_retries += o.wasted_retries;
        m.retry_after_violations += o.retry_after_violations;
        m.successes += o.successes;
        m.hopeless_retries += o.hopeless_retries;
        m.refused_calls += o.refused_calls;
        m.collateral_failures += o.collateral_failures;
        self.latencies.extend_from_slice(&other.latencies);
    }

    /// The metrics: the counts, their rates, the completion-time quantiles,
    /// and the Brier score of `brier`'s sums.
    fn finish(mut self, brier: (f64, u64)) -> Metrics {
        let mut m = self.m;
        if m.calls > 0 {
            let c = m.calls as f64;
            m.success_rate = m.successes as f64 / c;
            m.amplification = m.attempts as f64 / c;
        }
        let [p50, p99, p999] = quantiles(&mut self.latencies, [0.5, 0.99, 0.999]);
        m.latency_p50_ms = p50 as f64 / 1000.0;
        m.latency_p99_ms = p99 as f64 / 1000.0;
        m.latency_p999_ms = p999 as f64 / 1000.0;
        if brier.1 > 0 {
            m.brier = Some(brier.0 / brier.1 as f64);
        }
        m
    }
}

/// The nearest-rank quantiles at `ps` (ascending) of `values`, which it
/// reorders: selections in linear time, not a sort (a run's metrics take three
/// quantiles of each group of calls: S0 has seven, pooled and per endpoint).
///
/// The values are the calls' completion times in whole microseconds, selected
/// as integers and turned into milliseconds only once selected: `us as f64 /
/// 1000.0` never decreases as `us` grows, so the rank's integer maps to the very
/// float a selection among the floats would have found, at the cost of integer
/// comparisons. Each selection after the first searches only the values above
/// the previous rank, which the previous selection has already gathered there.
fn quantiles<const N: usize>(values: &mut [u64], ps: [f64; N]) -> [u64; N] {
    let mut out = [0; N];
    let n = values.len();
    if n == 0 {
        return out;
    }
    // the index selected last, and its value: every value after it is at least
    // that value, and every value before it at most
    let mut last: Option<(usize, u64)> = None;
    for (p, q) in ps.into_iter().zip(out.iter_mut()) {
        let index = ((p * n as f64).ceil() as usize).clamp(1, n) - 1;
        let from = match last {
            Some((at, value)) if index <= at => {
                // the same rank again (or, for a `ps` out of order, a lower
                // one, which a selection of the whole slice answers)
                if index == at {
                    *q = value;
                    continue;
                }
                0
            }
            Some((at, _)) => at + 1,
            None => 0,
        };
        let Some(rest) = values.get_mut(from..) else {
            break;
        };
        let value = *rest.select_nth_unstable(index - from).1;
        *q = value;
        last = Some((index, value));
    }
    out
}

/// Bin width of the detection measure.
const DETECT_BIN_US: u64 = 2 * SECOND;
/// Consecutive quiet bins that make a detection.
const DETECT_BINS: u64 = 3;

/// Seconds from the window's start to the end of the first bin of
/// [`DETECT_BINS`] consecutive 2-second bins in which the endpoint's retries
/// stayed below 10 % of `(max_attempts − 1) ×` its first tries (the rate of a
/// policy that retries every failure), or to the end of the bin in which the
/// client's breaker for the endpoint was first seen open, whichever is
/// sooner; the window's length if neither happens.
fn time_to_detect(
    log: &RunLog,
    endpoint: u8,
    filter: &impl Fn(&CallRecord) -> bool,
    window: Window,
    max_attempts: u32,
) -> f64 {
    let (start, end) = window;
    let bins = (end.saturating_sub(start) / DETECT_BIN_US).max(1);
    let len = usize::try_from(bins).unwrap_or(0);
    let mut retries = vec![0_u64; len];
    let mut firsts = vec![0_u64; len];
    let bin_of = |t: u64| -> Option<usize> {
        if t < start || t >= end {
            return None;
        }
        usize::try_from((t - start) / DETECT_BIN_US).ok()
    };
    for &(t, ep) in &log.retries {
        if ep == endpoint {
            if let Some(b) = bin_of(t).and_then(|b| retries.get_mut(b)) {
                *b += 1;
            }
        }
    }
    for rec in log.calls.iter().filter(|r| filter(r)) {
        if let Some(b) = bin_of(rec.arrival_us).and_then(|b| firsts.get_mut(b)) {
            *b += 1;
        }
    }
    // a breaker seen open in the window detects at the end of its bin, on the
    // measure's own 2-second grid
    let opened = log
        .breaker_opens
        .iter()
        .filter(|&&(t, ep)| ep == endpoint && t >= start && t < end)
        .map(|&(t, _)| ((t - start) / DETECT_BIN_US + 1) as f64 * DETECT_BIN_US as f64 / 1e6)
        .fold(f64::INFINITY, f64::min);
    let extra = u64::from(max_attempts.saturating_sub(1)).max(1);
    let quiet: Vec<bool> = retries
        .iter()
        .zip(&firsts)
        .map(|(&r, &f)| 10 * r < extra * f || (r == 0))
        .collect();
    let need = usize::try_from(DETECT_BINS).unwrap_or(3);
    for (i, w) in quiet.windows(need).enumerate() {
        if w.iter().all(|&q| q) {
            let t = (i as f64 + 1.0) * DETECT_BIN_US as f64 / 1e6;
            return t.min(opened);
        }
    }
    (end.saturating_sub(start) as f64 / 1e6).min(opened)
}

/// Successes and calls per arrival second, for the recovery measure.
pub fn success_by_second(log: &RunLog, filter: impl Fn(&CallRecord) -> bool) -> Vec<(u32, u32)> {
    let mut bins: Vec<(u32, u32)> = Vec::new();
    for rec in log.calls.iter().filter(|r| r.done && filter(r)) {
        let Ok(s) = usize::try_from(rec.arrival_us / SECOND) else {
            continue;
        };
        if s >= 100_000 {
            continue;
        }
        if bins.len() <= s {
            bins.resize(s + 1, (0, 0));
        }
        if let Some(b) = bins.get_mut(s) {
            b.0 += u32::from(rec.success);
            b.1 += 1;
        }
    }
    bins
}

/// Seconds from `end_s` (the outage end) until the policy's success rate over
/// the calls that arrived in the last 10 s (since the outage end) is within 5
/// points of the oracle's; the rest of the run if never.
pub fn time_to_recover(policy: &[(u32, u32)], oracle: &[(u32, u32)], end_s: usize) -> f64 {
    let horizon = policy.len().max(oracle.len());
    let rate = |bins: &[(u32, u32)], from: usize, to: usize| -> Option<f64> {
        let (s, c) = bins
            .get(from..to.min(bins.len()))
            .unwrap_or(&[])
            .iter()
            .fold((0_u32, 0_u32), |(s, c), b| (s + b.0, c + b.1));
        (c > 0).then(|| f64::from(s) / f64::from(c))
    };
    for t in end_s + 1..=horizon {
        let from = end_s.max(t.saturating_sub(10));
        if let (Some(p), Some(o)) = (rate(policy, from, t), rate(oracle, from, t)) {
            if p >= o - 0.05 {
                let secs = (t - end_s) as f64;
                return secs;
            }
        }
    }
    horizon.saturating_sub(end_s) as f64
}

#[cfg(test)]
mod tests {
    use super::{DETECT_BIN_US, quantiles, time_to_detect};
    use crate::scenario::SECOND;
    use crate::trace::{CallRecord, RunLog};

    #[test]
    fn the_quantiles_are_the_nearest_ranks_of_the_sorted_values() {
        // many ties, as completion times have, and sizes around the ranks' edges
        let mut word = 7_u64;
        for n in [1_usize, 2, 3, 99, 100, 101, 999, 1000, 1001, 6000] {
            let mut values: Vec<u64> = (0..n)
                .map(|_| {
                    word = crate::luck::mix64(word);
                    20_000 + word % 700
                })
                .collect();
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let ps = [0.5, 0.99, 0.999];
            let expected = ps.map(|p| sorted[((p * n as f64).ceil() as usize).clamp(1, n) - 1]);
            assert_eq!(quantiles(&mut values, ps), expected, "n = {n}");
        }
        assert_eq!(quantiles(&mut [], [0.5, 0.99]), [0, 0]);
        // out of order, a lower rank after a higher one
        assert_eq!(quantiles(&mut [5, 1, 4, 2, 3], [0.9, 0.2, 0.2]), [5, 1, 1]);
    }

    /// An endpoint with ten calls a second over a 20 s window from 100 s, each
    /// retried three times: never quiet by its retries.
    fn busy_log() -> RunLog {
        let mut log = RunLog::new(0);
        for i in 0..200_u64 {
            let t = 100 * SECOND + i * SECOND / 10;
            log.calls.push(CallRecord {
                endpoint: 4,
                arrival_us: t,
                done: true,
                ..CallRecord::default()
            });
            for k in 1..=3 {
                log.retries.push((t + k, 4));
            }
        }
        log
    }

    fn detect(log: &RunLog) -> f64 {
        time_to_detect(
            log,
            4,
            &|r: &CallRecord| r.endpoint == 4,
            (100 * SECOND, 120 * SECOND),
            4,
        )
    }

    #[test]
    fn a_breaker_seen_open_detects_at_the_end_of_its_bin() {
        let mut log = busy_log();
        assert_eq!(detect(&log), 20.0, "retries alone never go quiet");
        // an opening before the window, or on another endpoint, says nothing
        log.breaker_opens.push((99 * SECOND, 4));
        log.breaker_opens.push((101 * SECOND, 3));
        assert_eq!(detect(&log), 20.0);
        log.breaker_opens
            .push((100 * SECOND + DETECT_BIN_US + SECOND / 2, 4));
        assert_eq!(detect(&log), 4.0);
        log.breaker_opens.push((100 * SECOND + SECOND / 2, 4));
        assert_eq!(detect(&log), 2.0);
    }

    #[test]
    fn quiet_retries_detect_before_a_later_opening() {
        let mut log = busy_log();
        // retries stop from 104 s on
        log.retries.retain(|&(t, _)| t < 104 * SECOND);
        log.breaker_opens.push((110 * SECOND, 4));
        assert_eq!(detect(&log), 6.0);
    }
}
