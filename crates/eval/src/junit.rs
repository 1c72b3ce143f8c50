//! JUnit XML: one test case per case (classname = scenario, name = id); incorrect is a
//! failure, ERROR an error, INCONCLUSIVE a skipped test with the reason `abstained`. With
//! repeats a case is still one test, counted by its worst repeat (incorrect, else error, else
//! abstained), and a failure's message lists every repeat's status and the pass rate.

use std::time::Duration;

use quick_junit::{NonSuccessKind, Report as JunitReport, TestCase, TestCaseStatus, TestSuite};

use crate::{Outcome, Report};

/// Renders a report as JUnit XML, one suite per scenario.
pub fn to_junit(report: &Report) -> String {
    let mut junit = JunitReport::new(format!("jevjudge {}", report.definition_version));
    for (scenario, _) in &report.scenarios {
        let mut suite = TestSuite::new(scenario.as_str());
        for row in report.rows.iter().filter(|row| &row.scenario == scenario) {
            // With repeats a case is one test, counted by its worst repeat.
            let verdict = row.case_verdict();
            let status = match row.case_outcome() {
                Outcome::Correct => TestCaseStatus::success(),
                Outcome::Incorrect => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    status.set_message(format!(
                        "expected {}, verdict {}",
                        if row.expected_pass {
                            "PASS"
                        } else {
                            "not PASS"
                        },
                        row.statuses_text()
                    ));
                    status.set_type("incorrect");
                    status
                }
                Outcome::Error => {
                    let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                    let detail = verdict.detail.map(|d| d.to_string()).unwrap_or_default();
                    status.set_message(format!("{}/{detail}", verdict.error));
                    status.set_type(verdict.error.as_str());
                    status
                }
                Outcome::Abstained => {
                    let mut status = TestCaseStatus::skipped();
                    status.set_message("abstained");
                    status
                }
            };
            let mut case = TestCase::new(row.id.as_str(), status);
            case.set_classname(scenario.as_str());
            case.set_time(verdict.elapsed);
            suite.add_test_case(case);
        }
        junit.add_test_suite(suite);
    }
    junit.set_time(Duration::from_secs_f64(
        report
            .rows
            .iter()
            .map(|r| r.verdict.elapsed.as_secs_f64())
            .sum(),
    ));
    junit.to_string().unwrap_or_default()
}
