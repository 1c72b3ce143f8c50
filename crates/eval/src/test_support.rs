//! Builders shared by the crate's unit tests.

use jevjudge_judge::BackendKind;

use crate::{REPORT_FORMAT, Report, Row, summarize};

/// A complete replay report of `rows` for definition `version`, with its summaries.
pub(crate) fn report(version: &str, rows: Vec<Row>) -> Report {
    let (overall, scenarios) = summarize(&rows, None);
    Report {
        format: REPORT_FORMAT.into(),
        definition_version: version.into(),
        backend: BackendKind::Replay,
        complete: true,
        wall_millis: None,
        stopped: None,
        overall,
        scenarios,
        rows,
    }
}

pub(crate) use jevjudge_test_support::keys;
