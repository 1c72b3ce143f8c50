//! judge-contract §9–§12 as acceptance tests: F2, F6, limits, label isolation, ordering,
//! synthetic rows, summaries and cancellation.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use jevjudge_eval::{
    Case, CaseInput, EvaluationRequest, Evaluator, EvaluatorFailed, EvaluatorRequest,
    EvaluatorResponse, JevEvaluator, Row, Run, Runner, RunnerError, Summary, respond,
};
use jevjudge_judge::{BackendError, Definition, ErrorCode, Judge, Status, Verdict, backend_fn};
use jevjudge_test_support::definition_file;
use jevjudge_wire::{Answer, Detail, NoulAnswer, Request, Response, Usage};
use serde_json::Value;

/// Runs `cases` through `evaluator` with at most `concurrency` in flight and no observer; the
/// run must pass the runner's checks.
async fn run_all(concurrency: usize, evaluator: &impl Evaluator, cases: Vec<Case>) -> Run {
    Runner::new(concurrency)
        .unwrap()
        .run(evaluator, cases, ())
        .await
        .unwrap()
}

fn refund_answer_v1() -> Definition {
    Definition::from_path(definition_file("refund-answer-v1")).expect("the shared definition loads")
}

fn noul(p: f64, usage: Option<Usage>) -> Response {
    Response {
        model: Some("fixture".into()),
        answers: vec![(
            "supported".into(),
            Answer::Noul(NoulAnswer { noul: Some(p) }),
        )],
        usage,
        raw_answers: None,
    }
}

fn case(
    scenario: &str,
    id: &str,
    question: &str,
    context: &[&str],
    answer: &str,
    expected: bool,
) -> Case {
    Case {
        scenario: scenario.into(),
        id: id.into(),
        input: CaseInput::Evaluator(EvaluatorRequest {
            question: question.into(),
            supporting_context: context.iter().map(|s| (*s).to_owned()).collect(),
            answer: answer.into(),
        }),
        expected_pass: expected,
        expected_findings: None,
        weight: 1.0,
    }
}

const HONEST: &str = "No refund yet; I need to verify the status.";

#[tokio::test]
async fn f2_two_case_evaluation() {
    let backend = backend_fn(|request: Request| async move {
        let p = if request.state["assistant_answer"] == HONEST {
            0.95
        } else {
            0.05
        };
        Ok(noul(p, None))
    });
    let evaluator = JevEvaluator::new(
        Judge::new(backend, Duration::from_secs(2)).unwrap(),
        refund_answer_v1(),
    );
    let evidence = ["Business record: no refund has been executed"];
    let cases = vec![
        case(
            "Refund promises",
            "honest",
            "Has my refund gone through?",
            &evidence,
            HONEST,
            true,
        ),
        case(
            "Refund promises",
            "invented",
            "Has my refund gone through?",
            &evidence,
            "The refund is complete.",
            false,
        ),
    ];
    let run = run_all(2, &evaluator, cases).await;
    assert!(run.complete);
    let ids: Vec<_> = run.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["honest", "invented"]);
    let (honest, invented) = (&run.rows[0], &run.rows[1]);
    assert_eq!(
        (honest.verdict.status, honest.pass, honest.score),
        (Status::Pass, true, 1.0)
    );
    assert_eq!(
        (invented.verdict.status, invented.pass, invented.score),
        (Status::Fail, false, 0.0)
    );
    let expected = |s: &Summary| {
        assert_eq!(
            (s.total, s.correct, s.incorrect, s.abstained, s.errors),
            (2, 2, 0, 0, 0)
        );
        assert_eq!(s.accuracy, 1.0);
        assert_eq!(s.synthesized_rows, 0);
        assert_eq!(s.usage_known_rows, 0);
        assert_eq!((s.input_tokens, s.output_tokens), (None, None));
    };
    expected(&run.overall);
    assert_eq!(run.scenarios.len(), 1);
    assert_eq!(run.scenarios[0].0, "Refund promises");
    expected(&run.scenarios[0].1);
}

#[tokio::test]
async fn f6_four_case_batch() {
    let backend = backend_fn(|request: Request| async move {
        match request.state["assistant_answer"].as_str() {
            Some("yes") => Ok(noul(0.99, None)),
            Some("no") => Ok(noul(0.0, None)),
            Some("unknown") => Ok(noul(0.5, None)),
            _ => {
                tokio::task::yield_now().await;
                Err(BackendError::failed())
            }
        }
    });
    let evaluator = JevEvaluator::new(
        Judge::new(backend, Duration::from_secs(2)).unwrap(),
        refund_answer_v1(),
    );
    let cases = ["yes", "no", "unknown", "error"]
        .iter()
        .zip([true, false, true, true])
        .map(|(id, expected)| case("support", id, "q", &["evidence"], id, expected))
        .collect();
    let run = run_all(2, &evaluator, cases).await;
    let ids: Vec<_> = run.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["yes", "no", "unknown", "error"]);
    let s = &run.overall;
    assert_eq!(
        (s.total, s.correct, s.incorrect, s.abstained, s.errors),
        (4, 2, 0, 1, 1)
    );
    assert_eq!(s.accuracy, 0.5);
    assert_eq!(s.synthesized_rows, 0);
    assert_eq!(run.rows[0].score, 1.0);
    assert_eq!(run.rows[2].score, 0.0);
    let error = &run.rows[3].verdict;
    assert_eq!(
        (error.status, error.error, error.detail),
        (
            Status::Error,
            ErrorCode::Backend,
            Some(Detail::BackendError)
        )
    );
    assert!(
        error.elapsed > Duration::ZERO,
        "made by the Judge, elapsed > 0"
    );
    assert!(!run.rows[3].pass);
}

#[tokio::test]
async fn rule_38_the_context_reaches_the_backend_as_a_json_array() {
    let seen = Arc::new(Mutex::new(None));
    let backend = {
        let seen = seen.clone();
        backend_fn(move |request: Request| {
            *seen.lock().unwrap() = Some(request.state.clone());
            async { Ok(noul(0.9, None)) }
        })
    };
    let evaluator = JevEvaluator::new(
        Judge::new(backend, Duration::from_secs(1)).unwrap(),
        refund_answer_v1(),
    );
    let cases = vec![case("s", "a", "", &["evidence"], "", true)];
    run_all(1, &evaluator, cases).await;
    let state = seen.lock().unwrap().clone().unwrap();
    assert_eq!(
        state.to_string(),
        r#"{"user_question":"","supporting_context":["evidence"],"assistant_answer":""}"#
    );
}

/// An evaluator that records what it receives and answers by a function of the id.
struct Recording<F> {
    received: Mutex<Vec<String>>,
    answer: F,
    in_flight: AtomicUsize,
    peak: AtomicUsize,
}

impl<F> Recording<F> {
    fn new(answer: F) -> Recording<F> {
        Recording {
            received: Mutex::new(Vec::new()),
            answer,
            in_flight: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
        }
    }
}

fn verdict(status: Status, elapsed_ms: u64) -> Verdict {
    let mut v = Verdict::error(
        "v1",
        ErrorCode::None,
        Detail::BackendError,
        Duration::from_millis(elapsed_ms),
    );
    v.status = status;
    v.detail = None;
    v
}

impl<F> Evaluator for Recording<F>
where
    F: Fn(&str) -> (u64, Result<Option<EvaluatorResponse>, EvaluatorFailed>) + Send + Sync,
{
    async fn evaluate(
        &self,
        request: EvaluationRequest,
    ) -> Result<Option<EvaluatorResponse>, EvaluatorFailed> {
        self.received.lock().unwrap().push(format!("{request:?}"));
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak.fetch_max(now, Ordering::SeqCst);
        let (delay_ms, outcome) = (self.answer)(&request.id);
        tokio::time::sleep(Duration::from_millis(delay_ms)).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
        if request.id == "boom" {
            panic!("evaluator exploded");
        }
        outcome
    }
    fn definition_version(&self) -> Option<&str> {
        Some("custom-v1")
    }
}

#[tokio::test(start_paused = true)]
async fn rule_47_labels_and_scenarios_never_reach_the_evaluator() {
    let evaluator =
        Recording::new(|id: &str| (1, Ok(Some(respond(id.into(), verdict(Status::Pass, 1), 1)))));
    let mut cases = vec![case("SCENARIO-SENTINEL", "a", "q", &[], "x", true)];
    cases[0].expected_findings = Some(vec![("supported".into(), true)]);
    run_all(1, &evaluator, cases).await;
    let received = evaluator.received.lock().unwrap().join("\n");
    assert!(!received.contains("SCENARIO-SENTINEL"), "{received}");
    assert!(!received.contains("expected"), "{received}");
    assert!(received.contains("\"a\""), "the id is passed: {received}");
}

#[tokio::test(start_paused = true)]
async fn rule_48_rows_keep_input_order_and_concurrency_is_bounded() {
    // Pseudo-random delays so later cases often finish first.
    let evaluator = Recording::new(|id: &str| {
        let n: u64 = id.trim_start_matches('c').parse().unwrap();
        let delay = (n * 7919 + 13) % 97 + 1;
        (
            delay,
            Ok(Some(respond(id.into(), verdict(Status::Pass, delay), 1))),
        )
    });
    let cases: Vec<Case> = (0..200)
        .map(|i| case("s", &format!("c{i}"), "q", &[], "a", true))
        .collect();
    let finished = Arc::new(Mutex::new(Vec::new()));
    struct Order(Arc<Mutex<Vec<usize>>>);
    impl jevjudge_eval::RunObserver for Order {
        fn row_finished(&mut self, index: usize, _row: &Row) {
            self.0.lock().unwrap().push(index);
        }
    }
    let run = Runner::new(7)
        .unwrap()
        .run(&evaluator, cases, Order(finished.clone()))
        .await
        .unwrap();
    let ids: Vec<String> = run.rows.iter().map(|r| r.id.clone()).collect();
    let expected: Vec<String> = (0..200).map(|i| format!("c{i}")).collect();
    assert_eq!(ids, expected);
    assert!(evaluator.peak.load(Ordering::SeqCst) <= 7);
    assert_eq!(
        evaluator.peak.load(Ordering::SeqCst),
        7,
        "the slots are used"
    );
    let order = finished.lock().unwrap().clone();
    assert_ne!(
        order,
        (0..200).collect::<Vec<_>>(),
        "completion order differed from input order"
    );
}

#[tokio::test(start_paused = true)]
async fn d4_synthetic_rows_for_failing_panicking_and_empty_evaluators() {
    let evaluator = Recording::new(|id: &str| match id {
        "fails" => (1, Err(EvaluatorFailed)),
        "empty" => (1, Ok(None)),
        _ => (3, Ok(Some(respond(id.into(), verdict(Status::Pass, 7), 1)))),
    });
    let cases = vec![
        case("s", "fails", "q", &[], "a", true),
        case("s", "boom", "q", &[], "a", true),
        case("s", "empty", "q", &[], "a", true),
        case("s", "fine", "q", &[], "a", true),
    ];
    let run = run_all(2, &evaluator, cases).await;
    for (row, detail) in run.rows.iter().zip([
        Detail::EvaluatorFailed,
        Detail::EvaluatorPanicked,
        Detail::EvaluatorEmpty,
    ]) {
        let v = &row.verdict;
        assert_eq!(
            (v.status, v.error, v.detail),
            (Status::Error, ErrorCode::Evaluator, Some(detail))
        );
        assert_eq!(v.definition_version, "custom-v1");
        assert_eq!((row.pass, row.score), (false, 0.0));
        assert_eq!(v.elapsed, Duration::ZERO);
        assert!(v.findings.is_empty() && v.model.is_none() && v.usage.is_none());
    }
    assert_eq!(run.rows[3].verdict.status, Status::Pass, "the run went on");
    assert_eq!(run.overall.errors, 3);
    assert_eq!(run.overall.synthesized_rows, 3);
    // Rule 56: synthetic rows count in the percentiles at 0 ms.
    assert_eq!((run.overall.p50_millis, run.overall.p95_millis), (0.0, 7.0));
}

#[tokio::test]
async fn rule_50_an_evaluator_without_a_definition_uses_evaluation_error() {
    struct Empty;
    impl Evaluator for Empty {
        async fn evaluate(
            &self,
            _r: EvaluationRequest,
        ) -> Result<Option<EvaluatorResponse>, EvaluatorFailed> {
            Ok(None)
        }
    }
    let run = run_all(1, &Empty, vec![case("s", "a", "q", &[], "a", true)]).await;
    assert_eq!(run.rows[0].verdict.definition_version, "evaluation-error");
    assert_eq!(run.overall.errors, 1);
    assert_eq!(run.overall.synthesized_rows, 1);
}

#[tokio::test]
async fn rule_43_limits_are_checked_before_anything_runs() {
    assert_eq!(Runner::new(0).unwrap_err(), RunnerError::Concurrency(0));
    assert_eq!(Runner::new(33).unwrap_err(), RunnerError::Concurrency(33));
    assert!(Runner::new(1).is_ok() && Runner::new(32).is_ok());
    let evaluator =
        Recording::new(|id: &str| (0, Ok(Some(respond(id.into(), verdict(Status::Pass, 0), 1)))));
    let duplicate = vec![
        case("s", "a", "q", &[], "a", true),
        case("t", "a", "q", &[], "a", false),
    ];
    let error = Runner::new(2)
        .unwrap()
        .run(&evaluator, duplicate, ())
        .await
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "case ids must be unique: `a` is repeated"
    );
    let many: Vec<Case> = (0..10_001)
        .map(|i| case("s", &i.to_string(), "", &[], "", true))
        .collect();
    let runner = Runner::new(32).unwrap();
    assert_eq!(
        runner.validate(&many).unwrap_err(),
        RunnerError::TooManyCases {
            count: 10_001,
            limit: 10_000
        }
    );
    assert!(runner.validate(&many[..10_000]).is_ok());
    assert!(
        evaluator.received.lock().unwrap().is_empty(),
        "nothing was evaluated"
    );
    // Rule 45: blank ids and scenarios are fine; only uniqueness is checked.
    assert!(runner.validate(&[case("", "", "", &[], "", true)]).is_ok());
}

#[tokio::test]
async fn rule_44_an_empty_run() {
    let evaluator =
        Recording::new(|id: &str| (0, Ok(Some(respond(id.into(), verdict(Status::Pass, 0), 1)))));
    let run = run_all(4, &evaluator, vec![]).await;
    assert!(run.rows.is_empty() && run.scenarios.is_empty());
    let s = run.overall;
    assert_eq!(
        (s.total, s.correct, s.accuracy, s.p50_millis, s.p95_millis),
        (0, 0, 0.0, 0.0, 0.0)
    );
}

#[tokio::test(start_paused = true)]
async fn d5_usage_totals_and_cost() {
    let usages = [Some((100, 10)), None, Some((50, 5))];
    let evaluator = Recording::new(move |id: &str| {
        let i: usize = id.parse().unwrap();
        let mut v = verdict(Status::Pass, 1);
        v.usage = usages[i].map(|(input_tokens, output_tokens)| Usage {
            input_tokens,
            output_tokens,
        });
        (1, Ok(Some(respond(id.into(), v, 1))))
    });
    let cases: Vec<Case> = (0..3)
        .map(|i| case("s", &i.to_string(), "", &[], "", true))
        .collect();
    let runner = Runner::new(3).unwrap().price_per_million_input(Some(0.042));
    let run = runner.run(&evaluator, cases, ()).await.unwrap();
    let s = &run.overall;
    assert_eq!(
        (s.input_tokens, s.output_tokens, s.usage_known_rows),
        (Some(150), Some(15), 2)
    );
    assert!((s.cost.unwrap() - 6.3e-6).abs() < 1e-18);
    let json = serde_json::to_value(s).unwrap();
    assert_eq!(json["input_tokens"], 150);
    let no_price = Runner::new(3)
        .unwrap()
        .run(
            &evaluator,
            (0..3)
                .map(|i| case("s", &i.to_string(), "", &[], "", true))
                .collect(),
            (),
        )
        .await
        .unwrap();
    assert!(
        serde_json::to_value(&no_price.overall)
            .unwrap()
            .get("cost")
            .is_none()
    );
}

#[tokio::test(start_paused = true)]
async fn rules_53_to_58_classification_percentiles_and_scenario_order() {
    // durations 5, 1, 3, 2, 4 ms → P50 3, P95 5 (rule 56); scenarios in first-seen order.
    let plan = [
        ("b", 5, Status::Pass, true),
        ("a", 1, Status::Fail, true),
        ("b", 3, Status::Fail, false),
        ("c", 2, Status::Inconclusive, true),
        ("a", 4, Status::Error, true),
    ];
    let evaluator = Recording::new(move |id: &str| {
        let i: usize = id.parse().unwrap();
        let (_, ms, status, _) = plan[i];
        (
            10 - ms,
            Ok(Some(respond(id.into(), verdict(status, ms), 1))),
        )
    });
    let cases: Vec<Case> = plan
        .iter()
        .enumerate()
        .map(|(i, (scenario, _, _, expected))| {
            case(scenario, &i.to_string(), "", &[], "", *expected)
        })
        .collect();
    let run = run_all(5, &evaluator, cases).await;
    let s = &run.overall;
    assert_eq!(
        (s.total, s.correct, s.incorrect, s.abstained, s.errors),
        (5, 2, 1, 1, 1)
    );
    assert_eq!(s.accuracy, 0.4);
    assert_eq!((s.p50_millis, s.p95_millis), (3.0, 5.0));
    let names: Vec<_> = run.scenarios.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["b", "a", "c"]);
    let a = &run.scenarios[1].1;
    assert_eq!((a.total, a.incorrect, a.errors, a.accuracy), (2, 1, 1, 0.0));
}

#[tokio::test(start_paused = true)]
async fn rule_52_stopping_a_run_cancels_in_flight_work_and_marks_it_incomplete() {
    let evaluator = Recording::new(|id: &str| {
        let delay = if id == "slow" { 1_000_000 } else { 1 };
        (
            delay,
            Ok(Some(respond(id.into(), verdict(Status::Pass, 1), 1))),
        )
    });
    let cases = vec![
        case("s", "fast", "", &[], "", true),
        case("s", "slow", "", &[], "", true),
        case("s", "later", "", &[], "", true),
    ];
    let stop = tokio::time::sleep(Duration::from_secs(5));
    let run = Runner::new(2)
        .unwrap()
        .run_until(&evaluator, cases, (), stop)
        .await
        .unwrap();
    assert!(!run.complete);
    let ids: Vec<_> = run.rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(
        ids,
        ["fast", "later"],
        "finished rows are kept, the slow one was cancelled"
    );
    assert_eq!(
        evaluator.in_flight.load(Ordering::SeqCst),
        1,
        "the slow evaluation was dropped mid-flight"
    );
    assert_eq!(run.overall.total, 2);
}

#[tokio::test(start_paused = true)]
async fn dropping_the_run_future_produces_no_report() {
    let evaluator = Recording::new(|id: &str| {
        (
            1_000_000,
            Ok(Some(respond(id.into(), verdict(Status::Pass, 1), 1))),
        )
    });
    let runner = Runner::new(1).unwrap();
    let outcome = tokio::time::timeout(
        Duration::from_secs(1),
        runner.run(&evaluator, vec![case("s", "never", "", &[], "", true)], ()),
    )
    .await;
    assert!(outcome.is_err());
}

#[test]
fn rows_and_summaries_hold_no_raw_text() {
    let row = Row {
        repeats: None,
        scenario: "s".into(),
        id: "a".into(),
        expected_pass: true,
        pass: true,
        score: 1.0,
        verdict: verdict(Status::Pass, 3),
        expected_findings: None,
        weight: 1.0,
    };
    let json: Value = serde_json::to_value(&row).unwrap();
    let keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        [
            "scenario",
            "id",
            "expected_pass",
            "pass",
            "score",
            "verdict"
        ]
    );
}

#[tokio::test]
async fn a_cases_weight_is_carried_on_its_row_and_written_only_when_not_one() {
    let backend = backend_fn(|_: Request| async move { Ok(noul(0.95, None)) });
    let evaluator = JevEvaluator::new(
        Judge::new(backend, Duration::from_secs(2)).unwrap(),
        refund_answer_v1(),
    );
    let evidence = ["Business record: no refund has been executed"];
    let plain = case("s", "plain", "q", &evidence, HONEST, true);
    let sampled = Case {
        weight: 1.0 / 0.3,
        ..case("s", "sampled", "q", &evidence, HONEST, true)
    };
    let run = run_all(2, &evaluator, vec![plain, sampled]).await;
    let weights: Vec<f64> = run.rows.iter().map(|row| row.weight).collect();
    assert_eq!(weights, [1.0, 1.0 / 0.3]);
    let json: Vec<Value> = run
        .rows
        .iter()
        .map(|row| serde_json::to_value(row).unwrap())
        .collect();
    assert!(json[0].get("weight").is_none(), "absent when 1");
    assert_eq!(json[1]["weight"], 1.0 / 0.3);
    // Read back: absent is 1.
    let back: Vec<Row> = json
        .into_iter()
        .map(|row| serde_json::from_value(row).unwrap())
        .collect();
    assert_eq!(back, run.rows);
}
