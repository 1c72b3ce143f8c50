"""The console script runs the Rust command line: the same flags, output and exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import jevjudge

from conftest import SMS, jevjudge_command


def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(jevjudge_command() + list(args), capture_output=True, text=True, input=stdin)


def test_version_and_help() -> None:
    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"jevjudge {jevjudge.__version__}"
    assert "eval" in run("--help").stdout


def test_exit_codes_are_the_binary_s() -> None:
    assert run("eval", "--no-such-flag").returncode == 2
    definition = str(SMS / "definition.toml")
    spam = json.dumps({"message": "WINNER!! As a valued network customer you have been selected to receive a £900 prize reward!"})
    for state in [spam, json.dumps({"message": "see you at 6"})]:
        judged = run("judge", "--definition", definition, "--fake", stdin=state)
        status = json.loads(judged.stdout)["status"]
        assert judged.returncode == {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 3, "ERROR": 4}[status]
    missing = run("judge", "--definition", "nope.toml", "--fake", stdin="{}")
    assert missing.returncode == 2 and "nope.toml" in missing.stderr


def test_eval_prints_the_readme_figures(tmp_path: Path) -> None:
    ran = run(
        "eval", "--definition", str(SMS / "definition.toml"), "--cases", str(SMS / "cases.jsonl"),
        "--replay", str(SMS / "recordings.jevl"), "--model", "jev-1.13.0",
    )
    assert ran.returncode == 0, ran.stderr
    overall = ran.stdout.splitlines()[2].split()
    assert overall[:6] == ["overall", "150", "123", "2", "25", "0"]
    gate = run(
        "eval", "--definition", str(SMS / "definition.toml"), "--cases", str(SMS / "cases.jsonl"),
        "--replay", str(SMS / "recordings.jevl"), "--model", "jev-1.13.0", "--min-accuracy", "0.9",
    )
    assert gate.returncode == 1


def test_python_dash_m_runs_it_too() -> None:
    import sys

    ran = subprocess.run([sys.executable, "-m", "jevjudge.cli", "--version"], capture_output=True, text=True)
    assert ran.returncode == 0 and ran.stdout.startswith("jevjudge ")


def test_ctrl_c_ends_eval_with_exit_5_and_a_resumable_rows_file(tmp_path: Path) -> None:
    import os
    import signal
    import time

    from conftest import FakeServer

    key = "test-key-0123456789"
    slow = FakeServer(latency_ms=100, key=key)
    try:
        report = tmp_path / "run.json"
        child = subprocess.Popen(
            jevjudge_command()
            + ["eval", "--definition", str(SMS / "definition.toml"), "--cases", str(SMS / "cases.jsonl"),
               "--base-url", slow.url, "--api-key-env", "JEVJUDGE_TEST_KEY", "--concurrency", "2",
               "--report", str(report)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "JEVJUDGE_TEST_KEY": key},
        )
        rows = tmp_path / "run.rows.jsonl"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (not rows.exists() or len(rows.read_text().splitlines()) < 6):
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)
        _, stderr = child.communicate(timeout=20)
        assert child.returncode == 5, stderr
        kept = len(rows.read_text().splitlines()) - 1
        assert 5 <= kept < 150
    finally:
        slow.stop()
