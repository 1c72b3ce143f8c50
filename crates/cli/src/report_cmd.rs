//! `jevjudge report`: show a saved report, or render it as one self-contained HTML page.

use std::{path::Path, path::PathBuf};

use jevjudge_eval::{
    MAX_CASES, Report,
    calibration::{CriterionSpec, check_criteria},
    html::case_texts,
    read_cases_file,
};
use jevjudge_judge::Definition;

use crate::{exit, output};

/// Options of `jevjudge report`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Without --html, prints the run's human summary. The HTML page is one file with \
    no network access, no external assets and no script: summary tables, a per-scenario figure, \
    per criterion a reliability diagram and a histogram of yes-probabilities by label with the \
    thresholds drawn, and the review-time distribution. It holds no case text unless \
    --include-text is given (with --cases, since reports hold none).\n\n\
    Exit status: 0 done; 2 invalid input (unreadable report, definition or cases) or an output \
    that could not be written."
)]
pub struct Args {
    /// The JSON report of an `eval` run (`--report OUT.json`).
    #[arg(value_name = "R.json")]
    pub report: PathBuf,

    /// Write the report as a self-contained HTML page here.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,

    /// The definition the report was made with, so the histograms show its thresholds
    /// [default: criteria read from the report, thresholds not drawn].
    #[arg(long, value_name = "DEF")]
    pub definition: Option<PathBuf>,

    /// Show each case's text (question, evidence and answer, or the state) beside its row.
    /// Reports hold no text, so this needs the run's cases file (--cases).
    #[arg(long, requires_all = ["html", "cases"])]
    pub include_text: bool,

    /// The run's cases file, read for --include-text.
    #[arg(long, value_name = "CASES.jsonl", requires = "include_text")]
    pub cases: Option<PathBuf>,
}

/// Reads a JSON report, naming the file in every error.
pub fn read_report(path: &Path) -> anyhow::Result<Report> {
    Report::load(path).map_err(|e| crate::inputs::flagged(&e))
}

/// Loads a definition and checks that the report's findings belong to it.
pub fn definition_for(
    path: &Path,
    report: &Report,
    report_path: &Path,
) -> anyhow::Result<Definition> {
    let definition = Definition::from_path(path)?;
    check_criteria(report, &CriterionSpec::from_definition(&definition)).map_err(|e| {
        anyhow::anyhow!(
            "{} does not fit {}: {e}",
            report_path.display(),
            path.display()
        )
    })?;
    if definition.version() != report.definition_version {
        eprintln!(
            "jevjudge: note: {} was made with definition `{}`, {} is `{}`",
            report_path.display(),
            report.definition_version,
            path.display(),
            definition.version()
        );
    }
    Ok(definition)
}

/// Runs the command.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let report = read_report(&args.report)?;
    let definition = match &args.definition {
        Some(path) => Some(definition_for(path, &report, &args.report)?),
        None => None,
    };
    let Some(html) = &args.html else {
        output::print_stdout(&jevjudge_eval::terminal::summary(&report, &[], None, None));
        return Ok(exit::SUCCESS);
    };
    let texts = match (&args.cases, args.include_text) {
        (Some(path), true) => {
            let cases = read_cases_file(path, MAX_CASES.max(report.rows.len()))?;
            let texts = case_texts(&cases);
            let missing = report
                .rows
                .iter()
                .filter(|row| !texts.contains_key(&row.id))
                .count();
            if missing > 0 {
                eprintln!(
                    "jevjudge: note: {missing} of {} {} no case in {}; their text is not shown",
                    jevjudge_eval::plural::count(report.rows.len(), "row"),
                    if missing == 1 { "has" } else { "have" },
                    path.display()
                );
            }
            Some(texts)
        }
        _ => None,
    };
    output::write_atomic(
        html,
        &jevjudge_eval::html::page(&report, definition.as_ref(), texts.as_ref()),
    )?;
    eprintln!("jevjudge: wrote {}", html.display());
    Ok(exit::SUCCESS)
}
