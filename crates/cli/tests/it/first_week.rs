//! A new user's first week with the real `jevjudge` binary: a rerun that would have replaced
//! finished rows, the step after a refused key, the progress count of a repeated run, counts
//! in English, and the hints for cases and reports given in the wrong shape.

use std::path::{Path, PathBuf};

use jevjudge_fake::FakeServer;
use tokio::process::Command;

use jevjudge_test_support::{example, expect, read_json, stderr, temp_dir};

use crate::{exits, fake_server, fake_with_key, hardening::cases, jevjudge};

/// `jevjudge eval` of `cases` on the refund definition against `server` with the API key
/// `key`, reporting to `report`, and `extra`.
fn eval_against(
    server: &FakeServer,
    key: &str,
    cases: &Path,
    report: &Path,
    extra: &[&str],
) -> Command {
    // Four reviews in flight unless the test names its own concurrency.
    let concurrency: &[&str] = if extra.contains(&"--concurrency") {
        &[]
    } else {
        &["--concurrency", "4"]
    };
    let mut command = jevjudge();
    command
        .env("TYPESAFE_API_KEY", key)
        .arg("eval")
        .args(concurrency)
        .args(["--budget", "10s", "--definition"])
        .arg(example("refund/definition.toml"))
        .arg("--cases")
        .arg(cases)
        .arg("--report")
        .arg(report)
        .args(["--base-url", &server.url()])
        .args(extra);
    command
}

/// Keeps the header and the first `rows` rows of a rows file, as an interruption leaves it.
fn keep_rows(path: &Path, rows: usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let kept: String = text
        .lines()
        .take(rows + 1)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(path, kept).unwrap();
}

fn rows_file(report: &Path) -> PathBuf {
    report.with_extension("rows.jsonl")
}

#[tokio::test]
async fn a_rerun_without_resume_refuses_a_rows_file_that_holds_rows() {
    let server = fake_server(Default::default()).await;
    let dir = temp_dir("first-week-rerun");
    let cases = cases(&dir, 30);
    let report = dir.join("out.json");
    exits(&mut eval_against(&server, "k", &cases, &report, &[]), 0).await;
    // An interrupted run: 10 rows of 30 finished.
    keep_rows(&rows_file(&report), 10);
    let partial = std::fs::read(rows_file(&report)).unwrap();
    let sent = server.request_count();

    let output = exits(&mut eval_against(&server, "k", &cases, &report, &[]), 2).await;
    let text = stderr(&output);
    expect::contains(
        &text,
        &format!(
            "jevjudge: error: the rows file {} already holds 10 rows of an earlier run: add \
             --resume to continue that run (only the missing cases run), or --overwrite to \
             start afresh and replace it",
            rows_file(&report).display()
        ),
    );
    assert_eq!(server.request_count(), sent, "nothing was sent");
    assert_eq!(std::fs::read(rows_file(&report)).unwrap(), partial);

    // --resume and --overwrite exclude each other.
    exits(
        &mut eval_against(&server, "k", &cases, &report, &["--resume", "--overwrite"]),
        2,
    )
    .await;
    assert_eq!(server.request_count(), sent);

    // --resume runs the 20 missing cases; --overwrite runs all 30 afresh.
    exits(
        &mut eval_against(&server, "k", &cases, &report, &["--resume"]),
        0,
    )
    .await;
    assert_eq!(server.request_count(), sent + 20);
    assert_eq!(read_json(&report)["overall"]["total"], 30);
    exits(
        &mut eval_against(&server, "k", &cases, &report, &["--overwrite"]),
        0,
    )
    .await;
    assert_eq!(server.request_count(), sent + 50);
    assert_eq!(read_json(&report)["overall"]["total"], 30);
    let rows = std::fs::read_to_string(rows_file(&report)).unwrap();
    assert_eq!(rows.lines().count(), 31, "a header and 30 rows");
    server.shutdown().await;
}

#[tokio::test]
async fn after_a_refused_key_the_stop_line_names_resume_with_retry_errors() {
    let server = fake_with_key("the-right-key").await;
    let dir = temp_dir("first-week-key");
    let cases = cases(&dir, 12);
    let report = dir.join("out.json");
    let output = exits(
        &mut eval_against(&server, "a-wrong-key", &cases, &report, &[]),
        6,
    )
    .await;
    let text = stderr(&output);
    let stopped = text
        .lines()
        .find(|line| line.starts_with("jevjudge: stopped:"))
        .unwrap_or_else(|| panic!("no stop line in: {text}"));
    expect::contains(
        stopped,
        &format!(
            "fix the key, then rerun with --resume --retry-errors (rows in {})",
            rows_file(&report).display()
        ),
    );
    // The reviews in flight when the key was refused (at most the concurrency, 4) end as 401
    // rows; no other review starts.
    let errors = read_json(&report)["overall"]["errors"].as_u64().unwrap();
    assert!((1..=4).contains(&errors), "{errors} 401 rows");

    // Doing what the line says leaves no 401 row behind.
    let mut resumed = eval_against(
        &server,
        "the-right-key",
        &cases,
        &report,
        &["--resume", "--retry-errors"],
    );
    exits(&mut resumed, 0).await;
    let json = read_json(&report);
    assert_eq!(json["overall"]["total"], 12);
    assert_eq!(json["overall"]["errors"], 0);
    server.shutdown().await;
}

/// `command` (its words single-quoted) run by `script` on a pseudo-terminal with `TERM=xterm`,
/// so that the progress bar, which draws on a terminal only, shows: what the terminal showed.
async fn on_a_terminal(words: &[String]) -> String {
    let line: Vec<String> = words
        .iter()
        .map(|word| format!("'{}'", word.replace('\'', r"'\''")))
        .collect();
    let mut script = jevjudge_test_support::command("script");
    script
        .args(["-qefc", &line.join(" "), "/dev/null"])
        .env("TERM", "xterm");
    let output = exits(&mut script, 0).await;
    jevjudge_test_support::stdout(&output)
}

#[tokio::test]
async fn the_progress_bar_of_a_repeated_run_counts_reviews_not_cases() {
    let path = |p: PathBuf| p.display().to_string();
    let words: Vec<String> = [
        crate::JEVJUDGE.to_owned(),
        "eval".into(),
        "--definition".into(),
        path(example("sms-spam/definition.toml")),
        "--cases".into(),
        path(example("sms-spam/cases.jsonl")),
        "--replay".into(),
        path(example("sms-spam/recordings.jevl")),
        "--model".into(),
        "jev-1.13.0".into(),
        "--repeat".into(),
        "4".into(),
    ]
    .into();
    let screen = on_a_terminal(&words).await;
    // 150 cases × 4 repeats: the bar's length is 600 reviews, and it moves 4 at a time.
    let counts: Vec<(u64, u64)> = screen
        .split(" reviews")
        .filter_map(|before| {
            let (done, len) = before.rsplit(' ').next()?.split_once('/')?;
            Some((done.parse().ok()?, len.parse().ok()?))
        })
        .collect();
    assert!(!counts.is_empty(), "no progress bar was drawn: {screen}");
    for (done, len) in &counts {
        assert_eq!(*len, 600, "{screen}");
        assert_eq!(done % 4, 0, "{screen}");
    }
    expect::contains(&screen, "wall ");
    expect::contains(&screen, " for 600 reviews");
}

/// Every `1 <plural noun>` in `text` (`1 reviews`, `1 rows`, …), with 10 characters before it
/// so that `11 rows` is told apart.
fn one_with_a_plural(text: &str) -> Vec<String> {
    const PLURALS: [&str; 10] = [
        "reviews", "rows", "cases", "errors", "items", "records", "attempts", "retries", "answers",
        "labels",
    ];
    let mut found = Vec::new();
    for (at, _) in text.match_indices("1 ") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_digit() || c == '.') {
            continue;
        }
        let rest = &text[at + 2..];
        if let Some(noun) = PLURALS.iter().find(|noun| {
            rest.starts_with(**noun)
                && !rest[noun.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '/')
        }) {
            found.push(format!("1 {noun}"));
        }
    }
    found
}

#[tokio::test]
async fn one_of_anything_is_singular_in_every_line_a_run_prints() {
    let dir = temp_dir("first-week-plurals");
    let one = dir.join("one.jsonl");
    let first = std::fs::read_to_string(example("sms-spam/cases.jsonl")).unwrap();
    std::fs::write(&one, format!("{}\n", first.lines().next().unwrap())).unwrap();
    let mut command = crate::eval_cases(&example("sms-spam/definition.toml"), &one);
    command
        .arg("--replay")
        .arg(example("sms-spam/recordings.jevl"))
        .args(["--price-per-million-input", "1", "--max-errors", "1"])
        .arg("--report")
        .arg(dir.join("one.json"));
    let output = exits(&mut command, 0).await;
    let out = jevjudge_test_support::stdout(&output);
    for line in [
        "317/20 (1 row)",
        " s for 1 review (",
        "(input tokens of 1 row with known usage × your price)",
    ] {
        expect::contains(&out, line);
    }
    assert_eq!(one_with_a_plural(&out), Vec::<String>::new(), "{out}");

    // A refused key after one review of two (one at a time): the stop line, the hint and the
    // attempts.
    let server = fake_with_key("the-right-key").await;
    let two = cases(&dir, 2);
    let report = dir.join("key.json");
    let output = exits(
        &mut eval_against(
            &server,
            "a-wrong-key",
            &two,
            &report,
            &["--concurrency", "1"],
        ),
        6,
    )
    .await;
    let (out, err) = (jevjudge_test_support::stdout(&output), stderr(&output));
    expect::contains(&err, "; 1 case not run; ");
    expect::contains(&err, "jevjudge: hint: 1 of 1 review errored");
    expect::contains(&out, "attempts: 1 attempt (0 retries)");
    let all = format!("{out}{err}");
    assert_eq!(one_with_a_plural(&all), Vec::<String>::new(), "{all}");
    server.shutdown().await;
}

#[test]
fn the_plural_finder_finds_what_it_must() {
    assert_eq!(
        one_with_a_plural("for 1 reviews (2 reviews/s); 11 rows; 0.1 rows; 1 row; 1 rows."),
        vec!["1 reviews".to_owned(), "1 rows".to_owned()]
    );
}

#[tokio::test]
async fn a_cases_line_with_an_unknown_key_names_the_nearest_and_every_accepted_key() {
    let dir = temp_dir("first-week-unknown-key");
    let cases = crate::file_in(
        &dir,
        "cases.jsonl",
        "{\"id\":\"a\",\"scenario\":\"s\",\"stat\":{\"n\":1},\"expected_pass\":true}\n",
    );
    let mut command = crate::eval_offline(&example("refund/definition.toml"), &cases);
    let output = exits(&mut command, 2).await;
    expect::contains(
        &stderr(&output),
        "cases.jsonl:1: field `stat`: unknown field (did you mean `state`?); a case takes \
         `scenario`, `id`, `expected_pass`, `expected_findings`, `weight`, `state`, \
         `question`, `supporting_context`, `answer`",
    );
}

#[tokio::test]
async fn a_file_holding_one_json_array_gets_the_jq_hint() {
    let dir = temp_dir("first-week-array");
    let case = "{\"id\":\"a\",\"scenario\":\"s\",\"state\":{\"n\":1},\"expected_pass\":true}";
    for (name, text) in [
        ("compact.json", format!("[{case}]\n")),
        ("pretty.json", format!("[\n {case}\n]\n")),
    ] {
        let cases = crate::file_in(&dir, name, text);
        let output = exits(
            &mut crate::eval_offline(&example("refund/definition.toml"), &cases),
            2,
        )
        .await;
        expect::contains_of(
            name,
            &stderr(&output),
            "a cases file holds one JSON object per line, not one JSON array: convert it \
             with `jq -c '.[]' FILE > FILE.jsonl`",
        );
    }
}

#[tokio::test]
async fn report_given_a_rows_file_says_so_and_names_its_report() {
    let dir = temp_dir("first-week-report-rows");
    let report = dir.join("run.json");
    let mut command = crate::eval_sms_replay(&example("sms-spam/definition.toml"));
    command.arg("--report").arg(&report);
    exits(&mut command, 0).await;
    let rows = rows_file(&report);
    let said = |output: &std::process::Output| stderr(output);
    let output = exits(jevjudge().arg("report").arg(&rows), 2).await;
    expect::contains(
        &said(&output),
        &format!(
            "{} is the rows file of an eval run, not its report: its report is {}",
            rows.display(),
            report.display()
        ),
    );
    // The report shows once given.
    exits(jevjudge().arg("report").arg(&report), 0).await;
    std::fs::remove_file(&report).unwrap();
    let output = exits(jevjudge().arg("report").arg(&rows), 2).await;
    expect::contains(
        &said(&output),
        &format!(
            "its report would be {}, which is not there",
            report.display()
        ),
    );
}
