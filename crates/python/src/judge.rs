//! `Judge` and its `Result`: one review of a state against a definition, blocking (the GIL
//! released while it waits) or awaited from asyncio.

use std::{path::PathBuf, sync::Arc};

use jevjudge_client::limit::{LimitConfig, Limiter};
use jevjudge_judge::{
    Backend, Definition, Judge, RecordWriter, Status, Verdict, backend_settings::BackendSettings,
    input,
};
use jevjudge_wire::lines::DEFAULT_MAX_FILE_BYTES;
use pyo3::prelude::*;
use serde_json::Value;

use crate::{
    backend::{resolve, seconds},
    definition::PyDefinition,
    errors::{self, StateError},
    json, runtime,
};

/// Reviews states against one definition with one backend, each within a budget that covers
/// retries and waits. Safe to share across threads and asyncio tasks: every review goes
/// through one adaptive limiter, at most `max_in_flight` (64) at once, cut on 429/529 and
/// grown back as the CLI's.
#[pyclass(name = "Judge", module = "jevjudge._native", frozen)]
pub struct PyJudge {
    judge: Arc<Judge<Arc<dyn Backend>>>,
    definition: Arc<Definition>,
    recorder: Option<Arc<RecordWriter>>,
    model: String,
}

/// Reads a Python state (str, dict or list) with the checks of `jevjudge judge --state`.
fn read_state(state: &Bound<'_, PyAny>) -> PyResult<Value> {
    let text = json::dumps(state)
        .map_err(|e| StateError::new_err(format!("the state is not JSON-serialisable: {e}")))?;
    input::read_state(text.as_bytes(), DEFAULT_MAX_FILE_BYTES)
        .map_err(|e| StateError::new_err(e.to_string()))
}

#[pymethods]
impl PyJudge {
    #[new]
    #[pyo3(signature = (definition, *, base_url=None, api_key_env=None, model=None, replay=None,
        fake=false, budget=2.0, retries=2, timeout=5.0, record=None, allow_insecure_http=false,
        max_in_flight=64))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        definition: &Bound<'_, PyDefinition>,
        base_url: Option<String>,
        api_key_env: Option<String>,
        model: Option<String>,
        replay: Option<PathBuf>,
        fake: bool,
        budget: f64,
        retries: u32,
        timeout: f64,
        record: Option<PathBuf>,
        allow_insecure_http: bool,
        max_in_flight: usize,
    ) -> PyResult<PyJudge> {
        let budget = seconds("budget", budget)?;
        if max_in_flight == 0 {
            return Err(errors::configuration("max_in_flight must be at least 1"));
        }
        let settings = BackendSettings {
            replay,
            fake,
            model,
            base_url,
            api_key_env,
            timeout: seconds("timeout", timeout)?,
            retries,
            allow_insecure_http,
            record,
            repeated_records: false,
            ..BackendSettings::default()
        };
        let limiter = Limiter::new(LimitConfig::new(max_in_flight));
        let chosen = resolve(&settings, Some(limiter.clone()))?;
        let judge = Judge::new(chosen.backend, budget)
            .map_err(errors::configuration)?
            .with_limiter(limiter);
        Ok(PyJudge {
            judge: Arc::new(judge),
            definition: definition.get().inner.clone(),
            recorder: chosen.recorder,
            model: chosen.model,
        })
    }

    /// Reviews `state` (a str, dict or list) and returns its Result. Blocks with the GIL
    /// released; Ctrl-C cancels the review and raises KeyboardInterrupt.
    fn review(&self, py: Python<'_>, state: &Bound<'_, PyAny>) -> PyResult<PyVerdict> {
        let state = read_state(state)?;
        let (judge, definition) = (self.judge.clone(), self.definition.clone());
        let verdict = runtime::block_on(py, async move { judge.review(state, &definition).await })?;
        Ok(self.result(verdict))
    }

    /// Reviews `state` from asyncio: `result = await judge.review_async(state)`. Cancelling
    /// the task drops the review.
    fn review_async<'py>(
        &self,
        py: Python<'py>,
        state: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let state = read_state(state)?;
        let (judge, definition) = (self.judge.clone(), self.definition.clone());
        pyo3_async_runtimes::tokio::future_into_py(py, async move {
            let verdict = judge.review(state, &definition).await;
            let backend = judge.backend().kind().to_string();
            Ok(PyVerdict { verdict, backend })
        })
    }

    /// The definition reviews are made against.
    #[getter]
    fn definition(&self) -> PyDefinition {
        PyDefinition {
            inner: self.definition.clone(),
        }
    }

    /// The model requests ask for.
    #[getter]
    fn model(&self) -> &str {
        &self.model
    }

    /// Where answers come from: `systemone`, `replay`, `fixture` or `fake`.
    #[getter]
    fn backend(&self) -> String {
        self.judge.backend().kind().to_string()
    }

    /// Each review's budget in seconds.
    #[getter]
    fn budget(&self) -> f64 {
        self.judge.budget().as_secs_f64()
    }

    /// With `record=`: how many exchanges could not be written to the record file.
    #[getter]
    fn record_failures(&self) -> u64 {
        self.recorder.as_ref().map_or(0, |r| r.failed())
    }

    fn __repr__(&self) -> String {
        format!(
            "Judge(definition={:?}, backend={:?}, model={:?}, budget={})",
            self.definition.version(),
            self.backend(),
            self.model,
            self.judge.budget().as_secs_f64()
        )
    }
}

impl PyJudge {
    fn result(&self, verdict: Verdict) -> PyVerdict {
        PyVerdict {
            verdict,
            backend: self.judge.backend().kind().to_string(),
        }
    }
}

/// The Result of one review: PASS, FAIL, INCONCLUSIVE or ERROR, with one finding per criterion.
/// An ERROR is never a probability and never a FAIL: its `error` and `detail` say why.
#[pyclass(name = "Result", module = "jevjudge._native", frozen)]
pub struct PyVerdict {
    verdict: Verdict,
    backend: String,
}

impl PyVerdict {
    /// The Result JSON of `jevjudge judge`: the verdict plus `backend`.
    fn json(&self) -> PyResult<Value> {
        let mut value = serde_json::to_value(&self.verdict)
            .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
        if let Some(map) = value.as_object_mut() {
            map.insert("backend".into(), Value::String(self.backend.clone()));
        }
        Ok(value)
    }
}

#[pymethods]
impl PyVerdict {
    /// The definition's version.
    #[getter]
    fn definition_version(&self) -> &str {
        &self.verdict.definition_version
    }

    /// `PASS`, `FAIL`, `INCONCLUSIVE` or `ERROR`.
    #[getter]
    fn status(&self) -> &'static str {
        self.verdict.status.as_str()
    }

    /// Why the status is ERROR: `TIMEOUT`, `INVALID_RESPONSE` or `BACKEND`; `NONE` otherwise.
    #[getter]
    fn error(&self) -> &'static str {
        self.verdict.error.as_str()
    }

    /// The safe detail code of an ERROR (like `budget_elapsed`, `http_429`), else None.
    #[getter]
    fn detail(&self) -> Option<String> {
        self.verdict.detail.map(|d| d.to_string())
    }

    /// `{criterion id: {"status", "yes_probability", "expected_probability"}}` in definition
    /// order; empty for ERROR.
    #[getter]
    fn findings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, &self.verdict.findings)
    }

    /// The model that answered, when known.
    #[getter]
    fn model(&self) -> Option<&str> {
        self.verdict.model.as_deref()
    }

    /// Token usage (`{"input_tokens", "output_tokens"}`), when known.
    #[getter]
    fn usage<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, &self.verdict.usage)
    }

    /// Seconds from the start of the review until its answers were mapped or it failed.
    #[getter]
    fn elapsed(&self) -> f64 {
        self.verdict.elapsed.as_secs_f64()
    }

    /// Where the answers came from: `systemone`, `replay`, `fixture` or `fake`.
    #[getter]
    fn backend(&self) -> &str {
        &self.backend
    }

    /// Whether the status is PASS.
    #[getter]
    fn passed(&self) -> bool {
        self.verdict.status == Status::Pass
    }

    /// The Result as a dict, equal to `jevjudge judge`'s JSON output.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json::to_py(py, &self.json()?)
    }

    /// The Result as JSON text, as `jevjudge judge` prints it (without the newline).
    fn to_json(&self) -> PyResult<String> {
        Ok(self.json()?.to_string())
    }

    /// Raises the ReviewError subclass of an ERROR (ReviewTimeout, InvalidResponse,
    /// BackendFailure) with its `code` and `detail`; returns self otherwise.
    fn raise_for_error(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        match errors::review_error(slf.py(), &slf.get().verdict)? {
            Some(error) => Err(error),
            None => Ok(slf),
        }
    }

    fn __repr__(&self) -> String {
        let mut text = format!("Result(status={:?}", self.verdict.status.as_str());
        if let Some(detail) = self.verdict.detail {
            text.push_str(&format!(
                ", error={:?}, detail={:?}",
                self.verdict.error.as_str(),
                detail.to_string()
            ));
        }
        for (id, finding) in self.verdict.findings.iter() {
            text.push_str(&format!(
                ", {id}={}@{:.3}",
                finding.status.as_str(),
                finding.yes_probability
            ));
        }
        text.push_str(&format!(", backend={:?})", self.backend));
        text
    }
}
