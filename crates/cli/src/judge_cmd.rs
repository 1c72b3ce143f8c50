//! `jevjudge judge`: review one state (cli-and-formats.md §1.2).

use std::{io::IsTerminal, path::PathBuf, time::Duration};

use jevjudge_judge::{
    Judge, Status,
    input::{self, InputError, StateError},
};
use serde_json::Value;

use crate::{
    backend::{BackendArgs, parse_positive_duration, report_recording},
    exit::{self, Failure},
    inputs::flagged,
};

/// Options of `jevjudge judge`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Exit status: 0 PASS, 1 FAIL, 3 INCONCLUSIVE, 4 ERROR, \
    2 invalid input or configuration (nothing was sent), 8 the review ran but its result could \
    not be written.")]
pub struct Args {
    /// The definition file (.toml or .json).
    #[arg(long, value_name = "DEF")]
    pub definition: PathBuf,

    /// A JSON file holding the state (a string, object or array); `-` or absent reads
    /// standard input.
    #[arg(long, value_name = "FILE|-")]
    pub state: Option<PathBuf>,

    /// The review's whole budget, retries and waits included, like `2s`.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_positive_duration)]
    pub budget: Duration,

    #[command(flatten)]
    pub backend: BackendArgs,
}

/// Runs one review and prints the Result JSON.
pub async fn run(args: Args) -> anyhow::Result<u8> {
    let definition = crate::inputs::definition(&args.definition, args.backend.max_input_bytes)?;
    let state = read_state(args.state.as_deref(), args.backend.max_input_bytes)?;
    let resolved = args.backend.resolve(None, None)?;
    let judge = Judge::new(resolved.backend, args.budget)?;
    let verdict = judge.review(state, &definition).await;
    // The Result JSON of §4.1, plus where the answers came from (`fake`/`fixture` must show).
    let mut output = serde_json::to_value(&verdict).map_err(Failure::after_sending)?;
    if let Some(map) = output.as_object_mut() {
        map.insert(
            "backend".into(),
            serde_json::Value::String(
                crate::backend::answered_kind(resolved.kind, judge.backend().kind()).to_string(),
            ),
        );
    }
    crate::output::print_stdout(&format!("{output}\n"));
    report_recording(resolved.recorder.as_deref(), args.backend.record.as_deref())
        .map_err(Failure::after_sending)?;
    Ok(match verdict.status {
        Status::Pass => exit::SUCCESS,
        Status::Fail => exit::FAILED,
        Status::Inconclusive => exit::INCONCLUSIVE,
        Status::Error => exit::ERROR,
    })
}

fn read_state(path: Option<&std::path::Path>, max_bytes: u64) -> anyhow::Result<Value> {
    let (state, source) = match path {
        Some(path) if path.as_os_str() != "-" => {
            let held = crate::inputs::wait_for_writer("--state", path)?.0;
            let file = held.map_or_else(|| std::fs::File::open(path), Ok);
            let state = (file.map_err(|e| StateError::Read(e.into())))
                .and_then(|file| input::read_state(file, max_bytes));
            (state, path.display().to_string())
        }
        _ => {
            if std::io::stdin().is_terminal() {
                if path.is_none() {
                    anyhow::bail!(
                        "no state: give --state FILE.json, or pipe the state JSON into standard \
                         input (`--state -` reads it from the terminal, ended by Ctrl-D)"
                    );
                }
                eprintln!(
                    "jevjudge: reading the state JSON from standard input (end it with Ctrl-D)"
                );
            }
            let stdin = std::io::stdin().lock();
            (
                input::read_state(stdin, max_bytes),
                "standard input".to_owned(),
            )
        }
    };
    state.map_err(|error| {
        flagged(&InputError {
            what: "state",
            source: &source,
            error,
        })
    })
}
