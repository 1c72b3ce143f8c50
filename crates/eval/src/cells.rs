//! One model of a summary's table cells, shared by the terminal, Markdown and HTML renderers:
//! the scopes of every per-scope table, the main table's row, the risk figures and the repeat
//! figures. Each renderer takes its cells from here and only lays them out (padding, pipes or
//! `<td>`), passing the formatters where the three differ (latencies and tokens).

use crate::{Report, Summary, risk::Risk};

/// The scopes of every per-scope table: overall first (marked `true`), then each scenario.
pub(crate) fn scopes(report: &Report) -> impl Iterator<Item = (&str, &Summary, bool)> + Clone {
    std::iter::once(("overall", &report.overall, true)).chain(
        report
            .scenarios
            .iter()
            .map(|(name, summary)| (name.as_str(), summary, false)),
    )
}

/// One scope's row of the main table after the scope: total, correct, incorrect, abstained,
/// errors, accuracy (four decimals), P50 and P95 review time (as `millis` writes them) and the
/// tokens (as `tokens` writes them).
pub(crate) fn summary_cells(
    s: &Summary,
    millis: impl Fn(f64) -> String,
    tokens: impl Fn(&Summary) -> String,
) -> [String; 9] {
    [
        s.total.to_string(),
        s.correct.to_string(),
        s.incorrect.to_string(),
        s.abstained.to_string(),
        s.errors.to_string(),
        format!("{:.4}", s.accuracy),
        millis(s.p50_millis),
        millis(s.p95_millis),
        tokens(s),
    ]
}

/// An interval with `decimals` decimals, `[0.765, 0.885]`, or `n/a` without one.
pub(crate) fn interval(interval: Option<[f64; 2]>, decimals: usize) -> String {
    match interval {
        Some([low, high]) => format!("[{low:.decimals$}, {high:.decimals$}]"),
        None => "n/a".to_owned(),
    }
}

/// A rate and its interval with `decimals` decimals, `0.8333 [0.7655, 0.8845]`; the rate
/// alone without an interval; `n/a` without a value.
pub(crate) fn rate(value: Option<f64>, ci: Option<[f64; 2]>, decimals: usize) -> String {
    match (value, ci) {
        (Some(value), Some(_)) => format!("{value:.decimals$} {}", interval(ci, decimals)),
        (Some(value), None) => format!("{value:.decimals$}"),
        _ => "n/a".to_owned(),
    }
}

/// False PASS, then false FAIL: each one's count, its rate per decided review and that rate's
/// interval.
pub(crate) fn false_verdicts(r: &Risk) -> [(u64, Option<f64>, Option<[f64; 2]>); 2] {
    [
        (r.false_pass, r.false_pass_rate, r.false_pass_rate_ci),
        (r.false_fail, r.false_fail_rate, r.false_fail_rate_ci),
    ]
}

/// The cells of one scope's risk row in Markdown and HTML: accuracy, coverage, decided
/// accuracy, false PASS, false FAIL (count, rate and interval, four decimals).
pub(crate) fn risk_cells(s: &Summary) -> [String; 5] {
    let r = &s.risk;
    let [false_pass, false_fail] =
        false_verdicts(r).map(|(n, value, ci)| format!("{n} ({})", rate(value, ci, 4)));
    [
        rate(Some(s.accuracy).filter(|_| s.total > 0), r.accuracy_ci, 4),
        format!(
            "{}/{} = {}",
            r.decided,
            s.total,
            rate(r.coverage, r.coverage_ci, 4)
        ),
        format!(
            "{}/{} = {}",
            s.correct,
            r.decided,
            rate(r.decided_accuracy, r.decided_accuracy_ci, 4)
        ),
        false_pass,
        false_fail,
    ]
}

/// The four error rates with their bases, in the order false PASS ÷ expected FAIL, false PASS
/// ÷ PASS verdicts, false FAIL ÷ expected PASS, false FAIL ÷ FAIL verdicts: each
/// `(errors, base, rate, interval, one-sided upper bound)`.
pub(crate) fn error_bases(r: &Risk) -> [ErrorBase; 4] {
    [
        (
            r.false_pass,
            r.expected_fail_reviews,
            r.false_pass_per_expected_fail,
            r.false_pass_per_expected_fail_ci,
            r.false_pass_per_expected_fail_upper,
        ),
        (
            r.false_pass,
            r.pass_verdicts,
            r.false_pass_per_pass_verdict,
            r.false_pass_per_pass_verdict_ci,
            r.false_pass_per_pass_verdict_upper,
        ),
        (
            r.false_fail,
            r.expected_pass_reviews,
            r.false_fail_per_expected_pass,
            r.false_fail_per_expected_pass_ci,
            r.false_fail_per_expected_pass_upper,
        ),
        (
            r.false_fail,
            r.fail_verdicts,
            r.false_fail_per_fail_verdict,
            r.false_fail_per_fail_verdict_ci,
            r.false_fail_per_fail_verdict_upper,
        ),
    ]
}

/// One error rate with its base: errors, base, rate, 95 % interval, one-sided upper bound.
pub(crate) type ErrorBase = (u64, u64, Option<f64>, Option<[f64; 2]>, Option<f64>);

/// The headers of the four error-rate columns, in [`error_bases`] order.
pub(crate) const ERROR_BASE_HEADERS: [&str; 4] = [
    "false PASS ÷ expected FAIL",
    "false PASS ÷ PASS verdicts",
    "false FAIL ÷ expected PASS",
    "false FAIL ÷ FAIL verdicts",
];

/// One error-rate cell: `0/75 = 0.0000 [0.0000, 0.0487] upper 0.0392` (with `interval`), or
/// `0/75 = 0.000 upper 0.039`; `0/0 = n/a` with an empty base.
pub(crate) fn error_base_cell(cell: ErrorBase, decimals: usize, with_interval: bool) -> String {
    let (errors, base, value, ci, upper) = cell;
    let figure = if with_interval {
        rate(value, ci, decimals)
    } else {
        rate(value, None, decimals)
    };
    match upper {
        Some(upper) => format!("{errors}/{base} = {figure} upper {upper:.decimals$}"),
        None => format!("{errors}/{base} = {figure}"),
    }
}

/// The lines about precisions at a stated production base rate, when one was given:
/// `at prevalence 0.134 (cases: 0.500 expected to pass): PASS precision 1.0000 [0.5305,
/// 1.0000] · FAIL precision …`, then the warning when the cases' mix is far from it.
pub(crate) fn prevalence_lines(s: &Summary) -> Vec<String> {
    let Some(at) = &s.risk.at_prevalence else {
        return Vec::new();
    };
    let share = at
        .cases_expected_pass_share
        .map_or_else(|| "n/a".to_owned(), |x| format!("{x:.3}"));
    let mut lines = vec![format!(
        "at prevalence {} (share of cases that should pass in production; these cases: {share}): PASS precision {} · FAIL precision {}",
        at.prevalence,
        rate(at.pass_precision, at.pass_precision_ci, 4),
        rate(at.fail_precision, at.fail_precision_ci, 4)
    )];
    if let Some(warning) = &at.warning {
        lines.push(format!("warning: {warning}"));
    }
    lines
}

/// The cells of one scope's repeats row: repeats, flipped cases, flip rate, accuracy by
/// repeat (`0.9533` each, joined with `separator`), probability SD per criterion
/// (`spam 0.0123, …`, or `n/a`). The terminal, Markdown and HTML tables all take their repeat
/// figures from here.
pub fn repeat_cells(s: &Summary, separator: &str) -> [String; 5] {
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
    let sd = if sd.is_empty() {
        "n/a".to_owned()
    } else {
        sd.join(", ")
    };
    [
        r.repeats.to_string(),
        r.flipped.unwrap_or(0).to_string(),
        rate(Some(r.flip_rate.unwrap_or(0.0)), r.flip_rate_ci, 4),
        by_repeat.join(separator),
        sd,
    ]
}

/// The note under the risk table (and in Markdown): how the intervals are computed.
pub(crate) const METHOD: &str = "95 % intervals: Wilson score with one review per case; with repeats, Wilson at the effective number of independent reviews (the case is the unit). Rates of false PASS / false FAIL in the risk table are per decided review; the error-rate table divides them by the cases expected to fail or pass and by the PASS or FAIL verdicts, and `upper` is the one-sided 95 % Clopper–Pearson bound (docs/explanation/statistics.md).";
