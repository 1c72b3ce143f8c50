//! One `jevjudge eval` session over a cases file (cli-and-formats.md §1.3): the cases read
//! and checked before anything is sent ([`SessionPlan::read_cases`]), the rows file opened
//! fresh or resumed ([`Session::open`]: a torn last line cut away, the previous rows checked
//! against the cases), the run, kept in memory or streamed from the file a second time
//! ([`Session::run`]), and the previous and new rows merged in input order
//! ([`Session::finish`]).
//!
//! The binary resolves its flags into a [`SessionPlan`], builds the backend, and renders what
//! [`Session::finish`] returns; everything between lives here.

use std::{
    collections::{HashMap, HashSet},
    fs::File,
    future::Future,
    io::BufReader,
    path::{Path, PathBuf},
    sync::{Arc, Mutex},
    time::Duration,
};

use jevjudge_client::limit::Stop;
use jevjudge_judge::{BackendKind, Definition, Status};
use jevjudge_wire::setting::{Explain, Namer, Setting};

use stream::stream_cases;
use todo::Todo;

use crate::{
    Case, Evaluator, MAX_CASES, REPORT_FORMAT, Report, Row, Run, RunObserver, Runner, RunnerError,
    Summary,
    rows_file::{CasesDigest, RowsHeader, RowsWriter, read_rows_for},
    summarize,
};

/// A session that cannot start or finish. Messages name no command-line flag: a caller that
/// has flags names them (the concurrency, repeats, price, cases file and resume each have their
/// own variant).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Invalid input or configuration, found before anything was sent.
    #[error("{0}")]
    Input(String),
    /// The concurrency is out of range.
    #[error("{0}")]
    Concurrency(RunnerError),
    /// A case, or the cases file, breaks a rule or a cap.
    #[error("{0}")]
    Cases(crate::CasesError),
    /// The number of repeats is out of range.
    #[error("{0}")]
    Repeat(RunnerError),
    /// The price per million input tokens is negative or not a number.
    #[error("the price per million input tokens must be a finite, non-negative number, not {0}")]
    Price(f64),
    /// A streaming run's cases are not a regular file: they cannot be read twice.
    #[error(
        "{}: a streaming run reads the cases twice, so they must be a regular file, not a pipe, \
         standard input or a process substitution: save them to a file first",
        .0.display()
    )]
    NotAFile(PathBuf),
    /// Resuming without a rows file.
    #[error("resuming needs the rows file")]
    ResumeWithoutRows,
    /// A new run would replace a rows file that holds rows of an earlier run: resume it, or
    /// say to overwrite it.
    #[error(
        "the rows file {} already holds {} of an earlier run",
        .path.display(),
        crate::plural::count(*.rows, "row")
    )]
    RowsFileInUse {
        /// The rows file.
        path: PathBuf,
        /// The rows it holds.
        rows: u64,
    },
    /// The rows file to resume cannot be read, or belongs to another run.
    #[error("{0}")]
    CannotResume(String),
    /// The run could not go on or be put together (a cases file that changed while it was
    /// read, a rows file that cannot be appended to or read back).
    #[error("{0}")]
    Failed(String),
}

impl Explain for SessionError {
    /// The error with the setting that names or fixes it.
    fn explain(&self, name: Namer<'_>) -> String {
        match self {
            SessionError::Concurrency(e) => format!("{}: {e}", name(Setting::Concurrency)),
            SessionError::Repeat(e) => format!("{}: {e}", name(Setting::Repeat)),
            SessionError::Price(price) => format!(
                "{} must be a finite, non-negative number, not {price}",
                name(Setting::PricePerMillionInput)
            ),
            SessionError::NotAFile(path) => format!(
                "{} {}: a streaming run ({} above {MAX_CASES}) reads the cases twice, so they \
                 must be a regular file, not a pipe, standard input or a process substitution: \
                 save them to a file first",
                name(Setting::Cases),
                path.display(),
                name(Setting::MaxCases)
            ),
            SessionError::ResumeWithoutRows => format!(
                "{} needs the rows file: give {} FILE or {} OUT.json",
                name(Setting::Resume),
                name(Setting::Rows),
                name(Setting::Report)
            ),
            SessionError::CannotResume(_) => format!("{}: {self}", name(Setting::Resume)),
            SessionError::RowsFileInUse { .. } => format!(
                "{self}: add {} to continue that run (only the missing cases run), or {} to \
                 start afresh and replace it",
                name(Setting::Resume),
                name(Setting::Overwrite)
            ),
            SessionError::Cases(e) => match e.kind() {
                crate::CasesErrorKind::LineTooLong { .. } => {
                    format!("{e} (raise it with {})", name(Setting::MaxLineBytes))
                }
                crate::CasesErrorKind::TooLarge { .. } => format!(
                    "{e} (raise it with {}, or stream them with {} above {MAX_CASES})",
                    name(Setting::MaxInputBytes),
                    name(Setting::MaxCases)
                ),
                _ => self.to_string(),
            },
            SessionError::Input(_) | SessionError::Failed(_) => self.to_string(),
        }
    }
}

/// What a session needs, resolved from the flags: the cases, the limits, the rows file and
/// whether to resume. Building one reads nothing.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionPlan {
    /// The cases file (`--cases`).
    pub cases: PathBuf,
    /// The most cases the run takes (`--max-cases`, default [`MAX_CASES`]).
    pub case_limit: usize,
    /// Whether rows are streamed to the rows file only, not kept in memory (`--max-cases`
    /// above [`MAX_CASES`]); the cases are then read twice, so they must be a regular file.
    pub streaming: bool,
    /// The longest line of the cases and rows files.
    pub max_line_bytes: usize,
    /// The largest cases file a run that keeps its rows reads.
    pub max_input_bytes: u64,
    /// Reviews per case (`--repeat`).
    pub repeat: usize,
    /// Price per million input tokens (`--price-per-million-input`).
    pub price_per_million_input: Option<f64>,
    /// The rows file (`--rows`, or beside `--report`), when there is one.
    pub rows: Option<PathBuf>,
    /// Keep the rows already in the rows file and run only the missing cases (`--resume`).
    pub resume: bool,
    /// With `resume`, also run again the cases whose previous row is ERROR.
    pub retry_errors: bool,
    /// A new run may replace a rows file that already holds rows (`--overwrite`); without it
    /// such a file is refused ([`SessionError::RowsFileInUse`]).
    pub overwrite: bool,
}

/// `OUT.json` → `OUT.rows.jsonl`: where the rows of a run reported to `OUT.json` go.
pub fn rows_path_for(report: &Path) -> PathBuf {
    report.with_extension("rows.jsonl")
}

impl SessionPlan {
    /// The plan of a run over `cases` allowing `max_cases` (streaming above [`MAX_CASES`]),
    /// one review per case, no rows file, no resume.
    pub fn new(cases: PathBuf, max_cases: Option<usize>) -> SessionPlan {
        SessionPlan {
            cases,
            case_limit: max_cases.unwrap_or(MAX_CASES),
            streaming: max_cases.is_some_and(|n| n > MAX_CASES),
            max_line_bytes: jevjudge_wire::lines::DEFAULT_MAX_LINE_BYTES,
            max_input_bytes: jevjudge_wire::lines::DEFAULT_MAX_FILE_BYTES,
            repeat: 1,
            price_per_million_input: None,
            rows: None,
            resume: false,
            retry_errors: false,
            overwrite: false,
        }
    }

    /// The runner of this plan: `concurrency` in flight, streaming or not, its price and
    /// repeats. Errors name the flag.
    pub fn runner(&self, concurrency: usize) -> Result<Runner, SessionError> {
        let runner = Runner::new(concurrency).map_err(SessionError::Concurrency)?;
        if let Some(price) = self.price_per_million_input {
            if !price.is_finite() || price < 0.0 {
                return Err(SessionError::Price(price));
            }
        }
        let runner = if self.streaming {
            runner.streaming(self.case_limit)
        } else {
            runner
        };
        runner
            .price_per_million_input(self.price_per_million_input)
            .repeats(self.repeat)
            .map_err(SessionError::Repeat)
    }

    /// Refuses a streaming run over anything but a regular file: it reads the cases twice.
    pub fn check_cases_file(&self) -> Result<(), SessionError> {
        if self.streaming && !std::fs::metadata(&self.cases).is_ok_and(|m| m.is_file()) {
            return Err(SessionError::NotAFile(self.cases.clone()));
        }
        Ok(())
    }

    /// Refuses a new run (neither resuming nor overwriting) whose rows file already holds rows:
    /// starting afresh would replace them. A rows file with only its header, or none, is fine.
    pub fn check_rows_file(&self) -> Result<(), SessionError> {
        let Some(path) = self
            .rows
            .as_deref()
            .filter(|_| !self.resume && !self.overwrite)
        else {
            return Ok(());
        };
        let rows = crate::rows_file::count_rows(path).map_err(|e| {
            SessionError::Input(format!("cannot read the rows file {}: {e}", path.display()))
        })?;
        if rows > 0 {
            return Err(SessionError::RowsFileInUse {
                path: path.to_owned(),
                rows,
            });
        }
        Ok(())
    }

    /// Pass 1: reads every case and checks it (ids, limits, labels naming a criterion of
    /// `definition`) before anything is sent. A streaming run keeps only the ids and digest.
    /// `held` is the cases file already opened (a named pipe that had to wait for its writer).
    pub fn read_cases(
        &self,
        definition: &Definition,
        held: Option<File>,
    ) -> Result<CaseSet, SessionError> {
        let criteria: HashSet<&str> = definition.criteria().iter().map(|c| c.id()).collect();
        let mut set = CaseSet::default();
        let mut label_error: Option<String> = None;
        let visit = |case: Case| {
            if label_error.is_none() {
                if let Some((criterion, _)) = case
                    .expected_findings
                    .iter()
                    .flatten()
                    .find(|(criterion, _)| !criteria.contains(criterion.as_str()))
                {
                    label_error = Some(format!(
                        "{}: case `{}`: field `expected_findings.{criterion}`: no criterion `{criterion}` in {}",
                        self.cases.display(),
                        case.id,
                        definition.version()
                    ));
                }
            }
            set.digest.add(&case);
            set.count += 1;
            if !self.streaming {
                set.ids.push(case.id.clone());
                set.kept.push(case);
            }
        };
        let total_cap = (!self.streaming).then_some(self.max_input_bytes);
        match held {
            // A streaming run's cases are a regular file (checked): read by name, keeping a
            // hash of each id, not the ids.
            _ if self.streaming => crate::case_ids::for_each_case_in_file_hashed(
                &self.cases,
                self.case_limit,
                self.max_line_bytes,
                visit,
            ),
            None => crate::for_each_case_in_file_capped(
                &self.cases,
                self.case_limit,
                self.max_line_bytes,
                total_cap,
                visit,
            ),
            Some(file) => crate::for_each_case_capped(
                BufReader::new(file),
                self.case_limit,
                self.max_line_bytes,
                total_cap,
                visit,
            )
            .map_err(|mut e| {
                e.path = Some(self.cases.clone());
                e
            }),
        }
        .map_err(SessionError::Cases)?;
        match label_error {
            Some(message) => Err(SessionError::Input(message)),
            None => Ok(set),
        }
    }
}

/// The cases of a session, read and checked: how many, the digest the rows file's header
/// names and, unless streaming, their ids in input order and the cases themselves.
#[derive(Debug, Default)]
pub struct CaseSet {
    count: usize,
    ids: Vec<String>,
    kept: Vec<Case>,
    digest: CasesDigest,
}

impl CaseSet {
    /// How many cases there are.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The cases kept in memory (none for a streaming run).
    pub fn cases(&self) -> &[Case] {
        &self.kept
    }
}

/// A session ready to run: the cases, the rows file (new, or resumed with the rows it holds)
/// and what is left to do.
#[derive(Debug)]
pub struct Session<'p> {
    plan: &'p SessionPlan,
    /// How many cases the run has.
    cases: usize,
    /// The case ids in input order (none for a streaming run, which resumes by the bits of
    /// [`resume`]).
    ids: Vec<String>,
    kept: Vec<Case>,
    header: RowsHeader,
    previous: HashMap<String, (usize, Row)>,
    writer: Option<RowsWriter>,
    torn_tail: bool,
    todo: Todo,
    /// A resumed streaming run's rows file, kept in bounded memory (its rows are not).
    streamed: Option<resume::Streamed>,
}

/// Maps the runner's positions (within the cases that run) to input indexes, writes each row
/// to the rows file and passes it on.
struct Positions<'a, O> {
    indexes: &'a Todo,
    rows_file: Option<&'a mut RowsWriter>,
    /// A resumed streaming run's cases that got a new row.
    written: Option<&'a mut resume::Bits>,
    inner: O,
}

impl<O: RunObserver> RunObserver for Positions<'_, O> {
    fn row_finished(&mut self, position: usize, row: &Row) {
        let index = self.indexes.index(position);
        if let Some(writer) = self.rows_file.as_deref_mut() {
            writer.row_finished(index, row);
        }
        if let Some(written) = self.written.as_deref_mut() {
            written.set(index, true);
        }
        self.inner.row_finished(index, row);
    }

    fn caught_up(&mut self) {
        if let Some(writer) = self.rows_file.as_deref_mut() {
            writer.caught_up();
        }
        self.inner.caught_up();
    }
}

impl<'p> Session<'p> {
    /// Opens the rows file for a run of `cases` against `definition` through `backend`
    /// asking for `model`. A new run writes a fresh file with its header. A resumed one reads
    /// the file strictly (every row must be one of the cases, at its index), refuses a header
    /// made for other cases, another definition, backend, model or repeat count, drops the
    /// ERROR rows when retrying errors, and cuts a torn last line before appending.
    pub fn open(
        plan: &'p SessionPlan,
        definition: &Definition,
        cases: CaseSet,
        backend: &str,
        model: &str,
    ) -> Result<Session<'p>, SessionError> {
        let CaseSet {
            count,
            ids,
            kept,
            digest,
        } = cases;
        let header = RowsHeader::from_digest(definition, digest)
            .with_repeats(plan.repeat)
            .with_backend(backend, model);
        let mut previous = HashMap::new();
        let mut torn_tail = false;
        let mut streamed = None;
        let mut todo = Todo::All(count);
        let writer = match &plan.rows {
            None if plan.resume => {
                return Err(SessionError::ResumeWithoutRows);
            }
            None => None,
            Some(path) if plan.resume && plan.streaming => {
                let (scanned, done, kept) = resume::open(plan, path, count)?;
                if let Some(problem) = scanned.header.mismatch(&header) {
                    return Err(SessionError::CannotResume(format!(
                        "{} cannot be resumed: {problem}",
                        path.display()
                    )));
                }
                torn_tail = scanned.torn_tail;
                if kept.kept > 0 {
                    todo = Todo::Missing(resume::Missing::new(done));
                }
                streamed = Some(kept);
                Some(RowsWriter::resume(path, scanned.whole_len).map_err(|e| {
                    SessionError::Failed(format!("cannot append to {}: {e}", path.display()))
                })?)
            }
            Some(path) if plan.resume => {
                let found = read_rows_for(path, Some(&index_of(&ids)), plan.max_line_bytes)
                    .map_err(|e| SessionError::CannotResume(e.to_string()))?;
                if let Some(problem) = found.header.mismatch(&header) {
                    return Err(SessionError::CannotResume(format!(
                        "{} cannot be resumed: {problem}",
                        path.display()
                    )));
                }
                torn_tail = found.torn_tail;
                previous = found.rows;
                if plan.retry_errors {
                    // With repeats, a case any of whose repeats is ERROR runs again (every
                    // repeat).
                    previous.retain(|_, (_, row)| {
                        row.verdicts()
                            .iter()
                            .all(|verdict| verdict.status != Status::Error)
                    });
                }
                Some(RowsWriter::resume(path, found.whole_len).map_err(|e| {
                    SessionError::Failed(format!("cannot append to {}: {e}", path.display()))
                })?)
            }
            Some(path) => Some({
                plan.check_rows_file()?;
                RowsWriter::create(path, &header).map_err(|e| {
                    SessionError::Input(format!(
                        "cannot write the rows file {}: {e}",
                        path.display()
                    ))
                })?
            }),
        };
        if !previous.is_empty() {
            todo = Todo::Listed(
                ids.iter()
                    .enumerate()
                    .filter(|(_, id)| !previous.contains_key(*id))
                    .map(|(index, _)| index)
                    .collect(),
            );
        }
        Ok(Session {
            plan,
            cases: count,
            ids,
            kept,
            header,
            previous,
            writer,
            torn_tail,
            todo,
            streamed,
        })
    }

    /// Whether the resumed rows file's last line was cut short (by the interruption): it was
    /// removed, and that case runs again.
    pub fn torn_tail(&self) -> bool {
        self.torn_tail
    }

    /// The input tokens the resumed rows already spent (a spending cap covers the whole run).
    pub fn previous_input_tokens(&self) -> u64 {
        if let Some(streamed) = &self.streamed {
            return streamed.input_tokens;
        }
        self.previous
            .values()
            .filter_map(|(_, row)| row.verdict.usage)
            .map(|usage| usage.input_tokens)
            .sum()
    }

    /// How many cases this session runs (all, or those a resumed run misses).
    pub fn to_run(&self) -> usize {
        self.todo.len()
    }

    /// How many reviews this session runs: each case it runs, once per repeat.
    pub fn reviews_to_run(&self) -> usize {
        self.todo.len().saturating_mul(self.plan.repeat.max(1))
    }

    /// Runs the cases left to do until they finish or `stop` completes, writing each row to
    /// the rows file as it finishes and passing it (with its input index) to `observer`.
    /// A streaming run reads the cases file again, lazily. Call [`Session::finish`] next.
    pub async fn run<E: Evaluator>(
        &mut self,
        runner: &Runner,
        evaluator: &E,
        observer: impl RunObserver,
        stop: impl Future<Output = ()>,
    ) -> Result<Ran, SessionError> {
        let observer = Positions {
            indexes: &self.todo,
            rows_file: self.writer.as_mut(),
            written: self.streamed.as_mut().map(|streamed| &mut streamed.written),
            inner: observer,
        };
        let second_pass = Arc::new(Mutex::new(CasesDigest::default()));
        let run = if self.plan.streaming {
            let todo = &self.todo;
            let cases = stream_cases(
                &self.plan.cases,
                self.plan.max_line_bytes,
                second_pass.clone(),
            )?
            .enumerate()
            .filter(move |(index, _)| todo.contains(*index))
            .map(|(_, case)| case);
            runner.run_checked(evaluator, cases, observer, stop).await
        } else {
            let mut slots: Vec<Option<Case>> = std::mem::take(&mut self.kept)
                .into_iter()
                .map(Some)
                .collect();
            let cases: Vec<Case> = (0..self.todo.len())
                .filter_map(|position| slots.get_mut(self.todo.index(position))?.take())
                .collect();
            runner.run_checked(evaluator, cases, observer, stop).await
        };
        Ok(Ran { run, second_pass })
    }

    /// Syncs the rows file; the first error any write met, if one did (the run went on).
    pub fn close_rows_file(&mut self) -> Option<std::io::Error> {
        let writer = self.writer.as_mut()?;
        match writer.take_error() {
            Some(error) => Some(error),
            None => writer.sync().err(),
        }
    }

    /// Puts the session's rows together: for a complete streaming run, checks that the file
    /// read the second time is the one checked the first; then merges the resumed rows with
    /// the new ones in input order and summarises them.
    pub fn finish(self, ran: Ran) -> Result<Outcome, SessionError> {
        let Ran { run, second_pass } = ran;
        let plan = self.plan;
        let reviews_this_run = run.overall.total;
        if plan.streaming && run.complete && run.stopped.is_none() {
            // Only a streamed file that changed between the passes can differ on the second.
            let second = std::mem::take(&mut *second_pass.lock().map_err(|_| {
                SessionError::Failed("the second pass over the cases failed".into())
            })?);
            let (count, digest) = (second.count(), second.finish());
            if (reviews_this_run as usize) < self.todo.len()
                || count != self.header.cases
                || digest != self.header.cases_digest
            {
                return Err(SessionError::Failed(format!(
                    "{} changed while the run read it ({} of {} ran): the rows do not \
                     belong to one version of the file; run it again from the start",
                    plan.cases.display(),
                    reviews_this_run,
                    crate::plural::count(self.todo.len(), "case")
                )));
            }
        }
        let Run {
            rows,
            overall,
            scenarios,
            complete,
            wall,
            stopped,
        } = run;
        let mut outcome = Outcome {
            complete,
            wall,
            stopped,
            overall,
            scenarios,
            rows,
            reviews_this_run,
            cases: self.cases,
        };
        if let Some(streamed) = self.streamed.as_ref().filter(|streamed| streamed.kept > 0) {
            // A streaming run kept no rows in memory: the rows file has them all.
            let path = plan.rows.as_deref().unwrap_or(Path::new(""));
            (outcome.overall, outcome.scenarios) = resume::finish(plan, path, streamed)?;
            return Ok(outcome);
        }
        let mut previous = self.previous;
        if previous.is_empty() {
            return Ok(outcome);
        }
        let index_of = index_of(&self.ids);
        // Finished rows by id: an interrupted run has gaps, so positions cannot be zipped.
        for row in std::mem::take(&mut outcome.rows) {
            if let Some(&index) = index_of.get(row.id.as_str()) {
                previous.insert(row.id.clone(), (index, row));
            }
        }
        let mut by_index: Vec<Option<Row>> = vec![None; self.cases];
        for (index, row) in previous.into_values() {
            if let Some(slot) = by_index.get_mut(index) {
                *slot = Some(row);
            }
        }
        let rows: Vec<Row> = by_index.into_iter().flatten().collect();
        let (overall, scenarios) = summarize(&rows, plan.price_per_million_input);
        outcome.overall = overall;
        outcome.scenarios = scenarios;
        outcome.rows = rows;
        Ok(outcome)
    }
}

/// A session's run, before [`Session::finish`] puts its rows together.
#[derive(Debug)]
pub struct Ran {
    run: Run,
    second_pass: Arc<Mutex<CasesDigest>>,
}

/// What a session produced: every row (resumed and new) in input order, summarised.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// False when the run was interrupted or stopped before every case finished.
    pub complete: bool,
    /// This session's wall time.
    pub wall: Duration,
    /// Why the limiter stopped admitting cases, when it did.
    pub stopped: Option<Stop>,
    /// The overall summary of every row.
    pub overall: Summary,
    /// Scenario summaries in first-seen order.
    pub scenarios: Vec<(String, Summary)>,
    /// The rows in input order (empty for a streaming run: they are in the rows file).
    pub rows: Vec<Row>,
    /// The reviews this session ran (a resumed run's earlier rows not counted).
    pub reviews_this_run: u64,
    /// How many cases the run has.
    pub cases: usize,
}

impl Outcome {
    /// The JSON report of the session, made with `definition_version` by `backend`.
    pub fn into_report(self, definition_version: &str, backend: BackendKind) -> Report {
        Report {
            format: REPORT_FORMAT.to_owned(),
            definition_version: definition_version.to_owned(),
            backend,
            complete: self.complete,
            wall_millis: Some(self.wall.as_secs_f64() * 1e3),
            stopped: self.stopped,
            overall: self.overall,
            scenarios: self.scenarios,
            rows: self.rows,
        }
    }
}

/// Case ids → input index.
fn index_of(ids: &[String]) -> HashMap<&str, usize> {
    ids.iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect()
}

mod resume;
mod stream;
mod todo;

#[cfg(test)]
mod tests;
