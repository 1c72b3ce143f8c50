"""The Ray Data example on a local Ray: two actors, two fake servers, every case judged once,
the same verdicts and counts as a single-process run."""

from __future__ import annotations

import json
import sys

import pytest
import ray

import jevjudge

from conftest import ROOT, SMS, FakeServer

sys.path.insert(0, str(ROOT / "examples" / "ray"))


def test_two_actors_on_two_servers_judge_every_case_once_as_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from judge_traces import judge_cases  # examples/ray/judge_traces.py

    key = "test-key-0123456789"
    monkeypatch.setenv("JEVJUDGE_TEST_KEY", key)
    servers = [FakeServer(latency_ms=5, key=key), FakeServer(latency_ms=5, key=key)]
    cases = [json.loads(line) for line in (SMS / "cases.jsonl").read_text().splitlines() if line.strip()]
    try:
        ray.init(num_cpus=2, include_dashboard=False, runtime_env={"env_vars": {"JEVJUDGE_TEST_KEY": key, "PYTHONPATH": str(ROOT / "examples" / "ray")}})
        try:
            frame = judge_cases(
                str(SMS / "definition.toml"), cases, [s.url for s in servers],
                actors=2, batch_size=25, api_key_env="JEVJUDGE_TEST_KEY", budget=10.0,
            )
        finally:
            ray.shutdown()
        # The single-process run against one of the same servers.
        single = jevjudge.evaluate(
            SMS / "definition.toml", SMS / "cases.jsonl", base_url=servers[0].url,
            api_key_env="JEVJUDGE_TEST_KEY", budget=10.0, progress=False,
        )
    finally:
        for server in servers:
            server.stop()
    assert sorted(frame["id"]) == sorted(c["id"] for c in cases), "every case exactly once"
    assert set(frame["server"]) == {s.url for s in servers}, "both actors, one server each"
    by_id = {row["id"]: row for row in single.rows()}
    for _, row in frame.iterrows():
        verdict = by_id[row["id"]]["verdict"]
        assert (row["status"], json.loads(row["findings"])) == (verdict["status"], verdict["findings"])
    decided = frame[frame["status"].isin(["PASS", "FAIL"])]
    correct = int(((decided["status"] == "PASS") == decided["expected_pass"]).sum())
    overall = single.summary["overall"]
    assert (correct, len(decided) - correct, int((frame["status"] == "INCONCLUSIVE").sum()), int((frame["status"] == "ERROR").sum())) == (
        overall["correct"], overall["incorrect"], overall["abstained"], overall["errors"]
    )
