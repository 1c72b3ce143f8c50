//! `jevjudge`: judge an AI agent's draft against business evidence with TypeSafe System One,
//! and replay labelled cases in batch to catch regressions.
//!
//! This library is the whole command line: [`run`] parses arguments and runs a command, as
//! the `jevjudge` binary and the Python package's console script do. Programs that judge or
//! replay cases use the library crates (`jevjudge-judge`, `jevjudge-eval`, `jevjudge-serve`).

mod backend;
mod calibrate_cmd;
mod compare_cmd;
mod eval_cmd;
mod exit;
mod fake_server;
#[cfg(test)]
mod flags_test;
mod import_cmd;
mod inputs;
mod judge_cmd;
mod limits;
mod output;
mod queue_cmd;
mod report_cmd;
mod reviews_cmd;
mod routes_cmd;
mod serve_cmd;
mod store_cmd;

use clap::{Parser, Subcommand};

/// Decide whether an agent's draft is supported by the business evidence, one review at a time
/// or over a batch of labelled cases.
#[derive(Debug, Parser)]
#[command(name = "jevjudge", version, propagate_version = true, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Review one state against a definition and print the Result as JSON.
    Judge(judge_cmd::Args),
    /// Replay a batch of labelled cases and report accuracy, abstentions, errors and timings.
    Eval(eval_cmd::Args),
    /// Convert another tool's recordings into a definition, cases and a .jevl record file.
    Import(import_cmd::Args),
    /// Serve a deterministic, offline System One API for tests and demos.
    FakeServer(fake_server::Args),
    /// Calibration metrics and recommended thresholds per criterion, from a report.
    Calibrate(calibrate_cmd::Args),
    /// Compare two runs case by case: flips, regressions, fixes and McNemar's exact test.
    Compare(compare_cmd::Args),
    /// Show a saved report, or write it as a self-contained HTML page.
    Report(report_cmd::Args),
    /// Serve reviews over HTTP: POST a state, get a verdict.
    Serve(serve_cmd::Args),
    /// Manage the decision log's database: apply migrations.
    Store(store_cmd::Args),
    /// Read the decision log: list reviews, export replayable records.
    Reviews(reviews_cmd::Args),
    /// Change routes in the store: promote a version, roll back, list a route's history.
    Routes(routes_cmd::Args),
}

/// Runs the command line `args` (the program name first, as `std::env::args_os()` gives it)
/// and returns its exit status, after printing what the command prints. `--help`,
/// `--version` and flag errors print and return as clap does (0 or 2).
pub fn run<I, T>(args: I) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let code = u8::try_from(error.exit_code()).unwrap_or(exit::INVALID_INPUT);
            // Printing help or an error to a closed stream is not worth a second error.
            let _ = error.print();
            return code;
        }
    };
    // Commands that send reviews or export the store: what they print follows work already
    // done, so output that cannot be written is a failure after sending.
    let sends = match &cli.command {
        Command::Judge(_) | Command::Eval(_) => true,
        Command::Reviews(args) => args.exports(),
        _ => false,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("jevjudge: error: cannot start the async runtime: {error}");
            return exit::INVALID_INPUT;
        }
    };
    let outcome = runtime.block_on(async {
        match cli.command {
            Command::Judge(args) => judge_cmd::run(args).await,
            Command::Eval(args) => eval_cmd::run(args).await,
            Command::Import(args) => import_cmd::run(args).await,
            Command::FakeServer(args) => fake_server::run(args).await,
            Command::Calibrate(args) => calibrate_cmd::run(args).await,
            Command::Compare(args) => compare_cmd::run(args).await,
            Command::Report(args) => report_cmd::run(args).await,
            Command::Serve(args) => serve_cmd::run(args).await,
            Command::Store(args) => store_cmd::run(args).await,
            Command::Reviews(args) => reviews_cmd::run(args).await,
            Command::Routes(args) => routes_cmd::run(args).await,
        }
    });
    match outcome {
        // Output that could not be written is no result: never exit 0 for it.
        Ok(exit::SUCCESS) if output::stdout_failed() => {
            if sends {
                exit::FAILED_AFTER_SENDING
            } else {
                exit::INVALID_INPUT
            }
        }
        Ok(code) => code,
        Err(error) => {
            eprintln!("jevjudge: error: {error:#}");
            exit::status_of(&error)
        }
    }
}
