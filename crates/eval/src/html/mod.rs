//! A self-contained HTML report: one file, no network, no external assets, no script.
//!
//! [`to_html`] renders a [`Report`] with its summary tables, a per-scenario figure and inline
//! SVG charts: per criterion a reliability diagram (10 equal-width bins) and a histogram of the
//! yes-probabilities by label with the two thresholds drawn, and the distribution of review
//! times with P50 and P95. A banner says when the answers came from the `fake` or `fixture`
//! backend (they measure no model) and when the run was interrupted.
//!
//! Privacy (judge-contract rule 63): reports hold no raw text, and neither does this page
//! unless the caller passes the cases' text explicitly ([`HtmlOptions::texts`], the CLI's
//! `--include-text`); the page then says so at the top. Every string that reaches the page —
//! ids, scenarios, versions, model names and text — is HTML-escaped: the page and its tables
//! are templated with maud (`page.rs`, `tables.rs`), which escapes every string it inserts;
//! the SVG charts are written by hand (`charts.rs`) and pass every string through [`escape`];
//! the page's number formatters live in `format.rs`, and the table cells it shares with the
//! terminal and Markdown (summary, risk and repeat rows) in `src/cells.rs`.

mod charts;
mod format;
mod page;
pub(crate) mod tables;

pub use crate::cells::repeat_cells;

#[cfg(test)]
mod tests;

use std::{collections::HashMap, fmt::Write};

use serde_json::Value;

use crate::{Case, CaseInput, Report, calibration::CriterionSpec};

/// What to render beside the report.
#[derive(Debug, Clone, Copy, Default)]
pub struct HtmlOptions<'a> {
    /// The definition's criteria (for `expected` and the thresholds drawn on the histograms).
    /// Without them, criteria are read from the report and no thresholds are drawn.
    pub criteria: Option<&'a [CriterionSpec]>,
    /// Case text by case id, shown beside each row. Only when the user asked for it.
    pub texts: Option<&'a HashMap<String, String>>,
}

/// The page of `report`, with the thresholds of `definition` (the one the run used) when
/// given, and each case's text beside its row when `texts` is given.
pub fn page(
    report: &Report,
    definition: Option<&jevjudge_judge::Definition>,
    texts: Option<&HashMap<String, String>>,
) -> String {
    let specs = definition.map(CriterionSpec::from_definition);
    to_html(
        report,
        &HtmlOptions {
            criteria: specs.as_deref(),
            texts,
        },
    )
}

/// Escapes text for HTML element content and double-quoted attribute values, exactly as the
/// templates do (maud's escaper: `&`, `<`, `>` and `"`; an apostrophe is inert in both
/// places). The hand-written SVG charts use it, so the whole page escapes one way.
///
/// ```
/// use jevjudge_eval::html::escape;
/// assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;'&amp;'&lt;/a&gt;");
/// ```
pub fn escape(text: &str) -> String {
    maud::html! { (text) }.into_string()
}

/// A case's text as the page shows it with `--include-text`: the question, evidence and answer
/// of the evaluator form, or the state as indented JSON.
pub fn case_text(case: &Case) -> String {
    match &case.input {
        CaseInput::Evaluator(request) => {
            let mut text = format!("Question: {}\n", request.question);
            for (i, item) in request.supporting_context.iter().enumerate() {
                let _ = writeln!(text, "Evidence {}: {item}", i + 1);
            }
            let _ = write!(text, "Answer: {}", request.answer);
            text
        }
        CaseInput::State(Value::String(text)) => text.clone(),
        CaseInput::State(state) => {
            serde_json::to_string_pretty(state).unwrap_or_else(|_| state.to_string())
        }
    }
}

/// The case text of every case, by id (for [`HtmlOptions::texts`]).
pub fn case_texts<'a>(cases: impl IntoIterator<Item = &'a Case>) -> HashMap<String, String> {
    cases
        .into_iter()
        .map(|case| (case.id.clone(), case_text(case)))
        .collect()
}

const CORRECT: &str = "#2f855a";
const INCORRECT: &str = "#c53030";
const ABSTAINED: &str = "#d69e2e";
const ERRORED: &str = "#718096";
const HOLDS: &str = "#2b6cb0";
const DOES_NOT_HOLD: &str = "#dd6b20";

/// Renders the report as one self-contained HTML page.
pub fn to_html(report: &Report, options: &HtmlOptions<'_>) -> String {
    page::render(report, options)
}
