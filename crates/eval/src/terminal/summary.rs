//! The summary `jevjudge eval` prints (and `jevjudge report` without `--html`): the main
//! table, the risk table and, for a repeated run, the repeat figures.

use std::{
    fmt::{Display, Write as _},
    path::Path,
};

use super::scope_width;
use crate::{
    Report, Summary,
    cells::{
        ERROR_BASE_HEADERS, error_base_cell, error_bases, false_verdicts, interval,
        prevalence_lines, rate, repeat_cells, scopes, summary_cells,
    },
    gates::Gate,
};

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
    let [headers @ .., tokens] = COLUMNS.map(|(header, _)| header);
    line(&mut out, "scope", width, headers, tokens);
    for (scope, s, _) in scopes(report) {
        let scope: String = scope.chars().take(width).collect();
        let [cells @ .., tokens] =
            summary_cells(s, |millis| format!("{millis:.2}"), Summary::tokens_text);
        line(&mut out, &scope, width, cells, &tokens);
    }
    if !report.overall.error_kinds.is_empty() {
        let _ = writeln!(out, "errors: {}", report.overall.errors_text());
    }
    out.push_str(&risk_table(report, width));
    for line in crate::cells::weighting_lines(&report.overall) {
        let _ = writeln!(out, "{line}");
    }
    for line in prevalence_lines(&report.overall) {
        let _ = writeln!(out, "{line}");
    }
    for (criterion, at) in &report.overall.risk.at_prevalence_by_criterion {
        let _ = writeln!(
            out,
            "  criterion `{criterion}` (current thresholds): PASS precision {} · FAIL precision {}",
            rate(at.pass_precision, at.pass_precision_ci, 4),
            rate(at.fail_precision, at.fail_precision_ci, 4)
        );
    }
    if let Some(wall) = report.wall_millis.filter(|w| *w > 0.0) {
        // The wall time is this session's: count only the reviews it ran (a resumed run's
        // earlier rows took no time here).
        let reviews = reviews_this_run.unwrap_or(report.overall.total);
        let _ = writeln!(
            out,
            "wall {:.3} s for {} ({:.0} reviews/s)",
            wall / 1e3,
            crate::plural::count(reviews, "review"),
            reviews as f64 / (wall / 1e3)
        );
    }
    if let Some(cost) = report.overall.cost {
        let _ = writeln!(
            out,
            "cost: {cost:.6} (input tokens of {} with known usage × your price)",
            crate::plural::count(report.overall.usage_known_rows, "row")
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

/// The main table's columns after the scope, with their widths; the tokens come last,
/// unpadded.
const COLUMNS: [(&str, usize); 9] = [
    ("total", 6),
    ("correct", 7),
    ("incorrect", 9),
    ("abstained", 9),
    ("errors", 6),
    ("accuracy", 8),
    ("p50 ms", 8),
    ("p95 ms", 8),
    ("tokens in/out", 0),
];

/// One line of the main table: the scope padded to `width`, the cells right-aligned in
/// [`COLUMNS`], then the tokens.
fn line(out: &mut String, scope: &str, width: usize, cells: [impl Display; 8], tokens: &str) {
    let _ = write!(out, "{scope:<width$} ");
    for (cell, (_, cell_width)) in cells.iter().zip(COLUMNS) {
        let _ = write!(out, " {cell:>cell_width$}");
    }
    let _ = writeln!(out, "  {tokens}");
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
    for (scope, s, _) in scopes(report) {
        let scope: String = scope.chars().take(width).collect();
        let risk = &s.risk;
        let [false_pass, false_fail] =
            false_verdicts(risk).map(|(n, value, ci)| format!("{n} {}", rate(value, ci, 3)));
        let _ = writeln!(
            out,
            "{scope:<width$}  {:<16}  {:<21}  {:<21}  {false_pass:<24}  {false_fail:<24}",
            interval(risk.accuracy_ci, 3),
            rate(risk.coverage, risk.coverage_ci, 3),
            rate(risk.decided_accuracy, risk.decided_accuracy_ci, 3),
        );
    }
    let [h1, h2, h3, h4] = ERROR_BASE_HEADERS;
    let _ = writeln!(
        out,
        "{:<width$}  {h1:<28}  {h2:<28}  {h3:<28}  {h4:<28}",
        "scope"
    );
    for (scope, s, _) in scopes(report) {
        let scope: String = scope.chars().take(width).collect();
        let [a, b, c, d] = error_bases(&s.risk).map(|cell| error_base_cell(cell, 3, false));
        let _ = writeln!(out, "{scope:<width$}  {a:<28}  {b:<28}  {c:<28}  {d:<28}");
    }
    let _ = writeln!(
        out,
        "(intervals 95 %; upper = one-sided 95 % Clopper–Pearson bound; methods: docs/explanation/statistics.md)"
    );
    if report.overall.repeated.repeats > 1 {
        let _ = writeln!(
            out,
            "{:<width$}  {:>7} {:>7} {:>24}  {:<24}  probability SD (mean per case)",
            "scope", "repeats", "flipped", "flip rate [95% CI]", "accuracy by repeat"
        );
        for (scope, s, _) in scopes(report) {
            let scope: String = scope.chars().take(width).collect();
            let [repeats, flipped, flip_rate, by_repeat, sd] = repeat_cells(s, " ");
            let _ = writeln!(
                out,
                "{scope:<width$}  {repeats:>7} {flipped:>7} {flip_rate:>24}  {by_repeat:<24}  {sd}"
            );
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
