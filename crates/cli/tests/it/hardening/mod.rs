//! Issue 9's hardening, shown with the real `jevjudge` binary: against real HTTP (an in-process
//! `jevjudge_fake::FakeServer` on 127.0.0.1) or offline (`--fake`, `--replay`). Each test is
//! named after the defect it shows gone (docs/reference/file-formats.md).

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use jevjudge_fake::FakeServer;
use serde_json::Value;
use tokio::process::Command;

use jevjudge_test_support::{
    TempDir, command, example,
    expect::{self, contains},
    read_json, run, stderr, stdout, temp_dir,
};

mod edges;
mod inputs;
mod outputs;
mod resume;

use crate::{
    JEVJUDGE, eval_offline, eval_sms_replay, exits, exits_saying, fake_with_key, fake_with_latency,
    jevjudge, judge_refund, judge_refund_state, replay_refund,
};

/// `n` cases in the state form.
pub(crate) fn cases(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("cases.jsonl");
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            "{{\"scenario\":\"{}\",\"id\":\"c{i:02}\",\"state\":{{\"n\":{i}}},\"expected_pass\":{}}}\n",
            if i % 3 == 0 { "a" } else { "b" },
            i % 2 == 0
        ));
    }
    std::fs::write(&path, text).unwrap();
    path
}

/// A fresh directory `name` holding [`cases`]`(n)`: (the directory, the cases file).
pub(crate) fn cases_in(name: &str, n: usize) -> (TempDir, PathBuf) {
    let dir = temp_dir(name);
    let cases = cases(&dir, n);
    (dir, cases)
}

fn eval_args(command: &mut Command, cases: &Path, report: &Path) {
    command
        .args([
            "eval",
            "--concurrency",
            "2",
            "--budget",
            "5s",
            "--definition",
        ])
        .arg(example("refund/definition.toml"))
        .arg("--cases")
        .arg(cases)
        .arg("--report")
        .arg(report);
}

pub(crate) fn eval_live(server: &FakeServer, cases: &Path, report: &Path) -> Command {
    let mut command = jevjudge();
    eval_args(&mut command, cases, report);
    command
        .args(["--base-url", &server.url()])
        .env("TYPESAFE_API_KEY", "test-key-not-secret");
    command
}

fn eval_fake(cases: &Path, report: &Path) -> Command {
    let mut command = jevjudge();
    eval_args(&mut command, cases, report);
    command.arg("--fake");
    command
}

/// `pick` of every row of a JSON report.
pub(crate) fn rows_of(report: &Path, pick: impl Fn(&Value) -> Value) -> Vec<Value> {
    read_json(report)["rows"]
        .as_array()
        .expect("a report has rows")
        .iter()
        .map(pick)
        .collect()
}

/// What two runs over the same cases must agree on: id, status and pass of every row.
fn comparable_rows(report: &Path) -> Vec<Value> {
    rows_of(report, |row| {
        serde_json::json!([row["id"], row["verdict"]["status"], row["pass"]])
    })
}

/// `bash -c script` with `$0` the binary under test (further arguments are `$1`, `$2`, …).
fn in_bash(script: &str) -> Command {
    let mut shell = command("bash");
    shell.args(["-c", script, JEVJUDGE]);
    shell
}

/// Runs [`in_bash`]`(script)`: its standard error, which must not tell of a panic.
async fn bash_stderr(script: &str) -> String {
    let message = stderr(&run(&mut in_bash(script)).await);
    assert!(!message.contains("panicked"), "{script}: {message}");
    message
}

async fn slow_fake() -> FakeServer {
    fake_with_latency(20).await
}
