"""SPEC §11.4's reference verifier must reject what §11.2 says is not an entry
(and what the Rust Verifier rejects), and accept the test vectors.

Run: python3 crates/bayesretry-audit/tests/data/test_spec_reference_verifier.py
(`cargo xtask ci` runs it). Standard library only; exits non-zero on failure."""
import hashlib, json, os, re, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = os.path.join(HERE, "..", "..", "..", "..", "docs", "SPEC.md")

spec = open(SPEC, encoding="utf-8").read()
code = re.search(r"A reference verifier in Python.*?```python\n(.*?)```", spec, re.S).group(1)
ns = {}
exec(code, ns)

def line_for(fields):
    # a line built without the reference's canonical(): the fields in the
    # order given, compact JSON, and a valid hash, whatever the values
    c = json.dumps(fields, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    h = hashlib.sha256(bytes(32) + c).hexdigest()
    return c[:-1] + b',"hash":"' + h.encode() + b'"}\n'

def verify_line(line):
    with tempfile.NamedTemporaryFile("wb", delete=False, suffix=".jsonl") as f:
        f.write(line)
    try:
        return ns["verify"](f.name)
    finally:
        os.unlink(f.name)

base = {"v": 1, "seq": 0, "time_ms": 5, "event": "outcome", "endpoint": "e",
        "attempt": 1, "class": "c", "success": True}
bad = {
    "attempt > 2^32-1": {**base, "attempt": 2**32},
    "time_ms > 2^64-1": {**base, "time_ms": 2**64},
    "seq > 2^64-1": {**base, "seq": 2**64},
    "success as 1": {**base, "success": 1},
    "attempt as true": {**base, "attempt": True},
    "time_ms as false": {**base, "time_ms": False},
    "endpoint as a number": {**base, "endpoint": 7},
    "class as null": {**base, "class": None},
    "v as true": {**base, "v": True},
    "v as 2": {**base, "v": 2},
    "event as a list": {**base, "event": ["outcome"]},
    "count as a string": {"v": 1, "seq": 0, "time_ms": 5, "event": "dropped", "count": "3"},
}
failures = []
# the builder's lines are entries when their values are
if verify_line(line_for(base)) != (1, hashlib.sha256(bytes(32) + json.dumps(
        base, separators=(",", ":")).encode()).hexdigest()):
    failures.append("a valid line is not read as one entry")
for name, fields in bad.items():
    try:
        verify_line(line_for(fields))
        failures.append("accepts " + name)
    except ValueError:
        pass
    except Exception as other:  # a crash is not a rejection
        failures.append("%s: %r" % (name, other))

# the test vectors verify, against their seal
vectors = json.load(open(os.path.join(HERE, "vectors.json"), encoding="utf-8"))
entries, head = vectors["seal"].split(":")
seal = (int(entries), head)
if ns["verify"](os.path.join(HERE, "vectors.jsonl"), seal) != seal:
    failures.append("the test vectors do not verify to their seal")

# rotated files (§11.6): each file after the first begins with the link to
# the end of the one before, and a link at entry 0 is to the genesis hash
def chain_lines(events, n, prev):
    # entries n, n+1, ... of `events` (dicts of the event fields), chained on prev
    out = []
    for fields in events:
        e = {"v": 1, "seq": n, "time_ms": 5, **fields, "hash": ""}
        c = ns["canonical"](e).encode("utf-8")
        h = hashlib.sha256(prev + c).digest()
        out.append(c[:-1] + b',"hash":"' + h.hex().encode() + b'"}\n')
        prev, n = h, n + 1
    return out, n, prev

def write_files(contents):
    paths = []
    for k, lines in enumerate(contents):
        with tempfile.NamedTemporaryFile("wb", delete=False, suffix=".%d.jsonl" % k) as f:
            f.write(b"".join(lines))
        paths.append(f.name)
    return paths

def rejects(contents):
    paths = write_files(contents)
    try:
        ns["verify_files"](paths)
        return False
    except ValueError:
        return True
    finally:
        for p in paths:
            os.unlink(p)

drop = {"event": "dropped", "count": 0}
first, n, prev = chain_lines([drop] * 4, 0, bytes(32))
second, n2, prev2 = chain_lines([{"event": "continues", "prev": prev.hex()}, drop], n, prev)
if rejects([first, second]):
    failures.append("a rotated pair does not verify")
if not rejects([first[:2], first[2:], second]):
    failures.append("accepts a file after the first with no link")
if not rejects([[], second]):
    failures.append("accepts a file linked elsewhere after an empty first file")
forged, _, _ = chain_lines([{"event": "continues", "prev": "07" * 32}, drop], 0, bytes.fromhex("07" * 32))
if not rejects([forged]):
    failures.append("accepts a link at entry 0 to another hash than the genesis hash")
rooted, _, _ = chain_lines([{"event": "continues", "prev": "00" * 32}, drop], 0, bytes(32))
if rejects([rooted]):
    failures.append("refuses a link at entry 0 to the genesis hash")

if failures:
    sys.exit("reference verifier (docs/SPEC.md §11.4): " + "; ".join(failures))
print("ok: the reference verifier accepts the vectors and rejects %d malformed entries" % len(bad))
