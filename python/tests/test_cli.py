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
