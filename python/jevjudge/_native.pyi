"""Type stubs of the compiled module (checked against it with mypy's stubtest)."""

import os
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple, Union, final

_StrPath = Union[str, "os.PathLike[str]"]
_State = Union[str, Dict[str, Any], List[Any]]

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
    "main",
]

__version__: str

def main(argv: List[str]) -> int: ...

class JevjudgeError(Exception): ...
class DefinitionError(JevjudgeError):
    path: Optional[str]
    field: Optional[str]
class ConfigurationError(JevjudgeError): ...
class CasesError(JevjudgeError): ...
class StateError(JevjudgeError): ...
class ReportError(JevjudgeError): ...
class ReviewError(JevjudgeError):
    code: str
    detail: str
class ReviewTimeout(ReviewError): ...
class InvalidResponse(ReviewError): ...
class BackendFailure(ReviewError): ...

@final
class Definition:
    @staticmethod
    def load(path: _StrPath) -> Definition: ...
    @staticmethod
    def from_toml(text: str) -> Definition: ...
    @staticmethod
    def from_json(text: str) -> Definition: ...
    @property
    def version(self) -> str: ...
    @property
    def criteria(self) -> List[Dict[str, Any]]: ...
    @property
    def thresholds(self) -> Dict[str, Tuple[float, float]]: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_toml(self) -> str: ...
    def __eq__(self, other: object, /) -> bool: ...

@final
class Result:
    @property
    def definition_version(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def error(self) -> str: ...
    @property
    def detail(self) -> Optional[str]: ...
    @property
    def findings(self) -> Dict[str, Dict[str, Any]]: ...
    @property
    def model(self) -> Optional[str]: ...
    @property
    def usage(self) -> Optional[Dict[str, int]]: ...
    @property
    def elapsed(self) -> float: ...
    @property
    def backend(self) -> str: ...
    @property
    def passed(self) -> bool: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_json(self) -> str: ...
    def raise_for_error(self) -> Result: ...

@final
class Judge:
    def __new__(
        cls,
        definition: Definition,
        *,
        base_url: Optional[str] = None,
        api_key_env: Optional[str] = None,
        model: Optional[str] = None,
        replay: Optional[_StrPath] = None,
        fake: bool = False,
        budget: float = 2.0,
        retries: int = 2,
        timeout: float = 5.0,
        record: Optional[_StrPath] = None,
        allow_insecure_http: bool = False,
        max_in_flight: int = 64,
    ) -> Judge: ...
    def review(self, state: _State) -> Result: ...
    def review_async(self, state: _State) -> Awaitable[Result]: ...
    @property
    def definition(self) -> Definition: ...
    @property
    def model(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def budget(self) -> float: ...
    @property
    def record_failures(self) -> int: ...

@final
class Report:
    @staticmethod
    def load(path: _StrPath) -> Report: ...
    @property
    def summary(self) -> Dict[str, Any]: ...
    @property
    def definition_version(self) -> str: ...
    @property
    def backend(self) -> str: ...
    @property
    def complete(self) -> bool: ...
    def rows(self) -> List[Dict[str, Any]]: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def to_pandas(self) -> Any: ...
    def write(
        self,
        *,
        json: Optional[_StrPath] = None,
        html: Optional[_StrPath] = None,
        junit: Optional[_StrPath] = None,
        markdown: Optional[_StrPath] = None,
    ) -> None: ...

def evaluate(
    definition: Definition,
    cases: _StrPath,
    *,
    replay: Optional[_StrPath] = None,
    fake: bool = False,
    model: Optional[str] = None,
    base_url: Optional[str] = None,
    api_key_env: Optional[str] = None,
    budget: float = 2.0,
    retries: int = 2,
    timeout: float = 5.0,
    allow_insecure_http: bool = False,
    record: Optional[_StrPath] = None,
    concurrency: int = 8,
    repeat: int = 1,
    rows: Optional[_StrPath] = None,
    resume: bool = False,
    retry_errors: bool = False,
    overwrite: bool = False,
    max_cases: Optional[int] = None,
    price_per_million_input: Optional[float] = None,
    prevalence: Optional[float] = None,
    fixed_concurrency: bool = False,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> Report: ...
def compare(
    base: Report, candidate: Report, *, intersect: bool = False, prevalence: Optional[float] = None
) -> Dict[str, Any]: ...
def calibrate(
    report: Report,
    definition: Optional[Definition] = None,
    *,
    min_pass_precision: float = 0.9,
    min_fail_precision: float = 0.9,
    max_abstain: float = 0.25,
    delta: float = 0.05,
    resamples: int = 200,
    seed: int = 42,
    prevalence: Optional[float] = None,
    unweighted: bool = False,
) -> Dict[str, Any]: ...
