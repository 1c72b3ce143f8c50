"""Shared fixtures: the repository's examples and a real `jevjudge fake-server` on 127.0.0.1."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator, List

import pytest

pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parents[2]
SMS = ROOT / "examples" / "sms-spam"


def jevjudge_command() -> List[str]:
    """The installed console script (the wheel's), next to this interpreter."""
    script = Path(sys.executable).parent / "jevjudge"
    if script.exists():
        return [str(script)]
    found = shutil.which("jevjudge")
    assert found, "the jevjudge console script is not installed"
    return [found]


@pytest.fixture(scope="session")
def sms() -> Path:
    return SMS


class FakeServer:
    def __init__(self, latency_ms: int, key: str) -> None:
        self.process = subprocess.Popen(
            jevjudge_command()
            + ["fake-server", "--addr", "127.0.0.1:0", "--latency", str(latency_ms), "--key", key],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.process.stdout is not None
        first = self.process.stdout.readline().strip()
        assert first.startswith("listening on http://"), first
        self.url = first[len("listening on ") :]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture(scope="session")
def fake_server() -> Iterator[FakeServer]:
    """A fake System One server answering after 20 ms, requiring the key in JEVJUDGE_TEST_KEY."""
    key = "test-key-0123456789"
    os.environ["JEVJUDGE_TEST_KEY"] = key
    server = FakeServer(latency_ms=20, key=key)
    try:
        yield server
    finally:
        server.stop()
