"""Assertions for tests that review with a Judge."""

from __future__ import annotations

from typing import Optional

from jevjudge._native import Result


def explain(result: Result) -> str:
    """One line per criterion: its status and probabilities; or the ERROR's code and detail."""
    if result.status == "ERROR":
        return f"ERROR {result.error}/{result.detail} (backend {result.backend})"
    lines = [f"{result.status} ({result.definition_version}, backend {result.backend})"]
    for criterion, finding in result.findings.items():
        lines.append(
            f"  {criterion}: {finding['status']} yes_probability={finding['yes_probability']:.3f}"
            f" expected_probability={finding['expected_probability']:.3f}"
        )
    return "\n".join(lines)


def assert_passes(result: Result, message: Optional[str] = None) -> None:
    """Fails unless the review passed, listing each criterion's status and probability."""
    if result.status != "PASS":
        head = f"{message}: " if message else ""
        raise AssertionError(f"{head}expected PASS, got {explain(result)}")
