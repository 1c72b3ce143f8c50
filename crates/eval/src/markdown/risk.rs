//! Markdown tables of intervals, risk and coverage, and repeats. The HTML tables
//! are templated in [`crate::html`]; both take their cells from [`crate::cells`].

use std::fmt::Write;

use crate::{
    Report, Summary,
    cells::{
        ERROR_BASE_HEADERS, METHOD, error_base_cell, error_bases, repeat_cells, risk_cells, scopes,
    },
};

/// The Markdown tables: risk and coverage, then (with repeats) the repeat figures.
pub fn markdown(report: &Report) -> String {
    let escape_cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    let mut out = String::new();
    table(
        &mut out,
        report,
        "| scope | accuracy [95% CI] | coverage (decided/total) [95% CI] | decided accuracy [95% CI] | false PASS (rate [95% CI]) | false FAIL (rate [95% CI]) |",
        "|---|---:|---:|---:|---:|---:|",
        |s| risk_cells(s).to_vec(),
    );
    table(
        &mut out,
        report,
        &format!("| scope | {} |", ERROR_BASE_HEADERS.join(" | ")),
        "|---|---:|---:|---:|---:|",
        |s| {
            error_bases(&s.risk)
                .map(|cell| error_base_cell(cell, 4, true))
                .to_vec()
        },
    );
    if report.overall.repeated.repeats > 1 {
        table(
            &mut out,
            report,
            "| scope | repeats | flipped cases | flip rate [95% CI] | accuracy by repeat | probability SD (mean per case) |",
            "|---|---:|---:|---:|---:|---|",
            |s| {
                repeat_cells(s, " · ")
                    .iter()
                    .map(|c| escape_cell(c))
                    .collect()
            },
        );
    }
    for line in crate::cells::weighting_lines(&report.overall) {
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", super::escape(&line));
    }
    for line in crate::cells::prevalence_lines(&report.overall) {
        let _ = writeln!(out);
        let _ = writeln!(out, "{}", super::escape(&line));
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "_{METHOD}_");
    out
}

/// One table after a blank line: `header`, `rule`, then a row per scope (overall in bold).
/// The main table and the risk and repeat tables are all written by it.
pub(super) fn table(
    out: &mut String,
    report: &Report,
    header: &str,
    rule: &str,
    cells: impl Fn(&Summary) -> Vec<String>,
) {
    let _ = writeln!(out);
    let _ = writeln!(out, "{header}");
    let _ = writeln!(out, "{rule}");
    for (scope, s, overall) in scopes(report) {
        let scope = if overall {
            "**overall**".to_owned()
        } else {
            super::escape(scope)
        };
        let _ = writeln!(out, "| {scope} | {} |", cells(s).join(" | "));
    }
}
