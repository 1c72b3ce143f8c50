//! Markdown tables of intervals, risk and coverage, and repeats (issue 14). The HTML tables
//! are templated in [`crate::html`]; both take their cells from the same functions.

use std::fmt::Write;

use crate::{
    Report, Summary,
    html::tables::{METHOD, repeat_cells, risk_cells},
};

fn scopes(report: &Report) -> impl Iterator<Item = (&str, &Summary, bool)> {
    std::iter::once(("overall", &report.overall, true)).chain(
        report
            .scenarios
            .iter()
            .map(|(name, summary)| (name.as_str(), summary, false)),
    )
}

/// The Markdown tables: risk and coverage, then (with repeats) the repeat figures.
pub fn markdown(report: &Report) -> String {
    let escape_cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    let mut out = String::new();
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| scope | accuracy [95% CI] | coverage (decided/total) [95% CI] | decided accuracy [95% CI] | false PASS (rate [95% CI]) | false FAIL (rate [95% CI]) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|");
    for (scope, s, overall) in scopes(report) {
        let scope = if overall {
            "**overall**".to_owned()
        } else {
            crate::markdown::escape(scope)
        };
        let cells = risk_cells(s);
        let _ = writeln!(out, "| {scope} | {} |", cells.join(" | "));
    }
    if report.overall.repeated.repeats > 1 {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "| scope | repeats | flipped cases | flip rate | accuracy by repeat | probability SD (mean per case) |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---|");
        for (scope, s, overall) in scopes(report) {
            let scope = if overall {
                "**overall**".to_owned()
            } else {
                crate::markdown::escape(scope)
            };
            let cells: Vec<String> = repeat_cells(s).iter().map(|c| escape_cell(c)).collect();
            let _ = writeln!(out, "| {scope} | {} |", cells.join(" | "));
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "_{METHOD}_");
    out
}
