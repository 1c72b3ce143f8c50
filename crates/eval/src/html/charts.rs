//! The SVG charts, written by hand: outcomes per scenario, per criterion a reliability diagram
//! and a histogram of yes-probabilities by label, and the distribution of review times.
//!
//! Every string that reaches a chart goes through [`escape`]; numbers go through [`n`].

use std::fmt::Write;

use jevjudge_stats::Thresholds;

use super::{
    ABSTAINED, CORRECT, DOES_NOT_HOLD, ERRORED, HOLDS, INCORRECT, escape,
    format::{millis, opt, tick_label},
};
use crate::{
    Report, Summary,
    calibration::{CriterionPoints, CriterionSpec, Metrics},
};

/// `n` chars of `text`, with an ellipsis when cut.
pub(super) fn truncate(text: &str, n: usize) -> String {
    if text.chars().count() <= n {
        text.to_owned()
    } else {
        let mut cut: String = text.chars().take(n.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// A number for an SVG coordinate (two decimals are plenty).
pub(super) fn n(value: f64) -> String {
    let value = if value.is_finite() { value } else { 0.0 };
    let text = format!("{value:.2}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

pub(super) fn scenario_chart(out: &mut String, report: &Report) {
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

    /// The end points of a line across the plot at `x`, top to bottom (SVG attributes).
    fn across(&self, x: f64) -> String {
        format!(
            "x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"",
            n(x),
            n(self.y(1.0)),
            n(x),
            n(self.y(0.0))
        )
    }

    /// A plot with nothing to draw: `message` (a fixed text) in its middle.
    fn empty(&self, out: &mut String, message: &str) {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"14\" text-anchor=\"middle\">{message}</text>",
            n(self.x(0.5)),
            n(self.y(0.5))
        );
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

pub(super) fn reliability_chart(out: &mut String, id: &str, m: &Metrics) {
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
        frame.empty(out, "no labelled rows");
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
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#90cdf4\" fill-opacity=\"0.55\"><title>[{:.1}, {:.1}]: {}, mean p {:.3}, observed {:.3}</title></rect>",
            n(x0),
            n(top),
            n((x1 - x0).max(0.5)),
            n(frame.y(0.0) - top),
            bin.lower,
            bin.upper,
            crate::plural::count(bin.count, "row"),
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

pub(super) fn histogram_chart(out: &mut String, points: &CriterionPoints) {
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
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{color}\"><title>p in [{:.2}, {:.2}): {} where the {what}</title></rect>",
                n(x + 1.0 + offset * (slot - 2.0)),
                n(bar_top),
                n((slot - 2.0) / 2.0),
                n(frame.y(0.0) - bar_top),
                bucket as f64 / BUCKETS as f64,
                (bucket + 1) as f64 / BUCKETS as f64,
                crate::plural::count(count, "row")
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
                    "<line class=\"threshold\" {} stroke=\"{color}\" stroke-width=\"2\" stroke-dasharray=\"6 3\"/>",
                    frame.across(x)
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
        frame.empty(out, "no labelled rows");
    }
    out.push_str("</svg>\n");
}

/// Axis ticks from 0 for a largest value: a step of 1, 2, 2.5 or 5 × 10ᵏ (at least
/// `min_step`) giving at most 5 intervals, and the axis top (a multiple of the step, at least
/// the value).
pub(super) fn axis_ticks(largest: f64, min_step: f64) -> (f64, Vec<f64>) {
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
pub(super) fn count_ticks(largest: u64) -> (f64, Vec<f64>) {
    // 10 % headroom, so labels drawn at the top do not sit on the tallest bar.
    axis_ticks(largest.max(1) as f64 * 1.1, 1.0)
}

pub(super) fn time_chart(out: &mut String, report: &Report) {
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
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#4c8bc7\"><title>{} to {} ms: {}</title></rect>",
            n(frame.x(bucket as f64 / BUCKETS as f64) + 1.0),
            n(bar_top),
            n(slot - 2.0),
            n(frame.y(0.0) - bar_top),
            millis(span * bucket as f64 / BUCKETS as f64),
            millis(span * (bucket + 1) as f64 / BUCKETS as f64),
            crate::plural::count(*count, "row")
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
        frame.empty(out, "no rows");
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
                "<line {} stroke=\"#2d3748\" stroke-width=\"1.5\" stroke-dasharray=\"5 3\"/><text class=\"halo\" x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"{anchor}\" style=\"font-weight:600\">{}</text>",
                frame.across(x),
                n(text_x),
                n(frame.top + 14.0 + 16.0 * row),
                escape(&text)
            );
        }
    }
    out.push_str("</svg>\n");
}
