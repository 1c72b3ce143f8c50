//! The JSON report of one run (cli-and-formats.md §4.2).

use jevjudge_judge::BackendKind;
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
    /// Why the run stopped before every case ran: a refused key, or a spending cap (issue 11).
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
    pub fn from_json(text: &str) -> Result<Report, crate::ReportError> {
        let report: Report = serde_json::from_str(text).map_err(crate::ReportError::Json)?;
        if report.format != REPORT_FORMAT {
            return Err(crate::ReportError::Format {
                found: report.format,
            });
        }
        Ok(report)
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
