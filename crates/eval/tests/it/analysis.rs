//! Calibration, comparison and the HTML page on real runs of the Runner: a two-criterion
//! definition (one condition expected to hold, one expected NOT to hold) reviewed by an
//! injected backend whose probabilities are written in the case text.

use std::time::Duration;

use jevjudge_eval::{
    Case, CaseInput, EvaluatorRequest, JevEvaluator, Report, Runner,
    calibration::{CalibrationSettings, CriterionSpec, calibrate, check_criteria, extract},
    compare::{CompareOptions, compare},
    html::{HtmlOptions, case_texts, to_html},
};
use jevjudge_judge::{BackendKind, Definition, Judge, Status, backend_fn};
use jevjudge_stats::{Targets, tally};
use jevjudge_test_support::definition_file;
use jevjudge_wire::{Answer, NoulAnswer, Request, Response};

const SENTINELS: [&str; 3] = ["RAW-Q-7f3a", "RAW-EVIDENCE-91c2", "RAW-ANSWER-c0de"];

/// The contract's shared `support-draft-v1` (thresholds 0.2 / 0.8): covers_request should
/// hold, unsupported_commitment should not.
fn definition() -> Definition {
    Definition::from_path(definition_file("support-draft-v1")).expect("the shared definition loads")
}

/// 120 cases. Whether each condition holds is fixed by the index; its probability is high
/// when it holds and low when not, except one case in eight where it is near the middle.
fn cases() -> Vec<Case> {
    (0..120)
        .map(|i: u32| {
            let covers = i % 2 == 0;
            let commits = i % 3 == 0;
            let spread = f64::from(i % 10) / 40.0; // 0 ..= 0.225
            // Unsure cases: a probability near the middle, whatever the truth.
            let probability = |unsure: bool, middle: f64, holds: bool, high: f64, low: f64| {
                if unsure {
                    middle + spread / 4.0
                } else if holds {
                    high + spread
                } else {
                    low + spread
                }
            };
            let p_covers = probability(i % 8 == 5, 0.45, covers, 0.75, 0.02);
            let p_commits = probability(i % 8 == 3, 0.5, commits, 0.7, 0.05);
            Case {
                scenario: if i < 60 {
                    "first half"
                } else {
                    "second <half>"
                }
                .into(),
                id: format!("case-{i:03}"),
                input: CaseInput::Evaluator(EvaluatorRequest {
                    question: format!("{} {i}", SENTINELS[0]),
                    supporting_context: vec![SENTINELS[1].into()],
                    answer: format!("{} {p_covers} {p_commits}", SENTINELS[2]),
                }),
                expected_pass: covers && !commits,
                expected_findings: Some(vec![
                    ("covers_request".into(), covers),
                    ("unsupported_commitment".into(), commits),
                ]),
                weight: 1.0,
            }
        })
        .collect()
}

async fn run(definition: Definition) -> Report {
    let backend = backend_fn(|request: Request| async move {
        let answer = request.state["assistant_answer"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mut numbers = answer.split(' ').skip(1).map(|n| n.parse::<f64>().unwrap());
        let (covers, commits) = (numbers.next().unwrap(), numbers.next().unwrap());
        Ok(Response {
            model: Some("jev-1.13.0".into()),
            answers: vec![
                (
                    "covers_request".into(),
                    Answer::Noul(NoulAnswer { noul: Some(covers) }),
                ),
                (
                    "unsupported_commitment".into(),
                    Answer::Noul(NoulAnswer {
                        noul: Some(commits),
                    }),
                ),
            ],
            usage: None,
            raw_answers: None,
        })
    });
    let version = definition.version().to_owned();
    let evaluator = JevEvaluator::new(
        Judge::new(backend, Duration::from_secs(1)).unwrap(),
        definition,
    );
    let run = Runner::new(4)
        .unwrap()
        .run(&evaluator, cases(), ())
        .await
        .unwrap();
    Report::new(version, BackendKind::Replay, run)
}

fn targets() -> Targets {
    Targets {
        min_pass_precision: 0.8,
        min_fail_precision: 0.8,
        max_abstain: 0.5,
        z: 1.96,
    }
}

#[tokio::test]
async fn labels_come_from_expected_findings_and_p_prime_follows_expected() {
    let definition = definition();
    let report = run(definition.clone()).await;
    let specs = CriterionSpec::from_definition(&definition);
    check_criteria(&report, &specs).unwrap();
    let points = extract(&report, &specs);
    assert_eq!(points.len(), 2);
    for criterion in &points {
        assert_eq!(criterion.points.len(), 120);
        assert_eq!(criterion.from_expected_findings, 120);
        assert_eq!(criterion.from_expected_pass, 0);
    }
    // `unsupported_commitment` expects a no: p′ = 1 − p, exactly as the Judge computed it.
    let commits = &points[1];
    assert!(!commits.spec.expected);
    for (point, row) in commits.points.iter().zip(&report.rows) {
        let finding = row.verdict.findings.get("unsupported_commitment").unwrap();
        assert_eq!(point.expected_probability, finding.expected_probability);
        assert_eq!(point.expected_probability, 1.0 - point.yes_probability);
    }
    // A definition whose `expected` differs does not fit the report.
    let flipped = CriterionSpec {
        expected: true,
        ..specs[1].clone()
    };
    assert!(check_criteria(&report, &[specs[0].clone(), flipped]).is_err());
}

// The recommended thresholds, applied to the definition and replayed through the real Judge,
// decide every finding exactly as the calibration's tally said.
#[tokio::test]
async fn recommended_thresholds_decide_the_replayed_findings_as_promised() {
    let definition = definition();
    let report = run(definition.clone()).await;
    let settings = CalibrationSettings {
        targets: targets(),
        ..CalibrationSettings::default()
    };
    let calibration = calibrate(
        &report,
        &CriterionSpec::from_definition(&definition),
        &settings,
    );
    let document = calibration.to_document();
    assert_eq!(document.definition_version, "support-draft-v1");
    assert_eq!(document.criteria.len(), 2);
    for (id, criterion) in &document.criteria {
        assert_eq!(criterion.metrics.n, 120, "{id}");
        assert!(criterion.metrics.auroc.unwrap() > 0.8, "{id}");
        assert!(
            criterion.recommendation.is_some(),
            "{id}: {:?}",
            criterion.refusal
        );
    }
    let calibrated = calibration
        .apply(&definition, "support-draft-v1+cal.1")
        .unwrap();
    let replayed = run(calibrated.clone()).await;
    for (index, criterion) in calibration.criteria.iter().enumerate() {
        let recommendation = criterion.outcome.clone().unwrap();
        let id = &criterion.points.spec.id;
        let applied = &calibrated.criteria()[index];
        assert_eq!(
            applied.pass_at_or_above(),
            recommendation.certificate.thresholds.pass_at_or_above
        );
        let expectation = criterion.points.expectation_points();
        assert_eq!(
            tally(&expectation, recommendation.certificate.thresholds),
            recommendation.certificate.tally
        );
        // Count the Judge's own decisions on the replay.
        let (mut passes, mut right_passes, mut fails, mut right_fails) = (0, 0, 0, 0);
        for (row, point) in replayed.rows.iter().zip(&expectation) {
            match row.verdict.findings.get(id).unwrap().status {
                Status::Pass => {
                    passes += 1;
                    right_passes += u64::from(point.label);
                }
                Status::Fail => {
                    fails += 1;
                    right_fails += u64::from(!point.label);
                }
                _ => {}
            }
        }
        let promised = recommendation.certificate.tally;
        assert_eq!(
            (passes, right_passes, fails, right_fails),
            (
                promised.passes,
                promised.correct_passes,
                promised.fails,
                promised.correct_fails
            ),
            "{id}"
        );
    }

    // Comparing the two runs: every flip is counted once, and regressions − fixes is the
    // change in correct rows.
    let comparison = compare(&report, &replayed, CompareOptions::default()).unwrap();
    assert_eq!(comparison.pairs, 120);
    let flipped: u64 = comparison.transitions.iter().map(|(_, n)| n).sum();
    assert_eq!(flipped as usize, comparison.flips.len());
    assert_eq!(
        comparison.base.summary.correct as i64 - comparison.regressions as i64
            + comparison.fixes as i64,
        comparison.candidate.summary.correct as i64
    );
    assert_eq!(
        comparison.mcnemar_p,
        jevjudge_stats::mcnemar_exact(comparison.regressions, comparison.fixes)
    );
    assert_eq!(comparison.base.models, ["jev-1.13.0"]);
}

// judge-contract rules 62–63: no sentinel in the page unless text is asked for, and then
// escaped.
#[tokio::test]
async fn html_page_holds_no_raw_text_unless_given_and_escapes_it() {
    let definition = definition();
    let report = run(definition.clone()).await;
    let specs = CriterionSpec::from_definition(&definition);
    let page = to_html(
        &report,
        &HtmlOptions {
            criteria: Some(&specs),
            texts: None,
        },
    );
    for sentinel in SENTINELS
        .iter()
        .chain(["Does the draft", "successful business record"].iter())
    {
        assert!(!page.contains(sentinel), "{sentinel} leaked");
    }
    assert!(page.contains("second &lt;half&gt;"));
    assert!(!page.contains("second <half>"));
    assert_eq!(page.matches("data-chart=\"reliability\"").count(), 2);
    assert_eq!(page.matches("data-chart=\"histogram\"").count(), 2);
    assert_eq!(page.matches("class=\"threshold\"").count(), 4);

    let mut cases = cases();
    if let CaseInput::Evaluator(request) = &mut cases[0].input {
        request.answer = format!("{} <img src=x onerror=alert(1)>", request.answer);
    }
    let texts = case_texts(&cases);
    let page = to_html(
        &report,
        &HtmlOptions {
            criteria: Some(&specs),
            texts: Some(&texts),
        },
    );
    assert!(page.contains(SENTINELS[1]));
    assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(!page.contains("<img"));
}
