#!/usr/bin/env python3
"""Test vectors for the audit log's canonical form (docs/SPEC.md, "Audit log").

Written from the specification alone, with Python's standard library (hashlib
for SHA-256, struct for the f64 bit patterns), so that the vectors do not come
from the Rust implementation they check. Run from anywhere:

    python3 gen_vectors.py

It (re)writes, beside itself:

- vectors.json: each entry's inputs, its canonical form (as text and as the hex
  of its UTF-8 bytes), the previous hash and the entry's hash, and the seal of
  the whole chain;
- vectors.jsonl: the same entries as a log file, one line per entry.

Both files are deterministic: running the script again leaves them unchanged.
"""

import hashlib
import json
import math
import os
import struct

GENESIS = bytes(32)

# The entries of the chain, in order. Floats are given as Python floats; their
# bit patterns are what the canonical form carries.
ENTRIES = [
    {
        "time_ms": 1764460800000,
        "event": "decision",
        "endpoint": "api.example.com/v1/chat",
        "attempt": 1,
        "class": "http-429",
        "retry": True,
        "p": 0.75,
        "ev": 6.5,
        "reason": "positive_expected_value",
    },
    {
        "time_ms": 1764460800250,
        "event": "outcome",
        "endpoint": "api.example.com/v1/chat",
        "attempt": 1,
        "class": "http-429",
        "success": True,
    },
    {
        "time_ms": 1764460801000,
        "event": "decision",
        "endpoint": "api.example.com/v1/chat",
        "attempt": 2,
        "class": "http-500",
        "retry": False,
        "p": 0.1,
        "ev": -2.0 / 3.0,
        "reason": "negative_expected_value",
    },
    {
        "time_ms": 1764460802000,
        "event": "decision",
        "endpoint": "db",
        "attempt": 5,
        "class": "timeout",
        "retry": False,
        "p": 0.0,
        "ev": 0.0,
        "reason": "max_attempts",
    },
    {"time_ms": 1764460803000, "event": "dropped", "count": 17},
    {
        "time_ms": 1764460804000,
        # every kind of character the escaping rule distinguishes
        "event": "decision",
        "endpoint": 'q"b\\t\tn\nz\x00u\x1fd\x7fé✓\U0001d11e\u2028/',
        "attempt": 3,
        "class": "quota-exhausted",
        "retry": True,
        "p": -0.0,
        "ev": 5e-324,
        "reason": "circuit_open",
    },
    {
        "time_ms": 0,
        "event": "outcome",
        "endpoint": "",
        "attempt": 4294967295,
        "class": "connection-refused",
        "success": False,
    },
    {
        "time_ms": 18446744073709551615,
        "event": "decision",
        "endpoint": "x",
        "attempt": 1,
        "class": "unknown",
        "retry": False,
        "p": math.nan,
        "ev": math.inf,
        "reason": "retry_after_beyond_limit",
    },
    {"time_ms": 10, "event": "dropped", "count": 18446744073709551615},
]

KEY_ORDER = {
    "decision": ["endpoint", "attempt", "class", "retry", "p", "ev", "reason"],
    "outcome": ["endpoint", "attempt", "class", "success"],
    "dropped": ["count"],
}
FLOATS = {"p", "ev"}


def f64_bits(value):
    """The IEEE 754 binary64 bit pattern, 16 lowercase hex digits."""
    return struct.pack(">d", value).hex()


def string(text):
    """A JSON string: only quote, backslash and bytes below 0x20 are escaped."""
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ord(ch) < 0x20:
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def value(key, v):
    if key in FLOATS:
        return '"' + f64_bits(v) + '"'
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        assert v >= 0
        return str(v)
    return string(v)


def canonical(seq, entry):
    fields = [("v", 1), ("seq", seq), ("time_ms", entry["time_ms"]), ("event", entry["event"])]
    fields += [(key, entry[key]) for key in KEY_ORDER[entry["event"]]]
    return "{" + ",".join('"%s":%s' % (k, value(k, v)) for k, v in fields) + "}"


def jsonable(entry):
    """The inputs as JSON: floats as their bit patterns and their repr."""
    out = {}
    for key, v in entry.items():
        if key in FLOATS:
            out[key + "_bits"] = f64_bits(v)
            out[key + "_repr"] = repr(v)
        else:
            out[key] = v
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    prev = GENESIS
    cases = []
    lines = []
    for seq, entry in enumerate(ENTRIES):
        text = canonical(seq, entry)
        data = text.encode("utf-8")
        digest = hashlib.sha256(prev + data).digest()
        cases.append(
            {
                "seq": seq,
                "input": jsonable(entry),
                "canonical": text,
                "canonical_utf8_hex": data.hex(),
                "prev": prev.hex(),
                "hash": digest.hex(),
            }
        )
        lines.append(text[:-1] + ',"hash":"' + digest.hex() + '"}\n')
        prev = digest
    doc = {
        "about": "audit log canonical form test vectors (docs/SPEC.md, Audit log); made by gen_vectors.py",
        "genesis": GENESIS.hex(),
        "entries": cases,
        "seal": "%d:%s" % (len(ENTRIES), prev.hex()),
    }
    with open(os.path.join(here, "vectors.json"), "w", encoding="utf-8", newline="\n") as f:
        json.dump(doc, f, ensure_ascii=True, indent=2)
        f.write("\n")
    with open(os.path.join(here, "vectors.jsonl"), "wb") as f:
        f.write("".join(lines).encode("utf-8"))


if __name__ == "__main__":
    main()
