//! Issue 9's hardening, shown with the real `jevjudge` binary: against real HTTP (an in-process
//! `jevjudge_fake::FakeServer` on 127.0.0.1) or offline (`--fake`, `--replay`). Each test is
//! named after the defect it shows gone (docs/hardening.md).

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use jevjudge_fake::FakeServer;
use serde_json::Value;
use tokio::process::Command;

use jevjudge_test_support::{command, example, read_json, run, stderr, stdout, temp_dir};

use crate::{JEVJUDGE, exits_saying, fake_with_key, fake_with_latency, jevjudge};

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

async fn slow_fake() -> FakeServer {
    fake_with_latency(20).await
}

// ---- 1. A torn last line ----

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_mid_run_tears_a_line_that_resume_trims_twice_over() {
    let server = slow_fake().await;
    let dir = temp_dir("harden-torn");
    let cases = cases(&dir, 40);
    let full = dir.join("full.json");
    let output = run(&mut eval_live(&server, &cases, &full)).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));

    // The file-size limit (ulimit -f, 1 KiB blocks in bash) is reached mid-run: the kernel
    // cuts the write that crosses it, then kills the process (SIGXFSZ).
    let report = dir.join("cut.json");
    let rows = dir.join("cut.rows.jsonl");
    let mut limited = command("bash");
    limited.args(["-c", "ulimit -f 6; exec \"$0\" \"$@\"", JEVJUDGE]);
    eval_args(&mut limited, &cases, &report);
    limited
        .args(["--base-url", &server.url()])
        .env("TYPESAFE_API_KEY", "test-key-not-secret");
    let output = run(&mut limited).await;
    assert_ne!(output.status.code(), Some(0), "the limit stopped the run");
    let mut text = std::fs::read_to_string(&rows).unwrap();
    assert_eq!(text.len(), 6 * 1024, "the rows file filled the limit");
    if text.ends_with('\n') {
        // The cut fell exactly between two lines (unlikely): tear one by hand.
        text.push_str(r#"{"index":39,"row":{"scen"#);
        std::fs::write(&rows, &text).unwrap();
    }
    let whole_lines = text.lines().count() - 1;
    assert!(whole_lines < 40, "{whole_lines}");

    let mut first = eval_live(&server, &cases, &report);
    first.arg("--resume");
    exits_saying(&mut first, 0, "cut short").await;
    let after = std::fs::read_to_string(&rows).unwrap();
    assert!(after.ends_with('\n'));
    for (number, line) in after.lines().enumerate() {
        assert!(
            serde_json::from_str::<Value>(line).is_ok(),
            "line {} is whole JSON: {line}",
            number + 1
        );
    }
    assert_eq!(after.lines().count(), 41, "a header and one row per case");

    // Resuming again finds a clean, complete file: nothing to run, the same report.
    let before = server.request_count();
    let mut second = eval_live(&server, &cases, &report);
    second.arg("--resume");
    let output = run(&mut second).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(!stderr(&output).contains("cut short"));
    assert_eq!(
        server.request_count(),
        before,
        "no request for a finished run"
    );
    assert_eq!(comparable_rows(&report), comparable_rows(&full));
    // Only this session's reviews count in its rate (item 13): none ran.
    assert!(
        stdout(&output).contains("for 0 reviews"),
        "{}",
        stdout(&output)
    );
    server.shutdown().await;
}

// ---- 2. --resume trusts what it reads ----

#[tokio::test(flavor = "multi_thread")]
async fn resume_refuses_rows_that_do_not_fit_the_cases_naming_the_line() {
    let dir = temp_dir("harden-rows-fit");
    let cases = cases(&dir, 6);
    let report = dir.join("r.json");
    let rows = dir.join("r.rows.jsonl");
    let output = run(&mut eval_fake(&cases, &report)).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let good = std::fs::read_to_string(&rows).unwrap();

    // A row whose id is not a case.
    let stranger = good.replacen("\"id\":\"c03\"", "\"id\":\"zz\"", 1);
    std::fs::write(&rows, &stranger).unwrap();
    let line = 1 + stranger.lines().position(|l| l.contains("\"zz\"")).unwrap();
    let mut resume = eval_fake(&cases, &report);
    resume.arg("--resume");
    exits_saying(
        &mut resume,
        2,
        &format!("r.rows.jsonl:{line}: row `zz` is not one of the cases"),
    )
    .await;

    // A row whose index is not its case's.
    let moved = good.replacen("{\"index\":3,", "{\"index\":4,", 1);
    assert_ne!(moved, good);
    std::fs::write(&rows, &moved).unwrap();
    exits_saying(
        &mut resume,
        2,
        "row `c03` has index 4 but that case is number 3",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_refuses_another_backend_or_model_naming_both() {
    let server = slow_fake().await;
    let dir = temp_dir("harden-rows-backend");
    let cases = cases(&dir, 4);
    let report = dir.join("r.json");
    let output = run(&mut eval_fake(&cases, &report)).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(dir.join("r.rows.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (header["backend"].as_str(), header["model"].as_str()),
        (Some("fake"), Some("jev-latest"))
    );

    // A --fake run resumed live.
    let mut live = eval_live(&server, &cases, &report);
    live.arg("--resume");
    let output = run(&mut live).await;
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("backend `fake`") && message.contains("backend `systemone`"),
        "{message}"
    );
    assert_eq!(server.request_count(), 0, "nothing was sent");

    // Same backend, another model.
    let mut other = eval_fake(&cases, &report);
    other.args(["--resume", "--model", "jev-preview"]);
    let output = run(&mut other).await;
    assert_eq!(output.status.code(), Some(2));
    let message = stderr(&output);
    assert!(
        message.contains("model `jev-latest`") && message.contains("model `jev-preview`"),
        "{message}"
    );
    server.shutdown().await;
}

// ---- 3. Streaming from a pipe ----

#[tokio::test(flavor = "multi_thread")]
async fn streaming_from_a_pipe_is_refused_before_anything_is_sent() {
    let server = slow_fake().await;
    let dir = temp_dir("harden-pipe");
    let cases = cases(&dir, 3);
    let mut command = command("bash");
    command
        .args([
            "-c",
            "exec \"$0\" eval --definition \"$1\" --cases <(cat \"$2\") --max-cases 20000 --base-url \"$3\"",
            JEVJUDGE,
        ])
        .arg(example("refund/definition.toml"))
        .arg(&cases)
        .arg(server.url())
        .env("TYPESAFE_API_KEY", "test-key-not-secret");
    exits_saying(&mut command, 2, "must be a regular file").await;
    assert_eq!(server.request_count(), 0);

    // Without streaming, a pipe is read once and every case runs.
    let mut command = jevjudge();
    command
        .args(["eval", "--fake", "--definition"])
        .arg(example("refund/definition.toml"))
        .args(["--cases", "/dev/stdin"])
        .stdin(std::fs::File::open(&cases).unwrap());
    let output = run(&mut command).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("for 3 reviews"),
        "{}",
        stdout(&output)
    );
    server.shutdown().await;
}

// ---- 4. Bounded reads ----

#[tokio::test(flavor = "multi_thread")]
async fn endless_inputs_stop_at_the_cap_naming_it_and_its_flag() {
    // /dev/zero as cases, records and definition: refused at the caps, never out of memory.
    let mut command = jevjudge();
    command
        .args(["eval", "--fake", "--definition"])
        .arg(example("refund/definition.toml"))
        .args(["--cases", "/dev/zero", "--max-line-bytes", "1000000"]);
    exits_saying(
        &mut command,
        2,
        "longer than the cap of 1000000 bytes (raise it with --max-line-bytes)",
    )
    .await;

    let mut command = jevjudge();
    command
        .args(["judge", "--definition"])
        .arg(example("refund/definition.toml"))
        .arg("--state")
        .arg(example("refund/state.json"))
        .args(["--replay", "/dev/zero"]);
    exits_saying(&mut command, 2, "--max-line-bytes").await;

    let dir = temp_dir("harden-caps");
    let definition = dir.join("zero.toml");
    std::os::unix::fs::symlink("/dev/zero", &definition).unwrap();
    let mut command = jevjudge();
    command
        .args([
            "judge",
            "--fake",
            "--max-input-bytes",
            "100000",
            "--definition",
        ])
        .arg(&definition)
        .arg("--state")
        .arg(example("refund/state.json"));
    exits_saying(
        &mut command,
        2,
        "cap of 100000 bytes (raise it with --max-input-bytes)",
    )
    .await;

    // A whole cases file over the in-memory cap.
    let cases = cases(&dir, 30);
    let mut command = jevjudge();
    command
        .args(["eval", "--fake", "--max-input-bytes", "500", "--definition"])
        .arg(example("refund/definition.toml"))
        .arg("--cases")
        .arg(&cases);
    exits_saying(&mut command, 2, "--max-input-bytes").await;
}

// ---- 5. Inputs that load but cannot work ----

#[tokio::test(flavor = "multi_thread")]
async fn inputs_that_cannot_work_are_refused_at_load() {
    let dir = temp_dir("harden-load");
    let refund = std::fs::read_to_string(example("refund/definition.toml")).unwrap();
    let start = refund.find("instructions = ").unwrap();
    let end = start + refund[start..].find('\n').unwrap();
    let blank = format!(
        "{}instructions = \"  \"{}",
        &refund[..start],
        &refund[end..]
    );
    let cases_path = cases(&dir, 2);
    let checks: Vec<(String, Option<String>, &str)> = vec![
        (
            blank,
            None,
            "criteria[0].question.instructions: must not be empty or only whitespace",
        ),
        (
            refund.replace("[[criteria]]", "[[criterion]]"),
            None,
            "the table is `[[criteria]]`, plural",
        ),
        (
            refund.clone(),
            Some(r#"{"scenario":"s","id":" ","state":"x","expected_pass":true}"#.to_owned()),
            "field `id`: must not be empty",
        ),
        (
            refund.clone(),
            Some(r#"{"scenario":"s","id":"a\u0007b","state":"x","expected_pass":true}"#.to_owned()),
            "field `id`: must not hold control characters (found U+0007)",
        ),
        (
            refund.clone(),
            Some(
                r#"{"scenario":"s","id":"a","state":"x","expected_pass":true,"expected_pass":false}"#
                    .to_owned(),
            ),
            "the key `expected_pass` appears twice",
        ),
        (
            refund.clone(),
            Some("{\n  \"scenario\": \"s\",\n  \"id\": \"a\"\n}".to_owned()),
            "one JSON object per line",
        ),
        (refund.clone(), Some(String::new()), "no cases: the file is empty"),
    ];
    for (i, (definition, cases_text, expected)) in checks.into_iter().enumerate() {
        let definition_path = dir.join(format!("d{i}.toml"));
        std::fs::write(&definition_path, definition).unwrap();
        let cases = match cases_text {
            Some(text) => {
                let path = dir.join(format!("c{i}.jsonl"));
                std::fs::write(&path, text).unwrap();
                path
            }
            None => cases_path.clone(),
        };
        let mut command = jevjudge();
        command
            .args(["eval", "--fake", "--definition"])
            .arg(&definition_path)
            .arg("--cases")
            .arg(&cases);
        let output = run(&mut command).await;
        assert_eq!(
            output.status.code(),
            Some(2),
            "{expected}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(expected),
            "{expected}: {}",
            stderr(&output)
        );
    }

    // 40,000 criteria: refused at once, naming the cap (the duplicate check is linear).
    let mut huge = String::from("version = \"v\"\n");
    for i in 0..40_000 {
        huge.push_str(&format!(
            "[[criteria]]\nid = \"c{i}\"\nexpected = true\nfail_at_or_below = 0.2\npass_at_or_above = 0.8\nquestion = {{ instructions = \"q\" }}\n"
        ));
    }
    let path = dir.join("huge.toml");
    std::fs::write(&path, huge).unwrap();
    let mut command = jevjudge();
    command
        .args(["judge", "--fake", "--definition"])
        .arg(&path)
        .arg("--state")
        .arg(example("refund/state.json"));
    exits_saying(
        &mut command,
        2,
        "40000 criteria; a definition holds at most 1000",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn record_files_with_bad_ids_times_or_conflicts_are_refused() {
    let dir = temp_dir("harden-jevl");
    let good = std::fs::read_to_string(example("refund/fixtures/supported.jevl")).unwrap();
    let good = good.trim_end();
    let record: Value = serde_json::from_str(good).unwrap();
    let with = |field: &str, value: Value| {
        let mut r = record.clone();
        r[field] = value;
        r.to_string()
    };
    let mut other_answers = record.clone();
    let answers = other_answers["answers"].as_object_mut().unwrap();
    for answer in answers.values_mut() {
        answer["noul"] = serde_json::json!(0.01);
    }
    let checks = [
        (
            with("id", "x".into()),
            ":1: field `id` must be a `sha256:` digest",
        ),
        (
            with("ts", "yesterday".into()),
            ":1: field `ts` must be an RFC 3339 time",
        ),
        (
            format!("{good}\n{}", other_answers),
            "records 1 and 2 answer the same request",
        ),
    ];
    for (i, (text, expected)) in checks.into_iter().enumerate() {
        let path = dir.join(format!("r{i}.jevl"));
        std::fs::write(&path, text + "\n").unwrap();
        let mut command = jevjudge();
        command
            .args(["judge", "--definition"])
            .arg(example("refund/definition.toml"))
            .arg("--state")
            .arg(example("refund/state.json"))
            .arg("--replay")
            .arg(&path);
        let output = run(&mut command).await;
        assert_eq!(
            output.status.code(),
            Some(2),
            "{expected}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains(expected),
            "{expected}: {}",
            stderr(&output)
        );
    }
}

// ---- 6. Totals that wrap ----

#[tokio::test(flavor = "multi_thread")]
async fn a_price_that_is_not_a_finite_number_is_exit_2() {
    let dir = temp_dir("harden-price");
    let cases = cases(&dir, 2);
    for price in ["NaN", "inf", "-1"] {
        let mut command = eval_fake(&cases, &dir.join("r.json"));
        command.arg(format!("--price-per-million-input={price}"));
        let output = run(&mut command).await;
        assert_eq!(
            output.status.code(),
            Some(2),
            "{price}: {}",
            stderr(&output)
        );
        assert!(
            stderr(&output).contains("--price-per-million-input"),
            "{price}"
        );
    }
}

// ---- 7. Outputs ----

#[tokio::test(flavor = "multi_thread")]
async fn outputs_write_through_symlinks_and_devices_and_are_checked_first() {
    let server = slow_fake().await;
    let dir = temp_dir("harden-outputs");
    let cases = cases(&dir, 3);
    // A symlinked report: the link stays, its target gets the report.
    let target = dir.join("target.json");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let mut command = eval_fake(&cases, &link);
    command.arg("--markdown").arg("/dev/stdout");
    let output = run(&mut command).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let written: Value = read_json(&target);
    assert_eq!(written["overall"]["total"], 3);
    // /dev/stdout was written through (into the captured pipe), not replaced.
    assert!(
        stdout(&output).contains("## jevjudge:"),
        "{}",
        stdout(&output)
    );

    // Standard output redirected to a file: the Markdown and the summary both land in it, and
    // /dev/stdout stays what it was (the old temp-and-rename replaced it, as root, with a file).
    let dev_stdout_was_link =
        std::fs::symlink_metadata("/dev/stdout").is_ok_and(|m| m.file_type().is_symlink());
    let captured = dir.join("stdout.txt");
    let mut command = eval_fake(&cases, &dir.join("r3.json"));
    command
        .arg("--markdown")
        .arg("/dev/stdout")
        .stdout(std::fs::File::create(&captured).unwrap());
    let status = command.status().await.unwrap();
    assert_eq!(status.code(), Some(0));
    let text = std::fs::read_to_string(&captured).unwrap();
    assert!(
        text.contains("## jevjudge:") && text.contains("overall"),
        "{text}"
    );
    assert_eq!(
        std::fs::symlink_metadata("/dev/stdout").is_ok_and(|m| m.file_type().is_symlink()),
        dev_stdout_was_link
    );

    // An output into a missing directory: exit 2 naming that output, before any request.
    let mut command = eval_live(&server, &cases, &dir.join("missing/r.json"));
    let output = run(&mut command).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--report") && stderr(&output).contains("missing/r.json"),
        "{}",
        stderr(&output)
    );
    let mut command = eval_live(&server, &cases, &dir.join("r.json"));
    command.arg("--junit").arg(dir.join("nope/j.xml"));
    exits_saying(&mut command, 2, "--junit").await;
    assert_eq!(server.request_count(), 0, "nothing was sent");

    // --record is created readable by its owner only.
    let record = dir.join("audit.jevl");
    let mut command = eval_live(&server, &cases, &dir.join("r2.json"));
    command.arg("--record").arg(&record);
    let output = run(&mut command).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&record).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn markdown_escapes_scenario_names() {
    let dir = temp_dir("harden-md");
    let cases = dir.join("cases.jsonl");
    std::fs::write(
        &cases,
        "{\"scenario\":\"<!-- hidden | *x*\",\"id\":\"a\",\"state\":\"s\",\"expected_pass\":true}\n",
    )
    .unwrap();
    let md = dir.join("s.md");
    let mut command = eval_fake(&cases, &dir.join("r.json"));
    command.arg("--markdown").arg(&md);
    let output = run(&mut command).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(!text.contains("<!--"), "{text}");
    assert!(text.contains(r"\<\!-- hidden \| \*x\*"), "{text}");
}

// ---- 8. Failures you can see ----

#[tokio::test(flavor = "multi_thread")]
async fn a_run_in_which_every_review_errored_is_not_exit_0_and_says_why() {
    let dir = temp_dir("harden-all-errors");
    let cases = cases(&dir, 5);
    let report = dir.join("r.json");
    let md = dir.join("r.md");
    let html = dir.join("r.html");
    let mut command = jevjudge();
    eval_args(&mut command, &cases, &report);
    command
        .arg("--replay")
        .arg(example("refund/fixtures/cases.jevl"))
        .args(["--max-errors", "100"])
        .arg("--markdown")
        .arg(&md)
        .arg("--html")
        .arg(&html);
    let output = run(&mut command).await;
    assert_eq!(output.status.code(), Some(4), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("errors: BACKEND/not_recorded 5"),
        "{}",
        stdout(&output)
    );
    let message = stderr(&output);
    assert!(message.contains("every review errored"), "{message}");
    assert!(
        message.contains("hint: 5 of 5 reviews errored"),
        "{message}"
    );
    let json: Value = read_json(&report);
    assert_eq!(json["overall"]["error_kinds"]["BACKEND/not_recorded"], 5);
    assert!(
        std::fs::read_to_string(&md)
            .unwrap()
            .contains("| BACKEND/not\\_recorded | 5 |"),
        "{}",
        std::fs::read_to_string(&md).unwrap()
    );
    assert!(
        std::fs::read_to_string(&html)
            .unwrap()
            .contains("<td>BACKEND/not_recorded</td>")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn most_reviews_refused_by_the_key_names_the_key_variable() {
    let server = fake_with_key("the-right-key").await;
    let dir = temp_dir("harden-auth");
    let cases = cases(&dir, 3);
    let mut command = jevjudge();
    eval_args(&mut command, &cases, &dir.join("r.json"));
    command
        .args(["--base-url", &server.url(), "--api-key-env", "MY_JEV_KEY"])
        .env("MY_JEV_KEY", "a-wrong-key");
    let output = run(&mut command).await;
    // A refused key stops the run (issue 11): exit 6, the rest not run.
    assert_eq!(output.status.code(), Some(6), "{}", stderr(&output));
    let message = stderr(&output);
    assert!(message.contains("$MY_JEV_KEY"), "{message}");
    assert!(!message.contains("a-wrong-key"), "{message}");
    server.shutdown().await;
}

// ---- 9. Replay picks its model ----

#[tokio::test(flavor = "multi_thread")]
async fn replay_uses_the_recordings_only_model_and_refuses_one_it_does_not_hold() {
    let dir = temp_dir("harden-replay-model");
    let report = dir.join("r.json");
    let mut command = jevjudge();
    command
        .args(["eval", "--definition"])
        .arg(example("sms-spam/definition.toml"))
        .arg("--cases")
        .arg(example("sms-spam/cases.jsonl"))
        .arg("--replay")
        .arg(example("sms-spam/recordings.jevl"))
        .arg("--report")
        .arg(&report);
    let output = run(&mut command).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let json: Value = read_json(&report);
    assert_eq!(json["overall"]["total"], 150);
    assert_eq!(json["overall"]["errors"], 0, "no --model needed");

    std::fs::remove_file(&report).unwrap();
    command.args(["--model", "jev-latest"]);
    let output = run(&mut command).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--model `jev-latest`")
            && stderr(&output).contains("it holds `jev-1.13.0`"),
        "{}",
        stderr(&output)
    );
    assert!(!report.exists(), "nothing ran");

    let mut judge = jevjudge();
    judge
        .args(["judge", "--definition"])
        .arg(example("refund/definition.toml"))
        .arg("--state")
        .arg(example("refund/state.json"))
        .arg("--replay")
        .arg(example("refund/fixtures/supported.jevl"))
        .args(["--model", "jev-preview"]);
    exits_saying(&mut judge, 2, "`jev-latest`, `prescribed-guide-fixture`").await;

    let definitions = dir.join("definitions");
    std::fs::create_dir_all(&definitions).unwrap();
    std::fs::copy(
        example("refund/definition.toml"),
        definitions.join("refund.toml"),
    )
    .unwrap();
    let mut serve = jevjudge();
    serve
        .args(["serve", "--addr", "127.0.0.1:0", "--definitions"])
        .arg(&definitions)
        .arg("--replay")
        .arg(example("refund/fixtures/supported.jevl"))
        .args(["--model", "jev-preview"]);
    exits_saying(&mut serve, 2, "--model `jev-preview`").await;
}

// ---- 13. Sharp edges ----

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_pipe_ends_every_command_quietly() {
    let dir = temp_dir("harden-pipe-closed");
    let cases = cases(&dir, 4);
    let report = dir.join("r.json");
    let output = run(&mut eval_fake(&cases, &report)).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let definition = example("refund/definition.toml");
    let commands = [
        format!("compare --json {0} {0}", report.display()),
        format!("report {}", report.display()),
        format!("calibrate --json --report {}", report.display()),
        format!(
            "judge --fake --definition {} --state {}",
            definition.display(),
            example("refund/state.json").display()
        ),
        format!(
            "eval --fake --definition {} --cases {}",
            definition.display(),
            cases.display()
        ),
    ];
    for command in commands {
        // The reader (`true`) is gone before the binary writes: every write meets a closed pipe.
        let mut shell = jevjudge_test_support::command("bash");
        shell.args([
            "-c",
            &format!("(sleep 0.3; \"$0\" {command}; echo \"exit $?\" >&2) | true"),
            JEVJUDGE,
        ]);
        let output = run(&mut shell).await;
        let message = stderr(&output);
        assert!(!message.contains("panicked"), "{command}: {message}");
        assert!(
            message.contains("exit 0"),
            "{command} ended with its own status: {message}"
        );
    }
}

// Not a closed pipe but a full device: what was printed is lost, so the command must not exit 0.
#[tokio::test(flavor = "multi_thread")]
async fn a_full_standard_output_is_not_success() {
    let dir = temp_dir("stdout-full");
    let cases = cases(&dir, 4);
    let report = dir.join("r.json");
    let output = run(&mut eval_fake(&cases, &report)).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    for command in [
        format!("report {}", report.display()),
        format!("calibrate --json --report {}", report.display()),
    ] {
        let mut shell = jevjudge_test_support::command("bash");
        shell.args([
            "-c",
            &format!("\"$0\" {command} > /dev/full; echo \"exit $?\" >&2"),
            JEVJUDGE,
        ]);
        let output = run(&mut shell).await;
        let message = stderr(&output);
        assert!(!message.contains("panicked"), "{command}: {message}");
        assert!(
            message.contains("cannot write to standard output"),
            "{message}"
        );
        assert!(message.contains("exit 2"), "{command}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_pasted_into_api_key_env_is_not_echoed() {
    let mut command = jevjudge();
    command
        .args(["judge", "--definition"])
        .arg(example("refund/definition.toml"))
        .arg("--state")
        .arg(example("refund/state.json"))
        .args(["--api-key-env", "sk-live-0123456789abcdefSECRET"]);
    let output = run(&mut command).await;
    assert_eq!(output.status.code(), Some(2));
    assert!(
        !stderr(&output).contains("0123456789abcdefSECRET"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn calibrate_version_means_the_program_version() {
    let output = run(jevjudge().args(["calibrate", "--version"])).await;
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(stdout(&output).contains(env!("CARGO_PKG_VERSION")));
    let help = run(jevjudge().args(["calibrate", "--help"])).await;
    assert!(stdout(&help).contains("--new-version"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fifo_without_a_writer_does_not_block_forever() {
    let dir = temp_dir("harden-fifo");
    let fifo = dir.join("cases.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let mut command = jevjudge();
    command
        .args(["eval", "--fake", "--definition"])
        .arg(example("refund/definition.toml"))
        .arg("--cases")
        .arg(&fifo);
    exits_saying(&mut command, 2, "named pipe (FIFO) that nothing wrote to").await;

    // With a writer, the FIFO is read once, whole, even if the writer is already done.
    let source = cases(&dir, 3);
    let mut writer = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("cat {} > {}", source.display(), fifo.display()))
        .spawn()
        .unwrap();
    let output = run(&mut command).await;
    writer.wait().unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stdout(&output).contains("for 3 reviews"),
        "{}",
        stdout(&output)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn judge_on_a_terminal_without_state_says_so_instead_of_waiting() {
    // `script` (util-linux) gives the binary a terminal as standard input.
    let command = format!(
        "{} judge --fake --definition {}",
        JEVJUDGE,
        example("refund/definition.toml").display()
    );
    let mut script = jevjudge_test_support::command("script");
    script.args(["-qec", &command, "/dev/null"]);
    let output = run(&mut script).await;
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(
        stdout(&output).contains("no state: give --state FILE.json"),
        "{}",
        stdout(&output)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_streamed_file_that_changes_between_the_passes_fails_the_run() {
    let server = fake_with_latency(5).await;
    let dir = temp_dir("harden-changed");
    let path = dir.join("cases.jsonl");
    let padding = "x".repeat(1000);
    let mut text = String::new();
    for i in 0..200 {
        text.push_str(&format!(
            "{{\"scenario\":\"s\",\"id\":\"c{i:03}\",\"state\":{{\"n\":{i},\"p\":\"{padding}\"}},\"expected_pass\":true}}\n"
        ));
    }
    std::fs::write(&path, &text).unwrap();
    let report = dir.join("r.json");
    let mut command = eval_live(&server, &path, &report);
    command.args(["--max-cases", "20000"]);
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the run is under way, the last case's label changes in place (same length).
    let rows = dir.join("r.rows.jsonl");
    for _ in 0..400 {
        if std::fs::read_to_string(&rows).map_or(0, |t| t.lines().count()) > 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let changed = text.replacen(
        "\"id\":\"c199\",\"state\":{\"n\":199,",
        "\"id\":\"c199\",\"state\":{\"n\":999,",
        1,
    );
    assert_eq!(changed.len(), text.len());
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.seek(SeekFrom::Start(0)).unwrap();
        file.write_all(changed.as_bytes()).unwrap();
    }
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_ne!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("changed while the run read it"),
        "{}",
        stderr(&output)
    );
    server.shutdown().await;
}
