"""The jevjudge pytest plugin (registered through the ``pytest11`` entry point).

- The ``jevjudge`` fixture: a session-wide ``Judge`` built from the ini options
  ``jevjudge_definition`` and the backend options named as the command line's flags.
- ``jevjudge_cases``: globs (relative to the rootdir) of labelled cases files; each case of
  a matching file becomes a test item named by its id. A correct verdict passes, an incorrect
  one fails with its findings, ERROR fails, INCONCLUSIVE is skipped with its reason
  (``jevjudge_inconclusive = fail`` makes it fail).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Set

import pytest

import jevjudge as _jevjudge
from jevjudge._native import Definition, Judge, Report

_OPTIONS = [
    ("jevjudge_definition", "the definition file (.toml or .json) the jevjudge fixture and cases use"),
    ("jevjudge_replay", "answer from recorded exchanges in this .jevl file (offline)"),
    ("jevjudge_model", "the model to ask (with a replay: the recorded model to use)"),
    ("jevjudge_base_url", "System One base URL"),
    ("jevjudge_api_key_env", "the environment variable holding the API key"),
    ("jevjudge_budget", "each review's budget in seconds (default 2)"),
    ("jevjudge_concurrency", "reviews in flight when evaluating a cases file (default 8)"),
    ("jevjudge_inconclusive", "`skip` (default) or `fail`: what an INCONCLUSIVE case is"),
]


def pytest_addoption(parser: pytest.Parser) -> None:
    for name, help_text in _OPTIONS:
        parser.addini(name, help_text, type="string", default=None)
    parser.addini(
        "jevjudge_fake",
        "answer from the in-process deterministic fake (never a measure of a model)",
        type="bool",
        default=False,
    )
    parser.addini(
        "jevjudge_cases",
        "globs of labelled cases files (relative to the rootdir): one test item per case",
        type="linelist",
        default=[],
    )


class _Settings:
    """The ini options, resolved against the rootdir."""

    def __init__(self, config: pytest.Config) -> None:
        self.root = Path(str(config.rootpath))
        self.config = config

    def _text(self, name: str) -> Optional[str]:
        value = self.config.getini(name)
        return str(value).strip() or None if value is not None else None

    def _path(self, name: str) -> Optional[str]:
        value = self._text(name)
        return str(self.root / value) if value else None

    def definition(self) -> Definition:
        path = self._path("jevjudge_definition")
        if path is None:
            raise pytest.UsageError("jevjudge: set jevjudge_definition in the pytest ini file")
        try:
            return Definition.load(path)
        except _jevjudge.DefinitionError as error:
            raise pytest.UsageError(f"jevjudge_definition: {error}") from None

    def _number(self, name: str, default: float) -> float:
        value = self._text(name)
        if value is None:
            return default
        try:
            return float(value)
        except ValueError:
            raise pytest.UsageError(f"{name} must be a number, not {value!r}") from None

    def backend(self) -> Dict[str, Any]:
        options: Dict[str, Any] = {
            "replay": self._path("jevjudge_replay"),
            "model": self._text("jevjudge_model"),
            "base_url": self._text("jevjudge_base_url"),
            "api_key_env": self._text("jevjudge_api_key_env"),
            "fake": bool(self.config.getini("jevjudge_fake")),
            "budget": self._number("jevjudge_budget", 2.0),
        }
        return options

    def concurrency(self) -> int:
        return int(self._number("jevjudge_concurrency", 8))

    def inconclusive_fails(self) -> bool:
        value = (self._text("jevjudge_inconclusive") or "skip").lower()
        if value not in ("skip", "fail"):
            raise pytest.UsageError(f"jevjudge_inconclusive must be skip or fail, not {value!r}")
        return value == "fail"

    def matches(self, path: Path) -> bool:
        """Whether `path` is a cases file named by a `jevjudge_cases` glob (`**` recurses)."""
        matched: Optional[Set[Path]] = getattr(self.config, "_jevjudge_cases", None)
        if matched is None:
            patterns: List[str] = self.config.getini("jevjudge_cases")
            matched = {found.resolve() for pattern in patterns for found in self.root.glob(pattern)}
            setattr(self.config, "_jevjudge_cases", matched)
        return path.resolve() in matched


@pytest.fixture(scope="session")
def jevjudge(pytestconfig: pytest.Config) -> Judge:
    """A Judge configured from the ini options (jevjudge_definition, jevjudge_replay, …)."""
    settings = _Settings(pytestconfig)
    try:
        return Judge(settings.definition(), **settings.backend())
    except _jevjudge.ConfigurationError as error:
        raise pytest.UsageError(f"jevjudge: {error}") from None


def pytest_collect_file(parent: pytest.Collector, file_path: Path) -> Optional[pytest.Collector]:
    if file_path.suffix in (".jsonl", ".ndjson") and _Settings(parent.config).matches(file_path):
        return CasesFile.from_parent(parent, path=file_path)
    return None


class CasesFile(pytest.File):
    """A labelled cases file: evaluated once, one item per case."""

    _report: Optional[Report] = None
    _error: Optional[BaseException] = None

    def collect(self) -> Iterator[pytest.Item]:
        with self.path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                if not line.strip():
                    continue
                try:
                    case_id = json.loads(line)["id"]
                except (ValueError, KeyError, TypeError):
                    raise self.CollectError(f"{self.path}:{number}: not a case with an `id`") from None
                yield CaseItem.from_parent(self, name=str(case_id))

    def report(self) -> Report:
        """The run over the whole file, made on first use."""
        if self._error is not None:
            raise self._error
        if self._report is None:
            settings = _Settings(self.config)
            try:
                self._report = _jevjudge.evaluate(
                    settings.definition(),
                    str(self.path),
                    concurrency=settings.concurrency(),
                    progress=False,
                    **settings.backend(),
                )
            except BaseException as error:
                self._error = error
                raise
            self._rows = {row["id"]: row for row in self._report.rows()}
        return self._report

    def row(self, case_id: str) -> Dict[str, Any]:
        self.report()
        return self._rows[case_id]


class CaseFailed(Exception):
    """A case whose verdict was not the label's."""


class CaseItem(pytest.Item):
    """One labelled case."""

    def runtest(self) -> None:
        parent = self.parent
        assert isinstance(parent, CasesFile)
        row = parent.row(self.name)
        verdict = row["verdict"]
        status = verdict["status"]
        expected = "PASS" if row["expected_pass"] else "not PASS"
        if status == "ERROR":
            raise CaseFailed(f"ERROR {verdict['error']}/{verdict['detail']} (expected {expected})")
        if status == "INCONCLUSIVE":
            reason = "INCONCLUSIVE (abstained): " + _findings(verdict)
            if _Settings(self.config).inconclusive_fails():
                raise CaseFailed(reason)
            pytest.skip(reason)
        if (status == "PASS") != row["expected_pass"]:
            raise CaseFailed(f"{status}, expected {expected}: {_findings(verdict)}")

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, CaseFailed):
            return f"case {self.name}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> Any:
        return self.path, None, f"case {self.name}"


def _findings(verdict: Dict[str, Any]) -> str:
    return ", ".join(
        f"{criterion} {finding['status']} yes_probability={finding['yes_probability']:.3f}"
        for criterion, finding in verdict["findings"].items()
    )
