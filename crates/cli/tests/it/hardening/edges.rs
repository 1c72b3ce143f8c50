//! Sections 9 and 13: replay picks its model, and the sharp edges.

use super::*;
use jevjudge_test_support::expect::contains_of;

// ---- 9. Replay picks its model ----

#[tokio::test(flavor = "multi_thread")]
async fn replay_uses_the_recordings_only_model_and_refuses_one_it_does_not_hold() {
    let dir = temp_dir("harden-replay-model");
    let report = dir.join("r.json");
    let mut command = eval_sms_replay(&example("sms-spam/definition.toml"));
    command.arg("--report").arg(&report);
    exits(&mut command, 0).await;
    let json: Value = read_json(&report);
    assert_eq!(json["overall"]["total"], 150);
    assert_eq!(json["overall"]["errors"], 0, "no --model needed");

    std::fs::remove_file(&report).unwrap();
    command.args(["--model", "jev-latest"]);
    let output = exits(&mut command, 2).await;
    contains(&stderr(&output), "--model `jev-latest`");
    contains(&stderr(&output), "it holds `jev-1.13.0`");
    assert!(!report.exists(), "nothing ran");

    let mut judge = replay_refund(&example("refund/fixtures/supported.jevl"));
    judge.args(["--model", "jev-preview"]);
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
    let (dir, cases) = cases_in("harden-pipe-closed", 4);
    let report = dir.join("r.json");
    exits(&mut eval_fake(&cases, &report), 0).await;
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
        let message = bash_stderr(&format!(
            "(sleep 0.3; \"$0\" {command}; echo \"exit $?\" >&2) | true"
        ))
        .await;
        contains_of(&command, &message, "exit 0");
    }
}

// Not a closed pipe but a full device: what was printed is lost, so the command must not exit 0.
#[tokio::test(flavor = "multi_thread")]
async fn a_full_standard_output_is_not_success() {
    let (dir, cases) = cases_in("stdout-full", 4);
    let report = dir.join("r.json");
    exits(&mut eval_fake(&cases, &report), 0).await;
    for command in [
        format!("report {}", report.display()),
        format!("calibrate --json --report {}", report.display()),
    ] {
        let message = bash_stderr(&format!(
            "\"$0\" {command} > /dev/full; echo \"exit $?\" >&2"
        ))
        .await;
        contains_of(&command, &message, "cannot write to standard output");
        contains_of(&command, &message, "exit 2");
    }
    // The same after reviews were sent: exit 8, not "nothing was sent".
    let command = format!(
        "eval --fake --definition {} --cases {}",
        example("refund/definition.toml").display(),
        cases.display()
    );
    let message = bash_stderr(&format!(
        "\"$0\" {command} > /dev/full; echo \"exit $?\" >&2"
    ))
    .await;
    contains_of(&command, &message, "cannot write to standard output");
    contains_of(&command, &message, "exit 8");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_pasted_into_api_key_env_is_not_echoed() {
    let mut command = judge_refund(&[]);
    command.args(["--api-key-env", "sk-live-0123456789abcdefSECRET"]);
    let output = exits(&mut command, 2).await;
    assert!(
        !stderr(&output).contains("0123456789abcdefSECRET"),
        "{}",
        stderr(&output)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn calibrate_version_means_the_program_version() {
    let output = exits(jevjudge().args(["calibrate", "--version"]), 0).await;
    contains(&stdout(&output), env!("CARGO_PKG_VERSION"));
    let help = run(jevjudge().args(["calibrate", "--help"])).await;
    contains(&stdout(&help), "--new-version");
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
    let mut command = eval_offline(&example("refund/definition.toml"), &fifo);
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
    expect::exit_code(&output, 0);
    contains(&stdout(&output), "for 3 reviews");
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
    let output = exits(&mut script, 2).await;
    contains(&stdout(&output), "no state: give --state FILE.json");
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
    contains(&stderr(&output), "changed while the run read it");
    server.shutdown().await;
}
