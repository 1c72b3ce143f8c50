//! The gates of `jevjudge eval` (cli-and-formats.md §1.3): thresholds on a finished report
//! that decide its exit status, each phrased as one line for the terminal and Markdown.

use std::fmt::Display;

use crate::Report;

/// One gate's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    /// Whether it held.
    pub held: bool,
    /// How to say it (`min-accuracy 0.9: held (accuracy 0.9533)`).
    pub line: String,
}

/// The gates a run asked for; `None` is a gate not asked for.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Gates {
    /// `--min-accuracy`: overall accuracy at least this.
    pub min_accuracy: Option<f64>,
    /// `--max-errors`: at most this many ERROR rows.
    pub max_errors: Option<u64>,
    /// `--min-accuracy-lower`: the lower bound of accuracy's 95 % interval at least this.
    pub min_accuracy_lower: Option<f64>,
    /// `--max-false-pass`: at most this many false PASS reviews.
    pub max_false_pass: Option<u64>,
    /// `--min-coverage`: coverage (PASS or FAIL ÷ reviews) at least this.
    pub min_coverage: Option<f64>,
}

/// A gate's threshold outside its range; Display is the whole message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("--{gate} must be within 0..=1, not {value}")]
pub struct GateError {
    /// The gate, as its flag is spelt (`min-coverage`).
    pub gate: &'static str,
    /// The value given.
    pub value: f64,
}

impl Gates {
    /// Checks the fractions (accuracy, its lower bound, coverage): each within 0..=1.
    pub fn check(&self) -> Result<(), GateError> {
        for (gate, value) in [
            ("min-accuracy-lower", self.min_accuracy_lower),
            ("min-coverage", self.min_coverage),
            ("min-accuracy", self.min_accuracy),
        ] {
            if let Some(value) = value.filter(|x| !(0.0..=1.0).contains(x)) {
                return Err(GateError { gate, value });
            }
        }
        Ok(())
    }

    /// Evaluates every gate asked for on `report`, in a fixed order: min-accuracy,
    /// max-errors, min-accuracy-lower, max-false-pass, min-coverage.
    pub fn evaluate(&self, report: &Report) -> Vec<Gate> {
        let overall = &report.overall;
        let risk = &overall.risk;
        let mut gates = Vec::new();
        // `min-accuracy 0.9: held (accuracy 0.9533)`: the gate and its threshold, its verdict,
        // what was measured.
        let mut gate = |flag: &str, threshold: &dyn Display, held: bool, measured: String| {
            let verdict = if held { "held" } else { "FAILED" };
            let line = format!("{flag} {threshold}: {verdict} ({measured})");
            gates.push(Gate { held, line });
        };
        let figure = |x: Option<f64>| x.map_or("n/a".to_owned(), |x| format!("{x:.4}"));
        if let Some(min) = self.min_accuracy {
            let measured = format!("accuracy {:.4}", overall.accuracy);
            gate("min-accuracy", &min, overall.accuracy >= min, measured);
        }
        if let Some(max) = self.max_errors {
            let measured = crate::plural::count(overall.errors, "error");
            gate("max-errors", &max, overall.errors <= max, measured);
        }
        if let Some(min) = self.min_accuracy_lower {
            // No review: no interval, so the gate cannot hold.
            let lower = risk.accuracy_ci.map(|[low, _]| low);
            let held = lower.is_some_and(|low| low >= min);
            let measured = format!("accuracy 95% CI lower bound {}", figure(lower));
            gate("min-accuracy-lower", &min, held, measured);
        }
        if let Some(max) = self.max_false_pass {
            let measured = format!("{} false PASS", risk.false_pass);
            gate("max-false-pass", &max, risk.false_pass <= max, measured);
        }
        if let Some(min) = self.min_coverage {
            let held = risk.coverage.is_some_and(|coverage| coverage >= min);
            let measured = format!("coverage {}", figure(risk.coverage));
            gate("min-coverage", &min, held, measured);
        }
        gates
    }
}

/// The gates of `jevjudge compare` (cli-and-formats.md §1.5); `None` is a gate not asked
/// for. Each reads integer counts of cases on single runs and, with repeats, the cases an
/// exact test found changed after Holm's correction ([`crate::compare_noise`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompareGates {
    /// `--max-regressions`: at most this many cases correct in BASE and not in CANDIDATE.
    pub max_regressions: Option<u64>,
    /// `--max-new-incorrect`: at most this many cases incorrect in CANDIDATE and not in BASE
    /// (correct, abstained or errored there).
    pub max_new_incorrect: Option<u64>,
    /// `--max-false-pass-increase`: at most this many cases false PASS in CANDIDATE and not
    /// in BASE.
    pub max_false_pass_increase: Option<u64>,
}

impl CompareGates {
    /// Evaluates every gate asked for, in the order max-regressions, max-new-incorrect,
    /// max-false-pass-increase.
    pub fn evaluate(&self, comparison: &crate::compare::Comparison) -> Vec<Gate> {
        let mut gates = Vec::new();
        let beyond = if comparison.noise.is_some() {
            " beyond chance"
        } else {
            ""
        };
        let mut gate = |flag: &str, max: u64, measured: u64, what: String| {
            let held = measured <= max;
            let verdict = if held { "held" } else { "FAILED" };
            gates.push(Gate {
                held,
                line: format!("{flag} {max}: {verdict} ({what})"),
            });
        };
        let (base, candidate) = (&comparison.base.summary, &comparison.candidate.summary);
        if let Some(max) = self.max_regressions {
            let n = comparison.regressions;
            let noun = if n == 1 { "regression" } else { "regressions" };
            gate("max-regressions", max, n, format!("{n} {noun}{beyond}"));
        }
        if let Some(max) = self.max_new_incorrect {
            let n = comparison.new_incorrect;
            let what = format!(
                "{} newly incorrect{beyond}; incorrect {} -> {}",
                crate::plural::count(n, "case"),
                base.incorrect,
                candidate.incorrect
            );
            gate("max-new-incorrect", max, n, what);
        }
        if let Some(max) = self.max_false_pass_increase {
            let n = comparison.new_false_pass;
            let what = format!(
                "{} newly false PASS{beyond}; false PASS {} -> {}",
                crate::plural::count(n, "case"),
                base.risk.false_pass,
                candidate.risk.false_pass
            );
            gate("max-false-pass-increase", max, n, what);
        }
        gates
    }
}

/// Whether every gate held (true when none was asked for).
pub fn all_held(gates: &[Gate]) -> bool {
    gates.iter().all(|gate| gate.held)
}

/// The gates' lines, as the Markdown summary lists them.
pub fn lines(gates: &[Gate]) -> Vec<String> {
    gates.iter().map(|gate| gate.line.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        compare::{CompareOptions, compare},
        test_support::{report, row, verdict},
    };
    use jevjudge_judge::{Findings, Status};

    // The new user's example: a candidate turns 4 abstentions into wrong verdicts (2 → 6
    // incorrect), one of them a false PASS (0 → 1), and breaks no correct case — so
    // --max-regressions 0 holds while both risk gates at 0 fail.
    #[test]
    fn turning_abstentions_into_wrong_verdicts_fails_the_risk_gates_but_not_max_regressions() {
        use Status::{Fail as F, Inconclusive as I, Pass as P};
        // (id, expected_pass, base, candidate)
        let cases = [
            ("w1", true, F, F),
            ("w2", true, F, F),
            ("a1", true, I, F),
            ("a2", true, I, F),
            ("a3", true, I, F),
            ("a4", false, I, P),
            ("ok1", true, P, P),
            ("ok2", false, F, F),
        ];
        let run = |pick: fn(&(&str, bool, Status, Status)) -> Status| {
            let rows = cases
                .iter()
                .map(|case| {
                    row(
                        "s",
                        case.0,
                        case.1,
                        verdict("v", pick(case), Findings::default()),
                    )
                })
                .collect();
            report("v", rows)
        };
        let comparison = compare(&run(|c| c.2), &run(|c| c.3), CompareOptions::default()).unwrap();
        assert_eq!(
            (
                comparison.base.summary.incorrect,
                comparison.candidate.summary.incorrect
            ),
            (2, 6)
        );
        let gates = CompareGates {
            max_regressions: Some(0),
            max_new_incorrect: Some(0),
            max_false_pass_increase: Some(0),
        }
        .evaluate(&comparison);
        let lines = lines(&gates);
        assert_eq!(
            lines,
            [
                "max-regressions 0: held (0 regressions)",
                "max-new-incorrect 0: FAILED (4 cases newly incorrect; incorrect 2 -> 6)",
                "max-false-pass-increase 0: FAILED (1 case newly false PASS; false PASS 0 -> 1)",
            ]
        );
        assert!(!all_held(&gates));
    }
}
