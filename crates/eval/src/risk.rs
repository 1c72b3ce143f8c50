//! Risk and coverage, and an interval on every rate (issue 14).
//!
//! An abstaining judge is read by two numbers accuracy hides: how often it decides
//! (**coverage** = PASS or FAIL verdicts ÷ reviews) and how often a decision is wrong
//! (**decided accuracy** = correct ÷ decided) — and which way: a **false PASS** is a case
//! expected to fail that got PASS (an unsupported draft published: the costly error), a
//! **false FAIL** a case expected to pass that got FAIL. `false_pass + false_fail = incorrect`;
//! their rates are per decided review, so `false_pass_rate + false_fail_rate =
//! 1 − decided_accuracy`.
//!
//! Every rate carries a 95 % interval `[low, high]`: the Wilson score interval when each case
//! was reviewed once, and with repeats [`jevjudge_stats::clustered_wilson`], which treats the
//! case, not the review, as the unit. A rate with an empty denominator is `null`, and so is its
//! interval.

use jevjudge_judge::Status;
use serde::{Deserialize, Serialize};

use crate::{Outcome, Row};

/// The standard-normal quantile of the 95 % intervals.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Coverage, decided accuracy, false PASS / false FAIL, and the intervals of every rate
/// (flattened into a [`crate::Summary`]). Every field reads as its default when absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Risk {
    /// 95 % interval of `accuracy` (correct ÷ reviews); null when there is no review.
    pub accuracy_ci: Option<[f64; 2]>,
    /// PASS or FAIL verdicts (correct + incorrect).
    pub decided: u64,
    /// decided ÷ reviews; null when there is no review.
    pub coverage: Option<f64>,
    /// 95 % interval of `coverage`.
    pub coverage_ci: Option<[f64; 2]>,
    /// correct ÷ decided; null when nothing was decided.
    pub decided_accuracy: Option<f64>,
    /// 95 % interval of `decided_accuracy`.
    pub decided_accuracy_ci: Option<[f64; 2]>,
    /// PASS verdicts on cases expected to fail.
    pub false_pass: u64,
    /// false_pass ÷ decided; null when nothing was decided.
    pub false_pass_rate: Option<f64>,
    /// 95 % interval of `false_pass_rate`.
    pub false_pass_rate_ci: Option<[f64; 2]>,
    /// FAIL verdicts on cases expected to pass.
    pub false_fail: u64,
    /// false_fail ÷ decided; null when nothing was decided.
    pub false_fail_rate: Option<f64>,
    /// 95 % interval of `false_fail_rate`.
    pub false_fail_rate_ci: Option<[f64; 2]>,
}

/// One case's counts over its reviews.
#[derive(Debug, Clone, Copy, Default)]
struct CaseTally {
    reviews: u32,
    correct: u32,
    decided: u32,
    false_pass: u32,
    false_fail: u32,
}

/// Builds [`Risk`] one row (case) at a time; memory is five counters per case.
#[derive(Debug, Clone, Default)]
pub struct RiskBuilder {
    cases: Vec<CaseTally>,
}

impl RiskBuilder {
    /// Counts every review of one case.
    pub fn add(&mut self, row: &Row) {
        let mut tally = CaseTally::default();
        for verdict in row.verdicts() {
            tally.reviews += 1;
            match Outcome::of(verdict.status, row.expected_pass) {
                Outcome::Correct => {
                    tally.correct += 1;
                    tally.decided += 1;
                }
                Outcome::Incorrect => {
                    tally.decided += 1;
                    if verdict.status == Status::Pass {
                        tally.false_pass += 1;
                    } else {
                        tally.false_fail += 1;
                    }
                }
                Outcome::Abstained | Outcome::Error => {}
            }
        }
        self.cases.push(tally);
    }

    /// The figures.
    pub fn finish(self) -> Risk {
        let sum = |field: fn(&CaseTally) -> u32| -> u64 {
            self.cases.iter().map(|c| u64::from(field(c))).sum()
        };
        let reviews = sum(|c| c.reviews);
        let correct = sum(|c| c.correct);
        let decided = sum(|c| c.decided);
        let false_pass = sum(|c| c.false_pass);
        let false_fail = sum(|c| c.false_fail);
        let interval = |successes: fn(&CaseTally) -> u32, trials: fn(&CaseTally) -> u32| {
            let clusters: Vec<(u64, u64)> = self
                .cases
                .iter()
                .map(|c| (u64::from(successes(c)), u64::from(trials(c))))
                .filter(|(_, n)| *n > 0)
                .collect();
            jevjudge_stats::clustered_wilson(&clusters, Z95).map(|(low, high)| [low, high])
        };
        let rate = |part: u64, whole: u64| (whole > 0).then(|| part as f64 / whole as f64);
        Risk {
            accuracy_ci: interval(|c| c.correct, |c| c.reviews),
            decided,
            coverage: rate(decided, reviews),
            coverage_ci: interval(|c| c.decided, |c| c.reviews),
            decided_accuracy: rate(correct, decided),
            decided_accuracy_ci: interval(|c| c.correct, |c| c.decided),
            false_pass,
            false_pass_rate: rate(false_pass, decided),
            false_pass_rate_ci: interval(|c| c.false_pass, |c| c.decided),
            false_fail,
            false_fail_rate: rate(false_fail, decided),
            false_fail_rate_ci: interval(|c| c.false_fail, |c| c.decided),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A report written before issue 14 has none of these fields; each reads as its default,
    // and those present keep their values.
    #[test]
    fn absent_risk_fields_read_as_their_defaults() {
        assert_eq!(serde_json::from_str::<Risk>("{}").unwrap(), Risk::default());
        let partial: Risk =
            serde_json::from_str(r#"{"false_pass": 3, "coverage": 0.5, "coverage_ci": null}"#)
                .unwrap();
        let expected = Risk {
            false_pass: 3,
            coverage: Some(0.5),
            ..Risk::default()
        };
        assert_eq!(partial, expected);
        // Flattened into a summary: a summary without them reads too.
        let mut summary =
            serde_json::to_value(crate::test_support::report("v1", Vec::new()).overall).unwrap();
        let object = summary.as_object_mut().unwrap();
        for key in serde_json::to_value(Risk::default())
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
        {
            assert!(object.remove(key).is_some(), "{key} is flattened");
        }
        let read: crate::Summary = serde_json::from_value(summary).unwrap();
        assert_eq!(read.risk, Risk::default());
    }
}
