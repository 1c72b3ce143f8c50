"""The ``jevjudge`` console script: the same command line as the Rust binary."""

from __future__ import annotations

import signal
import sys

from jevjudge._native import main as _main


def main() -> None:
    """Runs ``jevjudge`` with ``sys.argv`` and exits with its status."""
    # As the Rust binary: Ctrl-C ends a command that does not handle it itself (eval and
    # serve do, through their own handlers), instead of waiting for Python to notice.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.exit(_main(sys.argv))


if __name__ == "__main__":
    main()
