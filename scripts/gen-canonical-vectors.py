#!/usr/bin/env python3
"""Regenerate crates/wire/tests/data/ from jevkit's reference implementation.

The reference is package jevkit-core (module jevkit_core/canonical.py and
jevkit_core/record.py); these vectors were made with jevkit-core 0.2.0 on
CPython 3.11. Run it from the repository root, in a throwaway virtualenv:

    python3 -m venv /tmp/jk && /tmp/jk/bin/pip install jevkit-core==0.2.0
    /tmp/jk/bin/python scripts/gen-canonical-vectors.py

It writes, deterministically (fixed seed):

- canonical_vectors.json: input JSON text -> canonical text and digest, plus
  request digests (model, state, questions) -> record_id / request_id;
- float_reprs.txt: "<f64 bits as 16 hex digits> <Python repr>" per line;
- records.jevl: records written by jevkit_core.write_records;
- record_digests.json: per line of records.jevl, the ids jevkit computes.
"""

from __future__ import annotations

import json
import math
import platform
import random
import struct
import sys
from importlib import metadata
from pathlib import Path

from jevkit_core import canonical as jk
from jevkit_core.record import Record, read_records, write_records

OUT = Path("crates/wire/tests/data")
SEED = 20260919


def python_canonical(value):
    """The form jevkit claims is RFC 8785; checked to equal what it really does."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=False)


def vector(name: str, text: str) -> dict:
    value = json.loads(text)
    canonical = jk.canonical_json(value).decode("utf-8")
    assert canonical == python_canonical(value), name
    return {"name": name, "input": text, "canonical": canonical,
            "digest": jk.digest(value)}


# Inputs are JSON text. Each must parse to the same value in Python and in
# serde_json (so: no integers beyond 64 bits, no `-0`, no lone surrogates;
# those are documented limitations of the Rust side).
CASES: list[tuple[str, str]] = [
    ("spec example floats", "[1e-7, 1.0, 1e21]"),
    ("1e-7", "1e-7"),
    ("1e-5", "1e-5"),
    ("1.5e-5", "1.5e-5"),
    ("0.0001", "0.0001"),
    ("0.00012345", "0.00012345"),
    ("0.001", "0.001"),
    ("1e15", "1e15"),
    ("1e15 plus digits", "1234567890123456.7"),
    ("9999999999999998.0", "9999999999999998.0"),
    ("1e16", "1e16"),
    ("1.2345e16", "1.2345e16"),
    ("1e21", "1e21"),
    ("1e22", "1e22"),
    ("1e23", "1e23"),
    ("1e100", "1e100"),
    ("1.5e300", "1.5e300"),
    ("5e-324 smallest subnormal", "5e-324"),
    ("2.2250738585072014e-308 smallest normal", "2.2250738585072014e-308"),
    ("1.7976931348623157e308 largest", "1.7976931348623157e308"),
    ("-1.7976931348623157e308", "-1.7976931348623157e308"),
    ("0.1 + 0.2", "0.30000000000000004"),
    ("0.1", "0.1"),
    ("1/3", "0.3333333333333333"),
    ("2/3", "0.6666666666666666"),
    ("100.0", "100.0"),
    ("100 as exponent float", "1E2"),
    ("-0.0", "-0.0"),
    ("0.0", "0.0"),
    ("0.5", "0.5"),
    ("-2.5e-5", "-2.5e-5"),
    ("123456789.123", "123456789.123"),
    ("float with many input digits", "0.1000000000000000055511151231257827"),
    ("probabilities", "{\"yes\": 0.73, \"no\": 0.27000000000000002}"),
    ("integer 0", "0"),
    ("integer -1", "-1"),
    ("integer 1 vs float 1.0", "[1, 1.0]"),
    ("u64::MAX", "18446744073709551615"),
    ("i64::MAX", "9223372036854775807"),
    ("i64::MIN", "-9223372036854775808"),
    ("2^53 + 1", "9007199254740993"),
    ("mixed integers", "[0, -1, 18446744073709551615, -9223372036854775808, 42]"),
    ("true false null", "[true, false, null]"),
    ("empty object", "{}"),
    ("empty array", "[]"),
    ("empty string", "\"\""),
    ("astral key vs U+FF61", "{\"\\ud83d\\ude00\": 1, \"\\uff61\": 2}"),
    ("keys by code point", "{\"b\": 1, \"a\": 2, \"B\": 3, \"\\u00e9\": 4, \"aa\": 5, \"\": 6, \"\\ud800\\udc00\": 7, \"\\uffff\": 8}"),
    ("key order independent", "{\"z\": 1, \"m\": {\"y\": 2, \"x\": 3}, \"a\": [ {\"d\": 4, \"c\": 5} ]}"),
    ("duplicate keys last wins", "{\"k\": 1, \"k\": 2}"),
    ("control characters", "\"\\u0000\\u0001\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u001b\\u001f\""),
    ("quote and backslash", "\"say \\\"hi\\\" \\\\ there /\""),
    ("solidus escape in input", "\"a\\/b\""),
    ("DEL U+2028 U+2029 raw", "\"\\u007f \\u2028 \\u2029\""),
    ("C1 control raw", "\"\\u0080\\u009f\""),
    ("unicode strings", "[\"h\\u00e9llo\", \"\\u65e5\\u672c\\u8a9e\", \"\\u0645\\u0631\\u062d\\u0628\\u0627\", \"\\ud83d\\ude00\\ud83d\\udc4d\\ud83c\\udffd\", \"e\\u0301\"]"),
    ("BOM and noncharacters", "\"\\ufeff\\ufffe\\uffff\\udbff\\udfff\""),
    ("control chars in keys", "{\"a\\nb\": 1, \"a\\u0001\": 2, \"a\": 3}"),
    ("nested", "{\"outer\": {\"inner\": [1, 2.5, {\"deep\": [null, true, \"x\"]}], \"b\": {}}, \"a\": [[[]]]}"),
    ("refund review request",
     "{\"model\": \"jev-1-2026-09\", \"state\": {\"ticket\": \"Refund please \\u2014 order #123\", \"amount\": 49.99, \"items\": 2},"
     " \"questions\": {\"refund_ok\": {\"type\": \"noul\", \"instructions\": \"Is a refund allowed?\"},"
     " \"tone\": {\"type\": \"choice\", \"instructions\": \"Tone?\", \"criteria\": {\"calm\": \"\", \"angry\": \"\"}}}}"),
    ("top-level string", "\"plain\""),
    ("top-level float", "3.14"),
]


# (name, model or None, state JSON text, questions JSON text)
REQUESTS: list[tuple[str, str | None, str, str]] = [
    ("simple with model", "jev-1-2026-09", "\"The customer asked for a refund.\"",
     "{\"ok\": {\"type\": \"noul\", \"instructions\": \"Refund allowed?\"}}"),
    ("simple without model", None, "\"The customer asked for a refund.\"",
     "{\"ok\": {\"type\": \"noul\", \"instructions\": \"Refund allowed?\"}}"),
    ("alias model", "jev-latest", "{\"a\": 1.0, \"b\": 1, \"\\ud83d\\ude00\": -0.0, \"\\uff61\": 1e-7}",
     "{\"z\": {\"type\": \"score\", \"instructions\": \"How much?\", \"criteria\": [\"low\", \"high\"]},"
     " \"a\": {\"type\": \"choice\", \"instructions\": \"Which?\", \"criteria\": {\"x\": \"\", \"y\": \"line\\nbreak\"}}}"),
    ("state is an array", "jev-preview", "[{\"role\": \"user\", \"content\": \"hi\\u2028there\"}, 1e16, 0.0001]",
     "{\"q\": {\"type\": \"noul\", \"instructions\": \"\\u0000?\"}}"),
    ("state is null", None, "null", "{}"),
    ("model with escapes", "jev\"odd\\name\u00e9", "{}", "{\"q\": {}}"),
]


def float_samples(rng: random.Random) -> list[float]:
    out: list[float] = []
    # Powers of ten and their neighbours, across the whole range.
    for e in range(-325, 309):
        for text in (f"1e{e}", f"9.999999999999999e{e}", f"1.5e{e}", f"2.2250738585072014e{e}"):
            x = float(text)
            if math.isfinite(x):
                out.append(x)
    # The positional/scientific boundaries.
    for x in (1e-5, 9.99999e-5, 0.0001, 0.00010000000000000002, 1e15, 9999999999999998.0,
              1e16, 1.0000000000000002e16, 123456789012345678.0):
        out.append(x)
        out.append(-x)
        out.append(math.nextafter(x, 0.0))
        out.append(math.nextafter(x, math.inf))
    # Subnormals and extremes.
    out += [5e-324, 1e-323, 2.225073858507201e-308, 2.2250738585072014e-308,
            1.7976931348623157e308, 0.0, -0.0]
    # Short decimals and integers as floats.
    for _ in range(600):
        digits = rng.randint(1, 17)
        mantissa = rng.randint(0, 10**digits - 1)
        exp = rng.randint(-30, 30)
        out.append(float(f"{mantissa}e{exp}"))
    for _ in range(200):
        out.append(float(rng.randint(-(2**60), 2**60)))
    # Uniform random bit patterns, finite only.
    while len(out) < 4000:
        (x,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
        if math.isfinite(x):
            out.append(x)
    # Drop repeats (by bit pattern, so 0.0 and -0.0 both stay), keeping the order.
    seen: set[bytes] = set()
    unique = []
    for x in out:
        key = struct.pack("<d", x)
        if key not in seen:
            seen.add(key)
            unique.append(x)
    return unique


def records() -> list[Record]:
    refund_state = "Ticket 4411: the parcel arrived broken \u2014 customer wants a refund. \U0001F61E"
    refund_questions = {
        "refund_ok": {"type": "noul", "instructions": "Does policy allow a refund?"},
        "tone": {"type": "choice", "instructions": "Tone of the reply?",
                 "criteria": {"calm": "polite and calm", "angry": "hostile"}},
    }

    def refund(noul, choice, probabilities, confidence, ts) -> Record:
        """The refund request (asked for jev-latest), answered as given."""
        return Record(model="jev-1-2026-09", state=refund_state, questions=refund_questions,
                      answers={"refund_ok": {"type": "noul", "noul": noul},
                               "tone": {"type": "choice", "choice": choice,
                                        "probabilities": probabilities,
                                        "confidence": confidence}},
                      ts=ts,
                      usage={"input_tokens": 58, "output_tokens": 4},
                      meta={"requested_model": "jev-latest"})

    return [
        refund(0.8807970779778823, "calm", {"calm": 0.97, "angry": 0.03}, 0.94,
               "2026-09-19T19:40:00Z"),
        Record(model="jev-1-2026-09",
               state={"amount": 49.99, "items": 2, "ratio": 1e-7, "big": 1e16, "neg_zero": -0.0,
                      "\U0001F600": "astral", "\uff61": "halfwidth", "ctl": "a\u0001b\u2028c"},
               questions={"score_q": {"type": "score", "instructions": "How severe?",
                                      "criteria": ["none", "minor", "major"]}},
               answers={"score_q": {"type": "score", "score": 1.25,
                                    "probabilities": {"0": 0.05, "1": 0.65, "2": 0.3}}},
               ts="2026-09-19T19:41:07Z",
               label={"score_q": 1},
               tags=["golden", "severity"]),
        Record(model="jev-preview-2026-10", state="Hand-made fixture state.",
               questions={"q": {"type": "noul", "instructions": "Is it fine?"}},
               answers={"q": {"type": "noul", "noul": 0.25}},
               ts="2026-10-01T08:00:00Z",
               meta={"fixture": True, "note": "written by hand"}),
        Record(model="jev-1-2026-09", state={"nested": {"b": [1, 2.0], "a": None}},
               questions={"q": {"type": "noul", "instructions": "Nested?"}},
               answers={"q": {"type": "noul", "noul": 1.0}},
               ts="2026-09-20T00:00:00Z",
               extra={"x_source": {"tool": "other", "version": 3}, "x_flag": True}),
        # Same request as the first line, recorded again: lookups take this one.
        refund(0.11920292202211755, "angry", {"calm": 0.4, "angry": 0.6}, 0.2,
               "2026-09-21T10:00:00Z"),
    ]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    rng = random.Random(SEED)
    generator = (f"jevkit-core {metadata.version('jevkit-core')} "
                 f"(jevkit_core.canonical), {platform.python_implementation()} "
                 f"{platform.python_version()}")

    vectors = [vector(name, text) for name, text in CASES]
    request_vectors = []
    for name, model, state_text, questions_text in REQUESTS:
        state = json.loads(state_text)
        questions = json.loads(questions_text)
        digest = (jk.record_id(model, state, questions) if model is not None
                  else jk.request_id(state, questions))
        request_vectors.append({"name": name, "model": model, "state": state_text,
                                "questions": questions_text, "digest": digest})
    doc = {"generator": generator, "vectors": vectors, "request_digests": request_vectors}
    (OUT / "canonical_vectors.json").write_text(
        json.dumps(doc, indent=1, ensure_ascii=True) + "\n", encoding="utf-8")

    lines = []
    for x in float_samples(rng):
        (bits,) = struct.unpack("<Q", struct.pack("<d", x))
        assert json.dumps(x) == repr(x)
        lines.append(f"{bits:016x} {x!r}\n")
    (OUT / "float_reprs.txt").write_text(
        f"# f64 bits -> Python repr; {generator}\n" + "".join(lines), encoding="utf-8")

    path = OUT / "records.jevl"
    write_records(path, records())
    digests = []
    for line_no, rec in enumerate(read_records(path), start=1):
        requested = rec.meta.get("requested_model", rec.model)
        digests.append({"line": line_no, "record_id": rec.id, "request_id": rec.request_id,
                        "requested_model": requested,
                        "requested_digest": jk.record_id(requested, rec.state, rec.questions)})
    (OUT / "record_digests.json").write_text(
        json.dumps({"generator": generator, "records": digests}, indent=1) + "\n",
        encoding="utf-8")
    print(f"wrote {len(vectors)} vectors, {len(request_vectors)} request digests, "
          f"{len(lines)} floats, {len(digests)} records", file=sys.stderr)


if __name__ == "__main__":
    main()
