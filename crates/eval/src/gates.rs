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

/// Whether every gate held (true when none was asked for).
pub fn all_held(gates: &[Gate]) -> bool {
    gates.iter().all(|gate| gate.held)
}

/// The gates' lines, as the Markdown summary lists them.
pub fn lines(gates: &[Gate]) -> Vec<String> {
    gates.iter().map(|gate| gate.line.clone()).collect()
}
