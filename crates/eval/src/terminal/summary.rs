//! The summary `jevjudge eval` prints (and `jevjudge report` without `--html`): the main
//! table, the risk table of issue 14 and, for a repeated run, the repeat figures.

use std::{fmt::Write as _, path::Path};

use super::scope_width;
use crate::{Report, Summary, gates::Gate, html::tables::repeat_figures};

/// The short human summary printed on standard output. `rows_file` is the run's rows file;
/// `reviews_this_run` the reviews this session ran (a resumed run's earlier rows took no
/// time here), for the throughput line [default: every review of the report].
pub fn summary(
    report: &Report,
    gates: &[Gate],
    rows_file: Option<&Path>,
    reviews_this_run: Option<u64>,
) -> String {
    let mut out = String::new();
    let models = report.models();
    let _ = writeln!(
        out,
        "jevjudge eval: {} · backend {}{}{}",
        report.definition_version,
        report.backend,
        if models.is_empty() {
            String::new()
        } else {
            format!(" · model {}", models.join(", "))
        },
        if report.complete {
            ""
        } else if report.stopped.is_some() {
            " · INCOMPLETE (stopped)"
        } else {
            " · INCOMPLETE (interrupted)"
        }
    );
    if report.backend.is_synthetic() {
        let _ = writeln!(
            out,
            "note: answers come from the {} backend, not a model: these figures measure no model",
            report.backend
        );
    }
    let width = scope_width(report.scenarios.iter().map(|(name, _)| name.as_str()));
    let _ = writeln!(
        out,
        "{:<width$}  {:>6} {:>7} {:>9} {:>9} {:>6} {:>8} {:>8} {:>8}  tokens in/out",
        "scope",
        "total",
        "correct",
        "incorrect",
        "abstained",
        "errors",
        "accuracy",
        "p50 ms",
        "p95 ms"
    );
    line(&mut out, "overall", &report.overall, width);
    for (name, summary) in &report.scenarios {
        let name: String = name.chars().take(width).collect();
        line(&mut out, &name, summary, width);
    }
    if !report.overall.error_kinds.is_empty() {
        let _ = writeln!(out, "errors: {}", report.overall.errors_text());
    }
    out.push_str(&risk_table(report, width));
    if let Some(wall) = report.wall_millis.filter(|w| *w > 0.0) {
        // The wall time is this session's: count only the reviews it ran (a resumed run's
        // earlier rows took no time here).
        let reviews = reviews_this_run.unwrap_or(report.overall.total);
        let _ = writeln!(
            out,
            "wall {:.3} s for {} reviews ({:.0} reviews/s)",
            wall / 1e3,
            reviews,
            reviews as f64 / (wall / 1e3)
        );
    }
    if let Some(cost) = report.overall.cost {
        let _ = writeln!(
            out,
            "cost: {cost:.6} (input tokens of {} rows with known usage × your price)",
            report.overall.usage_known_rows
        );
    }
    if let Some(attempts) = &report.overall.attempts {
        let _ = writeln!(out, "attempts: {}", attempts.text());
    }
    if let Some(stop) = &report.stopped {
        let _ = writeln!(out, "stopped: {stop}");
    }
    for gate in gates {
        let _ = writeln!(out, "gate {}", gate.line);
    }
    if let Some(path) = rows_file {
        let _ = writeln!(out, "rows: {}", path.display());
    }
    out
}

fn line(out: &mut String, scope: &str, s: &Summary, width: usize) {
    let tokens = s.tokens_text();
    let _ = writeln!(
        out,
        "{scope:<width$}  {:>6} {:>7} {:>9} {:>9} {:>6} {:>8.4} {:>8.2} {:>8.2}  {tokens}",
        s.total,
        s.correct,
        s.incorrect,
        s.abstained,
        s.errors,
        s.accuracy,
        s.p50_millis,
        s.p95_millis
    );
}

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
/// and per scenario; then, for a repeated run, the repeat figures. `width` is the scope
/// column's ([`scope_width`]).
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
        let _ = writeln!(
            out,
            "{scope:<width$}  {interval:<16}  {:<21}  {:<21}  {:<24}  {:<24}",
            rate(risk.coverage, risk.coverage_ci),
            rate(risk.decided_accuracy, risk.decided_accuracy_ci),
            format!(
                "{} {}",
                risk.false_pass,
                rate(risk.false_pass_rate, risk.false_pass_rate_ci)
            ),
            format!(
                "{} {}",
                risk.false_fail,
                rate(risk.false_fail_rate, risk.false_fail_rate_ci)
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
    let r = &s.repeated;
    let (by_repeat, sd) = repeat_figures(s);
    format!(
        "{:>7} {:>7} {:>9.4}  {:<24}  {sd}",
        r.repeats,
        r.flipped.unwrap_or(0),
        r.flip_rate.unwrap_or(0.0),
        by_repeat.join(" ")
    )
}
