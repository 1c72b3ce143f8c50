//! Sections 7 and 8: outputs, and failures you can see.

use super::*;

// ---- 7. Outputs ----

#[tokio::test(flavor = "multi_thread")]
async fn outputs_write_through_symlinks_and_devices_and_are_checked_first() {
    let server = slow_fake().await;
    let (dir, cases) = cases_in("harden-outputs", 3);
    // A symlinked report: the link stays, its target gets the report.
    let target = dir.join("target.json");
    std::fs::write(&target, "old").unwrap();
    let link = dir.join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let mut command = eval_fake(&cases, &link);
    command.arg("--markdown").arg("/dev/stdout");
    let output = exits(&mut command, 0).await;
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let written: Value = read_json(&target);
    assert_eq!(written["overall"]["total"], 3);
    // /dev/stdout was written through (into the captured pipe), not replaced.
    contains(&stdout(&output), "## jevjudge:");

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
    let output = exits(&mut command, 2).await;
    contains(&stderr(&output), "--report");
    contains(&stderr(&output), "missing/r.json");
    let mut command = eval_live(&server, &cases, &dir.join("r.json"));
    command.arg("--junit").arg(dir.join("nope/j.xml"));
    exits_saying(&mut command, 2, "--junit").await;
    assert_eq!(server.request_count(), 0, "nothing was sent");

    // --record is created readable by its owner only.
    let record = dir.join("audit.jevl");
    let mut command = eval_live(&server, &cases, &dir.join("r2.json"));
    command.arg("--record").arg(&record);
    exits(&mut command, 0).await;
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&record).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    server.shutdown().await;
}

// Reports keep the mode a new file gets (0666 less the umask), as before they were written
// through a temporary file; only exports of state text are private.
#[tokio::test(flavor = "multi_thread")]
async fn a_report_gets_the_mode_a_new_file_gets() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, cases) = cases_in("harden-report-mode", 2);
    let report = dir.join("r.json");
    exits(&mut eval_fake(&cases, &report), 0).await;
    // The binary inherits this process's umask: a file made here shows what it allows.
    let probe = dir.join("probe");
    std::fs::write(&probe, "").unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&report), mode(&probe));
    // Replacing an existing report keeps that rule too.
    exits(eval_fake(&cases, &report).arg("--overwrite"), 0).await;
    assert_eq!(mode(&report), mode(&probe));
}

// Exit 2 says nothing was sent. A report that cannot be written once the reviews ran is exit
// 8: the rows file still holds what the run paid for.
#[tokio::test(flavor = "multi_thread")]
async fn a_report_that_cannot_be_written_after_a_full_run_exits_8() {
    let server = slow_fake().await;
    let (dir, cases) = cases_in("harden-exit-8", 3);
    let rows = dir.join("rows.jsonl");
    // /dev/full opens for writing (checked before the run) and refuses every write.
    let mut command = eval_live(&server, &cases, Path::new("/dev/full"));
    command.arg("--rows").arg(&rows);
    let output = exits(&mut command, 8).await;
    contains(&stderr(&output), "cannot write /dev/full");
    assert_eq!(server.request_count(), 3, "every review was sent");
    let kept = std::fs::read_to_string(&rows).unwrap();
    assert_eq!(kept.lines().count(), 4, "the header and three rows: {kept}");
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
    exits(&mut command, 0).await;
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(!text.contains("<!--"), "{text}");
    assert!(text.contains(r"\<\!-- hidden \| \*x\*"), "{text}");
}

// ---- 8. Failures you can see ----

#[tokio::test(flavor = "multi_thread")]
async fn a_run_in_which_every_review_errored_is_not_exit_0_and_says_why() {
    let (dir, cases) = cases_in("harden-all-errors", 5);
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
    let output = exits(&mut command, 4).await;
    contains(&stdout(&output), "errors: BACKEND/not_recorded 5");
    let message = stderr(&output);
    contains(&message, "every review errored");
    contains(&message, "hint: 5 of 5 reviews errored");
    let json: Value = read_json(&report);
    assert_eq!(json["overall"]["error_kinds"]["BACKEND/not_recorded"], 5);
    contains(
        &std::fs::read_to_string(&md).unwrap(),
        "| BACKEND/not\\_recorded | 5 |",
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
    let (dir, cases) = cases_in("harden-auth", 3);
    let mut command = jevjudge();
    eval_args(&mut command, &cases, &dir.join("r.json"));
    command
        .args(["--base-url", &server.url(), "--api-key-env", "MY_JEV_KEY"])
        .env("MY_JEV_KEY", "a-wrong-key");
    // A refused key stops the run: exit 6, the rest not run.
    let message = stderr(&exits(&mut command, 6).await);
    contains(&message, "$MY_JEV_KEY");
    assert!(!message.contains("a-wrong-key"), "{message}");
    server.shutdown().await;
}
