"""The Python API against the command line: the same figures and the same JSON."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

import jevjudge
from jevjudge.testing import assert_passes

from conftest import SMS, jevjudge_command

DEFINITION = SMS / "definition.toml"
CASES = SMS / "cases.jsonl"
RECORDINGS = SMS / "recordings.jevl"
REPLAY = {"replay": str(RECORDINGS), "model": "jev-1.13.0"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(jevjudge_command() + list(args), capture_output=True, text=True)


def cases() -> List[Dict[str, Any]]:
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


def without_timings(value: Any) -> Any:
    """Drops the fields that measure time (they differ from run to run)."""
    timing = {"elapsed_millis", "wall_millis", "p50_millis", "p95_millis"}
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in timing}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def test_definition_load_and_from_toml_give_its_version_criteria_and_thresholds() -> None:
    loaded = jevjudge.Definition.load(DEFINITION)
    assert loaded.version == "sms-spam-0.1.0"
    assert [c["id"] for c in loaded.criteria] == ["spam"]
    assert loaded.criteria[0]["expected"] is True
    assert loaded.thresholds == {"spam": (0.1, 0.9)}
    assert jevjudge.Definition.from_toml(DEFINITION.read_text()) == loaded
    assert jevjudge.Definition.from_json(json.dumps(loaded.to_dict())) == loaded
    assert jevjudge.Definition.from_toml(loaded.to_toml()) == loaded


def test_a_broken_definition_names_the_file_and_the_field(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(DEFINITION.read_text().replace("pass_at_or_above = 0.9", "pass_at_or_above = 0.05"))
    with pytest.raises(jevjudge.DefinitionError) as raised:
        jevjudge.Definition.load(bad)
    assert str(bad) in str(raised.value)
    assert raised.value.field == "criteria[0].fail_at_or_below/pass_at_or_above"
    assert raised.value.path == str(bad)
    with pytest.raises(jevjudge.DefinitionError, match="line 2, column 1: missing field `expected`") as raised:
        jevjudge.Definition.from_toml("version = 'v1'\n[[criteria]]\nid = 'a'\n")
    assert (raised.value.path, raised.value.field) == (None, None)
    assert issubclass(jevjudge.DefinitionError, jevjudge.JevjudgeError)


def test_result_to_dict_equals_the_judge_command_json(tmp_path: Path) -> None:
    state = cases()[2]["state"]
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    for backend_args, options in [
        (["--fake"], {"fake": True}),
        (["--replay", str(RECORDINGS), "--model", "jev-1.13.0"], REPLAY),
    ]:
        judge = jevjudge.Judge(jevjudge.Definition.load(DEFINITION), **options)  # type: ignore[arg-type]
        result = judge.review(state)
        ran = cli("judge", "--definition", str(DEFINITION), "--state", str(path), *backend_args)
        printed = json.loads(ran.stdout)
        assert ran.returncode == {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 3, "ERROR": 4}[result.status]
        assert without_timings(result.to_dict()) == without_timings(printed)
        assert list(result.to_dict()) == list(printed), "the same keys in the same order"
        assert result.elapsed >= 0 and result.backend == printed["backend"]
        assert result.findings["spam"]["yes_probability"] == printed["findings"]["spam"]["yes_probability"]


def test_an_error_is_a_result_and_raise_for_error_carries_the_wire_codes() -> None:
    judge = jevjudge.Judge(jevjudge.Definition.load(DEFINITION), **REPLAY)  # type: ignore[arg-type]
    result = judge.review({"message": "a message nobody recorded"})
    assert (result.status, result.error, result.detail) == ("ERROR", "BACKEND", "not_recorded")
    assert result.findings == {}
    with pytest.raises(jevjudge.BackendFailure) as raised:
        result.raise_for_error()
    assert isinstance(raised.value, jevjudge.ReviewError)
    assert (raised.value.code, raised.value.detail) == ("BACKEND", "not_recorded")
    with pytest.raises(AssertionError, match="ERROR BACKEND/not_recorded"):
        assert_passes(result)


def test_assert_passes_lists_each_criterion_status_and_probability() -> None:
    judge = jevjudge.Judge(jevjudge.Definition.load(DEFINITION), **REPLAY)  # type: ignore[arg-type]
    spam = next(c for c in cases() if c["expected_pass"])
    ham = next(c for c in cases() if not c["expected_pass"])
    passed = judge.review(spam["state"])
    assert passed.status == "PASS" and passed.raise_for_error() is passed
    assert_passes(passed)
    failed = judge.review(ham["state"])
    with pytest.raises(AssertionError) as raised:
        assert_passes(failed, "ham")
    message = str(raised.value)
    assert message.startswith("ham: expected PASS, got FAIL")
    assert "spam: FAIL yes_probability=" in message and "expected_probability=" in message


def test_bad_states_and_settings_raise_named_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    definition = jevjudge.Definition.load(DEFINITION)
    judge = jevjudge.Judge(definition, fake=True)
    with pytest.raises(jevjudge.StateError, match="string, object or array, not number"):
        judge.review(3)  # type: ignore[arg-type]
    with pytest.raises(jevjudge.StateError, match="JSON"):
        judge.review({"x": float("nan")})
    for name in ("TYPESAFE_API_KEY", "JEV_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(jevjudge.ConfigurationError, match="no System One API key") as raised:
        jevjudge.Judge(definition)
    assert "replay=" in str(raised.value) and "--" not in str(raised.value)
    with pytest.raises(jevjudge.ConfigurationError, match="budget"):
        jevjudge.Judge(definition, fake=True, budget=0)
    with pytest.raises(jevjudge.ConfigurationError, match="model="):
        jevjudge.Judge(definition, replay=str(RECORDINGS), model="jev-0")
    with pytest.raises(jevjudge.ConfigurationError, match="concurrency"):
        jevjudge.evaluate(definition, CASES, fake=True, concurrency=0)


def test_evaluate_gives_the_eval_command_figures_and_report(tmp_path: Path) -> None:
    report = jevjudge.evaluate(DEFINITION, CASES, **REPLAY)  # type: ignore[arg-type]
    overall = report.summary["overall"]
    assert (overall["total"], overall["correct"], overall["incorrect"], overall["abstained"], overall["errors"]) == (150, 123, 2, 25, 0)
    out = tmp_path / "cli.json"
    ran = cli("eval", "--definition", str(DEFINITION), "--cases", str(CASES), "--replay", str(RECORDINGS), "--model", "jev-1.13.0", "--report", str(out))
    assert ran.returncode == 0, ran.stderr
    printed = json.loads(out.read_text())
    assert without_timings(report.summary) == without_timings({"overall": printed["overall"], "scenarios": printed["scenarios"]})
    assert without_timings(report.rows()) == without_timings(printed["rows"])
    # The summary it prints is the command's, figure for figure (times aside).
    ours, theirs = str(report).splitlines(), ran.stdout.splitlines()
    assert [line.split()[:7] for line in ours[:4]] == [line.split()[:7] for line in theirs[:4]]
    assert ours[4:10] == theirs[4:10]


def test_evaluate_takes_dicts_and_reports_progress() -> None:
    seen: List[tuple] = []
    report = jevjudge.evaluate(
        jevjudge.Definition.load(DEFINITION), iter(cases()[:20]), progress=lambda d, t: seen.append((d, t)), **REPLAY
    )
    assert report.summary["overall"]["total"] == 20
    assert seen[-1] == (20, 20) and len(seen) == 20
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_report_write_load_compare_and_calibrate_match_the_commands(tmp_path: Path) -> None:
    report = jevjudge.evaluate(DEFINITION, CASES, **REPLAY)  # type: ignore[arg-type]
    files = {"json": tmp_path / "r.json", "html": tmp_path / "r.html", "junit": tmp_path / "r.xml", "markdown": tmp_path / "r.md"}
    report.write(**files)  # type: ignore[arg-type]
    assert all(path.stat().st_size > 0 for path in files.values())
    assert "<testsuite" in files["junit"].read_text() and "<html" in files["html"].read_text()
    loaded = jevjudge.Report.load(files["json"])
    assert loaded.to_dict() == report.to_dict()
    cut = jevjudge.evaluate(SMS / "definition-cut-0.5.toml", CASES, **REPLAY)  # type: ignore[arg-type]
    cut.write(json=tmp_path / "cut.json")
    compared = jevjudge.compare(loaded, cut)
    ran = cli("compare", str(files["json"]), str(tmp_path / "cut.json"), "--json")
    assert ran.returncode in (0, 1), ran.stderr
    assert without_timings(compared) == without_timings(json.loads(ran.stdout))
    calibrated = jevjudge.calibrate(loaded, jevjudge.Definition.load(DEFINITION))
    ran = cli("calibrate", "--report", str(files["json"]), "--definition", str(DEFINITION), "--json")
    assert ran.returncode == 0, ran.stderr
    assert calibrated == json.loads(ran.stdout)
    with pytest.raises(jevjudge.ReportError, match="not a jevjudge report"):
        jevjudge.Report.load(files["junit"])
    with pytest.raises(jevjudge.ConfigurationError, match="max_abstain"):
        jevjudge.calibrate(loaded, max_abstain=2.0)


def test_to_pandas_has_one_row_per_case() -> None:
    import pandas  # installed by scripts/python.sh

    report = jevjudge.evaluate(DEFINITION, CASES, **REPLAY)  # type: ignore[arg-type]
    frame = report.to_pandas()
    assert isinstance(frame, pandas.DataFrame) and len(frame) == 150
    assert (frame["verdict.status"] == "INCONCLUSIVE").sum() == 25


def test_an_interrupted_run_keeps_a_resumable_rows_file(tmp_path: Path) -> None:
    rows = tmp_path / "run.rows.jsonl"

    def interrupt(done: int, total: int) -> None:
        if done == 40:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        jevjudge.evaluate(DEFINITION, CASES, rows=rows, concurrency=1, progress=interrupt, **REPLAY)  # type: ignore[arg-type]
    kept = [line for line in rows.read_text().splitlines()[1:] if line.strip()]
    assert 40 <= len(kept) < 150
    seen: List[int] = []
    resumed = jevjudge.evaluate(DEFINITION, CASES, rows=rows, resume=True, progress=lambda d, t: seen.append(t), **REPLAY)  # type: ignore[arg-type]
    assert seen[0] == 150 - len(kept), "only the missing cases run"
    overall = resumed.summary["overall"]
    assert (overall["total"], overall["correct"], overall["incorrect"], overall["abstained"]) == (150, 123, 2, 25)
    with pytest.raises(jevjudge.ConfigurationError, match="resume=True"):
        jevjudge.evaluate(DEFINITION, CASES, rows=rows, **REPLAY)  # type: ignore[arg-type]


def test_a_bad_cases_file_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "cases.jsonl"
    bad.write_text(CASES.read_text().splitlines()[0] + "\n{\"id\": 3}\n")
    with pytest.raises(jevjudge.CasesError, match=r"cases.jsonl:2: field `scenario`: is required"):
        jevjudge.evaluate(DEFINITION, bad, fake=True)
