//! `evaluate(...)`: one `eval` run over a cases file, as `jevjudge eval` runs it (the same
//! library session: pass 1, the rows file, resume, the report), with a progress callback and
//! Ctrl-C stopping it cleanly (the rows file stays resumable).

use std::path::PathBuf;

use jevjudge_client::limit::{LimitConfig, Limiter};
use jevjudge_eval::{
    Row, RunObserver,
    reviewer::Reviewer,
    session::{Session, SessionError, SessionPlan},
};
use jevjudge_judge::backend_settings::BackendSettings;
use jevjudge_wire::setting::Explain as _;
use pyo3::prelude::*;

use crate::{
    backend::{resolve, seconds},
    definition::PyDefinition,
    errors::{self, CasesError},
    report::PyReport,
    runtime::{self, Interruption},
};

/// A session error as the exception a Python caller can act on, naming the keyword that
/// fixes it.
fn session_error(error: SessionError) -> PyErr {
    let message = error.explain(&errors::keyword);
    match &error {
        SessionError::Cases(_) | SessionError::Input(_) | SessionError::NotAFile(_) => {
            CasesError::new_err(message)
        }
        SessionError::Failed(_) => errors::ReportError::new_err(message),
        _ => errors::configuration(message),
    }
}

/// Calls the progress callback with (reviews done, reviews to run) as rows finish; its first
/// error stops the run and is raised.
struct Progress {
    callback: Option<Py<PyAny>>,
    done: u64,
    total: u64,
    interruption: Interruption,
}

impl RunObserver for Progress {
    fn row_finished(&mut self, _index: usize, row: &Row) {
        self.done += row.verdicts().len().max(1) as u64;
        let Some(callback) = &self.callback else {
            return;
        };
        if self.interruption.is_set() {
            return;
        }
        let (done, total) = (self.done, self.total);
        if let Err(error) = Python::attach(|py| callback.call1(py, (done, total)).map(drop)) {
            self.interruption.set(error);
        }
    }
}

/// Replays the labelled cases in `cases` (a JSON Lines path) through the definition and
/// returns the Report, with the figures `jevjudge eval` prints and writes.
#[pyfunction]
#[pyo3(signature = (definition, cases, *, replay=None, fake=false, model=None, base_url=None,
    api_key_env=None, budget=2.0, retries=2, timeout=5.0, allow_insecure_http=false,
    record=None, concurrency=8, repeat=1, rows=None, resume=false, retry_errors=false,
    overwrite=false, max_cases=None, price_per_million_input=None, prevalence=None,
    fixed_concurrency=false, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn evaluate(
    py: Python<'_>,
    definition: &Bound<'_, PyDefinition>,
    cases: PathBuf,
    replay: Option<PathBuf>,
    fake: bool,
    model: Option<String>,
    base_url: Option<String>,
    api_key_env: Option<String>,
    budget: f64,
    retries: u32,
    timeout: f64,
    allow_insecure_http: bool,
    record: Option<PathBuf>,
    concurrency: usize,
    repeat: usize,
    rows: Option<PathBuf>,
    resume: bool,
    retry_errors: bool,
    overwrite: bool,
    max_cases: Option<usize>,
    price_per_million_input: Option<f64>,
    prevalence: Option<f64>,
    fixed_concurrency: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<PyReport> {
    let definition = definition.get().inner.clone();
    let budget = seconds("budget", budget)?;
    if retry_errors && !resume {
        return Err(errors::configuration("retry_errors=True needs resume=True"));
    }
    if resume && overwrite {
        return Err(errors::configuration(
            "resume=True and overwrite=True cannot be combined",
        ));
    }
    let prevalence = prevalence
        .map(jevjudge_eval::prevalence::check)
        .transpose()
        .map_err(|e| errors::configuration(format!("prevalence: {e}")))?;
    let plan = SessionPlan {
        cases,
        repeat,
        price_per_million_input,
        rows,
        resume,
        retry_errors,
        overwrite,
        ..SessionPlan::new(PathBuf::new(), max_cases)
    };
    let runner = plan.runner(concurrency).map_err(session_error)?;
    plan.check_cases_file().map_err(session_error)?;
    let case_set = plan.read_cases(&definition, None).map_err(session_error)?;
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
        repeated_records: repeat > 1,
        ..BackendSettings::default()
    };
    let limiter = Limiter::new(LimitConfig {
        adaptive: !fixed_concurrency,
        ..LimitConfig::new(concurrency)
    });
    let chosen = resolve(&settings, Some(limiter.clone()))?;
    let reviewer = Reviewer::new(runner, limiter, chosen, &definition, budget)
        .map_err(errors::configuration)?;
    let kind = reviewer.chosen.kind.to_string();
    let mut session = Session::open(&plan, &definition, case_set, &kind, &reviewer.chosen.model)
        .map_err(session_error)?;
    reviewer
        .limiter
        .record_input_tokens(session.previous_input_tokens());

    let interruption = Interruption::default();
    let observer = Progress {
        callback: progress,
        done: 0,
        total: session.reviews_to_run() as u64,
        interruption: interruption.clone(),
    };
    let rt = runtime::get()?;
    let ran = py.detach(|| {
        rt.block_on(session.run(
            &reviewer.runner,
            &reviewer.evaluator,
            observer,
            interruption.wait(),
        ))
    });
    let ran = ran.map_err(session_error)?;
    let rows_failed = session.close_rows_file();
    if let Some(error) = interruption.take() {
        // Ctrl-C or a failing callback: the finished rows are in the rows file (resume=True
        // runs the rest).
        return Err(error);
    }
    if let Some(error) = rows_failed {
        return Err(errors::ReportError::new_err(format!(
            "rows could not all be written to the rows file: {error}"
        )));
    }
    let outcome = session.finish(ran).map_err(session_error)?;
    let mut report = reviewer.report(outcome, &definition);
    if let Some(prevalence) = prevalence {
        jevjudge_eval::calibration::set_prevalence_of(&mut report, prevalence, &definition);
    }
    Ok(PyReport::new(report, Some(definition)))
}
