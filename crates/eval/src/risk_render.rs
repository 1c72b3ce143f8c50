//! Markdown and HTML tables of intervals, risk and coverage, and repeats (issue 14).

use std::fmt::Write;

use crate::{Report, Summary, html::escape};

/// `0.8333 [0.7655, 0.8845]`, or `n/a`.
fn rate(value: Option<f64>, interval: Option<[f64; 2]>) -> String {
    match (value, interval) {
        (Some(value), Some([low, high])) => format!("{value:.4} [{low:.4}, {high:.4}]"),
        (Some(value), None) => format!("{value:.4}"),
        _ => "n/a".to_owned(),
    }
}

fn scopes(report: &Report) -> impl Iterator<Item = (&str, &Summary, bool)> {
    std::iter::once(("overall", &report.overall, true)).chain(
        report
            .scenarios
            .iter()
            .map(|(name, summary)| (name.as_str(), summary, false)),
    )
}

/// The cells of one scope's risk row: accuracy, coverage, decided accuracy, false PASS,
/// false FAIL (count, rate and interval).
fn risk_cells(s: &Summary) -> [String; 5] {
    let r = &s.risk;
    [
        rate(Some(s.accuracy).filter(|_| s.total > 0), r.accuracy_ci),
        format!(
            "{}/{} = {}",
            r.decided,
            s.total,
            rate(r.coverage, r.coverage_ci)
        ),
        format!(
            "{}/{} = {}",
            s.correct,
            r.decided,
            rate(r.decided_accuracy, r.decided_accuracy_ci)
        ),
        format!(
            "{} ({})",
            r.false_pass,
            rate(r.false_pass_rate, r.false_pass_rate_ci)
        ),
        format!(
            "{} ({})",
            r.false_fail,
            rate(r.false_fail_rate, r.false_fail_rate_ci)
        ),
    ]
}

fn repeat_cells(s: &Summary) -> [String; 5] {
    let r = &s.repeated;
    let by_repeat: Vec<String> = r
        .accuracy_by_repeat
        .iter()
        .flatten()
        .map(|a| format!("{a:.4}"))
        .collect();
    let sd: Vec<String> = r
        .probability_sd
        .iter()
        .flatten()
        .map(|(criterion, sd)| format!("{criterion} {sd:.4}"))
        .collect();
    [
        r.repeats.to_string(),
        r.flipped.unwrap_or(0).to_string(),
        format!("{:.4}", r.flip_rate.unwrap_or(0.0)),
        by_repeat.join(" · "),
        if sd.is_empty() {
            "n/a".to_owned()
        } else {
            sd.join(", ")
        },
    ]
}

const METHOD: &str = "95 % intervals: Wilson score with one review per case; with repeats, Wilson at the effective number of independent reviews (the case is the unit; docs/repeats-and-intervals.md). Rates of false PASS / false FAIL are per decided review.";

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

/// The HTML panels: risk and coverage, then (with repeats) the repeat figures and the cases
/// whose verdict flipped between repeats.
pub fn html(report: &Report) -> String {
    let mut out = String::new();
    out.push_str("<h2>Risk and coverage</h2>\n<div class=\"panel\">\n<table class=\"risk\">\n<thead><tr><th>scope</th><th class=\"num\">accuracy [95% CI]</th><th class=\"num\">coverage: decided / total [95% CI]</th><th class=\"num\">decided accuracy [95% CI]</th><th class=\"num\">false PASS: n, rate [95% CI]</th><th class=\"num\">false FAIL: n, rate [95% CI]</th></tr></thead>\n<tbody>\n");
    for (scope, s, overall) in scopes(report) {
        let _ = write!(
            out,
            "<tr{}><td>{}</td>",
            if overall { " class=\"overall\"" } else { "" },
            escape(scope)
        );
        for cell in risk_cells(s) {
            // Count, rate and interval on lines of their own, so that six columns fit an
            // 800 px page.
            let cell = escape(&cell)
                .replacen(" = ", "<br>", 1)
                .replacen(" (", "<br>", 1)
                .replacen("])", "]", 1)
                .replacen(" [", "<br><span class=\"ci\">[", 1)
                + if cell.contains('[') { "</span>" } else { "" };
            let _ = write!(out, "<td class=\"num\">{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    let _ = writeln!(
        out,
        "</tbody>\n</table>\n<p class=\"note\">Coverage = PASS or FAIL verdicts ÷ reviews; decided accuracy = correct ÷ decided. A false PASS is a case expected to fail that got PASS (an unsupported draft published), a false FAIL the reverse. {}</p>\n</div>",
        escape(METHOD)
    );
    if report.overall.repeated.repeats <= 1 {
        return out;
    }
    out.push_str("<h2>Repeats</h2>\n<div class=\"panel\">\n<table>\n<thead><tr><th>scope</th><th class=\"num\">repeats</th><th class=\"num\">flipped cases</th><th class=\"num\">flip rate</th><th class=\"num\">accuracy by repeat</th><th>probability SD (mean per case)</th></tr></thead>\n<tbody>\n");
    for (scope, s, overall) in scopes(report) {
        let _ = write!(
            out,
            "<tr{}><td>{}</td>",
            if overall { " class=\"overall\"" } else { "" },
            escape(scope)
        );
        let cells = repeat_cells(s);
        for (i, cell) in cells.iter().enumerate() {
            // Accuracy by repeat (up to ten figures) may wrap.
            let class = if i < 3 { " class=\"num\"" } else { "" };
            let _ = write!(out, "<td{class}>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
    let flipped: Vec<_> = report.rows.iter().filter(|row| row.flipped()).collect();
    if !flipped.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"note\">Cases whose verdict differs between repeats ({}):</p>\n<table>\n<thead><tr><th>id</th><th>scenario</th><th>expected</th><th>verdicts by repeat</th><th class=\"num\">pass rate</th></tr></thead>\n<tbody>",
            flipped.len()
        );
        for row in flipped {
            let statuses: Vec<String> = row
                .verdicts()
                .iter()
                .map(|v| format!("<span class=\"status s-{0}\">{0}</span>", v.status))
                .collect();
            let pass_rate = row.repeats.as_ref().map_or(0.0, |r| r.pass_rate);
            let _ = writeln!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{pass_rate:.4}</td></tr>",
                escape(&row.id),
                escape(&row.scenario),
                if row.expected_pass { "PASS" } else { "FAIL" },
                statuses.join(" ")
            );
        }
        out.push_str("</tbody>\n</table>\n");
    }
    out.push_str("</div>\n");
    out
}
