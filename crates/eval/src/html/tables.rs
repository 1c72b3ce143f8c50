//! The page's tables, templated with maud (every string is escaped by the template): summary,
//! errors, per-criterion metrics, risk and coverage, repeats, and the rows.

use std::collections::HashMap;

use maud::{Markup, html};

use super::format::{millis, n4, opt, ratio3};
use crate::{
    Outcome, Report, Row, Summary,
    calibration::Metrics,
    cells::{
        ERROR_BASE_HEADERS, METHOD, error_base_cell, error_bases, repeat_cells, risk_cells, scopes,
        summary_cells,
    },
};

/// A colour legend: one swatch per `(label, colour)`.
pub(super) fn legend(items: &[(&str, &str)]) -> Markup {
    html! {
        div.legend {
            @for (label, color) in items {
                span style={ "--c:" (color) } { (label) }
            }
        }
    }
}

/// Counts, accuracy, P50/P95 and tokens, overall and per scenario.
pub(super) fn summary_table(report: &Report) -> Markup {
    html! {
        table {
            thead { tr {
                th { "scope" } th.num { "total" } th.num { "correct" } th.num { "incorrect" }
                th.num { "abstained" } th.num { "errors" } th.num { "accuracy" }
                th.num { "P50 ms" } th.num { "P95 ms" } th.num { "tokens in/out" }
            } }
            tbody {
                @for (scope, s, overall) in scopes(report) {
                    @let [cells @ .., tokens] = summary_cells(s, millis, Summary::tokens_text);
                    tr class=[overall.then_some("overall")] {
                        td { (scope) }
                        @for cell in &cells { td.num { (cell) } }
                        td."num tokens" { (tokens) }
                    }
                }
            }
        }
    }
}

/// Errors by kind and detail code, when any row errored.
pub(super) fn error_table(s: &Summary) -> Markup {
    html! {
        @if !s.error_kinds.is_empty() {
            h2 { "Errors" }
            div.panel {
                table {
                    thead { tr { th { "kind/detail" } th.num { "rows" } } }
                    tbody {
                        @for (kind, n) in &s.error_kinds {
                            tr { td { (kind) } td.num { (n) } }
                        }
                    }
                }
            }
        }
    }
}

/// One criterion's calibration metrics and finding statuses (PASS, FAIL, INCONCLUSIVE), in two
/// tables of six and five columns so that each fits an 800 px page.
pub(super) fn metrics_table(m: &Metrics, statuses: [u64; 3]) -> Markup {
    html! {
        table {
            thead { tr {
                th.num { "labelled" } th.num { "holds" } th.num { "base rate" } th.num { "Brier" }
                th.num { "log loss" } th.num { "AUROC" }
            } }
            tbody { tr {
                td.num { (m.n) }
                td.num { (m.positives) }
                td.num { (ratio3(m.positives, m.n)) }
                td.num { (opt(m.brier)) (span_interval(m.brier_ci)) }
                td.num { (opt(m.log_loss)) }
                td.num { (opt(m.auroc)) (span_interval(m.auroc_ci)) }
            } }
        }
        table {
            thead { tr {
                th.num { "ECE (equal-width)" }
                th.num { "ECE if perfectly calibrated" }
                th.num { "ECE (" (m.ece_equal_mass_bins) " equal-mass bins)" } th.num { "MCE" }
                th.num { "findings PASS / FAIL / INC." }
            } }
            tbody { tr {
                td.num { (opt(m.ece_equal_width)) (span_interval(m.ece_ci)) }
                td.num { (opt(m.ece_expected)) }
                td.num { (opt(m.ece_equal_mass)) }
                td.num { (opt(m.mce)) }
                td.num { (statuses[0]) " / " (statuses[1]) " / " (statuses[2]) }
            } }
        }
    }
}

/// A 95 % interval `[low, high]` on a line of its own under the figure, or nothing, so that the
/// metrics table fits an 800 px page.
fn span_interval(interval: Option<[f64; 2]>) -> Markup {
    html! {
        @if let Some([low, high]) = interval {
            br; span.ci { "[" (format!("{low:.4}, {high:.4}")) "]" }
        }
    }
}

/// The order of the rows to look at: incorrect first, then errors, then abstentions.
fn review_rank(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Incorrect => 0,
        Outcome::Error => 1,
        Outcome::Abstained => 2,
        Outcome::Correct => 3,
    }
}

fn outcome_class(outcome: Outcome) -> (&'static str, &'static str) {
    match outcome {
        Outcome::Correct => ("o-correct", "correct"),
        Outcome::Incorrect => ("o-incorrect", "incorrect"),
        Outcome::Abstained => ("o-abstained", "abstained"),
        Outcome::Error => ("o-error", "error"),
    }
}

fn expected(row: &Row) -> &'static str {
    if row.expected_pass { "PASS" } else { "FAIL" }
}

/// The rows to look at (incorrect, errored, abstained), then every row behind a disclosure.
pub(super) fn rows_section(report: &Report, texts: Option<&HashMap<String, String>>) -> Markup {
    if report.rows.is_empty() {
        return html! {};
    }
    let mut criteria: Vec<String> = Vec::new();
    for row in &report.rows {
        for (id, _) in row.verdict.findings.iter() {
            if !criteria.iter().any(|known| known == id) {
                criteria.push(id.to_owned());
            }
        }
    }
    let mut review: Vec<&Row> = report
        .rows
        .iter()
        .filter(|row| Outcome::of(row.verdict.status, row.expected_pass) != Outcome::Correct)
        .collect();
    // Stable: within one outcome, input order.
    review.sort_by_key(|row| review_rank(Outcome::of(row.verdict.status, row.expected_pass)));
    let all: Vec<&Row> = report.rows.iter().collect();
    html! {
        h2 { "Rows to look at (" (review.len()) " incorrect, errored or abstained, in that order)" }
        div.panel {
            @if review.is_empty() {
                p { "Every row is correct." }
            } @else {
                (rows_table(&review, &criteria, texts))
            }
        }
        div.panel { details {
            summary { "All " (crate::plural::count(all.len(), "row")) }
            (rows_table(&all, &criteria, texts))
        } }
    }
}

fn rows_table(
    rows: &[&Row],
    criteria: &[String],
    texts: Option<&HashMap<String, String>>,
) -> Markup {
    html! {
        table {
            thead { tr {
                th { "id" } th { "scenario" } th { "expected" } th { "verdict" } th { "outcome" }
                @for id in criteria { th.num { "p(" (id) ")" } }
                th.num { "ms" }
                @if texts.is_some() { th { "case text" } }
            } }
            tbody {
                @for row in rows {
                    @let status = row.verdict.status;
                    @let (class, outcome) = outcome_class(Outcome::of(status, row.expected_pass));
                    tr {
                        td { code { (row.id) } }
                        td { (row.scenario) }
                        td { (expected(row)) }
                        td {
                            span class={ "status s-" (status) } { (status) }
                            @if let Some(detail) = row.verdict.detail {
                                " " code { (row.verdict.error) "/" (detail) }
                            }
                        }
                        td class=(class) { (outcome) }
                        @for id in criteria {
                            @match row.verdict.findings.get(id) {
                                Some(finding) => {
                                    td.num {
                                        (n4(finding.yes_probability))
                                        span.note { (label_of(row, id)) }
                                    }
                                }
                                None => { td.num { "—" } }
                            }
                        }
                        td.num { (millis(row.verdict.elapsed_millis())) }
                        @if let Some(texts) = texts {
                            @match texts.get(&row.id) {
                                Some(text) => { td { pre.case { (text) } } }
                                None => { td.note { "not in the cases file" } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// ` · holds` or ` · does not hold` when the row labels the criterion, else nothing.
fn label_of(row: &Row, id: &str) -> &'static str {
    row.expected_findings
        .iter()
        .flatten()
        .find(|(criterion, _)| criterion == id)
        .map(|(_, holds)| {
            if *holds {
                " · holds"
            } else {
                " · does not hold"
            }
        })
        .unwrap_or("")
}

/// A risk cell with its count, rate and interval on lines of their own, so that six columns
/// fit an 800 px page: `3/10 = 0.3 [0.1, 0.6]` → `3/10`, `0.3`, `[0.1, 0.6]`.
fn risk_cell(cell: &str) -> Markup {
    let (head, rest) = match cell.split_once(" = ") {
        Some((head, rest)) => (Some(head), rest.to_owned()),
        None => match cell.split_once(" (") {
            Some((head, rest)) => (Some(head), rest.replacen("])", "]", 1)),
            None => (None, cell.to_owned()),
        },
    };
    let (value, interval) = match rest.split_once(" [") {
        Some((value, interval)) => (value, Some(interval)),
        None => (rest.as_str(), None),
    };
    html! {
        @if let Some(head) = head { (head) br; }
        (value)
        @if let Some(interval) = interval {
            @match interval.split_once("] upper ") {
                Some((interval, upper)) => {
                    br; span.ci { "[" (interval) "]" } br; span.ci { "upper " (upper) }
                }
                None => { br; span.ci { "[" (interval) } }
            }
        }
    }
}

/// The risk and coverage panel, then (with repeats) the repeat figures and the cases whose
/// verdict flipped between repeats.
pub(super) fn risk_tables(report: &Report) -> Markup {
    let flipped: Vec<&Row> = report.rows.iter().filter(|row| row.flipped()).collect();
    html! {
        h2 { "Risk and coverage" }
        div.panel {
            table.risk {
                thead { tr {
                    th { "scope" } th.num { "accuracy [95% CI]" }
                    th.num { "coverage: decided / total [95% CI]" }
                    th.num { "decided accuracy [95% CI]" }
                    th.num { "false PASS: n, rate [95% CI]" }
                    th.num { "false FAIL: n, rate [95% CI]" }
                } }
                tbody {
                    @for (scope, s, overall) in scopes(report) {
                        tr class=[overall.then_some("overall")] {
                            td { (scope) }
                            @for cell in risk_cells(s) { td.num { (risk_cell(&cell)) } }
                        }
                    }
                }
            }
            table.risk {
                thead { tr {
                    th { "scope" }
                    @for header in ERROR_BASE_HEADERS { th.num { (header) } }
                } }
                tbody {
                    @for (scope, s, overall) in scopes(report) {
                        tr class=[overall.then_some("overall")] {
                            td { (scope) }
                            @for cell in error_bases(&s.risk) {
                                td.num { (risk_cell(&error_base_cell(cell, 4, true))) }
                            }
                        }
                    }
                }
            }
            @for line in crate::cells::weighting_lines(&report.overall) {
                p.note { (line) }
            }
            @for line in crate::cells::prevalence_lines(&report.overall) {
                p.note { (line) }
            }
            p.note {
                "Coverage = PASS or FAIL verdicts ÷ reviews; decided accuracy = correct ÷ decided. A false PASS is a case expected to fail that got PASS (an unsupported draft published), a false FAIL the reverse. "
                (METHOD)
            }
        }
        @if report.overall.repeated.repeats > 1 {
            h2 { "Repeats" }
            div.panel {
                table {
                    thead { tr {
                        th { "scope" } th.num { "repeats" } th.num { "flipped cases" }
                        th.num { "flip rate [95% CI]" } th.num { "accuracy by repeat" }
                        th { "probability SD (mean per case)" }
                    } }
                    tbody {
                        @for (scope, s, overall) in scopes(report) {
                            tr class=[overall.then_some("overall")] {
                                td { (scope) }
                                @for (i, cell) in repeat_cells(s, " · ").iter().enumerate() {
                                    // Accuracy by repeat (up to ten figures) may wrap.
                                    td class=[(i < 3).then_some("num")] { (cell) }
                                }
                            }
                        }
                    }
                }
                @if !flipped.is_empty() {
                    p.note { "Cases whose verdict differs between repeats (" (flipped.len()) "):" }
                    table {
                        thead { tr {
                            th { "id" } th { "scenario" } th { "expected" }
                            th { "verdicts by repeat" } th.num { "pass rate" }
                        } }
                        tbody {
                            @for row in &flipped {
                                tr {
                                    td { code { (row.id) } }
                                    td { (row.scenario) }
                                    td { (expected(row)) }
                                    td {
                                        @for (i, v) in row.verdicts().iter().enumerate() {
                                            @if i > 0 { " " }
                                            span class={ "status s-" (v.status) } { (v.status) }
                                        }
                                    }
                                    td.num {
                                        (format!("{:.4}", row.repeats.as_ref().map_or(0.0, |r| r.pass_rate)))
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
