//! A Markdown summary for a CI job summary (for example `$GITHUB_STEP_SUMMARY`).

use std::fmt::Write;

use crate::{Report, Summary};

/// Renders the figures as Markdown tables. `gates` lines (already phrased) are appended.
pub fn to_markdown(report: &Report, gates: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## jevjudge: `{}`", escape(&report.definition_version));
    let _ = writeln!(out);
    let backend = report.backend;
    let mut notes = vec![format!("backend: **{backend}**")];
    if backend.is_synthetic() {
        notes.push(format!("answers are {backend} data, not a model's"));
    }
    if !report.complete {
        notes.push("**incomplete run** (interrupted): figures cover finished rows only".into());
    }
    let models = report.models();
    if !models.is_empty() {
        notes.push(format!("model: {}", models.join(", ")));
    }
    let _ = writeln!(out, "{}", notes.join(" · "));
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| scope | total | correct | incorrect | abstained | errors | accuracy | P50 ms | P95 ms | input tokens |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    row(&mut out, "**overall**", &report.overall);
    for (scenario, summary) in &report.scenarios {
        row(&mut out, &escape(scenario), summary);
    }
    out.push_str(&crate::risk_render::markdown(report));
    if !gates.is_empty() {
        let _ = writeln!(out);
        for gate in gates {
            let _ = writeln!(out, "- {gate}");
        }
    }
    out
}

fn row(out: &mut String, scope: &str, s: &Summary) {
    let tokens = match s.input_tokens {
        Some(tokens) => format!("{tokens} ({} rows)", s.usage_known_rows),
        None => "unknown".to_owned(),
    };
    let _ = writeln!(
        out,
        "| {scope} | {} | {} | {} | {} | {} | {:.4} | {:.1} | {:.1} | {tokens} |",
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

/// Escapes the characters that would break a table cell.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
