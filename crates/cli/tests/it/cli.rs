//! The real `jevjudge` binary against real HTTP servers on 127.0.0.1 (an in-process
//! `jevjudge_fake::FakeServer` scripted per test), and offline against the shipped examples.

use std::{path::Path, process::Output, time::Duration};

use jevjudge_fake::{Config, FakeServer, Fault, FaultPlan};
use serde_json::Value;
use tokio::process::Command;

use jevjudge_test_support::{example, expect, read_json, run, stdout, stdout_json, temp_dir};

use crate::{
    eval_offline, eval_sms_replay, exits, exits_saying, fake_server, fake_with_latency, file_in,
    hardening::{cases_in, eval_live, rows_of},
    jevjudge, judge_refund, judge_refund_state, replay_refund, succeeded,
};

async fn fake() -> FakeServer {
    fake_server(Config::default()).await
}

/// `jevjudge judge` on the refund example against the fake.
fn judge_live(server: &FakeServer, budget: &str) -> Command {
    let mut command = judge_refund(&[]);
    command
        .args(["--budget", budget, "--base-url", &server.url()])
        .env("TYPESAFE_API_KEY", "test-key-not-secret");
    command
}

#[tokio::test(flavor = "multi_thread")]
async fn judge_maps_scripted_probabilities_to_statuses_and_exit_codes() {
    let server = fake().await;
    for (p, status, code) in [
        (0.95, "PASS", 0),
        (0.05, "FAIL", 1),
        (0.5, "INCONCLUSIVE", 3),
    ] {
        server.script(FaultPlan::always(Fault::NoulValues(vec![(
            "supported".into(),
            p,
        )])));
        let output = run(&mut judge_live(&server, "2s")).await;
        expect::exit_code_of(&format!("p = {p}"), &output, code);
        let result = stdout_json(&output);
        assert_eq!(result["status"], status);
        assert_eq!(result["findings"]["supported"]["yes_probability"], p);
        assert_eq!(result["model"], "jev-1.13.0", "the resolved versioned id");
        assert_eq!(
            result["backend"], "fake",
            "the fake server marks its answers"
        );
        assert!(String::from_utf8_lossy(&output.stderr).contains("x-jevjudge-fake"));
        assert!(result["usage"]["input_tokens"].as_u64().unwrap() > 0);
    }
    // One request per review, carrying the key as a Bearer token (redacted in the journal).
    let journal = server.journal();
    let posts: Vec<_> = journal
        .iter()
        .filter(|e| e.path == "/v1/systemone")
        .collect();
    assert_eq!(posts.len(), 3);
    assert!(
        posts[0]
            .headers
            .iter()
            .any(|(k, v)| k == "authorization" && v == "Bearer <redacted>")
    );
    let body: Value = serde_json::from_slice(&posts[0].body).unwrap();
    assert_eq!(body["questions"].as_object().unwrap().len(), 1);
    assert_eq!(body["model"], "jev-latest");
    server.shutdown().await;
}

/// Runs [`judge_live`] with `budget`: its output, its verdict, and how many requests the
/// fake received meanwhile.
async fn judge_counting(server: &FakeServer, budget: &str) -> (Output, Value, usize) {
    let before = server.request_count();
    let output = run(&mut judge_live(server, budget)).await;
    let result = stdout_json(&output);
    (output, result, server.request_count() - before)
}

/// A verdict's `error` and `detail`.
fn error_of(result: &Value) -> (Option<&str>, Option<&str>) {
    (result["error"].as_str(), result["detail"].as_str())
}

#[tokio::test(flavor = "multi_thread")]
async fn judge_errors_invalid_answers_server_errors_and_auth() {
    let server = fake().await;
    // Invalid answers → INVALID_RESPONSE, model and usage kept (D3), exit 4.
    server.script(FaultPlan::always(Fault::NoulOutOfRange));
    let output = run(&mut judge_live(&server, "2s")).await;
    assert_eq!(output.status.code(), Some(4));
    let result = stdout_json(&output);
    assert_eq!(
        (
            result["status"].as_str(),
            result["error"].as_str(),
            result["detail"].as_str()
        ),
        (
            Some("ERROR"),
            Some("INVALID_RESPONSE"),
            Some("probability_out_of_range")
        )
    );
    assert_eq!(result["findings"], serde_json::json!({}));
    assert_eq!(result["model"], "jev-1.13.0");

    // 500s until the retries run out inside a roomy budget → BACKEND http_status_500 (D2).
    server.script(FaultPlan::always(Fault::Html(500)));
    let (output, result, sent) = judge_counting(&server, "10s").await;
    assert_eq!(
        error_of(&result),
        (Some("BACKEND"), Some("http_status_500"))
    );
    assert_eq!(sent, 3, "1 attempt + 2 retries");
    assert_eq!(output.status.code(), Some(4));

    // 500s under a budget too short for the next backoff → TIMEOUT (D11, rule 33).
    let (_, result, sent) = judge_counting(&server, "300ms").await;
    assert_eq!(result["error"], "TIMEOUT");
    assert!(
        ["retry_wait_exceeds_budget", "budget_elapsed"]
            .contains(&result["detail"].as_str().unwrap()),
        "{result}"
    );
    assert!(result["elapsed_millis"].as_f64().unwrap() <= 300.0 + 50.0);
    assert_eq!(sent, 1, "the retry was not started");

    // 401 → BACKEND http_status_401, one attempt, no retries.
    server.script(FaultPlan::always(Fault::Json {
        status: 401,
        body: serde_json::json!({"message": "invalid key"}),
    }));
    let (output, result, sent) = judge_counting(&server, "10s").await;
    assert_eq!(
        error_of(&result),
        (Some("BACKEND"), Some("http_status_401"))
    );
    assert_eq!(sent, 1);
    assert!(result["elapsed_millis"].as_f64().unwrap() < 1000.0, "fast");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("test-key-not-secret")
            && !String::from_utf8_lossy(&output.stdout).contains("test-key-not-secret")
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn judge_without_a_key_names_the_variables_and_the_offline_options() {
    let mut command = judge_refund(&[]);
    let output = run(&mut command).await;
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for needle in ["TYPESAFE_API_KEY", "JEV_API_KEY", "--replay", "--fake"] {
        assert!(stderr.contains(needle), "{needle} missing from: {stderr}");
    }
    assert!(
        output.stdout.is_empty(),
        "nothing was sent, nothing printed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn judge_input_errors_exit_2_naming_the_file() {
    let dir = temp_dir("cli-inputs");
    let bad_state = dir.join("state.json");
    std::fs::write(&bad_state, "42").unwrap();
    let mut command = jevjudge();
    command
        .args(["judge", "--fake", "--definition"])
        .arg(example("refund/definition.toml"))
        .arg("--state")
        .arg(&bad_state);
    exits_saying(
        &mut command,
        2,
        "state.json: the state must be a JSON string, object or array, not number",
    )
    .await;

    let bad_definition = file_in(
        &dir,
        "definition.toml",
        "version = \"v\"\n[[criteria]]\nid = \"c\"\nexpected = true\nfail_at_or_below = 0.8\npass_at_or_above = 0.2\n[criteria.question]\ninstructions = \"q\"\n",
    );
    exits_saying(
        &mut judge_refund_state(&["--fake"], &bad_definition),
        2,
        "definition.toml: criteria[0].fail_at_or_below/pass_at_or_above",
    )
    .await;

    let mut command = jevjudge();
    command
        .args(["judge", "--fake", "--budget", "0s", "--definition"])
        .arg(example("refund/definition.toml"));
    exits(&mut command, 2).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn judge_reads_state_from_stdin_and_fake_output_says_fake() {
    let mut command = jevjudge();
    command
        .args(["judge", "--fake", "--definition"])
        .arg(example("support-draft/definition.toml"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = command.spawn().unwrap();
    use tokio::io::AsyncWriteExt;
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(br#"{"request": "r", "draft": "d", "business_record": "b"}"#)
        .await
        .unwrap();
    drop(stdin);
    let output = child.wait_with_output().await.unwrap();
    let result = stdout_json(&output);
    assert_eq!(result["backend"], "fake");
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("--fake"),
        "a banner says so"
    );
    let ids: Vec<_> = result["findings"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(ids, ["covers_request", "unsupported_commitment"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn judge_fixtures_reproduce_f1_and_f3() {
    for (fixture, status, code) in [
        ("supported", "PASS", 0),
        ("unsupported", "FAIL", 1),
        ("uncertain", "INCONCLUSIVE", 3),
    ] {
        let mut command = replay_refund(&example(&format!("refund/fixtures/{fixture}.jevl")));
        let output = run(&mut command).await;
        assert_eq!(output.status.code(), Some(code));
        let result = stdout_json(&output);
        assert_eq!(result["status"], status);
        assert_eq!(result["backend"], "fixture");
    }
    let mut command = jevjudge();
    command
        .args(["judge", "--definition"])
        .arg(example("support-draft/definition.toml"))
        .arg("--state")
        .arg(example("support-draft/state.json"))
        .arg("--replay")
        .arg(example("support-draft/fixture.jevl"));
    let output = run(&mut command).await;
    let result = stdout_json(&output);
    assert_eq!(result["status"], "FAIL");
    assert_eq!(result["model"], "offline-fixture");
    assert_eq!(result["usage"], Value::Null);
    assert_eq!(
        result["findings"]["covers_request"],
        serde_json::json!({"status": "PASS", "yes_probability": 0.9, "expected_probability": 0.9})
    );
    assert_eq!(
        result["findings"]["unsupported_commitment"],
        serde_json::json!({"status": "FAIL", "yes_probability": 0.95, "expected_probability": 0.050000000000000044})
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn record_then_replay_gives_identical_results() {
    let server = fake().await;
    let dir = temp_dir("cli-record");
    let record = dir.join("audit.jevl");
    let mut live = judge_live(&server, "2s");
    live.arg("--record").arg(&record);
    let recorded = stdout_json(&run(&mut live).await);
    let mut command = replay_refund(&record);
    let replayed = stdout_json(&run(&mut command).await);
    // Recorded against the fake server (meta.fake): the replay says `fake`, not a model.
    assert_eq!(recorded["backend"], "fake");
    assert_eq!(replayed["backend"], "fake");
    for field in ["status", "findings", "model", "usage"] {
        assert_eq!(recorded[field], replayed[field], "{field}");
    }
    server.shutdown().await;
}

// ---- eval ----

fn eval_refund_fixture(concurrency: &str) -> Command {
    let mut command = jevjudge();
    command
        .args(["eval", "--concurrency", concurrency, "--definition"])
        .arg(example("refund/definition.toml"))
        .arg("--cases")
        .arg(example("refund/cases.jsonl"))
        .arg("--replay")
        .arg(example("refund/fixtures/cases.jevl"));
    command
}

#[tokio::test(flavor = "multi_thread")]
async fn eval_f2_writes_report_junit_and_markdown_without_raw_text() {
    let dir = temp_dir("cli-f2");
    let mut command = eval_refund_fixture("2");
    for (flag, file) in [
        ("--report", "report.json"),
        ("--junit", "junit.xml"),
        ("--markdown", "summary.md"),
    ] {
        command.arg(flag).arg(dir.join(file));
    }
    command.args(["--min-accuracy", "1.0", "--max-errors", "0"]);
    let stdout = succeeded(&run(&mut command).await);
    assert!(stdout.contains("backend fixture"), "{stdout}");
    assert!(stdout.contains("gate min-accuracy 1: held"), "{stdout}");
    let report: Value = read_json(&dir.join("report.json"));
    assert_eq!(report["backend"], "fixture");
    assert_eq!(report["complete"], true);
    let overall = &report["overall"];
    assert_eq!(
        (
            overall["total"].as_u64(),
            overall["correct"].as_u64(),
            overall["accuracy"].as_f64()
        ),
        (Some(2), Some(2), Some(1.0))
    );
    assert_eq!(report["rows"][0]["id"], "honest");
    assert_eq!(report["rows"][0]["verdict"]["status"], "PASS");
    assert_eq!(report["rows"][1]["verdict"]["status"], "FAIL");
    // No raw text in any output file (D12): the inputs' question, evidence and answers.
    for file in [
        "report.json",
        "junit.xml",
        "summary.md",
        "report.rows.jsonl",
    ] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        for raw in [
            "Has my refund gone through?",
            "Business record",
            "No refund yet",
            "The refund is complete",
            "Is assistant_answer supported",
        ] {
            assert!(!text.contains(raw), "{raw} found in {file}");
        }
    }
    assert!(!stdout.contains("Has my refund"));
    // JUnit parses back.
    let xml = std::fs::read_to_string(dir.join("junit.xml")).unwrap();
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut testcases = 0;
    loop {
        match reader.read_event().expect("valid XML") {
            quick_xml::events::Event::Eof => break,
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e)
                if e.name().as_ref() == b"testcase" =>
            {
                testcases += 1
            }
            _ => {}
        }
    }
    assert_eq!(testcases, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn eval_gates_fail_with_exit_1() {
    let mut command = eval_sms_replay(&example("sms-spam/definition.toml"));
    command.args(["--model", "jev-1.13.0", "--min-accuracy", "0.9"]);
    let output = exits(&mut command, 1).await;
    expect::contains(
        &stdout(&output),
        "gate min-accuracy 0.9: FAILED (accuracy 0.8200)",
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn main_job_reproduces_the_published_decisions_of_the_real_recording() {
    let dir = temp_dir("cli-sms");
    for (definition, correct, incorrect, abstained, accuracy) in [
        ("sms-spam/definition.toml", 123, 2, 25, 0.82),
        ("sms-spam/definition-cut-0.5.toml", 143, 7, 0, 143.0 / 150.0),
    ] {
        let report_path = dir.join("report.json");
        let mut command = eval_sms_replay(&example(definition));
        command
            .args(["--model", "jev-1.13.0", "--overwrite", "--report"])
            .arg(&report_path);
        exits(&mut command, 0).await;
        let report: Value = read_json(&report_path);
        let o = &report["overall"];
        assert_eq!(report["backend"], "replay");
        assert_eq!(
            (
                o["total"].as_u64(),
                o["correct"].as_u64(),
                o["incorrect"].as_u64(),
                o["abstained"].as_u64(),
                o["errors"].as_u64()
            ),
            (
                Some(150),
                Some(correct),
                Some(incorrect),
                Some(abstained),
                Some(0)
            )
        );
        assert_eq!(o["accuracy"].as_f64(), Some(accuracy));
        assert_eq!(o["usage_known_rows"], 150);
        // Nothing of the messages leaks into the report.
        let text = std::fs::read_to_string(&report_path).unwrap();
        assert!(!text.contains("Aiyar hard 2 type"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn eval_bad_inputs_exit_2_naming_file_line_and_field() {
    let dir = temp_dir("cli-bad-cases");
    let first_case = std::fs::read_to_string(example("refund/cases.jsonl")).unwrap();
    let first_case = first_case.lines().next().unwrap();
    let cases = file_in(
        &dir,
        "cases.jsonl",
        format!(
            "{first_case}\n{{\"scenario\":\"s\",\"id\":\"x\",\"state\":\"s\",\"expected_pass\":\"yes\"}}\n"
        ),
    );
    exits_saying(
        &mut eval_offline(&example("refund/definition.toml"), &cases),
        2,
        "cases.jsonl:2: field `expected_pass`: must be true or false",
    )
    .await;

    let mut command = eval_refund_fixture("33");
    exits_saying(&mut command, 2, "concurrency must be within 1..=32, not 33").await;

    let labels = file_in(
        &dir,
        "labels.jsonl",
        "{\"scenario\":\"s\",\"id\":\"x\",\"state\":\"s\",\"expected_pass\":true,\"expected_findings\":{\"nope\":true}}\n",
    );
    let mut command = eval_offline(&example("refund/definition.toml"), &labels);
    exits_saying(&mut command, 2, "expected_findings.nope").await;
}

/// 40 cases in the state form, answered by the fake with latency.
/// What two runs over the same cases must agree on: id, status, findings and pass of every row.
fn comparable_rows(report: &Path) -> Vec<Value> {
    rows_of(report, |row| {
        serde_json::json!([
            row["id"],
            row["verdict"]["status"],
            row["verdict"]["findings"],
            row["pass"]
        ])
    })
}

async fn wait_for_rows(path: &Path, at_least: usize) {
    for _ in 0..400 {
        if std::fs::read_to_string(path)
            .map(|t| t.lines().count())
            .unwrap_or(0)
            > at_least
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("rows did not appear in {}", path.display());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_run_resumes_to_the_same_report_as_an_uninterrupted_one() {
    let server = fake_with_latency(40).await;
    let (dir, cases) = cases_in("cli-resume", 40);

    let full = dir.join("full.json");
    // The fake server's answers are labelled `fake` in the summary and the report.
    let stdout = succeeded(&run(&mut eval_live(&server, &cases, &full)).await);
    assert!(stdout.contains("backend fake"), "{stdout}");
    let report: Value = read_json(&full);
    assert_eq!(report["backend"], "fake");

    // A crash: SIGKILL mid-run. Finished rows are already on disk.
    let killed = dir.join("killed.json");
    let mut child = eval_live(&server, &cases, &killed).spawn().unwrap();
    let rows = dir.join("killed.rows.jsonl");
    wait_for_rows(&rows, 6).await;
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    let kept = std::fs::read_to_string(&rows).unwrap().lines().count() - 1;
    assert!((5..40).contains(&kept), "{kept} rows survived the kill");
    assert!(!killed.exists(), "no report from a killed run");

    let before = server.request_count();
    exits(eval_live(&server, &cases, &killed).arg("--resume"), 0).await;
    let sent = server.request_count() - before;
    assert!(
        sent <= 40 - kept + 1,
        "only the missing cases ran ({sent} requests for {} missing)",
        40 - kept
    );
    assert_eq!(comparable_rows(&killed), comparable_rows(&full));
    let resumed: Value = read_json(&killed);
    let original: Value = read_json(&full);
    for field in "total correct incorrect abstained errors accuracy".split(' ') {
        assert_eq!(
            resumed["overall"][field], original["overall"][field],
            "{field}"
        );
    }
    assert_eq!(
        resumed["scenarios"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        original["scenarios"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>()
    );

    // Resuming with other cases is refused.
    let other = dir.join("other.jsonl");
    std::fs::write(
        &other,
        std::fs::read_to_string(&cases)
            .unwrap()
            .replace("\"n\":3}", "\"n\":333}"),
    )
    .unwrap();
    exits_saying(
        eval_live(&server, &other, &killed).arg("--resume"),
        2,
        "belongs to other cases",
    )
    .await;
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_writes_an_incomplete_report_and_exits_5() {
    let server = fake_with_latency(40).await;
    let (dir, cases) = cases_in("cli-sigint", 40);
    let report = dir.join("report.json");
    let child = eval_live(&server, &cases, &report)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_rows(&dir.join("report.rows.jsonl"), 4).await;
    let pid = child.id().unwrap().to_string();
    let status = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(status.success());
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    expect::exit_code(&output, 5);
    let written: Value = read_json(&report);
    assert_eq!(written["complete"], false);
    let total = written["overall"]["total"].as_u64().unwrap();
    assert!((4..40).contains(&total), "{total}");
    let rows_lines = std::fs::read_to_string(dir.join("report.rows.jsonl"))
        .unwrap()
        .lines()
        .count() as u64
        - 1;
    assert_eq!(rows_lines, total, "every finished row is in the rows file");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--resume"));
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn streaming_runs_keep_rows_on_disk_only() {
    let dir = temp_dir("cli-streaming");
    let report = dir.join("report.json");
    let mut command = eval_refund_fixture("2");
    command
        .args(["--max-cases", "20000", "--report"])
        .arg(&report);
    exits(&mut command, 0).await;
    let report: Value = read_json(&report);
    assert_eq!(report["rows"], serde_json::json!([]));
    assert_eq!(report["overall"]["total"], 2);
    assert_eq!(report["overall"]["correct"], 2);
    let rows = std::fs::read_to_string(dir.join("report.rows.jsonl")).unwrap();
    assert_eq!(rows.lines().count(), 3, "a header and two rows");
}
