"""jevjudge for Python: judge an AI agent's draft against business evidence with TypeSafe
System One, and replay labelled cases to catch regressions.

>>> import jevjudge
>>> judge = jevjudge.Judge(jevjudge.Definition.load("definition.toml"), fake=True)
>>> judge.review({"message": "WIN a FREE prize"}).status  # doctest: +SKIP
'FAIL'

The judge, the runner and the reports are the Rust library's (``jevjudge._native``); the
``jevjudge`` console script runs the same command line as the Rust binary.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Optional, Union

from jevjudge._native import (
    BackendFailure,
    CasesError,
    ConfigurationError,
    Definition,
    DefinitionError,
    InvalidResponse,
    JevjudgeError,
    Judge,
    Report,
    ReportError,
    Result,
    ReviewError,
    ReviewTimeout,
    StateError,
    __version__,
    calibrate,
    compare,
)
from jevjudge._native import evaluate as _evaluate

__all__ = [
    "BackendFailure",
    "CasesError",
    "ConfigurationError",
    "Definition",
    "DefinitionError",
    "InvalidResponse",
    "JevjudgeError",
    "Judge",
    "Report",
    "ReportError",
    "Result",
    "ReviewError",
    "ReviewTimeout",
    "StateError",
    "__version__",
    "calibrate",
    "compare",
    "evaluate",
]

Progress = Union[None, bool, Callable[[int, int], Any]]


def _tqdm_progress() -> Optional[Callable[[int, int], None]]:
    """A callback drawing a tqdm bar, when tqdm is installed."""
    try:
        from tqdm.auto import tqdm  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    bar: list[Any] = []

    def update(done: int, total: int) -> None:
        if not bar:
            bar.append(tqdm(total=total, unit="review"))
        bar[0].update(done - bar[0].n)
        if done >= total:
            bar[0].close()

    return update


def evaluate(
    definition: Union[Definition, str, "os.PathLike[str]"],
    cases: Union[str, "os.PathLike[str]", Iterable[Mapping[str, Any]]],
    *,
    progress: Progress = None,
    **options: Any,
) -> Report:
    """Replays labelled cases through a definition and returns the Report.

    ``cases`` is a JSON Lines file in the cases format, or an iterable of dicts in that format.
    ``progress`` is a callback ``(reviews done, reviews to run)``, ``True`` for a tqdm bar,
    ``False`` for none; by default a tqdm bar is drawn when tqdm is installed and standard
    error is a terminal. The other keyword arguments are those of ``jevjudge eval``'s flags:
    ``replay``, ``fake``, ``model``, ``base_url``, ``api_key_env``, ``budget`` (seconds),
    ``retries``, ``timeout``, ``record``, ``concurrency`` (8), ``repeat`` (1), ``rows``,
    ``resume``, ``retry_errors``, ``overwrite``, ``max_cases``, ``price_per_million_input``,
    ``prevalence``, ``fixed_concurrency``.

    Ctrl-C stops the run and raises KeyboardInterrupt; the finished rows stay in the rows
    file (``rows=``), and ``resume=True`` runs the rest.
    """
    if not isinstance(definition, Definition):
        definition = Definition.load(definition)
    callback: Optional[Callable[[int, int], Any]]
    if callable(progress):
        callback = progress
    elif progress is True or (progress is None and sys.stderr is not None and sys.stderr.isatty()):
        callback = _tqdm_progress()
    else:
        callback = None
    if isinstance(cases, (str, os.PathLike)):
        return _evaluate(definition, os.fspath(cases), progress=callback, **options)
    with tempfile.TemporaryDirectory(prefix="jevjudge-cases-") as directory:
        path = Path(directory) / "cases.jsonl"
        with path.open("w", encoding="utf-8") as file:
            for case in cases:
                file.write(json.dumps(case, ensure_ascii=False, allow_nan=False))
                file.write("\n")
        return _evaluate(definition, str(path), progress=callback, **options)
