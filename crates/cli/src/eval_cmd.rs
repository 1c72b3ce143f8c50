//! `jevjudge eval`: replay a batch of labelled cases (cli-and-formats.md §1.3).
//!
//! Parse ([`Args`]) → resolve a [`Plan`] (flags checked, the definition loaded, every path
//! named, nothing sent) → the library's [`Session`] (pass 1, the rows file, resume,
//! streaming, the merge) → render (the files, [`terminal::summary`], the exit status).

use std::{path::Path, path::PathBuf, time::Duration};

use jevjudge_client::limit::Limiter;
use jevjudge_eval::{
    Report, Row, RunObserver, Runner,
    gates::{self, Gate, Gates},
    html::case_texts,
    output::ReportFiles,
    reviewer::Reviewer,
    session::{Session, SessionPlan, rows_path_for},
    terminal::{self, Ending},
};
use jevjudge_judge::Definition;

use crate::{
    backend::{BackendArgs, parse_positive_duration, report_recording},
    exit::{self, Failure},
    inputs::flagged,
    limits::{self, LimitArgs},
    output,
};

/// Options of `jevjudge eval`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Exit status: 0 the run completed and every gate held; 1 a gate failed; \
    2 invalid input or configuration (nothing was sent); 4 every review errored (no valid \
    result, whatever the gates); 5 interrupted (Ctrl-C), after writing what finished; 6 the API \
    key was refused (401/403): no new review started, the rest are not run, --resume \
    --retry-errors continues once the key is fixed; 7 a spending cap (--max-input-tokens, --max-cost) stopped the run, \
    --resume continues; 8 the reviews ran but the report, another output, the rows file or \
    standard output could not be written."
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

    /// The share of cases that should pass in production (strictly between 0 and 1): adds
    /// the PASS and FAIL precisions at that base rate, and warns when the cases' own mix is
    /// far from it.
    #[arg(long, value_name = "P", value_parser = crate::inputs::parse_prevalence)]
    pub prevalence: Option<f64>,

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

    /// Start afresh even when the rows file already holds rows of an earlier run, replacing
    /// it (without this, or --resume, such a run is refused and nothing is sent).
    #[arg(long, conflicts_with = "resume")]
    pub overwrite: bool,

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

/// `jevjudge eval`'s flags resolved: every number checked, the definition loaded, the rows
/// file named and every output found writable. Nothing is sent and no case is read.
#[derive(Debug)]
pub struct Plan {
    /// The definition (`--definition`).
    pub definition: Definition,
    /// Each review's budget (`--budget`).
    pub budget: Duration,
    /// The runner: concurrency, streaming, repeats and price (no limiter yet).
    pub runner: Runner,
    /// The cases, limits, rows file and resume.
    pub session: SessionPlan,
    /// The gates asked for.
    pub gates: Gates,
    /// The production base rate (`--prevalence`).
    pub prevalence: Option<f64>,
    /// The files written at the end.
    pub outputs: ReportFiles,
    /// Where answers come from (`repeated_records` set for `--repeat` above 1).
    pub backend: BackendArgs,
    /// Rate limits and spending caps.
    pub limits: LimitArgs,
    /// `--concurrency`, for the limiter.
    pub concurrency: usize,
}

impl Plan {
    /// Resolves the flags, in the order their errors are reported: the definition, the
    /// runner's numbers, the gates, a streaming run's cases file, then every output.
    pub fn resolve(args: Args) -> anyhow::Result<Plan> {
        let definition = crate::inputs::definition(&args.definition, args.backend.max_input_bytes)?;
        let session = SessionPlan {
            cases: args.cases,
            max_line_bytes: args.backend.max_line_bytes,
            max_input_bytes: args.backend.max_input_bytes,
            repeat: args.repeat,
            price_per_million_input: args.price_per_million_input,
            rows: args
                .rows
                .or_else(|| args.report.as_deref().map(rows_path_for)),
            resume: args.resume,
            retry_errors: args.retry_errors,
            overwrite: args.overwrite,
            ..SessionPlan::new(PathBuf::new(), args.max_cases)
        };
        let runner = session.runner(args.concurrency).map_err(|e| flagged(&e))?;
        let gates = Gates {
            min_accuracy: args.min_accuracy,
            max_errors: args.max_errors,
            min_accuracy_lower: args.min_accuracy_lower,
            max_false_pass: args.max_false_pass,
            min_coverage: args.min_coverage,
        };
        gates.check()?;
        let prevalence = args.prevalence;
        session.check_cases_file().map_err(|e| flagged(&e))?;
        let outputs = ReportFiles {
            report: args.report,
            junit: args.junit,
            markdown: args.markdown,
            html: args.html,
            include_text: args.include_text,
        };
        // Every output must be writable before anything is sent.
        for (flag, path) in [
            ("--report", outputs.report.as_deref()),
            ("--junit", outputs.junit.as_deref()),
            ("--markdown", outputs.markdown.as_deref()),
            ("--html", outputs.html.as_deref()),
            ("--rows", session.rows.as_deref()),
            ("--record", args.backend.record.as_deref()),
        ] {
            if let Some(path) = path {
                output::check_writable(flag, path)?;
            }
        }
        let mut backend = args.backend;
        backend.repeated_records = args.repeat > 1;
        Ok(Plan {
            definition,
            budget: args.budget,
            runner,
            session,
            gates,
            prevalence,
            outputs,
            backend,
            limits: args.limits,
            concurrency: args.concurrency,
        })
    }
}

/// Builds the limiter and the backend behind it; says when a replay has fewer answers per
/// request than `--repeat` asks for.
fn reviewer(plan: &Plan) -> anyhow::Result<Reviewer> {
    let session = &plan.session;
    let config = plan
        .limits
        .config(plan.concurrency, session.price_per_million_input)?;
    let limiter = Limiter::new(config);
    let chosen = plan.backend.resolve(None, Some(limiter.clone()))?;
    let reviewer = Reviewer::new(
        plan.runner.clone(),
        limiter,
        chosen,
        &plan.definition,
        plan.budget,
    )?;
    if let Some(records) = reviewer.cycling_repeats(session.repeat) {
        eprintln!(
            "jevjudge: note: --repeat {}: the recording holds at most {records} different {} per request, so repeats replay answers already served (cycling): the flip rate shows the recording's variation, not the model's",
            session.repeat,
            jevjudge_eval::plural::noun(records, "answer")
        );
    }
    Ok(reviewer)
}

/// Advances the progress bar, which counts reviews, as rows finish: by one per repeat.
struct Progress<'a>(&'a indicatif::ProgressBar);

impl RunObserver for Progress<'_> {
    fn row_finished(&mut self, _index: usize, row: &Row) {
        self.0.inc(row.verdicts().len().max(1) as u64);
    }
}

/// Runs the evaluation.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let plan = Plan::resolve(args)?;
    // Pass 1: every line checked before anything is sent.
    let held = crate::inputs::wait_for_writer("--cases", &plan.session.cases)?.0;
    let cases = plan
        .session
        .read_cases(&plan.definition, held)
        .map_err(|e| flagged(&e))?;
    let texts = plan.outputs.include_text.then(|| case_texts(cases.cases()));
    let reviewer = reviewer(&plan)?;
    let kind = reviewer.chosen.kind.to_string();
    let mut session = Session::open(
        &plan.session,
        &plan.definition,
        cases,
        &kind,
        &reviewer.chosen.model,
    )
    .map_err(|e| flagged(&e))?;
    if let (true, Some(path)) = (session.torn_tail(), &plan.session.rows) {
        eprintln!(
            "jevjudge: note: the last line of {} was cut short by the interruption; it \
             is removed and that case runs again",
            path.display()
        );
    }
    // The spending cap covers the whole run, the rows already spent included.
    reviewer
        .limiter
        .record_input_tokens(session.previous_input_tokens());

    let progress = output::progress_bar(session.reviews_to_run() as u64);
    let watcher = limits::watch(&progress, reviewer.limiter.clone());
    // From here on reviews are sent: what fails is no longer invalid input (exit 8).
    let ran = session
        .run(
            &reviewer.runner,
            &reviewer.evaluator,
            Progress(&progress),
            output::interrupted(),
        )
        .await
        .map_err(Failure::after_sending)?;
    watcher.abort();
    progress.finish_and_clear();
    let rows_failed = session.close_rows_file();
    if let Some(error) = &rows_failed {
        eprintln!("jevjudge: error: rows could not all be written to the rows file: {error}");
    }
    let outcome = session.finish(ran).map_err(Failure::after_sending)?;
    let (reviews_this_run, cases) = (outcome.reviews_this_run, outcome.cases);
    crate::backend::answered_kind(reviewer.chosen.kind, reviewer.answered());
    let mut report = reviewer.report(outcome, &plan.definition);
    if let Some(prevalence) = plan.prevalence {
        jevjudge_eval::calibration::set_prevalence_of(&mut report, prevalence, &plan.definition);
    }

    let gates = plan.gates.evaluate(&report);
    plan.outputs
        .write(
            &report,
            &gates::lines(&gates),
            Some(&plan.definition),
            texts.as_ref(),
        )
        .map_err(Failure::after_sending)?;
    let rows_path = plan.session.rows.as_deref();
    output::print_stdout(&terminal::summary(
        &report,
        &gates,
        rows_path,
        Some(reviews_this_run),
    ));
    let hint_context = terminal::HintContext {
        kind: reviewer.chosen.kind,
        model: &reviewer.chosen.model,
        replay_models: &reviewer.chosen.replay_models,
        api_key_env: plan.backend.api_key_env.as_deref(),
        base_url: plan.backend.base_url.as_deref(),
    };
    if let Some(hint) = terminal::error_hint(&report.overall, &hint_context) {
        eprintln!("{hint}");
    }
    report_recording(
        reviewer.chosen.recorder.as_deref(),
        plan.backend.record.as_deref(),
    )
    .map_err(Failure::after_sending)?;
    let status = exit_status(&report, &gates, cases, rows_path);
    // Rows that did not reach the rows file cannot be resumed from: that outranks the rest.
    Ok(if rows_failed.is_some() {
        exit::FAILED_AFTER_SENDING
    } else {
        status
    })
}

/// The exit status of a finished run, with the line that explains a non-zero one: stopped by
/// the limiter, interrupted, every review errored, a gate failed.
fn exit_status(report: &Report, gates: &[Gate], cases: usize, rows_path: Option<&Path>) -> u8 {
    let (ending, line) = terminal::ending(report, gates::all_held(gates), cases, rows_path);
    if let Some(line) = line {
        eprintln!("{line}");
    }
    match ending {
        Ending::KeyRefused => exit::KEY_REFUSED,
        Ending::CapReached => exit::CAP_REACHED,
        Ending::Interrupted => exit::INTERRUPTED,
        Ending::AllErrored => exit::ERROR,
        Ending::GateFailed => exit::FAILED,
        Ending::Held => exit::SUCCESS,
    }
}

#[cfg(test)]
mod tests;
