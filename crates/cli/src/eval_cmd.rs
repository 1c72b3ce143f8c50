//! `jevjudge eval`: replay a batch of labelled cases (cli-and-formats.md §1.3).

use std::{
    collections::{HashMap, HashSet},
    path::{Path, PathBuf},
    time::Duration,
};

use anyhow::Context;
use jevjudge_client::limit::Limiter;
use jevjudge_eval::{
    Case, JevEvaluator, MAX_CASES, Report, Row, RunObserver, Runner,
    junit::to_junit,
    markdown::to_markdown,
    rows_file::{CasesDigest, RowsHeader, RowsWriter, read_rows_for},
    summarize,
};
use jevjudge_judge::{BackendKind, Judge, Status};

use crate::{
    InputError,
    backend::{BackendArgs, parse_positive_duration, report_recording},
    exit,
    limits::{self, LimitArgs},
    output,
};

/// Options of `jevjudge eval`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 the run completed and every gate held; 1 a gate failed; \
    2 invalid input or configuration (nothing was sent); 4 every review errored (no valid \
    result, whatever the gates); 5 interrupted (Ctrl-C), after writing what finished; 6 the API \
    key was refused (401/403): no new review started, the rest are not run, --resume continues \
    once the key is fixed; 7 a spending cap (--max-input-tokens, --max-cost) stopped the run, \
    --resume continues."
)]
pub struct Args {
    /// The definition file (.toml or .json).
    #[arg(long, value_name = "DEF")]
    pub definition: PathBuf,

    /// The cases, one JSON object per line (blank lines skipped).
    #[arg(long, value_name = "CASES.jsonl")]
    pub cases: PathBuf,

    /// Reviews in flight at once (1..=32).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub concurrency: usize,

    /// Each review's whole budget, retries and waits included, like `2s`.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_positive_duration)]
    pub budget: Duration,

    /// Review every case N times (1..=10) under the same concurrency: rows keep every
    /// repeat's verdict and the case's pass rate; summaries add accuracy by repeat, the flip
    /// rate and each criterion's probability SD. A replay serves the k-th record of a request
    /// to the k-th repeat (cycling).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeat: usize,

    /// Write the full JSON report here (rows also go, as they finish, to OUT.rows.jsonl).
    #[arg(long, value_name = "OUT.json")]
    pub report: Option<PathBuf>,

    /// Write JUnit XML here: one test per case; incorrect = failure, ERROR = error,
    /// INCONCLUSIVE = skipped ("abstained").
    #[arg(long, value_name = "OUT.xml")]
    pub junit: Option<PathBuf>,

    /// Write a Markdown summary here (for a CI job summary).
    #[arg(long, value_name = "OUT.md")]
    pub markdown: Option<PathBuf>,

    /// Write a self-contained HTML page here: summary tables, per-scenario figure, and per
    /// criterion a reliability diagram and a histogram of yes-probabilities with the thresholds.
    #[arg(long, value_name = "OUT.html")]
    pub html: Option<PathBuf>,

    /// Show each case's text beside its row in the --html page (the page then holds raw text).
    #[arg(long, requires = "html")]
    pub include_text: bool,

    /// Gate: exit 1 when overall accuracy (correct ÷ total) is below X.
    #[arg(long, value_name = "X")]
    pub min_accuracy: Option<f64>,

    /// Gate: exit 1 when the lower bound of accuracy's 95 % interval is below X.
    #[arg(long, value_name = "X")]
    pub min_accuracy_lower: Option<f64>,

    /// Gate: exit 1 when more than N reviews are false PASS (a case expected to fail got PASS).
    #[arg(long, value_name = "N")]
    pub max_false_pass: Option<u64>,

    /// Gate: exit 1 when coverage (PASS or FAIL verdicts ÷ reviews) is below X.
    #[arg(long, value_name = "X")]
    pub min_coverage: Option<f64>,

    /// Gate: exit 1 when more than N rows are ERROR.
    #[arg(long, value_name = "N")]
    pub max_errors: Option<u64>,

    /// Append each finished row to this JSON Lines file as it completes [default: beside
    /// --report, as OUT.rows.jsonl].
    #[arg(long, value_name = "FILE")]
    pub rows: Option<PathBuf>,

    /// Continue an interrupted run: keep the rows already in the rows file (same definition
    /// and cases, checked) and run only the missing cases.
    #[arg(long)]
    pub resume: bool,

    /// With --resume, also run again the cases whose previous row is ERROR.
    #[arg(long, requires = "resume")]
    pub retry_errors: bool,

    /// Streaming opt-in: allow up to N cases (default limit 10,000). Rows are then not kept
    /// in memory: they go to the rows file only, and the report holds the summaries.
    #[arg(long, value_name = "N")]
    pub max_cases: Option<usize>,

    /// Price per million input tokens, to report a cost over the rows whose usage is known.
    #[arg(long, value_name = "PRICE")]
    pub price_per_million_input: Option<f64>,

    #[command(flatten)]
    pub backend: BackendArgs,

    #[command(flatten)]
    pub limits: LimitArgs,
}

/// Maps the runner's positions (within the cases that run) to input indexes, and writes rows.
struct Positions<'a> {
    indexes: Vec<usize>,
    rows_file: Option<&'a mut RowsWriter>,
    progress: &'a indicatif::ProgressBar,
}

impl RunObserver for Positions<'_> {
    fn row_finished(&mut self, position: usize, row: &Row) {
        let index = self.indexes.get(position).copied().unwrap_or(position);
        if let Some(writer) = self.rows_file.as_deref_mut() {
            writer.row_finished(index, row);
        }
        self.progress.inc(1);
    }
}

/// Runs the evaluation.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let limits = (args.backend.max_line_bytes, args.backend.max_input_bytes);
    let definition = crate::inputs::definition(&args.definition, limits.1)?;
    let runner =
        Runner::new(args.concurrency).map_err(|e| InputError(format!("--concurrency: {e}")))?;
    let streaming = args.max_cases.is_some_and(|n| n > MAX_CASES);
    let limit = args.max_cases.unwrap_or(MAX_CASES);
    if let Some(price) = args.price_per_million_input {
        if !price.is_finite() || price < 0.0 {
            return Err(InputError(format!(
                "--price-per-million-input must be a finite, non-negative number, not {price}"
            ))
            .into());
        }
    }
    let runner = if streaming {
        runner.streaming(limit)
    } else {
        runner
    }
    .price_per_million_input(args.price_per_million_input)
    .repeats(args.repeat)
    .map_err(|e| InputError(format!("--repeat: {e}")))?;
    crate::risk_output::check_fraction("min-accuracy-lower", args.min_accuracy_lower)?;
    crate::risk_output::check_fraction("min-coverage", args.min_coverage)?;
    if let Some(x) = args.min_accuracy {
        if !(0.0..=1.0).contains(&x) {
            return Err(InputError(format!("--min-accuracy must be within 0..=1, not {x}")).into());
        }
    }
    // A streaming run reads the cases twice (checked, then run): only a regular file can be.
    if streaming && !std::fs::metadata(&args.cases).is_ok_and(|m| m.is_file()) {
        return Err(InputError(format!(
            "--cases {}: a streaming run (--max-cases above {MAX_CASES}) reads the cases twice, \
             so they must be a regular file, not a pipe, standard input or a process \
             substitution: save them to a file first",
            args.cases.display()
        ))
        .into());
    }

    // Every output must be writable before anything is sent.
    let rows_path = args
        .rows
        .clone()
        .or_else(|| args.report.as_deref().map(rows_path_for));
    for (flag, path) in [
        ("--report", args.report.as_deref()),
        ("--junit", args.junit.as_deref()),
        ("--markdown", args.markdown.as_deref()),
        ("--html", args.html.as_deref()),
        ("--rows", rows_path.as_deref()),
        ("--record", args.backend.record.as_deref()),
    ] {
        if let Some(path) = path {
            output::check_writable(flag, path)?;
        }
    }

    // Pass 1: every line checked before anything is sent.
    let criteria: HashSet<&str> = definition.criteria().iter().map(|c| c.id()).collect();
    let mut digest = CasesDigest::default();
    let mut ids: Vec<String> = Vec::new();
    let mut kept: Vec<Case> = Vec::new();
    let mut label_error: Option<String> = None;
    let fifo = crate::inputs::wait_for_writer("--cases", &args.cases)?.0;
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
                    args.cases.display(),
                    case.id,
                    definition.version()
                ));
            }
        }
        digest.add(&case);
        ids.push(case.id.clone());
        if !streaming {
            kept.push(case);
        }
    };
    let total_cap = (!streaming).then_some(limits.1);
    match fifo {
        None => jevjudge_eval::for_each_case_in_file_capped(
            &args.cases,
            limit,
            limits.0,
            total_cap,
            visit,
        ),
        Some(file) => jevjudge_eval::for_each_case_capped(
            std::io::BufReader::new(file),
            limit,
            limits.0,
            total_cap,
            visit,
        )
        .map_err(|mut e| {
            e.path = Some(args.cases.clone());
            e
        }),
    }
    .map_err(|e| InputError(e.to_string()))?;
    if let Some(message) = label_error {
        return Err(InputError(message).into());
    }
    let texts = args
        .include_text
        .then(|| jevjudge_eval::html::case_texts(&kept));

    let limit_config = args
        .limits
        .config(args.concurrency, args.price_per_million_input)?;
    let limiter = Limiter::new(limit_config);
    let mut backend_args = args.backend.clone();
    backend_args.repeated_records = args.repeat > 1;
    let resolved = backend_args.resolve_limited(None, Some(limiter.clone()))?;
    let runner = runner.limiter(
        limiter.clone(),
        limits::estimator(&definition, &resolved.model),
    );
    if let Some(records) = resolved.records_per_request.filter(|_| args.repeat > 1) {
        if records < args.repeat {
            eprintln!(
                "jevjudge: note: --repeat {}: the recording holds at most {records} different answer(s) per request, so repeats replay answers already served (cycling): the flip rate shows the recording's variation, not the model's",
                args.repeat
            );
        }
    }
    let backend_kind = resolved.kind;
    let header = RowsHeader::from_digest(&definition, digest)
        .with_repeats(args.repeat)
        .with_backend(backend_kind.to_string(), resolved.model.clone());
    let judge =
        Judge::new(resolved.backend.clone(), args.budget).map_err(|e| InputError(e.to_string()))?;
    let evaluator = JevEvaluator::new(judge, definition.clone());
    let index_of: HashMap<&str, usize> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();

    // The rows file and what a resumed run already has.
    let mut previous: HashMap<String, (usize, Row)> = HashMap::new();
    let mut rows_writer = match &rows_path {
        None if args.resume => {
            return Err(InputError(
                "--resume needs the rows file: give --rows FILE or --report OUT.json".into(),
            )
            .into());
        }
        None => None,
        Some(path) if args.resume => {
            let found = read_rows_for(path, Some(&index_of), limits.0)
                .map_err(|e| InputError(format!("--resume: {e}")))?;
            if let Some(problem) = found.header.mismatch(&header) {
                return Err(InputError(format!(
                    "--resume: {} cannot be resumed: {problem}",
                    path.display()
                ))
                .into());
            }
            if found.torn_tail {
                eprintln!(
                    "jevjudge: note: the last line of {} was cut short by the interruption; it \
                     is removed and that case runs again",
                    path.display()
                );
            }
            previous = found.rows;
            if args.retry_errors {
                // With repeats, a case any of whose repeats is ERROR runs again (every repeat).
                previous.retain(|_, (_, row)| {
                    row.verdicts()
                        .iter()
                        .all(|verdict| verdict.status != Status::Error)
                });
            }
            // The spending cap covers the whole run, the rows already spent included.
            limiter.record_input_tokens(
                previous
                    .values()
                    .filter_map(|(_, row)| row.verdict.usage)
                    .map(|usage| usage.input_tokens)
                    .sum(),
            );
            Some(
                RowsWriter::resume(path, found.whole_len)
                    .with_context(|| format!("cannot append to {}", path.display()))?,
            )
        }
        Some(path) => Some(RowsWriter::create(path, &header).map_err(|e| {
            InputError(format!(
                "cannot write the rows file {}: {e}",
                path.display()
            ))
        })?),
    };

    let todo: Vec<usize> = ids
        .iter()
        .enumerate()
        .filter(|(_, id)| !previous.contains_key(*id))
        .map(|(index, _)| index)
        .collect();
    let progress = output::progress_bar(todo.len() as u64);
    let observer = Positions {
        indexes: todo.clone(),
        rows_file: rows_writer.as_mut(),
        progress: &progress,
    };
    let interrupted = output::interrupted();
    let watcher = limits::watch(&progress, limiter.clone());
    let second_pass = std::sync::Arc::new(std::sync::Mutex::new(CasesDigest::default()));
    let run = if streaming {
        let todo_set: HashSet<usize> = todo.iter().copied().collect();
        let cases = output::stream_cases(&args.cases, limits.0, second_pass.clone())?
            .enumerate()
            .filter(move |(index, _)| todo_set.contains(index))
            .map(|(_, case)| case);
        runner
            .run_checked(&evaluator, cases, observer, interrupted)
            .await
    } else {
        let mut slots: Vec<Option<Case>> = kept.into_iter().map(Some).collect();
        let cases: Vec<Case> = todo.iter().filter_map(|&i| slots[i].take()).collect();
        runner
            .run_checked(&evaluator, cases, observer, interrupted)
            .await
    };
    watcher.abort();
    progress.finish_and_clear();
    if let Some(writer) = rows_writer.as_mut() {
        let outcome = match writer.take_error() {
            Some(error) => Err(error),
            None => writer.sync(),
        };
        if let Err(error) = outcome {
            eprintln!("jevjudge: error: rows could not all be written to the rows file: {error}");
        }
    }
    let reviews_this_run = run.overall.total;
    if streaming && run.complete && run.stopped.is_none() {
        // Only a streamed file that changed between the passes can differ on the second.
        let second = std::mem::take(
            &mut *second_pass
                .lock()
                .map_err(|_| anyhow::anyhow!("the second pass over the cases failed"))?,
        );
        let (count, digest) = (second.count(), second.finish());
        if (reviews_this_run as usize) < todo.len()
            || count != header.cases
            || digest != header.cases_digest
        {
            return Err(anyhow::anyhow!(
                "{} changed while the run read it ({} of {} cases ran): the rows do not belong \
                 to one version of the file; rerun without --resume",
                args.cases.display(),
                reviews_this_run,
                todo.len()
            ));
        }
    }

    // Merge the resumed rows with the new ones, in input order.
    let complete = run.complete;
    let wall = run.wall;
    let stopped = run.stopped;
    let (overall, scenarios, rows) = if previous.is_empty() {
        (run.overall, run.scenarios, run.rows)
    } else {
        let mut by_index: Vec<Option<Row>> = vec![None; ids.len()];
        if streaming {
            // A streaming run kept no rows in memory: the rows file has them all.
            let path = rows_path.as_deref().unwrap_or(Path::new(""));
            previous = read_rows_for(path, Some(&index_of), limits.0)
                .map_err(|e| anyhow::anyhow!("cannot read the rows back: {e}"))?
                .rows;
        } else {
            // Finished rows by id: an interrupted run has gaps, so positions cannot be zipped.
            for row in run.rows {
                if let Some(&index) = index_of.get(row.id.as_str()) {
                    previous.insert(row.id.clone(), (index, row));
                }
            }
        }
        for (index, row) in previous.into_values() {
            if let Some(slot) = by_index.get_mut(index) {
                *slot = Some(row);
            }
        }
        let rows: Vec<Row> = by_index.into_iter().flatten().collect();
        let (overall, scenarios) = summarize(&rows, args.price_per_million_input);
        (
            overall,
            scenarios,
            if streaming { Vec::new() } else { rows },
        )
    };
    let mut overall = overall;
    if backend_kind == BackendKind::Systemone {
        overall.attempts = Some(limiter.snapshot().attempts);
    }
    let report = Report {
        format: jevjudge_eval::REPORT_FORMAT.to_owned(),
        definition_version: definition.version().to_owned(),
        backend: crate::backend::answered_kind(backend_kind, evaluator.judge().backend().kind()),
        complete,
        wall_millis: Some(wall.as_secs_f64() * 1e3),
        stopped,
        overall,
        scenarios,
        rows,
    };

    let mut gates = output::gates(&report, args.min_accuracy, args.max_errors);
    gates.extend(crate::risk_output::gates(
        &report,
        args.min_accuracy_lower,
        args.max_false_pass,
        args.min_coverage,
    ));
    if let Some(path) = &args.report {
        output::write_atomic(path, &(serde_json::to_string_pretty(&report)? + "\n"))?;
    }
    if let Some(path) = &args.junit {
        output::write_atomic(path, &to_junit(&report))?;
    }
    if let Some(path) = &args.markdown {
        let lines: Vec<String> = gates.iter().map(|g| g.line.clone()).collect();
        output::write_atomic(path, &to_markdown(&report, &lines))?;
    }
    if let Some(path) = &args.html {
        let page = crate::report_cmd::html_page(&report, Some(&definition), texts.as_ref());
        output::write_atomic(path, &page)?;
    }
    output::print_stdout(&output::human_summary(
        &report,
        &gates,
        rows_path.as_deref(),
        Some(reviews_this_run),
    ));
    let hint_context = crate::hints::HintContext {
        kind: backend_kind,
        model: &resolved.model,
        replay_models: &resolved.replay_models,
        api_key_env: args.backend.api_key_env.as_deref(),
        base_url: args.backend.base_url.as_deref(),
    };
    if let Some(hint) = crate::hints::error_hint(&report.overall, &hint_context) {
        eprintln!("{hint}");
    }
    report_recording(resolved.recorder.as_deref(), args.backend.record.as_deref())?;
    if let Some(stop) = &stopped {
        let not_run = ids.len().saturating_sub(report.overall.total as usize);
        let hint = match &rows_path {
            Some(path) => format!(" (rows in {})", path.display()),
            None => " (give --report or --rows next time to keep the finished rows)".to_owned(),
        };
        eprintln!("{}", limits::stop_line(stop, not_run, &hint));
        return Ok(limits::exit_code(stop));
    }
    if !complete {
        eprintln!(
            "jevjudge: interrupted: {} of {} cases finished{}",
            report.overall.total,
            ids.len(),
            match &rows_path {
                Some(path) => format!(
                    "; rerun with --resume to finish (rows in {})",
                    path.display()
                ),
                None => String::new(),
            }
        );
        return Ok(exit::INTERRUPTED);
    }
    if report.overall.total > 0 && report.overall.errors == report.overall.total {
        eprintln!(
            "jevjudge: error: every review errored ({}): the run produced no result",
            report.overall.errors_text()
        );
        return Ok(exit::ERROR);
    }
    Ok(if gates.iter().all(|g| g.held) {
        exit::SUCCESS
    } else {
        exit::FAILED
    })
}

/// `OUT.json` → `OUT.rows.jsonl`.
fn rows_path_for(report: &Path) -> PathBuf {
    report.with_extension("rows.jsonl")
}
