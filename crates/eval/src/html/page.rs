//! The page, templated with maud: head and style, header and banners, cards, sections and
//! footer. Every string is escaped by the template; the hand-written SVG charts
//! ([`super::charts`]) are the only pre-escaped markup.

use jevjudge_client::limit::Stop;
use jevjudge_judge::{BackendKind, Status};
use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::{
    ABSTAINED, CORRECT, DOES_NOT_HOLD, ERRORED, HOLDS, HtmlOptions, INCORRECT, charts,
    format::{label_sources, time_source, tokens_card},
    tables::{error_table, legend, metrics_table, risk_tables, rows_section, summary_table},
};
use crate::{
    Report, Summary,
    calibration::{BINS, CriterionPoints, Z, extract, infer_criteria, metrics},
};

const STYLE: &str = include_str!("style.css");

/// A chart written by [`super::charts`] into a string, as markup.
fn chart(draw: impl FnOnce(&mut String)) -> PreEscaped<String> {
    let mut out = String::with_capacity(8 * 1024);
    draw(&mut out);
    PreEscaped(out)
}

/// Renders the report as one self-contained HTML page.
pub(super) fn render(report: &Report, options: &HtmlOptions<'_>) -> String {
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
    let version = env!("CARGO_PKG_VERSION");
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="generator" content={ "jevjudge " (version) };
                title { "jevjudge report · " (report.definition_version) }
                style { "\n" (PreEscaped(STYLE)) }
            }
            body { main {
                (header(report))
                @if options.texts.is_some() {
                    div."banner text" { "This page contains the cases' text (--include-text): share it only where that text may go." }
                }
                (cards(&report.overall))
                h2 { "Summary" }
                div.panel {
                    (summary_table(report))
                    p.note { "Accuracy = correct ÷ total; abstentions (INCONCLUSIVE) and errors stay in the denominator. P50/P95 are nearest-rank over every row's review time." }
                }
                (error_table(&report.overall))
                (run_notes(report))
                (risk_tables(report))
                h2 { "Scenarios" }
                div.panel {
                    (legend(&[
                        ("correct", CORRECT),
                        ("incorrect", INCORRECT),
                        ("abstained", ABSTAINED),
                        ("errors", ERRORED),
                    ]))
                    (chart(|out| charts::scenario_chart(out, report)))
                }
                h2 { "Criteria" }
                @if let Some(note) = &inferred_note { p.note { (note) } }
                @if report.rows.is_empty() {
                    p.note { "The report holds no rows (a streaming run keeps them in its rows file), so there is nothing to chart per criterion." }
                }
                @for points in &criteria { (criterion_section(report, points)) }
                h2 { "Review time" }
                div.panel {
                    (chart(|out| charts::time_chart(out, report)))
                    p.note {
                        "Review time is measured from the moment a case got a concurrency slot until its answers were mapped (judge-contract rule 57); it is not end-to-end agent latency. "
                        (time_source(report.backend))
                    }
                }
                (rows_section(report, options.texts))
                footer {
                    "Made by jevjudge " (version) ". Reliability diagrams use " (BINS)
                    " equal-width bins of the yes-probability; a row's label is its "
                    code { "expected_findings" } " entry, or for a one-criterion definition its "
                    code { "expected_pass" } " (with " code { "expected" }
                    " taken into account). Self-contained: no network, no external assets, no script."
                }
            } }
        }
    };
    let mut out = page.into_string();
    out.push('\n');
    out
}

fn header(report: &Report) -> Markup {
    let models = report.models();
    html! {
        h1 { "jevjudge report: " code { (report.definition_version) } }
        p.meta {
            "backend " code { (report.backend.as_str()) } " · "
            @if models.is_empty() {
                "model unknown"
            } @else {
                "model "
                @for (i, model) in models.iter().enumerate() {
                    @if i > 0 { ", " }
                    code { (model) }
                }
            }
            " · " (crate::plural::count(report.overall.total, "row")) " · format " code { (report.format) }
            @if !report.complete { " · incomplete" }
        }
        @if report.backend.is_synthetic() {
            div."banner synthetic" {
                "Backend " code { (report.backend.as_str()) } ": these answers come from "
                (match report.backend {
                    BackendKind::Fake => "the in-process fake backend (probabilities are a hash of the request)",
                    _ => "hand-made fixture records",
                })
                ", not from a model. The figures below measure no model."
            }
        }
        @if !report.complete {
            div."banner incomplete" { "Incomplete run (interrupted): the figures cover the finished rows only." }
        }
    }
}

fn cards(s: &Summary) -> Markup {
    let items = [
        ("accuracy", format!("{:.4}", s.accuracy)),
        ("total", s.total.to_string()),
        ("correct", s.correct.to_string()),
        ("incorrect", s.incorrect.to_string()),
        ("abstained", s.abstained.to_string()),
        ("errors", s.errors.to_string()),
        (
            "P50 / P95 ms",
            format!(
                "{} / {}",
                super::format::millis(s.p50_millis),
                super::format::millis(s.p95_millis)
            ),
        ),
        ("tokens in / out", tokens_card(s)),
    ];
    html! {
        div.cards {
            @for (label, value) in &items {
                div.card { div.label { (label) } div.value { (value) } }
            }
        }
    }
}

/// Why a run stopped early (a refused key, a spending cap) and its HTTP attempts.
fn run_notes(report: &Report) -> Markup {
    html! {
        @if let Some(stop) = &report.stopped {
            p.note {
                strong { "Stopped:" } " " (stop.to_string()) ". The cases not run have no rows; "
                @if matches!(stop, Stop::KeyRefused { .. }) {
                    code { "--resume --retry-errors" } " runs them and the review the key \
                    failed."
                } @else {
                    code { "--resume" } " runs them."
                }
            }
        }
        @if let Some(attempts) = &report.overall.attempts {
            p.note { "HTTP attempts: " (attempts.text()) }
        }
    }
}

/// `precision 0.950, Wilson lower bound 0.900`, or `no decision`.
fn precision(value: Option<f64>, lower: Option<f64>) -> String {
    match (value, lower) {
        (Some(value), Some(lower)) => {
            format!("precision {value:.3}, Wilson lower bound {lower:.3}")
        }
        _ => "no decision".to_owned(),
    }
}

fn criterion_section(report: &Report, points: &CriterionPoints) -> Markup {
    let spec = &points.spec;
    let m = metrics(
        &points.condition_points(),
        &points.cases_of_points(),
        BINS,
        crate::calibration::SEED,
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
    let notes = label_sources(points);
    let decided = spec
        .thresholds
        .map(|thresholds| jevjudge_stats::tally(&points.expectation_points(), thresholds));
    html! {
        div.panel {
            h3 {
                "Criterion " code { (spec.id) } " · a " (if spec.expected { "yes" } else { "no" })
                " is expected"
                @if let Some(t) = spec.thresholds {
                    " · FAIL when p′ ≤ " (t.fail_at_or_below) " · PASS when p′ ≥ " (t.pass_at_or_above)
                }
            }
            (metrics_table(&m, statuses))
            @if !notes.is_empty() {
                p.note {
                    @for (i, (text, code)) in notes.iter().enumerate() {
                        @if i > 0 { " · " }
                        (text)
                        @if let Some(code) = code { code { (code) } }
                    }
                    "."
                }
            }
            @if let Some(decided) = &decided {
                p.note {
                    "On the labelled rows these thresholds decide PASS " (decided.passes)
                    " (" (precision(decided.pass_precision(), decided.pass_lower(Z))) ") · FAIL "
                    (decided.fails) " (" (precision(decided.fail_precision(), decided.fail_lower(Z)))
                    ") · abstain " (decided.abstained()) " ("
                    (format!("{:.3}", decided.abstain_rate().unwrap_or(0.0)))
                    "). A PASS is right when the expectation holds, a FAIL when it does not; "
                    code { "jevjudge calibrate" } " recommends thresholds for given targets."
                }
            }
            div.grid2 style="margin-top:12px" {
                div.panel {
                    h3 { "Reliability (" (BINS) " equal-width bins)" }
                    (legend(&[
                        ("observed rate", "#90cdf4"),
                        ("bin mean (size ∝ rows)", HOLDS),
                        ("diagonal: calibrated", "#a0aec0"),
                    ]))
                    (chart(|out| charts::reliability_chart(out, &spec.id, &m)))
                }
                div.panel {
                    h3 { "Yes-probabilities by label" }
                    (legend(&[
                        ("condition holds", HOLDS),
                        ("does not hold", DOES_NOT_HOLD),
                        ("FAIL region", "#fed7d7"),
                        ("PASS region", "#c6f6d5"),
                    ]))
                    (chart(|out| charts::histogram_chart(out, points)))
                }
            }
        }
    }
}
