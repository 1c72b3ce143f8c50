//! `jevjudge`: judge an AI agent's draft against business evidence with TypeSafe System One,
//! and replay labelled cases in batch to catch regressions.

mod exit;
mod fake_server;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Decide whether an agent's draft is supported by the business evidence, one review at a time
/// or over a batch of labelled cases.
#[derive(Debug, Parser)]
#[command(name = "jevjudge", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a deterministic, offline System One API for tests and demos.
    FakeServer(fake_server::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the async runtime: {error}");
            return exit::code(exit::INVALID_INPUT);
        }
    };
    let outcome = runtime.block_on(async {
        match cli.command {
            Command::FakeServer(args) => fake_server::run(args).await,
        }
    });
    match outcome {
        Ok(code) => exit::code(code),
        Err(error) => {
            eprintln!("error: {error:#}");
            exit::code(exit::INVALID_INPUT)
        }
    }
}
