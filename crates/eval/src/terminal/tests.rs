//! Snapshots of what the commands print and write, built from the shipped sms-spam
//! recording (`examples/sms-spam/`: 150 real answers of TypeSafe's hosted Jev, replayed
//! offline) through the library's own session, so nothing here depends on the binary.
//!
//! Review times are measured, so each row's is fixed after the run (100 µs + 37 µs × its
//! index) and the summaries are recomputed; the wall time is fixed at 1.5 s. Nothing else in
//! these outputs varies. A snapshot that differs fails the test (`cargo insta review` shows
//! the difference; CI needs no `cargo insta`).

use std::path::Path;

use jevjudge_judge::Definition;
use jevjudge_stats::Targets;

use super::{calibration, compare, criterion_block, summary};
use crate::{
    calibration::{CalibrationSettings, CriterionSpec, calibrate, infer_criteria},
    compare::{CompareOptions, Comparison, compare as pair},
    gates::{self, Gates},
    html::{HtmlOptions, to_html},
    markdown::to_markdown,
    test_support::{sms_spam as example, sms_spam_replay as replay},
};

fn gates() -> Gates {
    Gates {
        min_accuracy: Some(0.8),
        max_errors: Some(0),
        min_accuracy_lower: Some(0.75),
        max_false_pass: Some(1),
        min_coverage: Some(0.9),
    }
}

#[tokio::test]
async fn the_eval_summary_of_the_sms_spam_replay() {
    let report = replay("definition.toml", 1).await;
    // The README's reference figures, before the snapshot says the rest.
    assert_eq!(
        (
            report.overall.correct,
            report.overall.incorrect,
            report.overall.abstained
        ),
        (123, 2, 25)
    );
    let gates = gates().evaluate(&report);
    let text = summary(&report, &gates, Some(Path::new("out.rows.jsonl")), None);
    insta::assert_snapshot!("eval_summary", text);
}

// The SMS set is 50 % spam, the collection it came from 13.4 %: with that stated, every output
// gives the precisions at 13.4 % and warns that the cases' own mix is far from it.
#[tokio::test]
async fn a_stated_prevalence_adds_precisions_at_it_and_a_warning_to_every_output() {
    let mut report = replay("definition-cut-0.5.toml", 1).await;
    report.set_prevalence(0.134);
    let at = report.overall.risk.at_prevalence.clone().unwrap();
    assert_eq!(at.cases_expected_pass_share, Some(0.5));
    assert!(at.warning.is_some());
    let text = summary(&report, &[], None, None);
    let line = text
        .lines()
        .find(|line| line.starts_with("at prevalence 0.134"))
        .unwrap();
    insta::assert_snapshot!("prevalence_line", line);
    assert!(text.contains("warning: the cases are 50.0 % expected to pass, production 13.4 %"));
    assert!(to_markdown(&report, &[]).contains("at prevalence 0.134"));
    let html = to_html(&report, &HtmlOptions::default());
    assert!(html.contains("at prevalence 0.134"));
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(json["overall"]["at_prevalence"]["prevalence"], 0.134);
    assert!(json["scenarios"]["sms-spam"]["at_prevalence"]["pass_precision"].is_number());
}

#[tokio::test]
async fn the_eval_summary_of_a_repeated_replay_shows_the_repeat_table() {
    let report = replay("definition-cut-0.5.toml", 2).await;
    let text = summary(&report, &[], None, None);
    insta::assert_snapshot!("eval_summary_repeated", text);
}

#[tokio::test]
async fn the_markdown_summary_of_the_sms_spam_replay() {
    let report = replay("definition.toml", 1).await;
    let gates = gates().evaluate(&report);
    insta::assert_snapshot!("markdown", to_markdown(&report, &gates::lines(&gates)));
}

#[tokio::test]
async fn the_html_page_of_the_sms_spam_replay() {
    let report = replay("definition.toml", 1).await;
    let definition = Definition::from_path(example("definition.toml")).unwrap();
    let specs = CriterionSpec::from_definition(&definition);
    let options = HtmlOptions {
        criteria: Some(&specs),
        ..HtmlOptions::default()
    };
    // One element a line, so that a change shows where it is; the version redacted.
    let html = to_html(&report, &options)
        .replace(env!("CARGO_PKG_VERSION"), "[version]")
        .replace("><", ">\n<");
    insta::assert_snapshot!("html", html);
}

/// The sms-spam recording under the pack's floors (base) and under a single cut at 0.5
/// (candidate), each case reviewed `repeat` times.
async fn floors_against_a_cut(repeat: usize) -> Comparison {
    let base = replay("definition.toml", repeat).await;
    let candidate = replay("definition-cut-0.5.toml", repeat).await;
    pair(&base, &candidate, CompareOptions::default()).unwrap()
}

#[tokio::test]
async fn the_compare_summary_of_two_thresholds_on_one_recording() {
    let comparison = floors_against_a_cut(1).await;
    assert!(comparison.noise.is_none());
    let (base, candidate) = (Path::new("floors.json"), Path::new("cut-0.5.json"));
    insta::assert_snapshot!("compare", compare(&comparison, base, candidate, Some(0)));
}

#[tokio::test]
async fn the_compare_summary_of_repeated_runs_weighs_the_noise() {
    let comparison = floors_against_a_cut(2).await;
    assert!(comparison.noise.is_some());
    let text = compare(&comparison, Path::new("a.json"), Path::new("b.json"), None);
    insta::assert_snapshot!("compare_repeated", text);
}

#[tokio::test]
async fn the_calibrate_summary_with_the_definition() {
    let report = replay("definition.toml", 1).await;
    let definition = Definition::from_path(example("definition.toml")).unwrap();
    let specs = CriterionSpec::from_definition(&definition);
    let result = calibrate(&report, &specs, &CalibrationSettings::default());
    insta::assert_snapshot!("calibrate", calibration(&result, &report, true));
}

#[tokio::test]
async fn the_criterion_block_without_a_definition_recommends_under_looser_targets() {
    let report = replay("definition.toml", 1).await;
    let specs = infer_criteria(&report).unwrap();
    let settings = CalibrationSettings {
        targets: Targets {
            min_pass_precision: 0.8,
            min_fail_precision: 0.8,
            max_abstain: 0.4,
            ..CalibrationSettings::default().targets
        },
        ..CalibrationSettings::default()
    };
    let result = calibrate(&report, &specs, &settings);
    let [criterion] = result.criteria.as_slice() else {
        panic!("one criterion");
    };
    let block = criterion_block(criterion, &settings.targets, false);
    assert!(block.contains("thresholds unknown (no --definition)"));
    assert!(criterion.outcome.is_ok(), "{block}");
    insta::assert_snapshot!("criterion_block_without_definition", block);
}

// A run that a spending cap stopped after 60 of its cases, answered by the fake: the
// summary and the Markdown say it is incomplete, why, and that no model answered; the price
// gives a cost line.
#[tokio::test]
async fn a_stopped_fake_run_says_so_in_the_summary_and_the_markdown() {
    let mut report = replay("definition.toml", 1).await;
    report.rows.truncate(60);
    (report.overall, report.scenarios) = crate::summarize(&report.rows, Some(0.5));
    report.backend = jevjudge_judge::BackendKind::Fake;
    report.complete = false;
    report.stopped = Some(jevjudge_client::limit::Stop::InputTokenCap {
        cap: 20_000,
        spent: 19_800,
        next_estimate: 330,
    });
    let gates = Gates {
        max_errors: Some(0),
        ..Gates::default()
    }
    .evaluate(&report);
    let text = summary(&report, &gates, None, Some(60));
    assert!(text.contains("INCOMPLETE (stopped)"), "{text}");
    insta::assert_snapshot!("eval_summary_stopped_fake", text);
    insta::assert_snapshot!(
        "markdown_stopped_fake",
        to_markdown(&report, &gates::lines(&gates))
    );
}
