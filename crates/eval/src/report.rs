//! The JSON report of one run (cli-and-formats.md §4.2), and why a text is not one
//! ([`ReportError`]).

use std::path::{Path, PathBuf};

use jevjudge_judge::{BackendKind, input::ReadError};
use jevjudge_wire::setting::{Explain, Namer, Setting};
use serde::{Deserialize, Serialize};

use crate::{Row, Run, Summary};

/// The `format` of a report.
pub const REPORT_FORMAT: &str = "jevjudge.report.v1";

/// One evaluation run: figures overall and per scenario, and every row. No question, answer,
/// evidence or state text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Always [`REPORT_FORMAT`].
    pub format: String,
    /// The definition's version.
    pub definition_version: String,
    /// Where the answers came from: `systemone`, `replay`, `fixture` or `fake`.
    pub backend: BackendKind,
    /// False when the run was interrupted; the figures then cover the finished rows only.
    pub complete: bool,
    /// Wall time of the run (of this session, for a resumed run), in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_millis: Option<f64>,
    /// Why the run stopped before every case ran: a refused key, or a spending cap.
    /// The cases not run have no rows; `--resume` runs them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<jevjudge_client::limit::Stop>,
    /// Figures over every row.
    pub overall: Summary,
    /// Figures per scenario, in first-seen order.
    #[serde(with = "crate::ordered_map")]
    pub scenarios: Vec<(String, Summary)>,
    /// Rows in input order.
    pub rows: Vec<Row>,
}

impl Report {
    /// The report of a run.
    pub fn new(definition_version: impl Into<String>, backend: BackendKind, run: Run) -> Report {
        Report {
            format: REPORT_FORMAT.to_owned(),
            definition_version: definition_version.into(),
            backend,
            complete: run.complete,
            wall_millis: Some(run.wall.as_secs_f64() * 1e3),
            stopped: run.stopped,
            overall: run.overall,
            scenarios: run.scenarios,
            rows: run.rows,
        }
    }

    /// Reads a report, refusing other formats.
    pub fn from_json(text: &str) -> Result<Report, ReportError> {
        let report: Report = serde_json::from_str(text).map_err(ReportError::Json)?;
        if report.format != REPORT_FORMAT {
            return Err(ReportError::Format {
                found: report.format,
            });
        }
        Ok(report)
    }

    /// Reads a report file (at most the default input cap), refusing a run's rows file given
    /// in its place.
    pub fn load(path: &Path) -> Result<Report, LoadReportError> {
        if crate::rows_file::is_rows_file(path) {
            return Err(LoadReportError::RowsFile(path.to_owned()));
        }
        let text = jevjudge_judge::input::read_to_string(
            path,
            jevjudge_wire::lines::DEFAULT_MAX_FILE_BYTES,
        )
        .map_err(|source| LoadReportError::Read {
            path: path.to_owned(),
            source,
        })?;
        Report::from_json(&text).map_err(|source| LoadReportError::Invalid {
            path: path.to_owned(),
            source,
        })
    }

    /// The models that answered, in first-seen order.
    pub fn models(&self) -> Vec<String> {
        let mut models: Vec<String> = Vec::new();
        for row in &self.rows {
            if let Some(model) = &row.verdict.model {
                if !models.contains(model) {
                    models.push(model.clone());
                }
            }
        }
        models
    }
}

/// A text that [`Report::from_json`] refused.
///
/// The Display text is the whole message: the parse error (with its line and column) or the
/// format found. There is no `source()`, so a caller that prints the chain (`{:#}`) shows it once.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The text is not JSON of a report's shape.
    #[error("{0}")]
    Json(serde_json::Error),
    /// A report of another format.
    #[error("format `{found}` is not {REPORT_FORMAT}")]
    Format {
        /// The `format` the text carries.
        found: String,
    },
}

impl Report {
    /// Adds the precisions at `prevalence` to the overall summary and every scenario's.
    pub fn set_prevalence(&mut self, prevalence: f64) {
        self.overall.risk.at_prevalence = Some(self.overall.at_prevalence(prevalence));
        for (_, summary) in &mut self.scenarios {
            summary.risk.at_prevalence = Some(summary.at_prevalence(prevalence));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_of_another_format_is_refused_by_name() {
        let error = Report::from_json(r#"{"format":"other"}"#).unwrap_err();
        assert!(matches!(error, ReportError::Json(_)), "{error:?}");
        let report = Report {
            format: "jevjudge.report.v0".into(),
            ..crate::test_support::report("v1", Vec::new())
        };
        let text = serde_json::to_string(&report).unwrap();
        let error = Report::from_json(&text).unwrap_err();
        assert!(
            matches!(&error, ReportError::Format { found } if found == "jevjudge.report.v0"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "format `jevjudge.report.v0` is not jevjudge.report.v1"
        );
        let current = Report {
            format: REPORT_FORMAT.into(),
            ..report
        };
        let text = serde_json::to_string(&current).unwrap();
        assert_eq!(Report::from_json(&text).unwrap(), current);
    }
}

/// Why a report file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LoadReportError {
    /// The file is the rows file of a run, not its report.
    #[error("{} is the rows file of an eval run, not its report", .0.display())]
    RowsFile(PathBuf),
    /// The file cannot be read whole as text.
    #[error("the report {}: {source}", .path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ReadError,
    },
    /// The text is not a report.
    #[error("{}: not a jevjudge report: {source}", .path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Why.
        source: ReportError,
    },
}

impl Explain for LoadReportError {
    /// The error; for a rows file, which report belongs to it, or how to finish the run that
    /// would have written it.
    fn explain(&self, name: Namer<'_>) -> String {
        let LoadReportError::RowsFile(path) = self else {
            return self.to_string();
        };
        match crate::rows_file::report_path_for(path) {
            Some(report) if report.is_file() => {
                format!("{self}: its report is {}", report.display())
            }
            Some(report) => format!(
                "{self}: its report would be {}, which is not there (the run stopped before \
                 writing it: running it again with {} {} and {} finishes it and writes it)",
                report.display(),
                name(Setting::Report),
                report.display(),
                name(Setting::Resume)
            ),
            None => format!(
                "{self}: give the file that run wrote with {}",
                name(Setting::Report)
            ),
        }
    }
}
