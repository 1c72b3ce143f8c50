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
//! ids, scenarios, versions, model names and text — is HTML-escaped ([`escape`]).

use std::{collections::HashMap, fmt::Write};

use jevjudge_judge::{BackendKind, Status};
use jevjudge_stats::Thresholds;
use serde_json::Value;

use crate::{
    Case, CaseInput, Outcome, Report, Row, Summary,
    calibration::{
        BINS, CriterionPoints, CriterionSpec, Metrics, Z, extract, infer_criteria, metrics,
    },
};

/// What to render beside the report.
#[derive(Debug, Clone, Copy, Default)]
pub struct HtmlOptions<'a> {
    /// The definition's criteria (for `expected` and the thresholds drawn on the histograms).
    /// Without them, criteria are read from the report and no thresholds are drawn.
    pub criteria: Option<&'a [CriterionSpec]>,
    /// Case text by case id, shown beside each row. Only when the user asked for it.
    pub texts: Option<&'a HashMap<String, String>>,
}

/// Escapes text for HTML element content and attribute values.
///
/// ```
/// use jevjudge_eval::html::escape;
/// assert_eq!(escape(r#"<a href="x">'&'</a>"#), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
/// ```
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
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

const STYLE: &str = r#"
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { margin: 0; background: #f4f5f7; color: #1a202c;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1160px; margin: 0 auto; padding: 28px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 32px 0 12px; padding-bottom: 6px; border-bottom: 2px solid #e2e8f0; }
h3 { font-size: 16px; margin: 0 0 8px; }
.meta { color: #4a5568; margin: 0 0 16px; }
.meta code, td code { background: #edf2f7; padding: 1px 5px; border-radius: 4px; font-size: 13px; }
.banner { border-radius: 8px; padding: 12px 16px; margin: 12px 0; font-weight: 600; }
.banner.synthetic { background: #fffbea; border: 2px solid #d69e2e; color: #744210; }
.banner.incomplete { background: #fff5f5; border: 2px solid #c53030; color: #742a2a; }
.banner.text { background: #ebf8ff; border: 2px solid #2b6cb0; color: #2a4365; }
.cards { display: grid; grid-template-columns: repeat(4, minmax(0, 1fr)); gap: 12px; }
.card { background: #fff; border-radius: 8px; padding: 12px 16px; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
.card .label { color: #4a5568; font-size: 13px; }
.card .value { font-size: 22px; font-weight: 700; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.panel { background: #fff; border-radius: 8px; padding: 16px 20px; margin: 12px 0;
  box-shadow: 0 1px 2px rgba(0,0,0,.08); overflow-x: auto; }
.grid2 { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 12px; }
.grid2 .panel { margin: 0; }
table { border-collapse: collapse; width: 100%; font-size: 14px; }
th, td { padding: 5px 10px; border-bottom: 1px solid #e2e8f0; text-align: left; vertical-align: top; }
th { background: #f7fafc; font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th.num, td.tokens { white-space: normal; }
table.risk th, table.risk td { padding: 4px 6px; } .ci { font-size: 12px; color: #4a5568; }
@media (max-width: 900px) { main { padding: 20px 16px 40px; } th, td { padding: 4px 6px; }
  .cards { grid-template-columns: repeat(2, minmax(0, 1fr)); } }
tr.overall td { font-weight: 700; }
.status { font-weight: 700; font-size: 12px; padding: 1px 6px; border-radius: 4px; color: #fff; }
.s-PASS { background: #2f855a; } .s-FAIL { background: #c53030; }
.s-INCONCLUSIVE { background: #b7791f; } .s-ERROR { background: #718096; }
.o-correct { color: #2f855a; } .o-incorrect { color: #c53030; font-weight: 700; }
.o-abstained { color: #975a16; } .o-error { color: #4a5568; font-weight: 700; }
.note { color: #4a5568; font-size: 13px; margin: 6px 0 0; }
.refusal { color: #742a2a; }
svg { display: block; width: 100%; height: auto; }
svg text { font-family: inherit; fill: #2d3748; }
svg text.halo { paint-order: stroke; stroke: #fff; stroke-width: 4px; stroke-linejoin: round; }
.legend { display: flex; flex-wrap: wrap; gap: 14px; font-size: 13px; color: #4a5568; margin: 4px 0; }
.legend span::before { content: ""; display: inline-block; width: 11px; height: 11px; border-radius: 2px;
  margin-right: 5px; vertical-align: -1px; background: var(--c); }
pre.case { white-space: pre-wrap; word-break: break-word; margin: 0; font-size: 12.5px; max-width: 520px;
  background: #f7fafc; padding: 6px 8px; border-radius: 4px; }
details > summary { cursor: pointer; font-weight: 600; margin: 4px 0; }
footer { color: #718096; font-size: 13px; margin-top: 36px; }
"#;

/// Renders the report as one self-contained HTML page.
pub fn to_html(report: &Report, options: &HtmlOptions<'_>) -> String {
    let (specs, inferred_note) = match options.criteria {
        Some(specs) => (specs.to_vec(), None),
        None => match infer_criteria(report) {
            Ok(specs) => (
                specs,
                Some("thresholds are not drawn: the report does not hold them (give the definition to draw them)".to_owned()),
            ),
            Err(error) => (Vec::new(), Some(format!("criteria not charted: {error}"))),
        },
    };
    let criteria = extract(report, &specs);
    let mut out = String::with_capacity(64 * 1024 + report.rows.len() * 400);
    let title = format!("jevjudge report · {}", report.definition_version);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"jevjudge {}\">\n<title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n",
        env!("CARGO_PKG_VERSION"),
        escape(&title)
    );
    header(&mut out, report);
    if options.texts.is_some() {
        out.push_str(
            "<div class=\"banner text\">This page contains the cases' text (--include-text): share it only where that text may go.</div>\n",
        );
    }
    cards(&mut out, &report.overall);

    out.push_str("<h2>Summary</h2>\n<div class=\"panel\">\n");
    summary_table(&mut out, report);
    out.push_str("<p class=\"note\">Accuracy = correct ÷ total; abstentions (INCONCLUSIVE) and errors stay in the denominator. P50/P95 are nearest-rank over every row's review time.</p>\n</div>\n");
    error_table(&mut out, &report.overall);
    run_notes(&mut out, report);
    out.push_str(&crate::risk_render::html(report));

    out.push_str("<h2>Scenarios</h2>\n<div class=\"panel\">\n");
    legend(
        &mut out,
        &[
            ("correct", CORRECT),
            ("incorrect", INCORRECT),
            ("abstained", ABSTAINED),
            ("errors", ERRORED),
        ],
    );
    scenario_chart(&mut out, report);
    out.push_str("</div>\n");

    out.push_str("<h2>Criteria</h2>\n");
    if let Some(note) = &inferred_note {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(note));
    }
    if report.rows.is_empty() {
        out.push_str("<p class=\"note\">The report holds no rows (a streaming run keeps them in its rows file), so there is nothing to chart per criterion.</p>\n");
    }
    for points in &criteria {
        criterion_section(&mut out, report, points);
    }

    out.push_str("<h2>Review time</h2>\n<div class=\"panel\">\n");
    time_chart(&mut out, report);
    let _ = writeln!(
        out,
        "<p class=\"note\">Review time is measured from the moment a case got a concurrency slot until its answers were mapped (judge-contract rule 57); it is not end-to-end agent latency. {}</p>\n</div>",
        time_source(report.backend)
    );

    rows_section(&mut out, report, options.texts);

    let _ = write!(
        out,
        "<footer>Made by jevjudge {}. Reliability diagrams use {BINS} equal-width bins of the yes-probability; a row's label is its <code>expected_findings</code> entry, or for a one-criterion definition its <code>expected_pass</code> (with <code>expected</code> taken into account). Self-contained: no network, no external assets, no script.</footer>\n</main>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out
}

fn header(out: &mut String, report: &Report) {
    let _ = writeln!(
        out,
        "<h1>jevjudge report: <code>{}</code></h1>",
        escape(&report.definition_version)
    );
    let models = report.models();
    let _ = writeln!(
        out,
        "<p class=\"meta\">backend <code>{}</code> · {} · {} rows · format <code>{}</code>{}</p>",
        escape(report.backend.as_str()),
        if models.is_empty() {
            "model unknown".to_owned()
        } else {
            format!(
                "model {}",
                models
                    .iter()
                    .map(|m| format!("<code>{}</code>", escape(m)))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        report.overall.total,
        escape(&report.format),
        if report.complete {
            ""
        } else {
            " · incomplete"
        }
    );
    if report.backend.is_synthetic() {
        let what = match report.backend {
            BackendKind::Fake => {
                "the in-process fake backend (probabilities are a hash of the request)"
            }
            _ => "hand-made fixture records",
        };
        let _ = writeln!(
            out,
            "<div class=\"banner synthetic\">Backend <code>{}</code>: these answers come from {what}, not from a model. The figures below measure no model.</div>",
            escape(report.backend.as_str())
        );
    }
    if !report.complete {
        out.push_str("<div class=\"banner incomplete\">Incomplete run (interrupted): the figures cover the finished rows only.</div>\n");
    }
}

/// Errors by kind and detail code, when any row errored.
fn error_table(out: &mut String, s: &Summary) {
    if s.error_kinds.is_empty() {
        return;
    }
    out.push_str("<h2>Errors</h2>\n<div class=\"panel\">\n<table>\n<thead><tr><th>kind/detail</th><th class=\"num\">rows</th></tr></thead>\n<tbody>\n");
    for (kind, n) in &s.error_kinds {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"num\">{n}</td></tr>",
            escape(kind)
        );
    }
    out.push_str("</tbody>\n</table>\n</div>\n");
}

fn cards(out: &mut String, s: &Summary) {
    let tokens = match (s.input_tokens, s.output_tokens) {
        (Some(input), Some(output)) => format!("{input} / {output}"),
        _ => "unknown".to_owned(),
    };
    let items = [
        ("accuracy", format!("{:.4}", s.accuracy)),
        ("total", s.total.to_string()),
        ("correct", s.correct.to_string()),
        ("incorrect", s.incorrect.to_string()),
        ("abstained", s.abstained.to_string()),
        ("errors", s.errors.to_string()),
        (
            "P50 / P95 ms",
            format!("{} / {}", millis(s.p50_millis), millis(s.p95_millis)),
        ),
        ("tokens in / out", tokens),
    ];
    out.push_str("<div class=\"cards\">\n");
    for (label, value) in items {
        let _ = writeln!(
            out,
            "<div class=\"card\"><div class=\"label\">{label}</div><div class=\"value\">{}</div></div>",
            escape(&value)
        );
    }
    out.push_str("</div>\n");
}

/// A tick label with as many decimals as the axis span needs.
fn tick_label(value: f64, span: f64) -> String {
    let decimals = if span >= 10.0 {
        0
    } else {
        (2.0 - span.log10().floor()).clamp(1.0, 9.0) as usize
    };
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

fn millis(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 1.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    }
}

fn summary_table(out: &mut String, report: &Report) {
    out.push_str("<table>\n<thead><tr><th>scope</th><th class=\"num\">total</th><th class=\"num\">correct</th><th class=\"num\">incorrect</th><th class=\"num\">abstained</th><th class=\"num\">errors</th><th class=\"num\">accuracy</th><th class=\"num\">P50 ms</th><th class=\"num\">P95 ms</th><th class=\"num\">tokens in/out</th></tr></thead>\n<tbody>\n");
    summary_row(out, "overall", &report.overall, true);
    for (name, summary) in &report.scenarios {
        summary_row(out, name, summary, false);
    }
    out.push_str("</tbody>\n</table>\n");
}

fn summary_row(out: &mut String, scope: &str, s: &Summary, overall: bool) {
    let tokens = s.tokens_text();
    let _ = writeln!(
        out,
        "<tr{}><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.4}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num tokens\">{}</td></tr>",
        if overall { " class=\"overall\"" } else { "" },
        escape(scope),
        s.total,
        s.correct,
        s.incorrect,
        s.abstained,
        s.errors,
        s.accuracy,
        millis(s.p50_millis),
        millis(s.p95_millis),
        escape(&tokens)
    );
}

fn legend(out: &mut String, items: &[(&str, &str)]) {
    out.push_str("<div class=\"legend\">");
    for (label, color) in items {
        let _ = write!(out, "<span style=\"--c:{color}\">{}</span>", escape(label));
    }
    out.push_str("</div>\n");
}

/// `n` chars of `text`, with an ellipsis when cut.
fn truncate(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(n.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// A number for an SVG coordinate (two decimals are plenty).
fn n(value: f64) -> String {
    let value = if value.is_finite() { value } else { 0.0 };
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

fn scenario_chart(out: &mut String, report: &Report) {
    let scenarios: Vec<(&str, &Summary)> = report
        .scenarios
        .iter()
        .map(|(name, summary)| (name.as_str(), summary))
        .collect();
    let (width, label_width, right) = (1080.0, 230.0, 210.0);
    let bar_height = 22.0;
    let step = 34.0;
    let height = 16.0 + step * scenarios.len().max(1) as f64;
    let _ = writeln!(
        out,
        "<svg class=\"chart scenarios\" data-chart=\"scenarios\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"Outcomes per scenario\"><title>Outcomes per scenario</title>",
        n(width),
        n(height)
    );
    if scenarios.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"10\" y=\"30\" font-size=\"14\">no rows</text>"
        );
    }
    let plot = width - label_width - right;
    for (i, (name, s)) in scenarios.iter().enumerate() {
        let y = 10.0 + step * i as f64;
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"14\" text-anchor=\"end\">{}</text>",
            n(label_width - 10.0),
            n(y + bar_height * 0.72),
            escape(&truncate(name, 28))
        );
        let total = s.total.max(1) as f64;
        let mut x = label_width;
        for (count, color, what) in [
            (s.correct, CORRECT, "correct"),
            (s.incorrect, INCORRECT, "incorrect"),
            (s.abstained, ABSTAINED, "abstained"),
            (s.errors, ERRORED, "errors"),
        ] {
            if count == 0 {
                continue;
            }
            let w = plot * count as f64 / total;
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"><title>{what}: {count}</title></rect>",
                n(x),
                n(y),
                n(w),
                n(bar_height)
            );
            if w > 28.0 {
                let _ = writeln!(
                    out,
                    "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" style=\"fill:#fff\">{count}</text>",
                    n(x + w / 2.0),
                    n(y + bar_height * 0.7)
                );
            }
            x += w;
        }
        if s.total == 0 {
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#edf2f7\"/>",
                n(label_width),
                n(y),
                n(plot),
                n(bar_height)
            );
        }
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"14\">accuracy {:.4} ({}/{})</text>",
            n(label_width + plot + 10.0),
            n(y + bar_height * 0.72),
            s.accuracy,
            s.correct,
            s.total
        );
    }
    out.push_str("</svg>\n");
}

fn criterion_section(out: &mut String, report: &Report, points: &CriterionPoints) {
    let spec = &points.spec;
    let condition = points.condition_points();
    let m = metrics(&condition, BINS);
    let _ = writeln!(
        out,
        "<div class=\"panel\">\n<h3>Criterion <code>{}</code> · a {} is expected{}</h3>",
        escape(&spec.id),
        if spec.expected { "yes" } else { "no" },
        match spec.thresholds {
            Some(t) => format!(
                " · FAIL when p′ ≤ {} · PASS when p′ ≥ {}",
                t.fail_at_or_below, t.pass_at_or_above
            ),
            None => String::new(),
        }
    );
    // Finding statuses of this criterion.
    let mut statuses = [0u64; 3];
    for row in &report.rows {
        if let Some(finding) = row.verdict.findings.get(&spec.id) {
            match finding.status {
                Status::Pass => statuses[0] += 1,
                Status::Fail => statuses[1] += 1,
                _ => statuses[2] += 1,
            }
        }
    }
    metrics_table(out, &m, statuses);
    let mut notes = Vec::new();
    if points.from_expected_pass > 0 {
        notes.push(format!(
            "{} labels taken from <code>expected_pass</code>",
            points.from_expected_pass
        ));
    }
    if points.from_expected_findings > 0 {
        notes.push(format!(
            "{} from <code>expected_findings</code>",
            points.from_expected_findings
        ));
    }
    if points.unlabelled > 0 {
        notes.push(format!(
            "{} rows without a label left out",
            points.unlabelled
        ));
    }
    if points.without_finding > 0 {
        notes.push(format!(
            "{} rows without a finding (ERROR) left out",
            points.without_finding
        ));
    }
    if points.invalid > 0 {
        notes.push(format!(
            "{} findings with a probability outside [0, 1] left out",
            points.invalid
        ));
    }
    if !notes.is_empty() {
        let _ = writeln!(out, "<p class=\"note\">{}.</p>", notes.join(" · "));
    }
    if let Some(thresholds) = spec.thresholds {
        let decided = jevjudge_stats::tally(&points.expectation_points(), thresholds);
        let precision = |value: Option<f64>, lower: Option<f64>| match (value, lower) {
            (Some(value), Some(lower)) => {
                format!("precision {value:.3}, Wilson lower bound {lower:.3}")
            }
            _ => "no decision".to_owned(),
        };
        let _ = writeln!(
            out,
            "<p class=\"note\">On the labelled rows these thresholds decide PASS {} ({}) · FAIL {} ({}) · abstain {} ({:.3}). A PASS is right when the expectation holds, a FAIL when it does not; <code>jevjudge calibrate</code> recommends thresholds for given targets.</p>",
            decided.passes,
            precision(decided.pass_precision(), decided.pass_lower(Z)),
            decided.fails,
            precision(decided.fail_precision(), decided.fail_lower(Z)),
            decided.abstained(),
            decided.abstain_rate().unwrap_or(0.0)
        );
    }
    out.push_str("<div class=\"grid2\" style=\"margin-top:12px\">\n<div class=\"panel\">\n");
    let _ = writeln!(out, "<h3>Reliability ({BINS} equal-width bins)</h3>");
    legend(
        out,
        &[
            ("observed rate", "#90cdf4"),
            ("bin mean (size ∝ rows)", HOLDS),
            ("diagonal: calibrated", "#a0aec0"),
        ],
    );
    reliability_chart(out, &spec.id, &m);
    out.push_str("</div>\n<div class=\"panel\">\n<h3>Yes-probabilities by label</h3>\n");
    legend(
        out,
        &[
            ("condition holds", HOLDS),
            ("does not hold", DOES_NOT_HOLD),
            ("FAIL region", "#fed7d7"),
            ("PASS region", "#c6f6d5"),
        ],
    );
    histogram_chart(out, points);
    out.push_str("</div>\n</div>\n</div>\n");
}

fn opt(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.4}"))
}

fn metrics_table(out: &mut String, m: &Metrics, statuses: [u64; 3]) {
    let base_rate = if m.n > 0 {
        format!("{:.3}", m.positives as f64 / m.n as f64)
    } else {
        "—".to_owned()
    };
    let _ = writeln!(
        out,
        "<table><thead><tr><th class=\"num\">labelled</th><th class=\"num\">holds</th><th class=\"num\">base rate</th><th class=\"num\">Brier</th><th class=\"num\">log loss</th><th class=\"num\">AUROC</th><th class=\"num\">ECE (equal-width)</th><th class=\"num\">ECE (equal-mass)</th><th class=\"num\">MCE</th><th class=\"num\">findings PASS / FAIL / INC.</th></tr></thead>\n<tbody><tr><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{base_rate}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} / {} / {}</td></tr></tbody></table>",
        m.n,
        m.positives,
        opt(m.brier),
        opt(m.log_loss),
        opt(m.auroc),
        opt(m.ece_equal_width),
        opt(m.ece_equal_mass),
        opt(m.mce),
        statuses[0],
        statuses[1],
        statuses[2]
    );
}

/// Plot geometry shared by the square-ish charts.
struct Frame {
    width: f64,
    height: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

impl Frame {
    const STANDARD: Frame = Frame {
        width: 520.0,
        height: 340.0,
        left: 56.0,
        right: 16.0,
        top: 14.0,
        bottom: 50.0,
    };

    fn x(&self, fraction: f64) -> f64 {
        self.left + fraction.clamp(0.0, 1.0) * (self.width - self.left - self.right)
    }

    fn y(&self, fraction: f64) -> f64 {
        self.height
            - self.bottom
            - fraction.clamp(0.0, 1.0) * (self.height - self.top - self.bottom)
    }

    fn open(&self, out: &mut String, class: &str, label: &str) {
        let _ = writeln!(
            out,
            "<svg class=\"chart {class}\" data-chart=\"{class}\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
            n(self.width),
            n(self.height),
            escape(label),
            escape(label)
        );
    }

    /// Axes, grid lines at each tick, tick labels and axis titles.
    fn axes(
        &self,
        out: &mut String,
        x_ticks: &[(f64, String)],
        y_ticks: &[(f64, String)],
        x_title: &str,
        y_title: &str,
    ) {
        for (fraction, label) in y_ticks {
            let y = self.y(*fraction);
            let _ = writeln!(
                out,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#edf2f7\"/><text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
                n(self.left),
                n(y),
                n(self.width - self.right),
                n(y),
                n(self.left - 6.0),
                n(y + 4.0),
                escape(label)
            );
        }
        for (fraction, label) in x_ticks {
            let x = self.x(*fraction);
            let _ = writeln!(
                out,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#cbd5e0\"/><text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text>",
                n(x),
                n(self.height - self.bottom),
                n(x),
                n(self.height - self.bottom + 5.0),
                n(x),
                n(self.height - self.bottom + 19.0),
                escape(label)
            );
        }
        let _ = writeln!(
            out,
            "<line x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#4a5568\"/><line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{b}\" stroke=\"#4a5568\"/>",
            l = n(self.left),
            r = n(self.width - self.right),
            t = n(self.top),
            b = n(self.height - self.bottom)
        );
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\">{}</text>",
            n((self.left + self.width - self.right) / 2.0),
            n(self.height - 10.0),
            escape(x_title)
        );
        let _ = writeln!(
            out,
            "<text x=\"14\" y=\"{}\" font-size=\"13\" text-anchor=\"middle\" transform=\"rotate(-90 14 {})\">{}</text>",
            n((self.top + self.height - self.bottom) / 2.0),
            n((self.top + self.height - self.bottom) / 2.0),
            escape(y_title)
        );
    }
}

fn unit_ticks() -> Vec<(f64, String)> {
    (0..=5)
        .map(|i| {
            let v = f64::from(i) / 5.0;
            (v, format!("{v:.1}"))
        })
        .collect()
}

fn reliability_chart(out: &mut String, id: &str, m: &Metrics) {
    let frame = Frame::STANDARD;
    frame.open(out, "reliability", &format!("Reliability diagram of {id}"));
    frame.axes(
        out,
        &unit_ticks(),
        &unit_ticks(),
        "mean yes-probability of the bin",
        "fraction where it holds",
    );
    // Perfect calibration.
    let _ = writeln!(
        out,
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#a0aec0\" stroke-dasharray=\"5 4\"/>",
        n(frame.x(0.0)),
        n(frame.y(0.0)),
        n(frame.x(1.0)),
        n(frame.y(1.0))
    );
    if m.reliability.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"14\" text-anchor=\"middle\">no labelled rows</text>",
            n(frame.x(0.5)),
            n(frame.y(0.5))
        );
    }
    let largest = m
        .reliability
        .iter()
        .map(|bin| bin.count)
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    for bin in &m.reliability {
        let x0 = frame.x(bin.lower) + 1.5;
        let x1 = frame.x(bin.upper) - 1.5;
        let top = frame.y(bin.observed_rate);
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#90cdf4\" fill-opacity=\"0.55\"><title>[{:.1}, {:.1}]: {} rows, mean p {:.3}, observed {:.3}</title></rect>",
            n(x0),
            n(top),
            n((x1 - x0).max(0.5)),
            n(frame.y(0.0) - top),
            bin.lower,
            bin.upper,
            bin.count,
            bin.mean_probability,
            bin.observed_rate
        );
    }
    let path: Vec<String> = m
        .reliability
        .iter()
        .map(|bin| {
            format!(
                "{},{}",
                n(frame.x(bin.mean_probability)),
                n(frame.y(bin.observed_rate))
            )
        })
        .collect();
    if path.len() > 1 {
        let _ = writeln!(
            out,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{HOLDS}\" stroke-width=\"1.5\"/>",
            path.join(" ")
        );
    }
    for bin in &m.reliability {
        let radius = 3.0 + 6.0 * (bin.count as f64 / largest).sqrt();
        let _ = writeln!(
            out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{HOLDS}\" fill-opacity=\"0.85\" stroke=\"#fff\"/>",
            n(frame.x(bin.mean_probability)),
            n(frame.y(bin.observed_rate)),
            n(radius)
        );
    }
    // Each bin's row count next to its dot: above it, or below it when the dot is near the top.
    for bin in &m.reliability {
        let radius = 3.0 + 6.0 * (bin.count as f64 / largest).sqrt();
        let dot_y = frame.y(bin.observed_rate);
        let label_y = if dot_y - radius - 4.0 - 10.5 >= frame.top + 18.0 {
            dot_y - radius - 4.0
        } else {
            dot_y + radius + 12.0
        };
        let _ = writeln!(
            out,
            "<text class=\"halo\" x=\"{}\" y=\"{}\" font-size=\"10.5\" text-anchor=\"middle\" style=\"fill:#4a5568\">n={}</text>",
            n(frame.x(bin.mean_probability)),
            n(label_y),
            bin.count
        );
    }
    let _ = writeln!(
        out,
        "<text class=\"halo\" x=\"{}\" y=\"{}\" font-size=\"12\">ECE {} · MCE {}</text>",
        n(frame.x(0.02)),
        n(frame.top + 14.0),
        opt(m.ece_equal_width),
        opt(m.mce)
    );
    out.push_str("</svg>\n");
}

/// The regions of the yes-probability axis that FAIL and PASS, as `(from, to)` in p.
fn regions(spec: &CriterionSpec, thresholds: Thresholds) -> ((f64, f64), (f64, f64)) {
    if spec.expected {
        (
            (0.0, thresholds.fail_at_or_below),
            (thresholds.pass_at_or_above, 1.0),
        )
    } else {
        (
            (1.0 - thresholds.fail_at_or_below, 1.0),
            (0.0, 1.0 - thresholds.pass_at_or_above),
        )
    }
}

fn histogram_chart(out: &mut String, points: &CriterionPoints) {
    const BUCKETS: usize = 20;
    let frame = Frame::STANDARD;
    let spec = &points.spec;
    let mut holds = [0u64; BUCKETS];
    let mut not = [0u64; BUCKETS];
    for point in &points.points {
        let bucket = ((point.yes_probability * BUCKETS as f64).floor() as usize).min(BUCKETS - 1);
        if point.holds {
            holds[bucket] += 1;
        } else {
            not[bucket] += 1;
        }
    }
    let largest = holds.iter().chain(&not).copied().max().unwrap_or(0);
    let (top, values) = count_ticks(largest);
    let ticks: Vec<(f64, String)> = values.iter().map(|v| (v / top, n(*v))).collect();
    frame.open(
        out,
        "histogram",
        &format!("Yes-probabilities of {} by label", spec.id),
    );
    if let Some(thresholds) = spec.thresholds {
        let (fail, pass) = regions(spec, thresholds);
        for ((from, to), color) in [(fail, "#fed7d7"), (pass, "#c6f6d5")] {
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\" fill-opacity=\"0.6\"/>",
                n(frame.x(from)),
                n(frame.y(1.0)),
                n((frame.x(to) - frame.x(from)).max(1.0)),
                n(frame.y(0.0) - frame.y(1.0))
            );
        }
    }
    frame.axes(
        out,
        &unit_ticks(),
        &ticks,
        "yes-probability p (bins of 0.05)",
        "rows",
    );
    let slot = (frame.x(1.0) - frame.x(0.0)) / BUCKETS as f64;
    for bucket in 0..BUCKETS {
        let x = frame.x(bucket as f64 / BUCKETS as f64);
        for (offset, count, color, what) in [
            (0.0, holds[bucket], HOLDS, "condition holds"),
            (0.5, not[bucket], DOES_NOT_HOLD, "condition does not hold"),
        ] {
            if count == 0 {
                continue;
            }
            let bar_top = frame.y(count as f64 / top);
            let _ = writeln!(
                out,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"><title>p in [{:.2}, {:.2}): {count} rows where the {what}</title></rect>",
                n(x + 1.0 + offset * (slot - 2.0)),
                n(bar_top),
                n((slot - 2.0) / 2.0),
                n(frame.y(0.0) - bar_top),
                bucket as f64 / BUCKETS as f64,
                (bucket + 1) as f64 / BUCKETS as f64
            );
        }
    }
    match spec.thresholds {
        Some(thresholds) => {
            let (fail, pass) = regions(spec, thresholds);
            let (fail_at, pass_at) = if spec.expected {
                (fail.1, pass.0)
            } else {
                (fail.0, pass.1)
            };
            let fail_label = if spec.expected {
                format!("fail ≤ {}", thresholds.fail_at_or_below)
            } else {
                format!("fail: p ≥ {}", n(1.0 - thresholds.fail_at_or_below))
            };
            let pass_label = if spec.expected {
                format!("pass ≥ {}", thresholds.pass_at_or_above)
            } else {
                format!("pass: p ≤ {}", n(1.0 - thresholds.pass_at_or_above))
            };
            for (at, label, color, row) in [
                (fail_at, fail_label, INCORRECT, 0.0),
                (pass_at, pass_label, CORRECT, 1.0),
            ] {
                let x = frame.x(at);
                let _ = writeln!(
                    out,
                    "<line class=\"threshold\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{color}\" stroke-width=\"2\" stroke-dasharray=\"6 3\"/>",
                    n(x),
                    n(frame.y(1.0)),
                    n(x),
                    n(frame.y(0.0))
                );
                let anchor = if at > 0.5 { "end" } else { "start" };
                let dx = if at > 0.5 { -5.0 } else { 5.0 };
                let _ = writeln!(
                    out,
                    "<text class=\"halo\" x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"{anchor}\" style=\"fill:{color};font-weight:600\">{}</text>",
                    n(x + dx),
                    n(frame.top + 14.0 + 16.0 * row),
                    escape(&label)
                );
            }
        }
        None => {
            let _ = writeln!(
                out,
                "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\" style=\"fill:#718096\">thresholds unknown (no definition given)</text>",
                n(frame.x(0.5)),
                n(frame.top + 14.0)
            );
        }
    }
    if points.points.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"14\" text-anchor=\"middle\">no labelled rows</text>",
            n(frame.x(0.5)),
            n(frame.y(0.5))
        );
    }
    out.push_str("</svg>\n");
}

/// Axis ticks from 0 for a largest value: a step of 1, 2, 2.5 or 5 × 10ᵏ (at least
/// `min_step`) giving at most 5 intervals, and the axis top (a multiple of the step, at least
/// the value).
fn axis_ticks(largest: f64, min_step: f64) -> (f64, Vec<f64>) {
    let largest = if largest.is_finite() && largest > 0.0 {
        largest
    } else {
        min_step.max(f64::MIN_POSITIVE)
    };
    let power = 10f64.powf((largest / 5.0).log10().floor());
    let mut step = 10.0 * power;
    for base in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if (largest / (base * power)).ceil() <= 5.0 {
            step = base * power;
            break;
        }
    }
    let step = step.max(min_step);
    let intervals = (largest / step - 1e-9).ceil().max(1.0);
    let ticks = (0..=intervals as u32)
        .map(|i| f64::from(i) * step)
        .collect();
    (intervals * step, ticks)
}

/// Count-axis ticks: whole steps.
fn count_ticks(largest: u64) -> (f64, Vec<f64>) {
    // 10 % headroom, so labels drawn at the top do not sit on the tallest bar.
    axis_ticks(largest.max(1) as f64 * 1.1, 1.0)
}

fn time_chart(out: &mut String, report: &Report) {
    const BUCKETS: usize = 30;
    let frame = Frame {
        width: 1080.0,
        height: 300.0,
        ..Frame::STANDARD
    };
    let times: Vec<f64> = report
        .rows
        .iter()
        .map(|row| row.verdict.elapsed_millis())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
        .collect();
    let largest = times.iter().copied().fold(0.0, f64::max);
    // The axis fits the bulk of the data: a few slow outliers (a cold first request) would
    // otherwise squeeze every other row into the first bucket. Beyond 3 × P95 the axis stops at
    // 2 × P95 and the rows past it are counted in a note instead of drawn.
    let p95 = report.overall.p95_millis;
    let limit = if p95.is_finite() && p95 > 0.0 && largest > 3.0 * p95 {
        2.0 * p95
    } else {
        largest
    };
    let (span, time_values) = axis_ticks(limit.max(1e-3), 0.0);
    let mut counts = [0u64; BUCKETS];
    let mut beyond = 0u64;
    for ms in &times {
        if *ms > span {
            beyond += 1;
            continue;
        }
        let bucket = ((ms / span * BUCKETS as f64).floor() as usize).min(BUCKETS - 1);
        counts[bucket] += 1;
    }
    let (top, values) = count_ticks(counts.iter().copied().max().unwrap_or(0));
    let x_ticks: Vec<(f64, String)> = time_values
        .iter()
        .map(|v| (v / span, tick_label(*v, span)))
        .collect();
    let y_ticks: Vec<(f64, String)> = values.iter().map(|v| (v / top, n(*v))).collect();
    frame.open(out, "review-time", "Distribution of review times");
    frame.axes(out, &x_ticks, &y_ticks, "review time (ms)", "rows");
    let slot = (frame.x(1.0) - frame.x(0.0)) / BUCKETS as f64;
    for (bucket, count) in counts.iter().enumerate() {
        if *count == 0 {
            continue;
        }
        let bar_top = frame.y(*count as f64 / top);
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#4c8bc7\"><title>{} to {} ms: {count} rows</title></rect>",
            n(frame.x(bucket as f64 / BUCKETS as f64) + 1.0),
            n(bar_top),
            n(slot - 2.0),
            n(frame.y(0.0) - bar_top),
            millis(span * bucket as f64 / BUCKETS as f64),
            millis(span * (bucket + 1) as f64 / BUCKETS as f64)
        );
    }
    if beyond > 0 {
        let _ = writeln!(
            out,
            "<text class=\"halo\" x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{beyond} {} beyond {} ms, not drawn (longest {} ms) →</text>",
            n(frame.x(1.0)),
            n(frame.top + 14.0),
            if beyond == 1 { "row" } else { "rows" },
            millis(span),
            millis(largest)
        );
    }
    if times.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"14\" text-anchor=\"middle\">no rows</text>",
            n(frame.x(0.5)),
            n(frame.y(0.5))
        );
    } else {
        // P50 is labelled left of its line and P95 right of it, on two rows, so neither label
        // crosses the other line or label; a label that would leave the plot turns inwards.
        for (label, value, row, leftwards) in [
            ("P50", report.overall.p50_millis, 0.0, true),
            ("P95", report.overall.p95_millis, 1.0, false),
        ] {
            let x = frame.x((value / span).clamp(0.0, 1.0));
            let text = format!("{label} {} ms", millis(value));
            // Bold 12 px text: at most about 7.5 px per character.
            let width = 7.5 * text.chars().count() as f64;
            let leftwards = if leftwards {
                x - 5.0 - width >= frame.x(0.0)
            } else {
                x + 5.0 + width > frame.x(1.0)
            };
            let (text_x, anchor) = if leftwards {
                (x - 5.0, "end")
            } else {
                (x + 5.0, "start")
            };
            let _ = writeln!(
                out,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#2d3748\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/><text class=\"halo\" x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"{anchor}\" style=\"font-weight:600\">{}</text>",
                n(x),
                n(frame.y(1.0)),
                n(x),
                n(frame.y(0.0)),
                n(text_x),
                n(frame.top + 14.0 + 16.0 * row),
                escape(&text)
            );
        }
    }
    out.push_str("</svg>\n");
}

/// What the review times of a run measure, by where its answers came from.
fn time_source(backend: BackendKind) -> &'static str {
    match backend {
        BackendKind::Systemone => {
            "Answers came from the System One API, so these times include the network and the model's answer time."
        }
        BackendKind::Replay | BackendKind::Fixture => {
            "Answers were replayed from recorded exchanges, so these times are jevjudge's own, not the model's."
        }
        BackendKind::Fake => {
            "Answers came from the deterministic fake, so these times are jevjudge's and the fake's, not a model's."
        }
        BackendKind::Injected => {
            "Answers came from a backend supplied in code; these times are that backend's and jevjudge's."
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

fn rows_section(out: &mut String, report: &Report, texts: Option<&HashMap<String, String>>) {
    if report.rows.is_empty() {
        return;
    }
    let criteria: Vec<String> = {
        let mut ids: Vec<String> = Vec::new();
        for row in &report.rows {
            for (id, _) in row.verdict.findings.iter() {
                if !ids.iter().any(|known| known == id) {
                    ids.push(id.to_owned());
                }
            }
        }
        ids
    };
    let mut review: Vec<&Row> = report
        .rows
        .iter()
        .filter(|row| Outcome::of(row.verdict.status, row.expected_pass) != Outcome::Correct)
        .collect();
    // Stable: within one outcome, input order.
    review.sort_by_key(|row| review_rank(Outcome::of(row.verdict.status, row.expected_pass)));
    let _ = writeln!(
        out,
        "<h2>Rows to look at ({} incorrect, errored or abstained, in that order)</h2>\n<div class=\"panel\">",
        review.len()
    );
    if review.is_empty() {
        out.push_str("<p>Every row is correct.</p>\n");
    } else {
        rows_table(out, &review, &criteria, texts);
    }
    out.push_str("</div>\n");
    let all: Vec<&Row> = report.rows.iter().collect();
    let _ = writeln!(
        out,
        "<div class=\"panel\"><details><summary>All {} rows</summary>",
        all.len()
    );
    rows_table(out, &all, &criteria, texts);
    out.push_str("</details></div>\n");
}

fn rows_table(
    out: &mut String,
    rows: &[&Row],
    criteria: &[String],
    texts: Option<&HashMap<String, String>>,
) {
    out.push_str("<table>\n<thead><tr><th>id</th><th>scenario</th><th>expected</th><th>verdict</th><th>outcome</th>");
    for id in criteria {
        let _ = write!(out, "<th class=\"num\">p({})</th>", escape(id));
    }
    out.push_str("<th class=\"num\">ms</th>");
    if texts.is_some() {
        out.push_str("<th>case text</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        let status = row.verdict.status;
        let (class, outcome) = outcome_class(Outcome::of(status, row.expected_pass));
        let verdict = match row.verdict.detail {
            Some(detail) => format!(
                "<span class=\"status s-{status}\">{status}</span> <code>{}/{}</code>",
                row.verdict.error,
                escape(&detail.to_string())
            ),
            None => format!("<span class=\"status s-{status}\">{status}</span>"),
        };
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{verdict}</td><td class=\"{class}\">{outcome}</td>",
            escape(&row.id),
            escape(&row.scenario),
            if row.expected_pass { "PASS" } else { "FAIL" }
        );
        for id in criteria {
            match row.verdict.findings.get(id) {
                Some(finding) => {
                    let label = row
                        .expected_findings
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
                        .unwrap_or("");
                    let _ = write!(
                        out,
                        "<td class=\"num\">{}<span class=\"note\">{label}</span></td>",
                        n4(finding.yes_probability)
                    );
                }
                None => out.push_str("<td class=\"num\">—</td>"),
            }
        }
        let _ = write!(
            out,
            "<td class=\"num\">{}</td>",
            millis(row.verdict.elapsed_millis())
        );
        if let Some(texts) = texts {
            match texts.get(&row.id) {
                Some(text) => {
                    let _ = write!(out, "<td><pre class=\"case\">{}</pre></td>", escape(text));
                }
                None => out.push_str("<td class=\"note\">not in the cases file</td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

fn n4(value: f64) -> String {
    let text = format!("{value:.4}");
    let trimmed = text.trim_end_matches('0');
    let trimmed = trimmed.strip_suffix('.').unwrap_or(trimmed);
    if trimmed.is_empty() || trimmed == "-" {
        "0".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// Why a run stopped early (a refused key, a spending cap) and its HTTP attempts (issue 11).
fn run_notes(out: &mut String, report: &Report) {
    if let Some(stop) = &report.stopped {
        let _ = writeln!(
            out,
            "<p class=\"note\"><strong>Stopped:</strong> {}. The cases not run have no rows; \
             <code>--resume</code> runs them.</p>",
            escape(&stop.to_string())
        );
    }
    if let Some(attempts) = &report.overall.attempts {
        let _ = writeln!(
            out,
            "<p class=\"note\">HTTP attempts: {}</p>",
            escape(&attempts.text())
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summarize;
    use jevjudge_judge::{BackendKind, ErrorCode, Finding, Findings, Verdict};
    use std::time::Duration;

    fn report(backend: BackendKind) -> Report {
        let rows: Vec<Row> = (0..30)
            .map(|i| {
                let p = i as f64 / 29.0;
                let status = if p >= 0.8 {
                    Status::Pass
                } else if p <= 0.2 {
                    Status::Fail
                } else {
                    Status::Inconclusive
                };
                Row {
                    repeats: None,
                    scenario: if i % 2 == 0 { "<even & odd>" } else { "odd" }.into(),
                    id: format!("case-{i}<script>"),
                    expected_pass: i % 3 != 0,
                    pass: status == Status::Pass,
                    score: 0.0,
                    verdict: Verdict {
                        definition_version: "v\"1".into(),
                        status,
                        error: ErrorCode::None,
                        detail: None,
                        findings: Findings::new(vec![(
                            "risk".into(),
                            Finding {
                                status,
                                yes_probability: 1.0 - p,
                                expected_probability: p,
                            },
                        )]),
                        model: Some("m<1>".into()),
                        usage: None,
                        elapsed: Duration::from_micros(100 + i as u64 * 37),
                    },
                    expected_findings: None,
                }
            })
            .collect();
        let (overall, scenarios) = summarize(&rows, None);
        Report {
            format: crate::REPORT_FORMAT.into(),
            definition_version: "v\"1".into(),
            backend,
            complete: true,
            wall_millis: None,
            stopped: None,
            overall,
            scenarios,
            rows,
        }
    }

    #[test]
    fn every_string_is_escaped_and_charts_are_inline() {
        let html = to_html(&report(BackendKind::Replay), &HtmlOptions::default());
        assert!(!html.contains("<script"), "raw ids leaked");
        assert!(html.contains("case-1&lt;script&gt;"));
        assert!(html.contains("&lt;even &amp; odd&gt;"));
        assert!(html.contains("m&lt;1&gt;"));
        for chart in ["scenarios", "reliability", "histogram", "review-time"] {
            assert!(
                html.contains(&format!("data-chart=\"{chart}\"")),
                "{chart} missing"
            );
        }
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(!html.contains("banner synthetic"));
        // Without the definition the thresholds cannot be drawn, and the page says so.
        assert!(html.contains("thresholds unknown"));
    }

    #[test]
    fn rows_to_look_at_list_incorrect_then_errors_then_abstentions() {
        let mut report = report(BackendKind::Systemone);
        for i in [1, 4] {
            let verdict = &mut report.rows[i].verdict;
            verdict.status = Status::Error;
            verdict.error = ErrorCode::Backend;
            verdict.detail = Some(jevjudge_wire::Detail::Transport);
            verdict.findings = Findings::new(Vec::new());
        }
        let html = to_html(&report, &HtmlOptions::default());
        let start = html.find("<h2>Rows to look at").unwrap();
        let end = html.find("<summary>All 30 rows").unwrap();
        let section = &html[start..end];
        let outcomes: Vec<&str> = section
            .match_indices("<td class=\"o-")
            .map(|(at, _)| section[at + 13..].split('"').next().unwrap())
            .collect();
        let rank = |o: &str| {
            ["incorrect", "error", "abstained"]
                .iter()
                .position(|k| *k == o)
        };
        assert!(outcomes.contains(&"incorrect") && outcomes.contains(&"error"));
        assert!(outcomes.contains(&"abstained"), "{outcomes:?}");
        assert!(
            outcomes.windows(2).all(|w| rank(w[0]) <= rank(w[1])),
            "{outcomes:?}"
        );
    }

    #[test]
    fn the_review_time_note_is_true_for_the_backend() {
        let live = to_html(&report(BackendKind::Systemone), &HtmlOptions::default());
        assert!(!live.contains("replayed"), "a live run is not replayed");
        assert!(live.contains("include the network and the model's answer time"));
        let replay = to_html(&report(BackendKind::Replay), &HtmlOptions::default());
        assert!(replay.contains("Answers were replayed from recorded exchanges"));
        let fake = to_html(&report(BackendKind::Fake), &HtmlOptions::default());
        assert!(!fake.contains("replayed") && fake.contains("deterministic fake"));
    }

    #[test]
    fn a_slow_outlier_does_not_stretch_the_review_time_axis() {
        let mut report = report(BackendKind::Systemone);
        report.rows[0].verdict.elapsed = Duration::from_secs(20);
        let (overall, _) = summarize(&report.rows, None);
        report.overall = overall;
        let html = to_html(&report, &HtmlOptions::default());
        let chart = &html[html.find("data-chart=\"review-time\"").unwrap()..];
        let chart = &chart[..chart.find("</svg>").unwrap()];
        assert!(
            chart.contains("1 row beyond") && chart.contains("(longest 20000 ms)"),
            "{chart}"
        );
        // The axis ends near the bulk (≤ 1.2 ms here), not at 20 s.
        assert!(!chart.contains(">20000<") && !chart.contains(">15000<"));
    }

    #[test]
    fn p50_is_labelled_left_of_its_line_and_p95_right() {
        let html = to_html(&report(BackendKind::Systemone), &HtmlOptions::default());
        let p50 = html.rfind(">P50 ").unwrap();
        let p95 = html.rfind(">P95 ").unwrap();
        assert!(html[..p50].ends_with("text-anchor=\"end\" style=\"font-weight:600\""));
        assert!(html[..p95].ends_with("text-anchor=\"start\" style=\"font-weight:600\""));
    }

    #[test]
    fn synthetic_backends_are_announced() {
        for backend in [BackendKind::Fake, BackendKind::Fixture] {
            let html = to_html(&report(backend), &HtmlOptions::default());
            assert!(html.contains("banner synthetic"));
            assert!(html.contains(&format!("Backend <code>{backend}</code>")));
        }
    }

    #[test]
    fn thresholds_are_drawn_on_the_yes_axis_for_expected_false() {
        let spec = CriterionSpec {
            id: "risk".into(),
            expected: false,
            thresholds: Thresholds::new(0.2, 0.8),
        };
        let html = to_html(
            &report(BackendKind::Replay),
            &HtmlOptions {
                criteria: Some(std::slice::from_ref(&spec)),
                texts: None,
            },
        );
        assert_eq!(html.matches("class=\"threshold\"").count(), 2);
        // p′ ≥ 0.8 passes: p ≤ 0.2; p′ ≤ 0.2 fails: p ≥ 0.8.
        assert!(html.contains("pass: p ≤ 0.2"), "pass label");
        assert!(html.contains("fail: p ≥ 0.8"), "fail label");
    }

    #[test]
    fn text_appears_only_when_given_and_escaped() {
        let report = report(BackendKind::Replay);
        let texts: HashMap<String, String> = [(
            "case-3<script>".to_owned(),
            "RAW-TEXT <b>bold</b>".to_owned(),
        )]
        .into();
        let html = to_html(
            &report,
            &HtmlOptions {
                criteria: None,
                texts: Some(&texts),
            },
        );
        assert!(html.contains("RAW-TEXT &lt;b&gt;bold&lt;/b&gt;"));
        assert!(html.contains("banner text"));
        let plain = to_html(&report, &HtmlOptions::default());
        assert!(!plain.contains("RAW-TEXT"));
    }

    #[test]
    fn an_empty_report_renders() {
        let mut empty = report(BackendKind::Fake);
        empty.rows.clear();
        let (overall, scenarios) = summarize(&[], None);
        empty.overall = overall;
        empty.scenarios = scenarios;
        let html = to_html(&empty, &HtmlOptions::default());
        assert!(html.contains("data-chart=\"review-time\""));
        assert!(html.ends_with("</html>\n"));
    }

    #[test]
    fn axis_ticks_and_labels() {
        // 10 % headroom above the largest count.
        assert_eq!(count_ticks(47), (60.0, vec![0.0, 20.0, 40.0, 60.0]));
        assert_eq!(count_ticks(0), (2.0, vec![0.0, 1.0, 2.0]));
        assert_eq!(count_ticks(3), (4.0, vec![0.0, 1.0, 2.0, 3.0, 4.0]));
        let (top, ticks) = count_ticks(100);
        assert_eq!((top, ticks.len()), (125.0, 6));
        let (top, ticks) = axis_ticks(0.093, 0.0);
        assert!(
            (top - 0.1).abs() < 1e-12 && ticks.len() == 6,
            "{top} {ticks:?}"
        );
        assert_eq!(tick_label(0.04, 0.1), "0.04");
        assert_eq!(tick_label(250.0, 500.0), "250");
        assert_eq!(axis_ticks(f64::NAN, 1.0), (1.0, vec![0.0, 1.0]));
        assert_eq!(n4(0.9299999999999999), "0.93");
        assert_eq!(n4(0.0), "0");
    }

    #[test]
    fn case_text_of_both_forms() {
        let case = crate::parse_case(r#"{"scenario":"s","id":"a","question":"Q?","supporting_context":["E1"],"answer":"A.","expected_pass":true}"#).unwrap();
        assert_eq!(case_text(&case), "Question: Q?\nEvidence 1: E1\nAnswer: A.");
        let case = crate::parse_case(
            r#"{"scenario":"s","id":"b","state":{"message":"hi"},"expected_pass":true}"#,
        )
        .unwrap();
        assert_eq!(case_text(&case), "{\n  \"message\": \"hi\"\n}");
    }

    #[test]
    fn a_stopped_run_and_its_attempts_are_shown() {
        let mut stopped = report(BackendKind::Systemone);
        stopped.stopped = Some(jevjudge_client::limit::Stop::KeyRefused { status: 401 });
        let attempts = jevjudge_client::limit::AttemptCounts {
            total: 3,
            by_status: [(401, 1), (200, 2)].into_iter().collect(),
            ..Default::default()
        };
        stopped.overall.attempts = Some(attempts);
        let html = to_html(&stopped, &HtmlOptions::default());
        assert!(html.contains("<strong>Stopped:</strong>"), "{html}");
        assert!(html.contains("401"));
        assert!(html.contains("HTTP attempts: "));
        let plain = to_html(&report(BackendKind::Systemone), &HtmlOptions::default());
        assert!(!plain.contains("Stopped:") && !plain.contains("HTTP attempts"));
    }
}
