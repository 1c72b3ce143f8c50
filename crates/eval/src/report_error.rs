//! Why a text is not a jevjudge report ([`Report::from_json`](crate::Report::from_json)).

use crate::REPORT_FORMAT;

/// A text that [`Report::from_json`](crate::Report::from_json) refused.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Report;

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
