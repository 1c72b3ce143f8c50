//! The `jevjudge` binary's integration tests, in one test binary (one link, one place for
//! helpers): the real binary against real HTTP servers on 127.0.0.1 and offline against the
//! shipped examples. Shared helpers come from `jevjudge-test-support`.

use std::path::{Path, PathBuf};

use jevjudge_fake::{Config, FakeServer};
use jevjudge_test_support::{example, expect};
use tokio::process::Command;

mod analysis;
mod cli;
mod decision_log;
mod export_files;
mod export_versions;
mod first_week;
mod hardening;
mod limits;
mod queue;
mod queue_export;
mod queue_team;
mod repeats;
mod route_changes;
mod routes;
mod serve;
mod weights;

/// The binary under test.
const JEVJUDGE: &str = env!("CARGO_BIN_EXE_jevjudge");

/// The binary with a clean environment, killed when dropped.
fn jevjudge() -> Command {
    jevjudge_test_support::command(JEVJUDGE)
}

/// [`jevjudge`] with the dummy key set.
fn jevjudge_keyed() -> Command {
    let mut command = jevjudge();
    command.env("TYPESAFE_API_KEY", jevjudge_test_support::TEST_KEY);
    command
}

/// `jevjudge judge` with `flags` on `definition` and the refund example's state.
fn judge_refund_state(flags: &[&str], definition: &Path) -> Command {
    let mut command = jevjudge();
    command
        .arg("judge")
        .args(flags)
        .arg("--definition")
        .arg(definition)
        .arg("--state")
        .arg(example("refund/state.json"));
    command
}

/// `jevjudge judge` with `flags` on the refund example's definition and state.
fn judge_refund(flags: &[&str]) -> Command {
    judge_refund_state(flags, &example("refund/definition.toml"))
}

/// [`judge_refund`] replaying the record file `record`.
fn replay_refund(record: &Path) -> Command {
    let mut command = judge_refund(&[]);
    command.arg("--replay").arg(record);
    command
}

/// `jevjudge eval` with `definition` and `cases` (and no backend yet).
fn eval_cases(definition: &Path, cases: &Path) -> Command {
    let mut command = jevjudge();
    command
        .args(["eval", "--definition"])
        .arg(definition)
        .arg("--cases")
        .arg(cases);
    command
}

/// `jevjudge eval --fake` with `definition` and `cases`.
fn eval_offline(definition: &Path, cases: &Path) -> Command {
    let mut command = eval_cases(definition, cases);
    command.arg("--fake");
    command
}

/// `jevjudge eval` of the sms-spam cases with `definition`, replaying the real recording.
fn eval_sms_replay(definition: &Path) -> Command {
    let mut command = eval_cases(definition, &example("sms-spam/cases.jsonl"));
    command
        .arg("--replay")
        .arg(example("sms-spam/recordings.jevl"));
    command
}

/// Writes `text` to the file `name` in `dir`: its path.
fn file_in(dir: &Path, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    path
}

/// The standard output of a run that must have exited 0 (its standard error shows if not).
fn succeeded(output: &std::process::Output) -> String {
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        jevjudge_test_support::stderr(output)
    );
    jevjudge_test_support::stdout(output)
}

/// Runs `command`, which must exit with `code` (a failure shows both streams): its output.
async fn exits(command: &mut Command, code: i32) -> std::process::Output {
    let output = jevjudge_test_support::run(command).await;
    expect::exit_code(&output, code);
    output
}

/// Runs `command`, which must exit with `code` and say `needle` on stderr.
async fn exits_saying(command: &mut Command, code: i32, needle: &str) {
    let output = exits(command, code).await;
    expect::contains(&jevjudge_test_support::stderr(&output), needle);
}

/// A fake System One server with `config` on a free port of 127.0.0.1.
async fn fake_server(config: Config) -> FakeServer {
    FakeServer::start(config, "127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("the fake starts")
}

/// A fake that answers after `millis` ms.
async fn fake_with_latency(millis: u64) -> FakeServer {
    fake_server(Config {
        latency: std::time::Duration::from_millis(millis),
        ..Config::default()
    })
    .await
}

/// A fake that accepts only `key`.
async fn fake_with_key(key: &str) -> FakeServer {
    fake_server(Config {
        key: Some(key.into()),
        ..Config::default()
    })
    .await
}
