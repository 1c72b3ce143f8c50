//! The session on the sms-spam recording: resume after a torn line, streaming, and the
//! plan's checks, through the library alone.

use std::{path::PathBuf, time::Duration};

use jevjudge_judge::{Definition, Judge, ReplayBackend, Status};

use super::*;
use crate::{JevEvaluator, test_support::sms_spam};

fn definition(file: &str) -> Definition {
    Definition::from_path(sms_spam(file)).unwrap()
}

fn evaluator() -> JevEvaluator<ReplayBackend> {
    let backend = ReplayBackend::open(&sms_spam("recordings.jevl"), "jev-1.13.0").unwrap();
    JevEvaluator::new(
        Judge::new(backend, Duration::from_secs(2)).unwrap(),
        definition("definition.toml"),
    )
}

fn plan(rows: &std::path::Path, max_cases: Option<usize>) -> SessionPlan {
    SessionPlan {
        rows: Some(rows.to_owned()),
        ..SessionPlan::new(sms_spam("cases.jsonl"), max_cases)
    }
}

/// Runs `plan` to the end: the outcome and whether a torn line was found.
async fn run(plan: &SessionPlan, definition: &Definition) -> Result<(Outcome, bool), SessionError> {
    let cases = plan.read_cases(definition, None)?;
    let mut session = Session::open(plan, definition, cases, "replay", "jev-1.13.0")?;
    let torn = session.torn_tail();
    let ran = session
        .run(&plan.runner(4)?, &evaluator(), (), std::future::pending())
        .await?;
    assert!(session.close_rows_file().is_none());
    Ok((session.finish(ran)?, torn))
}

fn statuses(rows: &[Row]) -> Vec<(String, Status)> {
    rows.iter()
        .map(|row| (row.id.clone(), row.verdict.status))
        .collect()
}

/// Keeps the rows file's header and first `rows` rows, then half of the next line (a write
/// cut short by a crash).
fn tear(path: &std::path::Path, rows: usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = lines[..=rows].join("\n");
    kept.push('\n');
    kept.push_str(&lines[rows + 1][..20]);
    std::fs::write(path, kept).unwrap();
}

#[tokio::test]
async fn a_resumed_session_cuts_the_torn_line_and_runs_only_the_missing_cases() {
    let dir = jevjudge_test_support::temp_dir("session-resume");
    let rows = dir.join("run.rows.jsonl");
    let definition = definition("definition.toml");
    let (whole, _) = run(&plan(&rows, None), &definition).await.unwrap();
    assert_eq!(whole.rows.len(), 150);

    tear(&rows, 100);
    let resumed = SessionPlan {
        resume: true,
        ..plan(&rows, None)
    };
    let cases = resumed.read_cases(&definition, None).unwrap();
    let session = Session::open(&resumed, &definition, cases, "replay", "jev-1.13.0").unwrap();
    assert!(session.torn_tail());
    assert_eq!(session.to_run(), 50);
    drop(session);

    let (outcome, _) = run(&resumed, &definition).await.unwrap();
    assert_eq!(outcome.reviews_this_run, 50);
    assert_eq!(outcome.cases, 150);
    assert_eq!(statuses(&outcome.rows), statuses(&whole.rows));
    assert_eq!(
        (outcome.overall.correct, outcome.overall.abstained),
        (whole.overall.correct, whole.overall.abstained)
    );
    // The torn line is gone: header + 150 whole rows.
    let text = std::fs::read_to_string(&rows).unwrap();
    assert!(text.ends_with('\n'));
    assert_eq!(text.lines().count(), 151);
}

#[tokio::test]
async fn a_streaming_session_keeps_no_rows_and_a_resumed_one_reads_them_back() {
    let dir = jevjudge_test_support::temp_dir("session-streaming");
    let rows = dir.join("run.rows.jsonl");
    let definition = definition("definition.toml");
    let streaming = plan(&rows, Some(MAX_CASES + 1));
    assert!(streaming.streaming);
    let (first, _) = run(&streaming, &definition).await.unwrap();
    assert!(first.rows.is_empty());
    assert_eq!(first.overall.total, 150);

    tear(&rows, 30);
    let resumed = SessionPlan {
        resume: true,
        ..streaming
    };
    let (outcome, torn) = run(&resumed, &definition).await.unwrap();
    assert!(torn);
    assert!(outcome.rows.is_empty());
    assert_eq!(outcome.reviews_this_run, 120);
    assert_eq!(
        (
            outcome.overall.total,
            outcome.overall.correct,
            outcome.overall.incorrect,
            outcome.overall.abstained
        ),
        (150, 123, 2, 25)
    );
}

/// The summaries of the rows a rows file holds (the last row of each case counts), in input
/// order: what a resumed run must report.
fn summaries_of_file(path: &std::path::Path) -> (Summary, Vec<(String, Summary)>) {
    let mut rows: Vec<(usize, Row)> = crate::rows_file::read_rows(path)
        .unwrap()
        .rows
        .into_values()
        .collect();
    rows.sort_by_key(|(index, _)| *index);
    let rows: Vec<Row> = rows.into_iter().map(|(_, row)| row).collect();
    summarize(&rows, None)
}

#[tokio::test]
async fn a_resumed_streaming_session_reports_the_rows_its_file_holds() {
    let dir = jevjudge_test_support::temp_dir("session-streaming-resume-figures");
    let rows = dir.join("run.rows.jsonl");
    let definition = definition("definition.toml");
    let streaming = plan(&rows, Some(MAX_CASES + 1));
    run(&streaming, &definition).await.unwrap();
    tear(&rows, 77);
    let resumed = SessionPlan {
        resume: true,
        ..streaming
    };
    let (outcome, _) = run(&resumed, &definition).await.unwrap();
    assert_eq!(outcome.reviews_this_run, 73);
    // Every figure, review times included, is the one of the file's 150 rows.
    let (overall, scenarios) = summaries_of_file(&rows);
    assert_eq!(overall.total, 150);
    assert_eq!(outcome.overall, overall);
    assert_eq!(outcome.scenarios, scenarios);
}

#[tokio::test]
async fn a_streaming_resume_that_retries_errors_counts_only_each_cases_last_row() {
    let dir = jevjudge_test_support::temp_dir("session-streaming-retry");
    let definition = definition("definition.toml");
    // Three cases the recording does not have: their rows are ERROR (not recorded).
    let text = std::fs::read_to_string(sms_spam("cases.jsonl")).unwrap();
    let mut cases = String::new();
    for (number, line) in text.lines().enumerate() {
        cases.push_str(line);
        cases.push('\n');
        if number % 50 == 7 {
            let extra = line
                .replacen("\"id\":\"", "\"id\":\"unrecorded-", 1)
                .replacen("\"message\":\"", "\"message\":\"never recorded ", 1);
            cases.push_str(&extra);
            cases.push('\n');
        }
    }
    let cases_path = dir.join("cases.jsonl");
    std::fs::write(&cases_path, cases).unwrap();
    let rows = dir.join("run.rows.jsonl");
    let streaming = SessionPlan {
        rows: Some(rows.clone()),
        ..SessionPlan::new(cases_path, Some(MAX_CASES + 1))
    };
    let (first, _) = run(&streaming, &definition).await.unwrap();
    assert_eq!((first.overall.total, first.overall.errors), (153, 3));
    let retry = SessionPlan {
        resume: true,
        retry_errors: true,
        ..streaming
    };
    // Twice: the second resume meets each errored case's two rows and keeps the last.
    for round in 1..=2 {
        let cases = retry.read_cases(&definition, None).unwrap();
        let session = Session::open(&retry, &definition, cases, "replay", "jev-1.13.0").unwrap();
        assert_eq!(session.to_run(), 3, "round {round}");
        drop(session);
        let (outcome, _) = run(&retry, &definition).await.unwrap();
        assert_eq!(outcome.reviews_this_run, 3);
        let (overall, scenarios) = summaries_of_file(&rows);
        assert_eq!((overall.total, overall.errors), (153, 3));
        assert_eq!(outcome.overall, overall, "round {round}");
        assert_eq!(outcome.scenarios, scenarios);
    }
    assert_eq!(
        std::fs::read_to_string(&rows).unwrap().lines().count(),
        1 + 153 + 6
    );
}

#[tokio::test]
async fn a_streaming_resume_names_a_row_that_is_not_its_cases_as_a_kept_one_does() {
    let dir = jevjudge_test_support::temp_dir("session-streaming-foreign-row");
    let rows = dir.join("run.rows.jsonl");
    let definition = definition("definition.toml");
    run(&plan(&rows, Some(MAX_CASES + 1)), &definition)
        .await
        .unwrap();
    let text = std::fs::read_to_string(&rows).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let line = |n: usize| lines[n - 1];
    let index = |l: &str| -> usize {
        serde_json::from_str::<serde_json::Value>(l).unwrap()["index"]
            .as_u64()
            .unwrap() as usize
    };
    let error = |edited: String, streaming: bool| {
        std::fs::write(&rows, &edited).unwrap();
        let plan = SessionPlan {
            resume: true,
            ..plan(&rows, if streaming { Some(MAX_CASES + 1) } else { None })
        };
        let cases = plan.read_cases(&definition, None).unwrap();
        Session::open(&plan, &definition, cases, "replay", "jev-1.13.0")
            .unwrap_err()
            .to_string()
    };
    // Line 5 claims an id no case has; line 9 another case's index.
    let (fifth, ninth) = (line(5), line(9));
    let renamed = text.replacen(
        fifth,
        &fifth.replacen("\"id\":\"sms-", "\"id\":\"not-sms-", 1),
        1,
    );
    let moved = text.replacen(
        ninth,
        &ninth.replacen(
            &format!("{{\"index\":{}", index(ninth)),
            &format!("{{\"index\":{}", index(ninth) + 1),
            1,
        ),
        1,
    );
    for (edited, at) in [(renamed, ":5"), (moved, ":9")] {
        let kept = error(edited.clone(), false);
        assert!(
            kept.contains(&format!("{}{at}: row `", rows.display())),
            "{kept}"
        );
        // The header names other cases only for a kept run's plan: compare the row's words.
        let streamed = error(edited, true);
        let problem = |e: &str| e.split(": row ").nth(1).unwrap_or_default().to_owned();
        assert_eq!(problem(&streamed), problem(&kept), "{streamed}");
        assert!(streamed.contains(&format!("{at}: row `")), "{streamed}");
    }
}

#[tokio::test]
async fn a_streaming_session_gives_the_figures_of_one_that_keeps_its_rows() {
    let dir = jevjudge_test_support::temp_dir("session-streaming-figures");
    let definition = definition("definition.toml");
    let figures = |mut summary: Summary| {
        // Review times differ from run to run; every other figure must not.
        (summary.p50_millis, summary.p95_millis) = (0.0, 0.0);
        summary
    };
    let (kept, _) = run(&plan(&dir.join("kept.rows.jsonl"), None), &definition)
        .await
        .unwrap();
    let (streamed, _) = run(
        &plan(&dir.join("streamed.rows.jsonl"), Some(MAX_CASES + 1)),
        &definition,
    )
    .await
    .unwrap();
    assert_eq!(figures(streamed.overall), figures(kept.overall));
    let names = |scenarios: &[(String, Summary)]| -> Vec<String> {
        scenarios.iter().map(|(name, _)| name.clone()).collect()
    };
    assert_eq!(names(&streamed.scenarios), names(&kept.scenarios));
    for ((_, s), (_, k)) in streamed.scenarios.into_iter().zip(kept.scenarios) {
        assert_eq!(figures(s), figures(k));
    }
}

#[test]
fn a_streamed_repeated_id_is_the_error_a_kept_one_gives() {
    let dir = jevjudge_test_support::temp_dir("session-streaming-repeat");
    let text = std::fs::read_to_string(sms_spam("cases.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // Line 151 repeats line 5's case; line 152 is not a case at all.
    let cases = dir.join("cases.jsonl");
    std::fs::write(&cases, format!("{text}{}\nnot json\n", lines[4])).unwrap();
    let definition = definition("definition.toml");
    let error = |max_cases| {
        let plan = SessionPlan::new(cases.clone(), max_cases);
        plan.read_cases(&definition, None).unwrap_err().to_string()
    };
    let kept = error(None);
    assert!(kept.contains(":151:") && kept.contains("line 5"), "{kept}");
    assert_eq!(error(Some(MAX_CASES + 1)), kept);
}

#[tokio::test]
async fn a_rows_file_of_another_definition_is_not_resumed() {
    let dir = jevjudge_test_support::temp_dir("session-mismatch");
    let rows = dir.join("run.rows.jsonl");
    run(&plan(&rows, None), &definition("definition.toml"))
        .await
        .unwrap();
    let resumed = SessionPlan {
        resume: true,
        ..plan(&rows, None)
    };
    let other = definition("definition-cut-0.5.toml");
    let cases = resumed.read_cases(&other, None).unwrap();
    let error = Session::open(&resumed, &other, cases, "replay", "jev-1.13.0").unwrap_err();
    assert!(matches!(error, SessionError::CannotResume(_)));
    assert!(
        error
            .to_string()
            .starts_with(&format!("{} cannot be resumed: ", rows.display())),
        "{error}"
    );
}

#[test]
fn resume_needs_a_rows_file() {
    let plan = SessionPlan {
        resume: true,
        ..SessionPlan::new(sms_spam("cases.jsonl"), None)
    };
    let definition = definition("definition.toml");
    let cases = plan.read_cases(&definition, None).unwrap();
    let error = Session::open(&plan, &definition, cases, "replay", "m").unwrap_err();
    assert!(matches!(error, SessionError::ResumeWithoutRows), "{error}");
}

#[test]
fn a_plan_streams_above_the_in_memory_limit_and_names_the_rows_file() {
    let cases = PathBuf::from("cases.jsonl");
    assert!(!SessionPlan::new(cases.clone(), None).streaming);
    assert!(!SessionPlan::new(cases.clone(), Some(MAX_CASES)).streaming);
    let plan = SessionPlan::new(cases, Some(MAX_CASES + 1));
    assert!(plan.streaming);
    assert_eq!(plan.case_limit, MAX_CASES + 1);
    assert_eq!(
        rows_path_for(std::path::Path::new("out/run.json")),
        PathBuf::from("out/run.rows.jsonl")
    );
}

#[test]
fn a_streaming_plan_refuses_cases_that_cannot_be_read_twice() {
    let dir = jevjudge_test_support::temp_dir("session-not-a-file");
    let plan = SessionPlan::new(dir.to_path_buf(), Some(MAX_CASES + 1));
    let error = plan.check_cases_file().unwrap_err();
    assert!(
        error.to_string().contains("must be a regular file"),
        "{error}"
    );
    assert!(
        SessionPlan::new(dir.to_path_buf(), None)
            .check_cases_file()
            .is_ok()
    );
}

#[test]
fn the_runner_errors_say_which_setting_and_name_no_flag() {
    let plan = SessionPlan::new(PathBuf::from("c.jsonl"), None);
    let error = |plan: &SessionPlan, concurrency| plan.runner(concurrency).unwrap_err();
    let concurrency = error(&plan, 0);
    assert!(matches!(concurrency, SessionError::Concurrency(_)));
    assert_eq!(
        concurrency.to_string(),
        "concurrency must be within 1..=32, not 0"
    );
    let priced = SessionPlan {
        price_per_million_input: Some(f64::NAN),
        ..plan.clone()
    };
    assert!(matches!(error(&priced, 4), SessionError::Price(p) if p.is_nan()));
    let repeated = SessionPlan { repeat: 11, ..plan };
    let repeat = error(&repeated, 4);
    assert!(matches!(repeat, SessionError::Repeat(_)));
    assert_eq!(repeat.to_string(), "repeats must be within 1..=10, not 11");
    for message in [concurrency.to_string(), repeat.to_string()] {
        assert!(!message.contains("--"), "{message}");
    }
}

#[test]
fn a_label_for_no_criterion_of_the_definition_is_refused_before_anything_runs() {
    let dir = jevjudge_test_support::temp_dir("session-labels");
    let cases = dir.join("cases.jsonl");
    let line = std::fs::read_to_string(sms_spam("cases.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let mut case: serde_json::Value = serde_json::from_str(&line).unwrap();
    case["expected_findings"] = serde_json::json!({"ham": true});
    std::fs::write(&cases, format!("{case}\n")).unwrap();
    let plan = SessionPlan::new(cases.clone(), None);
    let error = plan
        .read_cases(&definition("definition.toml"), None)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("field `expected_findings.ham`: no criterion `ham` in sms-spam-0.1.0"),
        "{error}"
    );
}

#[tokio::test]
async fn a_new_session_refuses_a_rows_file_that_holds_rows_unless_resuming_or_overwriting() {
    let dir = jevjudge_test_support::temp_dir("session-rows-in-use");
    let rows = dir.join("run.rows.jsonl");
    let definition = definition("definition.toml");
    // Nothing there, then a file with only its header: a new run may write it.
    assert!(plan(&rows, None).check_rows_file().is_ok());
    let header = RowsHeader::from_digest(&definition, CasesDigest::default());
    RowsWriter::create(&rows, &header).unwrap();
    assert!(plan(&rows, None).check_rows_file().is_ok());

    run(&plan(&rows, None), &definition).await.unwrap();
    tear(&rows, 10);
    let before = std::fs::read(&rows).unwrap();
    // 10 whole rows and a torn eleventh: 11 rows an earlier run wrote.
    let refused = plan(&rows, None);
    let error = refused.check_rows_file().unwrap_err();
    assert!(
        matches!(&error, SessionError::RowsFileInUse { rows: 11, path } if path == &rows),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "the rows file {} already holds 11 rows of an earlier run",
            rows.display()
        )
    );
    let cases = refused.read_cases(&definition, None).unwrap();
    let opened = Session::open(&refused, &definition, cases, "replay", "jev-1.13.0");
    assert!(matches!(opened, Err(SessionError::RowsFileInUse { .. })));
    assert_eq!(
        std::fs::read(&rows).unwrap(),
        before,
        "the file is left alone"
    );

    let resumed = SessionPlan {
        resume: true,
        ..plan(&rows, None)
    };
    assert!(resumed.check_rows_file().is_ok());
    let overwriting = SessionPlan {
        overwrite: true,
        ..plan(&rows, None)
    };
    assert!(overwriting.check_rows_file().is_ok());
    let (outcome, _) = run(&overwriting, &definition).await.unwrap();
    assert_eq!(outcome.reviews_this_run, 150);
    assert_eq!(crate::rows_file::count_rows(&rows).unwrap(), 150);
}

#[test]
fn counting_rows_skips_the_header_and_blank_lines_and_counts_a_torn_last_line() {
    let dir = jevjudge_test_support::temp_dir("session-count-rows");
    let count = |text: &str| {
        let path = dir.join("rows.jsonl");
        std::fs::write(&path, text).unwrap();
        crate::rows_file::count_rows(&path).unwrap()
    };
    assert_eq!(count(""), 0);
    assert_eq!(count("{\"format\":1}"), 0);
    assert_eq!(count("{\"format\":1}\n"), 0);
    assert_eq!(count("{\"format\":1}\n\n  \n"), 0);
    assert_eq!(count("{}\n{\"index\":0}\n"), 1);
    assert_eq!(count("{}\n{\"index\":0}\n{\"ind"), 2);
    assert_eq!(
        crate::rows_file::count_rows(&dir.join("absent.jsonl")).unwrap(),
        0
    );
    assert_eq!(
        crate::rows_file::count_rows(&dir).unwrap(),
        0,
        "a directory"
    );
}
