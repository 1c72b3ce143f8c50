"""Ctrl-C (SIGINT) stops a blocking run cleanly: KeyboardInterrupt, a resumable rows file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import SMS, FakeServer

RUN = textwrap.dedent(
    """
    import sys, jevjudge
    try:
        jevjudge.evaluate(sys.argv[1], sys.argv[2], rows=sys.argv[3], base_url=sys.argv[4],
                          api_key_env="JEVJUDGE_TEST_KEY", concurrency=2,
                          progress=lambda done, total: print(done, flush=True))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(5)
    print("completed", flush=True)
    """
)


def test_sigint_stops_evaluate_and_resume_runs_the_rest(tmp_path: Path) -> None:
    key = os.environ.get("JEVJUDGE_TEST_KEY", "test-key-0123456789")
    os.environ["JEVJUDGE_TEST_KEY"] = key
    slow = FakeServer(latency_ms=100, key=key)
    rows = tmp_path / "run.rows.jsonl"
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", RUN, str(SMS / "definition.toml"), str(SMS / "cases.jsonl"), str(rows), slow.url],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None
        # 150 cases, 2 at a time, 100 ms each: 7.5 s in all; interrupt once 10 rows are in.
        for line in child.stdout:
            if line.strip() == "10":
                break
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        rest = child.stdout.read()
        assert child.wait(timeout=20) == 5, rest
        assert rest.strip().endswith("interrupted")
        assert time.monotonic() - started < 2.0, "stopped promptly, not after the run"
        kept = [line for line in rows.read_text().splitlines()[1:] if line.strip()]
        assert 10 <= len(kept) < 150
        resumed = subprocess.run(
            [sys.executable, "-c", RUN.replace("concurrency=2,", "concurrency=8, resume=True,"),
             str(SMS / "definition.toml"), str(SMS / "cases.jsonl"), str(rows), slow.url],
            capture_output=True, text=True, timeout=60,
        )
        assert resumed.returncode == 0, resumed.stderr
        assert resumed.stdout.strip().endswith("completed")
        assert resumed.stdout.split()[-2] == str(150 - len(kept)), "only the missing cases ran"
    finally:
        slow.stop()
