//! What a run shows a person and writes to disk: progress, the human summary, gates, files.

use std::{
    fmt::Write as _,
    io::{BufRead, BufReader},
    path::Path,
};

use anyhow::Context;
use jevjudge_eval::{Case, Report, Summary, parse_case};

/// A progress bar on standard error, hidden when standard error is not a terminal.
pub fn progress_bar(len: u64) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(len),
        indicatif::ProgressDrawTarget::stderr_with_hz(4),
    );
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{spinner} {bar:32} {pos}/{len} reviews · {elapsed_precise} elapsed · eta {eta}",
    ) {
        bar.set_style(style);
    }
    bar
}

/// Completes on Ctrl-C (SIGINT) or SIGTERM.
pub async fn interrupted() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Reads a cases file again, lazily, for a streaming run (it was checked in a first pass).
pub fn stream_cases(path: &Path) -> anyhow::Result<impl Iterator<Item = Case>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("cannot read the cases {}", path.display()))?;
    Ok(BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter(|line| !line.trim().is_empty())
        .filter_map(|line| parse_case(&line).ok()))
}

/// One gate's outcome.
#[derive(Debug, Clone)]
pub struct Gate {
    /// Whether it held.
    pub held: bool,
    /// How to say it.
    pub line: String,
}

/// Evaluates `--min-accuracy` and `--max-errors`.
pub fn gates(report: &Report, min_accuracy: Option<f64>, max_errors: Option<u64>) -> Vec<Gate> {
    let mut gates = Vec::new();
    let overall = &report.overall;
    if let Some(min) = min_accuracy {
        let held = overall.accuracy >= min;
        gates.push(Gate {
            held,
            line: format!(
                "min-accuracy {min}: {} (accuracy {:.4})",
                if held { "held" } else { "FAILED" },
                overall.accuracy
            ),
        });
    }
    if let Some(max) = max_errors {
        let held = overall.errors <= max;
        gates.push(Gate {
            held,
            line: format!(
                "max-errors {max}: {} ({} errors)",
                if held { "held" } else { "FAILED" },
                overall.errors
            ),
        });
    }
    gates
}

/// Writes a file through a temporary sibling and a rename, so a reader never sees half of it.
pub fn write_atomic(path: &Path, contents: &str) -> anyhow::Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_owned());
    let temporary = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&temporary, contents)
        .with_context(|| format!("cannot write {}", path.display()))?;
    std::fs::rename(&temporary, path).with_context(|| format!("cannot write {}", path.display()))
}

/// The short human summary printed on standard output.
pub fn human_summary(report: &Report, gates: &[Gate], rows_file: Option<&Path>) -> String {
    let mut out = String::new();
    let models = report.models();
    let _ = writeln!(
        out,
        "jevjudge eval: {} · backend {}{}{}",
        report.definition_version,
        report.backend,
        if models.is_empty() {
            String::new()
        } else {
            format!(" · model {}", models.join(", "))
        },
        if report.complete {
            ""
        } else {
            " · INCOMPLETE (interrupted)"
        }
    );
    if report.backend.is_synthetic() {
        let _ = writeln!(
            out,
            "note: answers come from the {} backend, not a model: these figures measure no model",
            report.backend
        );
    }
    let width = scope_width(report.scenarios.iter().map(|(name, _)| name.as_str()));
    let _ = writeln!(
        out,
        "{:<width$}  {:>6} {:>7} {:>9} {:>9} {:>6} {:>8} {:>8} {:>8}  tokens in/out",
        "scope",
        "total",
        "correct",
        "incorrect",
        "abstained",
        "errors",
        "accuracy",
        "p50 ms",
        "p95 ms"
    );
    line(&mut out, "overall", &report.overall, width);
    for (name, summary) in &report.scenarios {
        let name: String = name.chars().take(width).collect();
        line(&mut out, &name, summary, width);
    }
    out.push_str(&crate::risk_output::risk_table(report, width));
    if let Some(wall) = report.wall_millis.filter(|w| *w > 0.0) {
        let _ = writeln!(
            out,
            "wall {:.3} s for {} reviews ({:.0} reviews/s)",
            wall / 1e3,
            report.overall.total,
            report.overall.total as f64 / (wall / 1e3)
        );
    }
    if let Some(cost) = report.overall.cost {
        let _ = writeln!(
            out,
            "cost: {cost:.6} (input tokens of {} rows with known usage × your price)",
            report.overall.usage_known_rows
        );
    }
    for gate in gates {
        let _ = writeln!(out, "gate {}", gate.line);
    }
    if let Some(path) = rows_file {
        let _ = writeln!(out, "rows: {}", path.display());
    }
    out
}

fn line(out: &mut String, scope: &str, s: &Summary, width: usize) {
    let tokens = s.tokens_text();
    let _ = writeln!(
        out,
        "{scope:<width$}  {:>6} {:>7} {:>9} {:>9} {:>6} {:>8.4} {:>8.2} {:>8.2}  {tokens}",
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

/// The width of a table's scope column: the longest scope name, at least `overall`'s 7 and at
/// most 40 characters.
pub fn scope_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names
        .map(|name| name.chars().count())
        .chain([7])
        .max()
        .unwrap_or(7)
        .min(40)
}
