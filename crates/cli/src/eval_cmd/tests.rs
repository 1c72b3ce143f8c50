//! The plan of `jevjudge eval`: flags parsed and resolved without running anything.

use clap::Parser;
use jevjudge_eval::MAX_CASES;
use jevjudge_test_support::{example, temp_dir};

use super::*;

#[derive(Debug, clap::Parser)]
struct Command {
    #[command(flatten)]
    args: Args,
}

/// The plan of `eval` on the sms-spam replay with `extra` flags.
fn plan(extra: &[&str]) -> anyhow::Result<Plan> {
    let definition = example("sms-spam/definition.toml");
    let cases = example("sms-spam/cases.jsonl");
    let replay = example("sms-spam/recordings.jevl");
    let mut argv = vec![
        "eval".to_owned(),
        "--definition".into(),
        definition.display().to_string(),
        "--cases".into(),
        cases.display().to_string(),
        "--replay".into(),
        replay.display().to_string(),
    ];
    argv.extend(extra.iter().map(|s| (*s).to_owned()));
    Plan::resolve(Command::try_parse_from(argv)?.args)
}

fn error(extra: &[&str]) -> String {
    format!("{:#}", plan(extra).unwrap_err())
}

#[test]
fn the_rows_file_goes_beside_the_report_unless_named() {
    let dir = temp_dir("plan-rows");
    let report = dir.join("out.json");
    let plan_of = |extra: &[&str]| plan(extra).unwrap();
    let beside = plan_of(&["--report", report.to_str().unwrap()]);
    assert_eq!(beside.session.rows, Some(dir.join("out.rows.jsonl")));
    assert_eq!(beside.outputs.report, Some(report.clone()));
    let named = dir.join("rows.jsonl");
    let plan = plan_of(&[
        "--report",
        report.to_str().unwrap(),
        "--rows",
        named.to_str().unwrap(),
    ]);
    assert_eq!(plan.session.rows, Some(named));
    assert_eq!(plan_of(&[]).session.rows, None);
}

#[test]
fn the_plan_holds_every_flag_resolved() {
    let plan = plan(&[
        "--concurrency",
        "3",
        "--repeat",
        "2",
        "--min-accuracy",
        "0.8",
        "--max-errors",
        "0",
        "--min-coverage",
        "0.5",
        "--max-false-pass",
        "2",
        "--price-per-million-input",
        "0.25",
    ])
    .unwrap();
    assert_eq!(plan.definition.version(), "sms-spam-0.1.0");
    assert_eq!(plan.concurrency, 3);
    assert_eq!(plan.session.repeat, 2);
    assert!(
        plan.backend.repeated_records,
        "a repeated run takes several records of a request"
    );
    assert_eq!(plan.session.price_per_million_input, Some(0.25));
    assert_eq!(
        plan.gates,
        Gates {
            min_accuracy: Some(0.8),
            max_errors: Some(0),
            min_accuracy_lower: None,
            max_false_pass: Some(2),
            min_coverage: Some(0.5),
        }
    );
    assert_eq!(plan.outputs, jevjudge_eval::output::ReportFiles::default());
    assert!(!plan.session.streaming);
    assert_eq!(plan.runner.case_limit(), MAX_CASES);
}

#[test]
fn max_cases_above_the_in_memory_limit_streams() {
    let plan = plan(&["--max-cases", "20000"]).unwrap();
    assert!(plan.session.streaming);
    assert_eq!(plan.session.case_limit, 20_000);
    assert_eq!(plan.runner.case_limit(), 20_000);
}

#[test]
fn bad_flags_are_refused_naming_the_flag() {
    for (flags, message) in [
        (
            &["--min-coverage", "1.5"][..],
            "--min-coverage must be within 0..=1, not 1.5",
        ),
        (
            &["--min-accuracy=-1"],
            "--min-accuracy must be within 0..=1, not -1",
        ),
        (
            &["--concurrency", "0"],
            "--concurrency: concurrency must be within 1..=32, not 0",
        ),
        (
            &["--repeat", "11"],
            "--repeat: repeats must be within 1..=10, not 11",
        ),
    ] {
        assert_eq!(error(flags), message);
    }
    let missing = temp_dir("plan-missing").join("no/such/dir/out.json");
    let message = error(&["--report", missing.to_str().unwrap()]);
    assert!(
        message.starts_with(&format!("--report {}: the directory ", missing.display())),
        "{message}"
    );
}

#[test]
fn a_streaming_run_refuses_cases_that_are_not_a_regular_file() {
    let dir = temp_dir("plan-streaming");
    let definition = example("sms-spam/definition.toml");
    let argv = [
        "eval",
        "--definition",
        definition.to_str().unwrap(),
        "--cases",
        dir.to_str().unwrap(),
        "--fake",
        "--max-cases",
        "20000",
    ];
    let message = format!(
        "{:#}",
        Plan::resolve(Command::try_parse_from(argv).unwrap().args).unwrap_err()
    );
    assert!(message.contains("must be a regular file"), "{message}");
}
