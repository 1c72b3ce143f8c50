//! A Markdown summary for a CI job summary (for example `$GITHUB_STEP_SUMMARY`).

mod risk;

use std::fmt::Write;

use crate::{Report, Summary, cells::summary_cells};

/// Renders the figures as Markdown tables. `gates` lines (already phrased) are appended.
pub fn to_markdown(report: &Report, gates: &[String]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## jevjudge: {}",
        code_span(&report.definition_version)
    );
    let _ = writeln!(out);
    let backend = report.backend;
    let mut notes = vec![format!("backend: **{backend}**")];
    if backend.is_synthetic() {
        notes.push(format!("answers are {backend} data, not a model's"));
    }
    if let Some(stop) = &report.stopped {
        notes.push(format!(
            "**incomplete run** (stopped: {stop}): figures cover finished rows only"
        ));
    } else if !report.complete {
        notes.push("**incomplete run** (interrupted): figures cover finished rows only".into());
    }
    let models = report.models();
    if !models.is_empty() {
        let models: Vec<String> = models.iter().map(|m| escape(m)).collect();
        notes.push(format!("model: {}", models.join(", ")));
    }
    let _ = writeln!(out, "{}", notes.join(" · "));
    risk::table(
        &mut out,
        report,
        "| scope | total | correct | incorrect | abstained | errors | accuracy | P50 ms | P95 ms | input tokens |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        |s| summary_cells(s, |millis| format!("{millis:.1}"), input_tokens).to_vec(),
    );
    if !report.overall.error_kinds.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "| error (kind/detail) | rows |");
        let _ = writeln!(out, "|---|---:|");
        for (kind, n) in &report.overall.error_kinds {
            let _ = writeln!(out, "| {} | {n} |", escape(kind));
        }
    }
    if let Some(attempts) = &report.overall.attempts {
        let _ = writeln!(out);
        let _ = writeln!(out, "Attempts: {}", attempts.text());
    }
    out.push_str(&risk::markdown(report));
    if !gates.is_empty() {
        let _ = writeln!(out);
        for gate in gates {
            let _ = writeln!(out, "- {gate}");
        }
    }
    out
}

/// The input tokens of the rows with known usage, `1234 (10 rows)`, or `unknown`.
fn input_tokens(s: &Summary) -> String {
    match s.input_tokens {
        Some(tokens) => format!(
            "{tokens} ({})",
            crate::plural::count(s.usage_known_rows, "row")
        ),
        None => "unknown".to_owned(),
    }
}

/// Text as a Markdown code span (where nothing is interpreted), fenced by more backticks than
/// it holds in a row; line breaks become spaces.
pub fn code_span(text: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    if longest == 0 {
        format!("{fence}{text}{fence}")
    } else {
        format!("{fence} {text} {fence}")
    }
}

/// Makes text inert in Markdown: the characters that start markup inside a table cell are
/// backslash-escaped (so `<!--`, `|`, `*`, backticks and links stay literal text) and line
/// breaks become spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '~' | '&' | '!' | '#' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}
