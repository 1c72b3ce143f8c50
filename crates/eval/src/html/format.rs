//! The number formatters of the page; those of the tables shared with the terminal and
//! Markdown (rates, intervals, the summary and repeat cells) are in [`crate::cells`].

use jevjudge_judge::BackendKind;

use crate::{Summary, calibration::CriterionPoints};

/// A tick label with as many decimals as the axis span needs.
pub(crate) fn tick_label(value: f64, span: f64) -> String {
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

/// Milliseconds with as many decimals as their size needs: `1234`, `12.3`, `0.123`.
pub(crate) fn millis(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 1.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.3}")
    }
}

/// A probability with at most four decimals, trailing zeros dropped: `0.93`, `0`.
pub(crate) fn n4(value: f64) -> String {
    let text = format!("{value:.4}");
    let trimmed = text.trim_end_matches('0');
    let trimmed = trimmed.strip_suffix('.').unwrap_or(trimmed);
    if trimmed.is_empty() || trimmed == "-" {
        "0".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// Four decimals, or `—` when there is no value.
pub(crate) fn opt(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_owned(), |v| format!("{v:.4}"))
}

/// A fraction with three decimals, or `—` when the denominator is zero.
pub(crate) fn ratio3(numerator: u64, denominator: u64) -> String {
    if denominator > 0 {
        format!("{:.3}", numerator as f64 / denominator as f64)
    } else {
        "—".to_owned()
    }
}

/// The token totals of the page's card: `in / out`, or `unknown` (never 0, D5). The tables use
/// [`Summary::tokens_text`], as the terminal does.
pub(crate) fn tokens_card(s: &Summary) -> String {
    match (s.input_tokens, s.output_tokens) {
        (Some(input), Some(output)) => format!("{input} / {output}"),
        _ => "unknown".to_owned(),
    }
}

/// Where a criterion's labels came from and which rows were left out, as note parts; a part
/// in a `(text, code)` pair shows `code` as code after `text`.
pub(crate) fn label_sources(points: &CriterionPoints) -> Vec<(String, Option<&'static str>)> {
    let mut notes = Vec::new();
    if points.from_expected_pass > 0 {
        notes.push((
            format!(
                "{} taken from ",
                crate::plural::count(points.from_expected_pass, "label")
            ),
            Some("expected_pass"),
        ));
    }
    if points.from_expected_findings > 0 {
        notes.push((
            format!("{} from ", points.from_expected_findings),
            Some("expected_findings"),
        ));
    }
    if points.unlabelled > 0 {
        notes.push((
            format!(
                "{} without a label left out",
                crate::plural::count(points.unlabelled, "row")
            ),
            None,
        ));
    }
    if points.without_finding > 0 {
        notes.push((
            format!(
                "{} without a finding (ERROR) left out",
                crate::plural::count(points.without_finding, "row")
            ),
            None,
        ));
    }
    if points.invalid > 0 {
        notes.push((
            format!(
                "{} findings with a probability outside [0, 1] left out",
                points.invalid
            ),
            None,
        ));
    }
    notes
}

/// What the review times of a run measure, by where its answers came from.
pub(crate) fn time_source(backend: BackendKind) -> &'static str {
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
