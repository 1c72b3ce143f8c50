//! `Report`: one run's figures and rows, as `jevjudge eval --report` writes them; `compare`
//! and `calibrate`, returning the documents `jevjudge compare --json` and
//! `jevjudge calibrate --json` print.

use std::{path::PathBuf, sync::Arc};

use jevjudge_eval::{
    Report,
    calibration::{
        CalibrationSettings, CriterionSpec, SettingsError, Target, calibrate as calibrate_report,
        check_criteria, check_rows, infer_criteria,
    },
    compare::{CompareOptions, compare as compare_reports},
    output::ReportFiles,
};
use jevjudge_judge::Definition;
use jevjudge_wire::lines::DEFAULT_MAX_FILE_BYTES;
use pyo3::{prelude::*, types::PyDict};

use crate::{
    definition::PyDefinition,
    errors::{ConfigurationError, ReportError},
    json,
};

/// The report of one run: `summary` (overall and per scenario), `rows()`, and the files
/// `jevjudge eval` writes. Holds no case text.
#[pyclass(name = "Report", module = "jevjudge._native", frozen)]
pub struct PyReport {
    report: Report,
    definition: Option<Arc<Definition>>,
}

impl PyReport {
    /// Wraps a report; `definition`, when known, draws the thresholds on the HTML page.
    pub fn new(report: Report, definition: Option<Arc<Definition>>) -> PyReport {
        PyReport { report, definition }
    }
}

fn report_error(message: impl std::fmt::Display) -> PyErr {
    ReportError::new_err(message.to_string())
}

#[pymethods]
impl PyReport {
    /// Reads a JSON report written by `jevjudge eval --report` or `Report.write(json=…)`.
    #[staticmethod]
    fn load(path: PathBuf) -> PyResult<PyReport> {
        let text =
            jevjudge_judge::input::read_to_string(&path, DEFAULT_MAX_FILE_BYTES).map_err(|e| {
                report_error(format!("{}: cannot read the report: {e}", path.display()))
            })?;
        let report = Report::from_json(&text)
            .map_err(|e| report_error(format!("{}: not a jevjudge report: {e}", path.display())))?;
        Ok(PyReport::new(report, None))
    }

    /// `{"overall": {...}, "scenarios": {name: {...}}}`: the report JSON's summaries
    /// (`summary["overall"]["correct"]`, …).
    #[getter]
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let summary = PyDict::new(py);
        summary.set_item("overall", json::to_py(py, &self.report.overall)?)?;
        let scenarios = PyDict::new(py);
        for (name, figures) in &self.report.scenarios {
            scenarios.set_item(name, json::to_py(py, figures)?)?;
        }
        summary.set_item("scenarios", scenarios)?;
        Ok(summary)
    }

    /// The definition's version.
    #[getter]
    fn definition_version(&self) -> &str {
        &self.report.definition_version
    }

    /// Where the answers came from: `systemone`, `replay`, `fixture` or `fake`.
    #[getter]
    fn backend(&self) -> &'static str {
        self.report.backend.as_str()
    }

    /// False when the run was interrupted or stopped; the figures then cover the finished rows.
    #[getter]
    fn complete(&self) -> bool {
        self.report.complete
    }

    /// The rows in input order, each a dict as in the report JSON.
    fn rows<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, &self.report.rows)
    }

    /// The whole report JSON as a dict.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, &self.report)
    }

    /// The rows as a pandas DataFrame (nested fields flattened with dots); needs pandas.
    fn to_pandas<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pandas = py.import("pandas").map_err(|_| {
            pyo3::exceptions::PyImportError::new_err(
                "Report.to_pandas() needs pandas: pip install pandas",
            )
        })?;
        pandas.call_method1("json_normalize", (self.rows(py)?,))
    }

    /// Writes the files asked for, each whole or not at all: the JSON report, JUnit XML, the
    /// Markdown summary and the self-contained HTML page.
    #[pyo3(signature = (*, json=None, html=None, junit=None, markdown=None))]
    fn write(
        &self,
        json: Option<PathBuf>,
        html: Option<PathBuf>,
        junit: Option<PathBuf>,
        markdown: Option<PathBuf>,
    ) -> PyResult<()> {
        ReportFiles {
            report: json,
            junit,
            markdown,
            html,
            include_text: false,
        }
        .write(&self.report, &[], self.definition.as_deref(), None)
        .map_err(report_error)
    }

    /// The summary `jevjudge eval` prints.
    fn __str__(&self) -> String {
        jevjudge_eval::terminal::summary(&self.report, &[], None, None)
    }

    fn __repr__(&self) -> String {
        let o = &self.report.overall;
        format!(
            "Report(definition_version={:?}, backend={:?}, total={}, correct={}, incorrect={}, abstained={}, errors={})",
            self.report.definition_version,
            self.report.backend.as_str(),
            o.total,
            o.correct,
            o.incorrect,
            o.abstained,
            o.errors
        )
    }
}

/// Compares two runs case by case: the document `jevjudge compare --json` prints (flips,
/// regressions, fixes, McNemar's exact test, per-run figures).
#[pyfunction]
#[pyo3(signature = (base, candidate, *, intersect=false, prevalence=None))]
pub fn compare<'py>(
    py: Python<'py>,
    base: &Bound<'py, PyReport>,
    candidate: &Bound<'py, PyReport>,
    intersect: bool,
    prevalence: Option<f64>,
) -> PyResult<Bound<'py, PyAny>> {
    let prevalence = prevalence
        .map(jevjudge_eval::prevalence::check)
        .transpose()
        .map_err(|e| ConfigurationError::new_err(format!("prevalence: {e}")))?;
    let mut comparison = compare_reports(
        &base.get().report,
        &candidate.get().report,
        CompareOptions { intersect },
    )
    .map_err(|e| report_error(format!("cannot compare the reports: {e}")))?;
    if let Some(prevalence) = prevalence {
        comparison.set_prevalence(prevalence);
    }
    json::to_py(py, &comparison.to_document())
}

/// Calibration metrics and threshold advice per criterion from a report: the document
/// `jevjudge calibrate --json` prints. Without `definition`, each criterion's `expected` is
/// read from the report's findings and its current thresholds are unknown.
#[pyfunction]
#[pyo3(signature = (report, definition=None, *, min_pass_precision=0.9, min_fail_precision=0.9,
    max_abstain=0.25, delta=0.05, resamples=200, seed=42, prevalence=None,
    unweighted=false))]
#[allow(clippy::too_many_arguments)]
pub fn calibrate<'py>(
    py: Python<'py>,
    report: &Bound<'py, PyReport>,
    definition: Option<&Bound<'py, PyDefinition>>,
    min_pass_precision: f64,
    min_fail_precision: f64,
    max_abstain: f64,
    delta: f64,
    resamples: u32,
    seed: u64,
    prevalence: Option<f64>,
    unweighted: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let config = |message: String| ConfigurationError::new_err(message);
    let settings = CalibrationSettings::with_targets(
        min_pass_precision,
        min_fail_precision,
        max_abstain,
        resamples,
        seed,
    )
    .map_err(|error| match error {
        SettingsError::OutOfRange { target, value } => {
            let keyword = match target {
                Target::MinPassPrecision => "min_pass_precision",
                Target::MinFailPrecision => "min_fail_precision",
                Target::MaxAbstain => "max_abstain",
            };
            config(format!("{keyword} must be within 0..=1, not {value}"))
        }
        SettingsError::NoResamples => config("resamples must be at least 1".into()),
    })?
    .with_delta(delta)
    .map_err(|e| config(e.to_string()))?;
    let settings = CalibrationSettings {
        unweighted,
        ..settings
    };
    let report = &report.get().report;
    check_rows(report).map_err(|e| report_error(format!("the report {e}")))?;
    let specs = match definition {
        Some(definition) => {
            let specs = CriterionSpec::from_definition(&definition.get().inner);
            check_criteria(report, &specs).map_err(|e| {
                report_error(format!(
                    "the report does not fit {}: {e}",
                    definition.get().inner.version()
                ))
            })?;
            specs
        }
        None => {
            infer_criteria(report).map_err(|e| report_error(format!("{e}: give the definition")))?
        }
    };
    let mut calibration = calibrate_report(report, &specs, &settings);
    if let Some(prevalence) = prevalence {
        let prevalence = jevjudge_eval::prevalence::check(prevalence)
            .map_err(|e| config(format!("prevalence: {e}")))?;
        calibration.set_prevalence(prevalence);
    }
    json::to_py(py, &calibration.to_document())
}

#[cfg(test)]
mod tests {
    use jevjudge_eval::calibration::{DELTA, RESAMPLES, SEED};

    #[test]
    fn calibrate_keyword_defaults_are_the_command_line_defaults() {
        // The literals of `calibrate`'s signature (the stubs show them): 0.05, 200, 42.
        assert_eq!((DELTA, RESAMPLES, SEED), (0.05, 200, 42));
    }
}
