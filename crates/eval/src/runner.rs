//! The runner: bounded concurrency, rows in input order, synthetic rows for failing
//! evaluators, summaries (judge-contract §10–§12).

use std::{
    collections::HashSet, fmt, future::Future, panic::AssertUnwindSafe, sync::Arc, time::Duration,
};

use futures_util::{FutureExt, StreamExt, stream};
use jevjudge_client::limit::{Limiter, Stop};
use jevjudge_judge::{ErrorCode, Verdict};
use jevjudge_wire::Detail;

use crate::{
    Case, EvaluationRequest, Evaluator, EvaluatorFailed, EvaluatorResponse, Row, SummariesBuilder,
    Summary,
};

/// The default and largest case count of a run that keeps its rows in memory (D6).
pub const MAX_CASES: usize = 10_000;
/// The allowed concurrency (D6).
pub const CONCURRENCY: std::ops::RangeInclusive<usize> = 1..=32;

/// Why a run did not start (D6). Nothing was evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RunnerError {
    /// Concurrency outside 1..=32.
    #[error("concurrency must be within 1..=32, not {0}")]
    Concurrency(usize),
    /// More cases than the limit.
    #[error(
        "at most {limit} {} allowed in one run, not {count}",
        if *limit == 1 { "case is" } else { "cases are" }
    )]
    TooManyCases {
        /// The number of cases.
        count: usize,
        /// The limit.
        limit: usize,
    },
    /// A repeated case id.
    #[error("case ids must be unique: `{0}` is repeated")]
    DuplicateId(String),
    /// A repeat count outside 1..=10.
    #[error("repeats must be within 1..=10, not {0}")]
    Repeats(usize),
}

/// Receives rows as they finish (in completion order), for progress bars and durable files.
pub trait RunObserver {
    /// A row finished; `index` is its position in the input.
    fn row_finished(&mut self, index: usize, row: &Row);

    /// Every finished row has been passed on and the runner is about to wait for more: the
    /// moment to write out what was batched.
    fn caught_up(&mut self) {}
}

impl RunObserver for () {
    fn row_finished(&mut self, _index: usize, _row: &Row) {}
}

impl<A: RunObserver, B: RunObserver> RunObserver for (A, B) {
    fn row_finished(&mut self, index: usize, row: &Row) {
        self.0.row_finished(index, row);
        self.1.row_finished(index, row);
    }

    fn caught_up(&mut self) {
        self.0.caught_up();
        self.1.caught_up();
    }
}

impl<O: RunObserver + ?Sized> RunObserver for &mut O {
    fn row_finished(&mut self, index: usize, row: &Row) {
        (**self).row_finished(index, row);
    }

    fn caught_up(&mut self) {
        (**self).caught_up();
    }
}

/// The outcome of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// Rows in input order (empty when the runner was told not to keep them).
    pub rows: Vec<Row>,
    /// The overall summary.
    pub overall: Summary,
    /// Scenario summaries in first-seen order.
    pub scenarios: Vec<(String, Summary)>,
    /// False when the run was stopped before every case finished.
    pub complete: bool,
    /// Wall time from the first case's start to the last row (or the stop).
    pub wall: Duration,
    /// Why the limiter stopped admitting cases (a refused key, a spending cap), when cases were
    /// left not run for that reason; they have no rows, and the run is incomplete.
    pub stopped: Option<Stop>,
}

/// The shared limiter and how to estimate a case's input tokens (request bytes ÷ 4).
#[derive(Clone)]
struct Admission {
    limiter: Arc<Limiter>,
    estimate: Arc<dyn Fn(&Case) -> u64 + Send + Sync>,
}

impl fmt::Debug for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admission")
            .field("limiter", &self.limiter)
            .finish_non_exhaustive()
    }
}

/// Replays cases through an evaluator with bounded concurrency.
#[derive(Debug, Clone)]
pub struct Runner {
    concurrency: usize,
    case_limit: usize,
    keep_rows: bool,
    price_per_million_input: Option<f64>,
    admission: Option<Admission>,
    repeats: usize,
}

impl Runner {
    /// A runner with at most `concurrency` evaluations in flight (1..=32).
    pub fn new(concurrency: usize) -> Result<Runner, RunnerError> {
        if !CONCURRENCY.contains(&concurrency) {
            return Err(RunnerError::Concurrency(concurrency));
        }
        Ok(Runner {
            concurrency,
            case_limit: MAX_CASES,
            keep_rows: true,
            price_per_million_input: None,
            admission: None,
            repeats: 1,
        })
    }

    /// The streaming opt-in (D6): raises the case limit and stops keeping rows in memory;
    /// rows then reach only the observer (write them to disk), and memory stays bounded apart
    /// from the ids and one duration per case.
    pub fn streaming(mut self, case_limit: usize) -> Runner {
        self.case_limit = case_limit;
        self.keep_rows = false;
        self
    }

    /// Adds a cost to the summaries (D5).
    pub fn price_per_million_input(mut self, price: Option<f64>) -> Runner {
        self.price_per_million_input = price;
        self
    }

    /// Admits every case through `limiter`: a case's review starts only once the
    /// limiter admits it, so time waiting for a slot or the pacers is not review time. When the
    /// limiter stops (a refused key, a spending cap) no further case starts; those cases get no
    /// row and the run comes back incomplete with [`Run::stopped`]. `estimate` gives a case's
    /// input tokens for the pacer and the cap; each row's input tokens are reported back.
    pub fn limiter(
        mut self,
        limiter: Arc<Limiter>,
        estimate: impl Fn(&Case) -> u64 + Send + Sync + 'static,
    ) -> Runner {
        self.admission = Some(Admission {
            limiter,
            estimate: Arc::new(estimate),
        });
        self
    }

    /// Reviews every case `repeats` times (1..=10) under the same concurrency limit; a case's
    /// row (with every repeat's verdict) is reported once all its repeats finished, and each
    /// review runs inside [`jevjudge_judge::repeat::scope`] with its repeat index.
    pub fn repeats(mut self, repeats: usize) -> Result<Runner, RunnerError> {
        if !(1..=crate::MAX_REPEATS).contains(&repeats) {
            return Err(RunnerError::Repeats(repeats));
        }
        self.repeats = repeats;
        Ok(self)
    }

    /// The case limit in force.
    pub fn case_limit(&self) -> usize {
        self.case_limit
    }

    /// Checks the cases before anything runs (rule 43).
    pub fn validate(&self, cases: &[Case]) -> Result<(), RunnerError> {
        if cases.len() > self.case_limit {
            return Err(RunnerError::TooManyCases {
                count: cases.len(),
                limit: self.case_limit,
            });
        }
        let mut seen = HashSet::with_capacity(cases.len());
        for case in cases {
            if !seen.insert(case.id.as_str()) {
                return Err(RunnerError::DuplicateId(case.id.clone()));
            }
        }
        Ok(())
    }

    /// Runs every case to the end.
    pub async fn run<E: Evaluator>(
        &self,
        evaluator: &E,
        cases: Vec<Case>,
        observer: impl RunObserver,
    ) -> Result<Run, RunnerError> {
        self.run_until(evaluator, cases, observer, std::future::pending())
            .await
    }

    /// Runs the cases until they finish or `stop` completes; then no new case starts, the
    /// in-flight ones are cancelled, and the run comes back marked incomplete.
    pub async fn run_until<E: Evaluator>(
        &self,
        evaluator: &E,
        cases: Vec<Case>,
        observer: impl RunObserver,
        stop: impl Future<Output = ()>,
    ) -> Result<Run, RunnerError> {
        self.validate(&cases)?;
        Ok(self.run_checked(evaluator, cases, observer, stop).await)
    }

    /// Runs cases that the caller has already validated (for example a streamed file whose
    /// ids were checked in a first pass). Rows are indexed by input position.
    pub async fn run_checked<E: Evaluator>(
        &self,
        evaluator: &E,
        cases: impl IntoIterator<Item = Case>,
        mut observer: impl RunObserver,
        stop: impl Future<Output = ()>,
    ) -> Run {
        let started = tokio::time::Instant::now();
        let mut summaries = SummariesBuilder::default();
        let cases = cases.into_iter();
        let mut rows: Vec<Option<Row>> = Vec::new();
        if self.keep_rows {
            // One slot per case known in advance (a list of cases), rather than growing the
            // rows by copying them as they arrive.
            rows.resize_with(cases.size_hint().0.min(crate::MAX_CASES), || None);
        }
        // `map` runs lazily: a case's evaluation is created only when buffer_unordered admits
        // it into a free slot, so its review time starts when it starts running (rule 57).
        // With a limiter, the evaluation also waits there first (rule 57 still holds: the
        // review's time starts when the limiter admits it).
        let admission = self.admission.as_ref();
        let repeats = self.repeats;
        let mut assembler = crate::repeats::Assembler::new(repeats);
        let evaluations = cases
            .into_iter()
            .enumerate()
            .flat_map(move |(index, case)| {
                // Case-major order: a case's repeats run next to each other, so few cases are
                // partly done at any time. The last (with one repeat, the only) run takes the
                // case itself; only the others clone it.
                std::iter::repeat_n(case, repeats)
                    .enumerate()
                    .map(move |(repeat, case)| (index, repeat, case))
            })
            .map(|(index, repeat, case)| async move {
                let admitted = admit_and_evaluate(evaluator, admission, index, case);
                let row = if repeats == 1 {
                    admitted.await
                } else {
                    jevjudge_judge::repeat::scope(repeat as u32, admitted).await
                };
                (index, repeat, row.map(|(_, row)| row))
            });
        let mut in_flight = stream::iter(evaluations).buffer_unordered(self.concurrency);
        tokio::pin!(stop);
        let mut complete = true;
        let mut not_run = 0_usize;
        loop {
            if (&mut stop).now_or_never().is_some() {
                complete = false;
                break;
            }
            // Rows already finished are taken without waiting; once none is, the observer
            // writes out its batch before the wait.
            let next = match in_flight.next().now_or_never() {
                Some(next) => next,
                None => {
                    observer.caught_up();
                    tokio::select! {
                        biased;
                        () = &mut stop => { complete = false; break; }
                        next = in_flight.next() => next,
                    }
                }
            };
            match next {
                None => break,
                Some((_, _, None)) => not_run += 1,
                Some((index, repeat, Some(row))) => {
                    let Some(row) = assembler.add(index, repeat, row) else {
                        continue;
                    };
                    observer.row_finished(index, &row);
                    summaries.add(index, &row);
                    if self.keep_rows {
                        if rows.len() <= index {
                            rows.resize_with(index + 1, || None);
                        }
                        rows[index] = Some(row);
                    }
                }
            }
        }
        observer.caught_up();
        // Dropping the stream cancels every evaluation still in flight (rule 52).
        drop(in_flight);
        let wall = started.elapsed();
        let (overall, scenarios) = summaries.finish(self.price_per_million_input);
        let stopped = admission
            .filter(|_| not_run > 0)
            .and_then(|admission| admission.limiter.stop());
        Run {
            rows: rows.into_iter().flatten().collect(),
            overall,
            scenarios,
            complete: complete && not_run == 0,
            wall,
            stopped,
        }
    }
}

/// Waits for the limiter (when there is one), then evaluates; `None` when the limiter stopped
/// and the case was not run.
async fn admit_and_evaluate<E: Evaluator>(
    evaluator: &E,
    admission: Option<&Admission>,
    index: usize,
    case: Case,
) -> Option<(usize, Row)> {
    let Some(admission) = admission else {
        return Some(evaluate_case(evaluator, index, case).await);
    };
    // The estimate serialises the request: only worth it when a token rate or cap reads it.
    let estimate = if admission.limiter.counts_tokens() {
        (admission.estimate)(&case)
    } else {
        0
    };
    let permit = admission.limiter.acquire(estimate).await.ok()?;
    let (index, row) = evaluate_case(evaluator, index, case).await;
    if let Some(usage) = row.verdict.usage {
        admission.limiter.record_input_tokens(usage.input_tokens);
    }
    drop(permit);
    Some((index, row))
}

/// Evaluates one case, turning an error, a panic or no response into a synthetic row (D4).
async fn evaluate_case<E: Evaluator>(evaluator: &E, index: usize, case: Case) -> (usize, Row) {
    let Case {
        scenario,
        id,
        input,
        expected_pass,
        expected_findings,
        weight,
    } = case;
    let request = EvaluationRequest {
        id: id.clone(),
        input,
    };
    let outcome = AssertUnwindSafe(evaluator.evaluate(request))
        .catch_unwind()
        .await;
    let response = match outcome {
        Ok(Ok(Some(response))) => response,
        Ok(Ok(None)) => synthetic(evaluator, &id, Detail::EvaluatorEmpty),
        Ok(Err(EvaluatorFailed)) => synthetic(evaluator, &id, Detail::EvaluatorFailed),
        Err(_panic) => synthetic(evaluator, &id, Detail::EvaluatorPanicked),
    };
    let row = Row {
        scenario,
        id,
        expected_pass,
        pass: response.pass,
        score: response.score,
        verdict: response.verdict,
        expected_findings,
        repeats: None,
        weight,
    };
    (index, row)
}

/// The runner-made response of rule 50.
fn synthetic<E: Evaluator>(evaluator: &E, id: &str, detail: Detail) -> EvaluatorResponse {
    let version = evaluator.definition_version().unwrap_or("evaluation-error");
    EvaluatorResponse {
        id: id.to_owned(),
        pass: false,
        score: 0.0,
        verdict: Verdict::error(version, ErrorCode::Evaluator, detail, Duration::ZERO),
    }
}

/// A case's estimated input tokens when reviewed under `definition` by `model`: its request
/// body's bytes ÷ 4, what [`Runner::limiter`] paces and caps.
pub fn input_token_estimate(
    definition: &jevjudge_judge::Definition,
    model: &str,
) -> impl Fn(&Case) -> u64 + Send + Sync + use<> {
    let questions = definition.questions().clone();
    let model = model.to_owned();
    move |case: &Case| {
        jevjudge_wire::Request::new(case.input.to_state(), questions.clone())
            .to_body(&model)
            .map_or(0, |body| {
                jevjudge_client::limit::estimate_tokens(body.len())
            })
    }
}
