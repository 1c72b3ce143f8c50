//! The terminal lines and gates of issue 14: intervals, risk and coverage, and repeats.

use std::fmt::Write as _;

use jevjudge_eval::{Report, Summary};

use crate::output::Gate;

/// `0.833 [0.765, 0.885]`, or `n/a` without a value.
fn rate(value: Option<f64>, interval: Option<[f64; 2]>) -> String {
    match (value, interval) {
        (Some(value), Some([low, high])) => format!("{value:.3} [{low:.3}, {high:.3}]"),
        (Some(value), None) => format!("{value:.3}"),
        _ => "n/a".to_owned(),
    }
}

/// The risk table printed under the main one: accuracy's 95 % interval, coverage, decided
/// accuracy, false PASS and false FAIL (count, rate per decided review and interval), overall
/// and per scenario; then, for a repeated run, the repeat figures.
pub fn risk_table(report: &Report, width: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<width$}  {:<16}  {:<21}  {:<21}  {:<24}  {:<24}",
        "scope",
        "accuracy 95% CI",
        "coverage [95% CI]",
        "decided acc [95% CI]",
        "false PASS [95% CI]",
        "false FAIL [95% CI]",
    );
    let scopes = std::iter::once(("overall", &report.overall)).chain(
        report
            .scenarios
            .iter()
            .map(|(name, summary)| (name.as_str(), summary)),
    );
    for (scope, s) in scopes.clone() {
        let scope: String = scope.chars().take(width).collect();
        let risk = &s.risk;
        let interval = match risk.accuracy_ci {
            Some([low, high]) => format!("[{low:.3}, {high:.3}]"),
            None => "n/a".to_owned(),
        };
        let counted = |count: u64, value, ci| format!("{count} {}", rate(value, ci));
        let _ = writeln!(
            out,
            "{scope:<width$}  {interval:<16}  {:<21}  {:<21}  {:<24}  {:<24}",
            rate(risk.coverage, risk.coverage_ci),
            rate(risk.decided_accuracy, risk.decided_accuracy_ci),
            counted(
                risk.false_pass,
                risk.false_pass_rate,
                risk.false_pass_rate_ci
            ),
            counted(
                risk.false_fail,
                risk.false_fail_rate,
                risk.false_fail_rate_ci
            ),
        );
    }
    if report.overall.repeated.repeats > 1 {
        let _ = writeln!(
            out,
            "{:<width$}  {:>7} {:>7} {:>9}  {:<24}  probability SD (mean per case)",
            "scope", "repeats", "flipped", "flip rate", "accuracy by repeat"
        );
        for (scope, s) in scopes {
            let scope: String = scope.chars().take(width).collect();
            let _ = writeln!(out, "{scope:<width$}  {}", repeat_line(s));
        }
    }
    // No padding after the last column.
    let mut trimmed = String::with_capacity(out.len());
    for line in out.lines() {
        trimmed.push_str(line.trim_end());
        trimmed.push('\n');
    }
    trimmed
}

fn repeat_line(s: &Summary) -> String {
    let [repeats, flipped, flip_rate, by_repeat, sd] = jevjudge_eval::html::repeat_cells(s, " ");
    format!("{repeats:>7} {flipped:>7} {flip_rate:>9}  {by_repeat:<24}  {sd}")
}

/// Evaluates `--min-accuracy-lower`, `--max-false-pass` and `--min-coverage`.
pub fn gates(
    report: &Report,
    min_accuracy_lower: Option<f64>,
    max_false_pass: Option<u64>,
    min_coverage: Option<f64>,
) -> Vec<Gate> {
    let mut gates = Vec::new();
    let risk = &report.overall.risk;
    let verdict = |held: bool| if held { "held" } else { "FAILED" };
    if let Some(min) = min_accuracy_lower {
        // No review: no interval, so the gate cannot hold.
        let lower = risk.accuracy_ci.map(|[low, _]| low);
        let held = lower.is_some_and(|low| low >= min);
        gates.push(Gate {
            held,
            line: format!(
                "min-accuracy-lower {min}: {} (accuracy 95% CI lower bound {})",
                verdict(held),
                lower.map_or("n/a".to_owned(), |low| format!("{low:.4}"))
            ),
        });
    }
    if let Some(max) = max_false_pass {
        let held = risk.false_pass <= max;
        gates.push(Gate {
            held,
            line: format!(
                "max-false-pass {max}: {} ({} false PASS)",
                verdict(held),
                risk.false_pass
            ),
        });
    }
    if let Some(min) = min_coverage {
        let held = risk.coverage.is_some_and(|coverage| coverage >= min);
        gates.push(Gate {
            held,
            line: format!(
                "min-coverage {min}: {} (coverage {})",
                verdict(held),
                risk.coverage
                    .map_or("n/a".to_owned(), |coverage| format!("{coverage:.4}"))
            ),
        });
    }
    gates
}

/// Checks a gate's fraction: within 0..=1.
pub fn check_fraction(flag: &str, value: Option<f64>) -> Result<(), crate::InputError> {
    match value {
        Some(x) if !(0.0..=1.0).contains(&x) => Err(crate::InputError(format!(
            "--{flag} must be within 0..=1, not {x}"
        ))),
        _ => Ok(()),
    }
}
