"""The pytest plugin: the fixture from ini options, and labelled cases as test items."""

from __future__ import annotations

import shutil

import pytest

import jevjudge

from conftest import SMS

INI = """
[pytest]
jevjudge_definition = sms/definition.toml
jevjudge_replay = sms/recordings.jevl
jevjudge_model = jev-1.13.0
jevjudge_cases = sms/*.jsonl
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    sms = pytester.path / "sms"
    sms.mkdir()
    for name in ("definition.toml", "cases.jsonl", "recordings.jevl"):
        shutil.copy(SMS / name, sms / name)
    return pytester


def test_each_case_is_an_item_and_the_counts_are_the_eval_figures(project: pytest.Pytester) -> None:
    project.makeini(INI)
    result = project.runpytest_subprocess("-rs")
    report = jevjudge.evaluate(SMS / "definition.toml", SMS / "cases.jsonl", replay=str(SMS / "recordings.jevl"), model="jev-1.13.0")
    overall = report.summary["overall"]
    result.assert_outcomes(passed=overall["correct"], failed=overall["incorrect"] + overall["errors"], skipped=overall["abstained"])
    assert (overall["correct"], overall["incorrect"], overall["abstained"]) == (123, 2, 25)
    result.stdout.fnmatch_lines(["*case sms-*: FAIL, expected PASS: spam FAIL yes_probability=*"])
    result.stdout.fnmatch_lines(["SKIPPED*INCONCLUSIVE (abstained): spam INCONCLUSIVE yes_probability=*"])
    collected = project.runpytest_subprocess("--collect-only", "-q")
    assert sum(1 for line in collected.stdout.lines if "cases.jsonl::sms-" in line) == 150


def test_inconclusive_fail_makes_abstentions_fail(project: pytest.Pytester) -> None:
    # A recursive glob names the same file.
    project.makeini(INI.replace("sms/*.jsonl", "**/cases.jsonl") + "jevjudge_inconclusive = fail\n")
    result = project.runpytest_subprocess()
    result.assert_outcomes(passed=123, failed=27)


def test_the_fixture_is_a_judge_from_the_ini_options(project: pytest.Pytester) -> None:
    project.makeini(INI.replace("jevjudge_cases = sms/*.jsonl\n", "") + "jevjudge_budget = 3\n")
    project.makepyfile(
        """
        import jevjudge
        from jevjudge.testing import assert_passes

        def test_fixture(jevjudge):
            assert jevjudge.backend == "replay" and jevjudge.model == "jev-1.13.0"
            assert jevjudge.budget == 3.0
            assert jevjudge.definition.version == "sms-spam-0.1.0"

        def test_fails_with_the_findings(jevjudge):
            assert_passes(jevjudge.review({"message": "Ok lor. Sony ericsson salesman... I ask shuhui then she say quite gd 2 use so i considering..."}))
        """
    )
    result = project.runpytest_subprocess()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*expected PASS, got ERROR BACKEND/not_recorded*"])


def test_the_fake_option_and_a_missing_definition(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\njevjudge_definition = sms/definition.toml\njevjudge_fake = true\n")
    project.makepyfile("def test_fake(jevjudge):\n    assert jevjudge.backend == 'fake'\n")
    project.runpytest_subprocess().assert_outcomes(passed=1)
    project.makeini("[pytest]\n")
    result = project.runpytest_subprocess()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*set jevjudge_definition*"])
