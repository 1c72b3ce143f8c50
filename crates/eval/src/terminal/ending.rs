//! How `jevjudge eval` ends: which ending a finished run had, and the line on standard error
//! that explains any but a clean one.

use std::path::Path;

use jevjudge_client::limit::Stop;

use crate::Report;

/// How a finished run ended, in the order the endings outrank one another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The API key was refused: no new review started.
    KeyRefused,
    /// A spending cap stopped the run.
    CapReached,
    /// Interrupted (Ctrl-C, SIGTERM) after writing what finished.
    Interrupted,
    /// Every review errored: no result.
    AllErrored,
    /// A gate failed.
    GateFailed,
    /// Done, and every gate held.
    Held,
}

/// The ending of `report` (a run over `cases` cases whose rows went to `rows_path`, if any)
/// and, for any ending but [`Ending::Held`] and [`Ending::GateFailed`] (whose lines the summary
/// prints), the one line that says what happened and what to do next.
pub fn ending(
    report: &Report,
    gates_held: bool,
    cases: usize,
    rows_path: Option<&Path>,
) -> (Ending, Option<String>) {
    if let Some(stop) = &report.stopped {
        let not_run = cases.saturating_sub(report.overall.total as usize);
        let hint = match rows_path {
            Some(path) => format!(" (rows in {})", path.display()),
            None => " (give --report or --rows next time to keep the finished rows)".to_owned(),
        };
        let ending = match stop {
            Stop::KeyRefused { .. } => Ending::KeyRefused,
            Stop::InputTokenCap { .. } => Ending::CapReached,
        };
        return (ending, Some(stop_line(stop, not_run, &hint)));
    }
    if !report.complete {
        let line = format!(
            "jevjudge: interrupted: {} of {} finished{}",
            report.overall.total,
            crate::plural::count(cases, "case"),
            match rows_path {
                Some(path) => format!(
                    "; rerun with --resume to finish (rows in {})",
                    path.display()
                ),
                None => String::new(),
            }
        );
        return (Ending::Interrupted, Some(line));
    }
    if report.overall.total > 0 && report.overall.errors == report.overall.total {
        let line = format!(
            "jevjudge: error: every review errored ({}): the run produced no result",
            report.overall.errors_text()
        );
        return (Ending::AllErrored, Some(line));
    }
    (
        if gates_held {
            Ending::Held
        } else {
            Ending::GateFailed
        },
        None,
    )
}

/// The one line that says why the limiter stopped a run, how many cases did not run, and how
/// to continue (`resume_hint` ends it).
pub fn stop_line(stop: &Stop, not_run: usize, resume_hint: &str) -> String {
    let fix = match stop {
        // The refused review left an ERROR row: --retry-errors runs it again.
        Stop::KeyRefused { .. } => "fix the key, then rerun with --resume --retry-errors",
        Stop::InputTokenCap { .. } => "raise the cap, then rerun with --resume",
    };
    let not_run = crate::plural::count(not_run, "case");
    format!("jevjudge: stopped: {stop}; {not_run} not run; {fix}{resume_hint}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stop_is_said_in_one_line_with_how_to_continue() {
        let key = Stop::KeyRefused { status: 401 };
        let line = stop_line(&key, 12, " (rows in out.rows.jsonl)");
        assert_eq!(
            line,
            "jevjudge: stopped: the API key was refused (HTTP 401); no new review was started; \
             12 cases not run; fix the key, then rerun with --resume --retry-errors (rows in \
             out.rows.jsonl)"
        );
        assert!(!line.contains('\n'));
        let cap = Stop::InputTokenCap {
            cap: 10,
            spent: 9,
            next_estimate: 5,
        };
        assert!(stop_line(&cap, 1, "").contains("; 1 case not run; raise the cap"));
    }
}
