//! The real `jevjudge serve` binary in front of an in-process fake System One server: the
//! `listening on` line, a review over HTTP, SIGTERM finishing an in-flight review and a clean
//! exit, JSON logs without state text, and start-up errors that name the file (exit 2).

use std::{path::Path, process::Stdio, time::Duration};

use jevjudge_fake::{Config, FakeServer, Fault, FaultPlan};
use serde_json::Value;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, BufReader};

use jevjudge_test_support::{
    TempDir,
    connections::idle_connection,
    example,
    expect::{self, contains},
    listening_on, post, root, run, sigterm, temp_dir,
};

use crate::{fake_server, fake_with_latency, jevjudge_keyed as jevjudge, replay_refund};

const SENTINEL: &str = "RAW-STATE-SERVE-e41b";

#[tokio::test(flavor = "multi_thread")]
async fn serve_reviews_over_http_and_stops_cleanly_on_sigterm() {
    let fake = fake_with_latency(400).await;
    fake.script(FaultPlan::always(Fault::NoulValues(vec![(
        "supported".into(),
        0.95,
    )])));
    let dir = refund_definitions("serve-defs");

    let mut child = serve_command(&dir, &fake, &["--log-format", "json"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let addr = listening_on(&mut stdout).await;
    assert!(
        addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"),
        "{addr}"
    );

    let body = format!(
        r#"{{"state": {{"assistant_answer": "{SENTINEL}", "supporting_context": ["no refund"]}}}}"#
    );
    let (status, verdict) = post(&addr, "/v1/reviews/refund-answer-v1", &body).await;
    assert_eq!(status, 200, "{verdict}");
    let verdict: Value = serde_json::from_str(&verdict).unwrap();
    assert_eq!(verdict["definition_version"], "refund-answer-v1");
    assert_eq!(verdict["status"], "PASS");
    assert_eq!(verdict["findings"]["supported"]["yes_probability"], 0.95);
    let (status, _) = post(&addr, "/v1/reviews/refund-answer-v2", &body).await;
    assert_eq!(status, 404);

    // A review in flight when SIGTERM arrives still gets its verdict.
    let in_flight = tokio::spawn({
        let (addr, body) = (addr.clone(), body.clone());
        async move { post(&addr, "/v1/reviews/refund-answer-v1", &body).await }
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while fake.request_count() < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the second review never reached the fake"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    sigterm(child.id().expect("the child runs"));
    let (status, verdict) = in_flight.await.unwrap();
    assert_eq!(status, 200, "{verdict}");
    assert!(verdict.contains("\"status\":\"PASS\""), "{verdict}");

    let exit = tokio::time::timeout(Duration::from_secs(20), child.wait())
        .await
        .expect("the server exits within 20 s of SIGTERM")
        .unwrap();
    assert!(exit.success(), "{exit:?}");
    let mut logs = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .await
        .unwrap();
    let lines: Vec<Value> = logs
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert!(
        lines.iter().any(|l| l["fields"]["message"] == "serving"),
        "{logs}"
    );
    assert!(
        lines.iter().any(|l| l["fields"]["message"] == "stopped"),
        "{logs}"
    );
    assert!(
        lines
            .iter()
            .filter(|l| l["fields"]["message"] == "request finished")
            .all(|l| l["span"]["request_id"].is_string()),
        "{logs}"
    );
    assert!(!logs.contains(SENTINEL), "state text in the logs: {logs}");
    assert!(
        !logs.contains("test-key-not-secret"),
        "the key in the logs: {logs}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_definitions_stop_start_up_with_exit_2_naming_the_file() {
    let dir = temp_dir("serve-bad-defs");
    for file in ["a.toml", "b.toml"] {
        std::fs::copy(example("refund/definition.toml"), dir.join(file)).unwrap();
    }
    let stderr = start_up_refused("a version twice", &mut serve_definitions(&dir)).await;
    contains(&stderr, "b.toml");
    contains(&stderr, "already defined by");

    std::fs::write(dir.join("b.toml"), "version = \"\"\n").unwrap();
    let stderr = start_up_refused("an empty version", &mut serve_definitions(&dir)).await;
    contains(&stderr, "b.toml");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends SIGTERM to `child`, which must exit 0 within `seconds`.
pub(crate) async fn stop_cleanly(child: &mut tokio::process::Child, seconds: u64) {
    sigterm(child.id().unwrap());
    let exit = tokio::time::timeout(Duration::from_secs(seconds), child.wait())
        .await
        .unwrap_or_else(|_| panic!("the server did not exit within {seconds} s of SIGTERM"))
        .unwrap();
    assert!(exit.success(), "{exit:?}");
}

/// A temp dir `name` holding the refund example's definition, for `serve --definitions`.
pub(crate) fn refund_definitions(name: &str) -> TempDir {
    let dir = temp_dir(name);
    std::fs::copy(example("refund/definition.toml"), dir.join("refund.toml")).unwrap();
    dir
}

/// A served verdict and its offline replay (`judge --replay RECORD` on the refund example)
/// agree but for timing and the review id, and both say `fake`: the fake server marks its
/// answers, live and in their records (meta.fake), so a replay never claims the model the
/// fake names. The replay sent nothing to `fake`.
pub(crate) async fn assert_replay_matches(mut served: Value, record: &Path, fake: &FakeServer) {
    let replayed = run(&mut replay_refund(record)).await;
    let mut replayed: Value = serde_json::from_slice(&replayed.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&replayed.stderr)));
    assert_eq!(served["backend"], "fake");
    assert_eq!(replayed["backend"], "fake");
    for verdict in [&mut served, &mut replayed] {
        verdict["elapsed_millis"] = Value::Null;
        verdict["backend"] = Value::Null;
        if let Some(fields) = verdict.as_object_mut() {
            fields.remove("review_id");
        }
    }
    assert_eq!(replayed, served);
    assert_eq!(fake.request_count(), 1, "the replay sent nothing");
}

/// `jevjudge serve` on 127.0.0.1:0 with `dir`'s definitions.
pub(crate) fn serve_definitions(dir: &Path) -> tokio::process::Command {
    let mut command = jevjudge();
    command
        .args(["serve", "--addr", "127.0.0.1:0", "--definitions"])
        .arg(dir);
    command
}

/// Runs `command`, a `jevjudge serve` whose start-up must fail within 30 s with exit 2 and
/// nothing served (a failure names `case`): its standard error.
pub(crate) async fn start_up_refused(case: &str, command: &mut tokio::process::Command) -> String {
    let output = tokio::time::timeout(Duration::from_secs(30), command.output())
        .await
        .expect("start-up fails within 30 s")
        .unwrap();
    expect::exit_code_of(case, &output, 2);
    assert!(output.stdout.is_empty(), "{case}: nothing is served");
    jevjudge_test_support::stderr(&output)
}

/// `jevjudge serve` on 127.0.0.1:0 with `dir`'s definitions in front of `fake`, and `extra`.
fn serve_command(dir: &Path, fake: &FakeServer, extra: &[&str]) -> tokio::process::Command {
    let mut command = serve_definitions(dir);
    command
        .args(["--base-url", &fake.url()])
        .args(extra)
        .stdout(Stdio::piped());
    command
}

/// Starts `jevjudge serve` with extra flags; returns the child and its address.
pub(crate) async fn start_serve(
    dir: &Path,
    fake: &FakeServer,
    extra: &[&str],
) -> (tokio::process::Child, String) {
    let mut child = serve_command(dir, fake, extra)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let addr = listening_on(&mut stdout).await;
    (child, addr)
}

/// Starts `jevjudge serve` with `extra` flags, posts one review of the refund example's state
/// (the body's other members: `fields`, e.g. `, "reference": "r1"`), then stops the service
/// with SIGTERM, which must end it cleanly. The review, which must be a 200.
pub(crate) async fn serve_one_review(
    dir: &Path,
    fake: &FakeServer,
    extra: &[&str],
    fields: &str,
) -> Value {
    let (mut child, addr) = start_serve(dir, fake, extra).await;
    let state = std::fs::read_to_string(root().join("examples/refund/state.json")).unwrap();
    let body = format!(r#"{{"state": {state}{fields}}}"#);
    let (status, served) = post(&addr, "/v1/reviews/refund-answer-v1", &body).await;
    assert_eq!(status, 200, "{served}");
    stop_cleanly(&mut child, 20).await;
    serde_json::from_str(&served).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_recorded_review_replays_offline_with_judge() {
    let fake = fake_server(Config::default()).await;
    let dir = refund_definitions("serve-record");
    let record = dir.join("audit.jevl");
    let record_arg = record.to_str().unwrap().to_owned();

    let served = serve_one_review(&dir, &fake, &["--record", &record_arg], "").await;

    assert_replay_matches(served, &record, &fake).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_does_not_wait_for_half_open_or_idle_connections() {
    let fake = fake_server(Config::default()).await;
    let dir = refund_definitions("serve-half-open");
    // Default flags: a 10 s header timeout, a 60 s idle timeout, a 10 s max budget (the old
    // shutdown waited up to 2 × 10 s + 5 s for such connections).
    let (mut child, addr) = start_serve(&dir, &fake, &[]).await;
    let mut half_open = tokio::net::TcpStream::connect(&addr).await.unwrap();
    half_open
        .write_all(b"POST /v1/reviews/refund-answer-v1 HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut idle = idle_connection(&addr).await;

    // Well before the old 25 s drain limit.
    stop_cleanly(&mut child, 15).await;
    // Both connections were closed by the server (end of stream or reset), not left open.
    for stream in [&mut half_open, &mut idle] {
        let mut rest = Vec::new();
        let closed = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest))
            .await
            .expect("the connection is closed");
        let _ = closed;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
