#!/usr/bin/env python3
"""Writes the hand-made FIXTURE records under examples/ (judge-contract.md F1, F2, F3).

These records are not a model's answers: each carries "meta": {"fixture": true}, and every
jevjudge output made from them says "fixture". The request of each record is exactly what a
jevjudge review sends (the definition's noul questions, in order, and the state), and its id
is jevkit's digest: sha256 of Python's json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=False, allow_nan=False) of {"model", "state", "questions"}.

Run from the repository root: python3 scripts/make-fixtures.py
"""
import hashlib
import json
import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
TS = "2026-11-30T00:00:00Z"


def canonical(value):
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def questions_of(definition_path):
    definition = tomllib.loads(definition_path.read_text(encoding="utf-8"))
    questions = {}
    for criterion in definition["criteria"]:
        question = {"type": "noul", "instructions": criterion["question"]["instructions"]}
        if criterion["question"].get("criteria"):
            question["criteria"] = criterion["question"]["criteria"]
        questions[criterion["id"]] = question
    return questions


def record(model, state, questions, values, note):
    digest = hashlib.sha256(canonical({"model": model, "state": state, "questions": questions}).encode()).hexdigest()
    return {
        "v": 1,
        "id": "sha256:" + digest,
        "ts": TS,
        "model": model,
        "request": {"state": state, "questions": questions},
        "answers": {qid: {"type": "noul", "noul": p} for qid, p in values.items()},
        "meta": {"fixture": True, "requested_model": "jev-latest", "note": note},
    }


def write(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    print(f"wrote {path.relative_to(ROOT)} ({len(records)} fixture records)")


def main():
    refund = ROOT / "examples/refund"
    questions = questions_of(refund / "definition.toml")
    state = json.loads((refund / "state.json").read_text(encoding="utf-8"))
    # F1: the same state and condition under three preset probabilities.
    for name, p in [("supported", 0.95), ("unsupported", 0.05), ("uncertain", 0.5)]:
        write(refund / f"fixtures/{name}.jevl",
              [record("prescribed-guide-fixture", state, questions, {"supported": p}, f"F1 {name}: p = {p}")])
    # F2: p = 0.95 for the honest answer, 0.05 otherwise.
    cases = [json.loads(line) for line in (refund / "cases.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    honest = "No refund yet; I need to verify the status."
    f2 = []
    for case in cases:
        case_state = {"user_question": case["question"], "supporting_context": case["supporting_context"],
                      "assistant_answer": case["answer"]}
        p = 0.95 if case["answer"] == honest else 0.05
        f2.append(record("prescribed-guide-fixture", case_state, questions, {"supported": p}, f"F2 {case['id']}"))
    write(refund / "fixtures/cases.jevl", f2)
    # F3: covers_request 0.9, unsupported_commitment 0.95.
    support = ROOT / "examples/support-draft"
    write(support / "fixture.jevl", [record(
        "offline-fixture",
        json.loads((support / "state.json").read_text(encoding="utf-8")),
        questions_of(support / "definition.toml"),
        {"covers_request": 0.9, "unsupported_commitment": 0.95},
        "F3",
    )])


if __name__ == "__main__":
    main()
