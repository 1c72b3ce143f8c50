//! Sections 1 to 3: a torn last line, what `--resume` trusts, streaming from a pipe.

use super::*;

// ---- 1. A torn last line ----

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_mid_run_tears_a_line_that_resume_trims_twice_over() {
    let server = slow_fake().await;
    let (dir, cases) = cases_in("harden-torn", 40);
    let full = dir.join("full.json");
    exits(&mut eval_live(&server, &cases, &full), 0).await;

    // The file-size limit (ulimit -f, 1 KiB blocks in bash) is reached mid-run: the kernel
    // cuts the write that crosses it, then kills the process (SIGXFSZ).
    let report = dir.join("cut.json");
    let rows = dir.join("cut.rows.jsonl");
    let mut limited = in_bash("ulimit -f 6; exec \"$0\" \"$@\"");
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

    exits_saying(
        eval_live(&server, &cases, &report).arg("--resume"),
        0,
        "cut short",
    )
    .await;
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
    let output = exits(eval_live(&server, &cases, &report).arg("--resume"), 0).await;
    assert!(!stderr(&output).contains("cut short"));
    assert_eq!(
        server.request_count(),
        before,
        "no request for a finished run"
    );
    assert_eq!(comparable_rows(&report), comparable_rows(&full));
    // Only this session's reviews count in its rate (item 13): none ran.
    contains(&stdout(&output), "for 0 reviews");
    server.shutdown().await;
}

// ---- 2. --resume trusts what it reads ----

#[tokio::test(flavor = "multi_thread")]
async fn resume_refuses_rows_that_do_not_fit_the_cases_naming_the_line() {
    let (dir, cases) = cases_in("harden-rows-fit", 6);
    let report = dir.join("r.json");
    let rows = dir.join("r.rows.jsonl");
    exits(&mut eval_fake(&cases, &report), 0).await;
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
    let (dir, cases) = cases_in("harden-rows-backend", 4);
    let report = dir.join("r.json");
    exits(&mut eval_fake(&cases, &report), 0).await;
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
    let output = exits(eval_live(&server, &cases, &report).arg("--resume"), 2).await;
    let message = stderr(&output);
    contains(&message, "backend `fake`");
    contains(&message, "backend `systemone`");
    assert_eq!(server.request_count(), 0, "nothing was sent");

    // Same backend, another model.
    let mut other = eval_fake(&cases, &report);
    other.args(["--resume", "--model", "jev-preview"]);
    let message = stderr(&exits(&mut other, 2).await);
    contains(&message, "model `jev-latest`");
    contains(&message, "model `jev-preview`");
    server.shutdown().await;
}

// ---- 3. Streaming from a pipe ----

#[tokio::test(flavor = "multi_thread")]
async fn streaming_from_a_pipe_is_refused_before_anything_is_sent() {
    let server = slow_fake().await;
    let (_dir, cases) = cases_in("harden-pipe", 3);
    let mut command = in_bash(
        "exec \"$0\" eval --definition \"$1\" --cases <(cat \"$2\") --max-cases 20000 --base-url \"$3\"",
    );
    command
        .arg(example("refund/definition.toml"))
        .arg(&cases)
        .arg(server.url())
        .env("TYPESAFE_API_KEY", "test-key-not-secret");
    exits_saying(&mut command, 2, "must be a regular file").await;
    assert_eq!(server.request_count(), 0);

    // Without streaming, a pipe is read once and every case runs.
    let mut command = eval_offline(&example("refund/definition.toml"), Path::new("/dev/stdin"));
    command.stdin(std::fs::File::open(&cases).unwrap());
    let output = exits(&mut command, 0).await;
    contains(&stdout(&output), "for 3 reviews");
    server.shutdown().await;
}
