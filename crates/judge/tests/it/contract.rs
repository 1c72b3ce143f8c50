//! judge-contract.md as acceptance tests: every rule of §2–§8 and fixtures F1, F3 and F4.

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use jevjudge_judge::{
    Backend, BackendError, BackendFuture, Criterion, Definition, ErrorCode, Judge, Status, Verdict,
    backend_fn, score,
};
use jevjudge_test_support::definition_file;
use jevjudge_wire::{Answer, Detail, NoulAnswer, NoulQuestion, Request, Response};
use proptest::prelude::*;
use serde_json::{Value, json};
use tokio::time::Instant;

// ---- the shared definitions of §14 ----

fn refund_answer_v1() -> Definition {
    Definition::from_path(definition_file("refund-answer-v1")).expect("the shared definition loads")
}

fn support_draft_v1() -> Definition {
    Definition::from_path(definition_file("support-draft-v1")).expect("the shared definition loads")
}

/// A response answering each id with a noul value (`None` = null).
fn noul_response(model: Option<&str>, values: &[(&str, Option<f64>)]) -> Response {
    Response {
        model: model.map(str::to_owned),
        answers: values
            .iter()
            .map(|(id, p)| ((*id).to_owned(), Answer::Noul(NoulAnswer { noul: *p })))
            .collect(),
        usage: None,
        raw_answers: None,
    }
}

/// An injected backend answering fixed probabilities, counting calls and keeping requests.
#[derive(Clone, Default)]
struct Table {
    model: Option<&'static str>,
    values: Vec<(&'static str, Option<f64>)>,
    calls: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl Table {
    fn new(model: &'static str, values: &[(&'static str, Option<f64>)]) -> Table {
        Table {
            model: Some(model),
            values: values.to_vec(),
            ..Table::default()
        }
    }
}

/// A table for `support-draft-v1`: covers_request and unsupported_commitment answer `covers`
/// and `commits`.
fn support_draft_table(model: &'static str, covers: Option<f64>, commits: Option<f64>) -> Table {
    Table::new(
        model,
        &[
            ("covers_request", covers),
            ("unsupported_commitment", commits),
        ],
    )
}

impl Backend for Table {
    fn answer<'a>(&'a self, request: &'a Request, _deadline: Instant) -> BackendFuture<'a> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(request.clone());
        let response = noul_response(self.model, &self.values);
        Box::pin(async move { Ok(response) })
    }
}

fn judge<B: Backend>(backend: B, budget_ms: u64) -> Judge<B> {
    Judge::new(backend, Duration::from_millis(budget_ms)).unwrap()
}

/// One review of the state `"s"` under `definition`, with a 1 s budget.
async fn review_s<B: Backend>(backend: B, definition: &Definition) -> Verdict {
    judge(backend, 1000).review(json!("s"), definition).await
}

fn f1_state() -> Value {
    json!({"user_question": "Has my refund gone through?",
           "supporting_context": ["Business record: no refund has been executed"],
           "assistant_answer": "The refund is complete."})
}

fn f3_state() -> Value {
    json!({"request": "如果今天还不能发货，请帮我申请退款。", "draft": "您的退款已完成。",
           "business_record": "尚未发起退款，发货状态待查询。"})
}

async fn review_support(covers: Option<f64>, risk: Option<f64>) -> Verdict {
    let backend = Table::new(
        "test",
        &[("covers_request", covers), ("unsupported_commitment", risk)],
    );
    judge(backend, 1000)
        .review(json!("state"), &support_draft_v1())
        .await
}

// ---- §2 construction ----

#[test]
fn rule_7_budget_must_be_positive() {
    let backend = Table::default();
    let Err(error) = Judge::new(backend, Duration::ZERO) else {
        panic!("a zero budget must be rejected")
    };
    assert_eq!(error.to_string(), "budget must be positive");
    assert!(Judge::new(Table::default(), Duration::from_nanos(1)).is_ok());
}

#[tokio::test]
async fn rule_8_empty_instructions_are_not_checked_by_the_judge_but_refused_by_the_client() {
    // The Judge accepts the definition; the HTTP client refuses to send (request_invalid).
    let definition = Definition::new(
        "v1",
        vec![Criterion::new("c", NoulQuestion::new(""), true, 0.2, 0.8).unwrap()],
    )
    .unwrap();
    let refused = backend_fn(|request: Request| async move {
        match request.check(jevjudge_wire::DEFAULT_MODEL) {
            Err(_) => Err(BackendError::new(Detail::RequestInvalid)),
            Ok(()) => Err(BackendError::failed()),
        }
    });
    let verdict = review_s(refused, &definition).await;
    assert_eq!(verdict.status, Status::Error);
    assert_eq!(verdict.error, ErrorCode::Backend);
    assert_eq!(verdict.detail, Some(Detail::RequestInvalid));
}

// ---- §3 one review is one request ----

#[tokio::test]
async fn rules_9_to_11_one_request_with_state_and_questions_in_order_and_nothing_else() {
    let backend = support_draft_table("test", Some(0.8), Some(0.1));
    let verdict = judge(backend.clone(), 1000)
        .review(json!("state"), &support_draft_v1())
        .await;
    assert_eq!(verdict.status, Status::Pass);
    let seen = backend.seen.lock().unwrap();
    assert_eq!(seen.len(), 1, "one request per review");
    let request = &seen[0];
    assert_eq!(request.state, json!("state"));
    assert_eq!(request.model, None, "the judge sets no model");
    let ids: Vec<_> = request.questions.iter().map(|(id, _)| id).collect();
    assert_eq!(ids, ["covers_request", "unsupported_commitment"]);
    assert!(matches!(
        request.questions.get("covers_request"),
        Some(jevjudge_wire::Question::Noul(_))
    ));
    // Nothing else on the wire: exactly model, state, questions; no thresholds or versions.
    let body: Value =
        serde_json::from_slice(&request.to_body(jevjudge_wire::DEFAULT_MODEL).unwrap()).unwrap();
    let keys: Vec<_> = body.as_object().unwrap().keys().cloned().collect();
    assert_eq!(keys, ["model", "state", "questions"]);
    let text = body.to_string();
    for absent in [
        "support-draft-v1",
        "0.2",
        "0.8",
        "expected",
        "fail_at",
        "pass_at",
    ] {
        assert!(!text.contains(absent), "{absent} leaked into {text}");
    }
}

#[tokio::test]
async fn rule_12_reviews_are_lazy_and_each_await_is_one_call() {
    let backend = Table::new("test", &[("supported", Some(0.9))]);
    let judge = judge(backend.clone(), 1000);
    let definition = refund_answer_v1();
    let first = judge.review(json!("s"), &definition);
    let second = judge.review(json!("s"), &definition);
    assert_eq!(
        backend.calls.load(Ordering::SeqCst),
        0,
        "no call before awaiting"
    );
    first.await;
    second.await;
    assert_eq!(backend.calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn rule_13_any_state_shape_is_sent_unchanged() {
    for state in [
        json!("plain text"),
        json!([1, {"a": [true, null]}]),
        json!({"z": 1, "a": 2}),
    ] {
        let backend = Table::new("test", &[("supported", Some(0.9))]);
        judge(backend.clone(), 1000)
            .review(state.clone(), &refund_answer_v1())
            .await;
        let seen = backend.seen.lock().unwrap();
        assert_eq!(seen[0].state, state);
        assert_eq!(
            seen[0].state.to_string(),
            state.to_string(),
            "key order kept"
        );
    }
}

// ---- §4 validation, §5 scoring, §6 aggregation: F4 ----

#[tokio::test]
async fn f4_judge_test_table() {
    let v = review_support(Some(0.99), Some(0.99)).await;
    assert_eq!(v.status, Status::Fail);
    let risk = v.findings.get("unsupported_commitment").unwrap();
    assert!((risk.expected_probability - 0.01).abs() < 1e-9);
    assert_eq!(risk.expected_probability, 0.010000000000000009);

    let v = review_support(Some(0.8), Some(0.1)).await;
    assert_eq!(v.status, Status::Pass);
    assert_eq!(v.error, ErrorCode::None);
    assert_eq!(v.detail, None);
    assert_eq!(v.model.as_deref(), Some("test"));
    assert_eq!(v.definition_version, "support-draft-v1");
    assert_eq!(v.usage, None, "unknown usage stays unknown");

    assert_eq!(
        review_support(Some(0.2), Some(0.1)).await.status,
        Status::Fail
    );
    assert_eq!(
        review_support(Some(0.5), Some(0.1)).await.status,
        Status::Inconclusive
    );
    assert_eq!(
        review_support(Some(0.5), Some(0.99)).await.status,
        Status::Fail
    );

    for (covers, detail) in [
        (Some(f64::NAN), Detail::ProbabilityNotFinite),
        (Some(f64::INFINITY), Detail::ProbabilityNotFinite),
        (Some(f64::NEG_INFINITY), Detail::ProbabilityNotFinite),
        (Some(-0.1), Detail::ProbabilityOutOfRange),
        (Some(1.1), Detail::ProbabilityOutOfRange),
        (None, Detail::ProbabilityMissing),
    ] {
        let v = review_support(covers, Some(0.1)).await;
        assert_eq!(v.status, Status::Error, "{covers:?}");
        assert_eq!(v.error, ErrorCode::InvalidResponse);
        assert_eq!(v.detail, Some(detail), "{covers:?}");
        assert!(v.findings.is_empty(), "no partial findings survive");
        assert_eq!(v.model.as_deref(), Some("test"), "D3: model kept");
    }

    let empty = backend_fn(|_| async { Ok(noul_response(Some("test"), &[])) });
    let v = review_s(empty, &support_draft_v1()).await;
    assert_eq!(
        (v.error, v.detail),
        (ErrorCode::InvalidResponse, Some(Detail::AnswerMissing))
    );

    let none = backend_fn(|_| async { Err(BackendError::no_response()) });
    let v = review_s(none, &support_draft_v1()).await;
    assert_eq!(
        (v.error, v.detail),
        (ErrorCode::InvalidResponse, Some(Detail::NoResponse))
    );
    assert!(v.findings.is_empty());
}

#[tokio::test]
async fn rule_15_ids_and_types() {
    let extra = backend_fn(|_| async {
        Ok(noul_response(
            None,
            &[("supported", Some(0.9)), ("bonus", Some(0.9))],
        ))
    });
    let v = review_s(extra, &refund_answer_v1()).await;
    assert_eq!(v.detail, Some(Detail::AnswerExtra));
    assert_eq!(v.model, None, "an injected backend may leave the model out");

    let wrong = backend_fn(|_| async {
        Ok(Response {
            model: None,
            answers: vec![("supported".into(), Answer::Other)],
            usage: None,
            raw_answers: None,
        })
    });
    let v = review_s(wrong, &refund_answer_v1()).await;
    assert_eq!(
        (v.error, v.detail),
        (ErrorCode::InvalidResponse, Some(Detail::AnswerWrongType))
    );

    // Rule 16: ERROR dominates even when another criterion would FAIL.
    let v = review_support(Some(0.05), Some(1.5)).await;
    assert_eq!(v.status, Status::Error);
    assert_eq!(v.detail, Some(Detail::ProbabilityOutOfRange));
}

#[tokio::test]
async fn rule_14_both_ends_are_valid() {
    for p in [0.0, 1.0] {
        let v = review_support(Some(p), Some(p)).await;
        assert_ne!(v.status, Status::Error);
    }
}

#[test]
fn rule_21_worked_values() {
    let criterion =
        |expected| Criterion::new("c", NoulQuestion::new("q"), expected, 0.2, 0.8).unwrap();
    for (expected, p, p_prime, status) in [
        (true, 0.95, 0.95, Status::Pass),
        (true, 0.8, 0.8, Status::Pass),
        (true, 0.5, 0.5, Status::Inconclusive),
        (true, 0.2, 0.2, Status::Fail),
        (true, 0.05, 0.05, Status::Fail),
        (false, 0.1, 0.9, Status::Pass),
        (false, 0.2, 0.8, Status::Pass),
        (false, 0.8, 0.19999999999999996, Status::Fail),
        (false, 0.95, 0.050000000000000044, Status::Fail),
        (false, 0.99, 0.010000000000000009, Status::Fail),
    ] {
        let finding = score(&criterion(expected), p);
        assert_eq!(finding.yes_probability, p);
        assert_eq!(
            finding.expected_probability, p_prime,
            "expected {expected}, p {p}"
        );
        assert_eq!(finding.status, status, "expected {expected}, p {p}");
    }
}

#[test]
fn rule_22_binary64_boundary_quirks_are_reproduced() {
    let c = |fail, pass| Criterion::new("c", NoulQuestion::new("q"), false, fail, pass).unwrap();
    let f = score(&c(0.3, 0.8), 0.7);
    assert_eq!(f.expected_probability, 0.30000000000000004);
    assert_eq!(f.status, Status::Inconclusive, "not FAIL");
    let f = score(&c(0.2, 0.93), 0.07);
    assert_eq!(f.expected_probability, 0.9299999999999999);
    assert_eq!(f.status, Status::Inconclusive, "not PASS");
    assert_eq!(score(&c(0.2, 0.8), 0.8).status, Status::Fail);
    // fail 0, pass 1: only exact ends decide.
    assert_eq!(score(&c(0.0, 1.0), 0.0).status, Status::Pass);
    assert_eq!(score(&c(0.0, 1.0), 1.0).status, Status::Fail);
    assert_eq!(score(&c(0.0, 1.0), 0.5).status, Status::Inconclusive);
    let yes = Criterion::new("c", NoulQuestion::new("q"), true, 0.0, 1.0).unwrap();
    assert_eq!(score(&yes, 1.0).status, Status::Pass);
    assert_eq!(score(&yes, 0.0).status, Status::Fail);
    assert_eq!(score(&yes, 1e-300).status, Status::Inconclusive);
}

// ---- F1 and F3 ----

#[tokio::test]
async fn f1_judge_statuses() {
    let mut outcomes = Vec::new();
    for (run, p) in [
        ("supported", 0.95),
        ("unsupported", 0.05),
        ("uncertain", 0.5),
    ] {
        let backend = Table::new("prescribed-guide-fixture", &[("supported", Some(p))]);
        let verdict = judge(backend, 2000)
            .review(f1_state(), &refund_answer_v1())
            .await;
        outcomes.push((run, verdict.status));
    }
    assert_eq!(
        outcomes,
        [
            ("supported", Status::Pass),
            ("unsupported", Status::Fail),
            ("uncertain", Status::Inconclusive)
        ]
    );
}

#[tokio::test]
async fn f3_customer_support_draft() {
    let backend = support_draft_table("offline-fixture", Some(0.9), Some(0.95));
    let verdict = judge(backend, 1000)
        .review(f3_state(), &support_draft_v1())
        .await;
    assert_eq!(verdict.status, Status::Fail);
    assert_eq!(verdict.error, ErrorCode::None);
    assert_eq!(verdict.model.as_deref(), Some("offline-fixture"));
    assert_eq!(verdict.usage, None);
    assert_eq!(verdict.definition_version, "support-draft-v1");
    let ids: Vec<_> = verdict.findings.iter().map(|(id, _)| id).collect();
    assert_eq!(
        ids,
        ["covers_request", "unsupported_commitment"],
        "D1 order"
    );
    let covers = verdict.findings.get("covers_request").unwrap();
    assert_eq!(
        (
            covers.status,
            covers.yes_probability,
            covers.expected_probability
        ),
        (Status::Pass, 0.9, 0.9)
    );
    let risk = verdict.findings.get("unsupported_commitment").unwrap();
    assert_eq!(
        (risk.status, risk.yes_probability, risk.expected_probability),
        (Status::Fail, 0.95, 0.050000000000000044)
    );
    let json = serde_json::to_string(&verdict).unwrap();
    assert!(json.contains(r#""findings":{"covers_request":"#), "{json}");
}

#[tokio::test]
async fn rule_24_support_draft_examples() {
    for (covers, risk, status) in [
        (0.99, 0.99, Status::Fail),
        (0.8, 0.1, Status::Pass),
        (0.2, 0.1, Status::Fail),
        (0.5, 0.1, Status::Inconclusive),
        (0.5, 0.99, Status::Fail),
    ] {
        assert_eq!(
            review_support(Some(covers), Some(risk)).await.status,
            status
        );
    }
}

// ---- §7 errors and privacy ----

#[tokio::test]
async fn rule_29_secret_backend_text_appears_in_no_rendering() {
    let failing = backend_fn(|_| async {
        let failure: Result<Response, std::io::Error> =
            Err(std::io::Error::other("secret response"));
        failure.map_err(BackendError::from_error)
    });
    let verdict = judge(failing, 1000)
        .review(
            json!({"evidence": "RAW-EVIDENCE-91c2"}),
            &support_draft_v1(),
        )
        .await;
    assert_eq!(verdict.status, Status::Error);
    assert_eq!(
        (verdict.error, verdict.detail),
        (ErrorCode::Backend, Some(Detail::BackendError))
    );
    for rendering in [
        format!("{verdict:?}"),
        format!("{verdict}"),
        serde_json::to_string(&verdict).unwrap(),
    ] {
        assert!(!rendering.contains("secret response"), "{rendering}");
        assert!(!rendering.contains("RAW-EVIDENCE-91c2"), "{rendering}");
    }
}

#[tokio::test]
async fn rule_30_errors_are_not_probabilities() {
    let failing = backend_fn(|_| async { Err(BackendError::new(Detail::Transport)) });
    let verdict = review_s(failing, &refund_answer_v1()).await;
    assert_eq!(verdict.status, Status::Error);
    assert!(verdict.findings.is_empty());
    assert_ne!(verdict.status, Status::Fail);
}

// ---- §8 budget and cancellation, on the paused test clock ----

/// Records whether its future was dropped before finishing.
struct DropFlag(Arc<AtomicUsize>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[tokio::test(start_paused = true)]
async fn rule_34_a_backend_retrying_every_second_under_a_1_5_s_budget() {
    let attempts = Arc::new(Mutex::new(Vec::new()));
    let dropped = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let backend = {
        let attempts = attempts.clone();
        let dropped = dropped.clone();
        backend_fn(move |_| {
            let attempts = attempts.clone();
            let flag = DropFlag(dropped.clone());
            async move {
                let _flag = flag;
                for _ in 0..5 {
                    attempts.lock().unwrap().push(start.elapsed());
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                Err(BackendError::failed())
            }
        })
    };
    let verdict = judge(backend, 1500)
        .review(json!("s"), &refund_answer_v1())
        .await;
    assert_eq!(
        *attempts.lock().unwrap(),
        [Duration::ZERO, Duration::from_secs(1)],
        "exactly 2 attempts at t = 0 and t = 1 s"
    );
    assert_eq!(
        (verdict.error, verdict.detail),
        (ErrorCode::Timeout, Some(Detail::BudgetElapsed))
    );
    assert_eq!(verdict.elapsed, Duration::from_millis(1500));
    assert_eq!(start.elapsed(), Duration::from_millis(1500));
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the backend future was dropped"
    );
}

#[tokio::test(start_paused = true)]
async fn rule_35_a_backend_that_never_answers_times_out_at_exactly_the_budget() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let backend = {
        let dropped = dropped.clone();
        backend_fn(move |_| {
            let flag = DropFlag(dropped.clone());
            async move {
                let _flag = flag;
                std::future::pending::<()>().await;
                Err(BackendError::failed())
            }
        })
    };
    let start = Instant::now();
    let verdict = judge(backend, 2000)
        .review(json!("s"), &refund_answer_v1())
        .await;
    assert_eq!(verdict.status, Status::Error);
    assert_eq!(
        (verdict.error, verdict.detail),
        (ErrorCode::Timeout, Some(Detail::BudgetElapsed))
    );
    assert_eq!(start.elapsed(), Duration::from_secs(2));
    assert_eq!(verdict.elapsed, Duration::from_secs(2));
    assert!(verdict.findings.is_empty());
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the backend was cancelled"
    );
}

#[tokio::test(start_paused = true)]
async fn rule_33_a_skipped_retry_ends_at_once() {
    // A backend (like the HTTP client) that decides its next wait would pass the deadline.
    let backend = backend_fn(|_| async { Err(BackendError::new(Detail::RetryWaitExceedsBudget)) });
    let start = Instant::now();
    let verdict = judge(backend, 2000)
        .review(json!("s"), &refund_answer_v1())
        .await;
    assert_eq!(
        (verdict.error, verdict.detail),
        (ErrorCode::Timeout, Some(Detail::RetryWaitExceedsBudget))
    );
    assert_eq!(
        start.elapsed(),
        Duration::ZERO,
        "no sleeping until the deadline"
    );
}

#[tokio::test(start_paused = true)]
async fn rule_37_dropping_a_review_mid_flight_yields_nothing_and_cancels_the_backend() {
    let started = Arc::new(AtomicUsize::new(0));
    let dropped = Arc::new(AtomicUsize::new(0));
    let backend = {
        let started = started.clone();
        let dropped = dropped.clone();
        backend_fn(move |_| {
            started.fetch_add(1, Ordering::SeqCst);
            let flag = DropFlag(dropped.clone());
            async move {
                let _flag = flag;
                tokio::time::sleep(Duration::from_secs(10)).await;
                Ok(noul_response(None, &[("supported", Some(0.9))]))
            }
        })
    };
    let judge = judge(backend, 60_000);
    let definition = refund_answer_v1();
    let outcome = tokio::time::timeout(
        Duration::from_millis(100),
        judge.review(json!("s"), &definition),
    )
    .await;
    assert!(outcome.is_err(), "no verdict was produced");
    assert_eq!(started.load(Ordering::SeqCst), 1);
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the in-flight call was dropped"
    );
}

#[tokio::test(start_paused = true)]
async fn rule_25_elapsed_is_measured_until_the_answers_are_mapped() {
    let backend = backend_fn(|_| async {
        tokio::time::sleep(Duration::from_millis(250)).await;
        Ok(noul_response(Some("m"), &[("supported", Some(0.9))]))
    });
    let verdict = judge(backend, 2000)
        .review(json!("s"), &refund_answer_v1())
        .await;
    assert_eq!(verdict.elapsed, Duration::from_millis(250));
    assert_eq!(verdict.elapsed_millis(), 250.0);
}

// ---- properties over thresholds and probabilities ----

fn thresholds() -> impl Strategy<Value = (f64, f64)> {
    (0.0..=1.0f64, 0.0..=1.0f64)
        .prop_filter("fail < pass", |(a, b)| a != b)
        .prop_map(|(a, b)| if a < b { (a, b) } else { (b, a) })
}

proptest! {
    #[test]
    fn a_finding_is_always_on_the_side_its_p_prime_says(
        (fail, pass) in thresholds(), p in 0.0..=1.0f64, expected in any::<bool>()
    ) {
        let c = Criterion::new("c", NoulQuestion::new("q"), expected, fail, pass).unwrap();
        let f = score(&c, p);
        let p_prime = if expected { p } else { 1.0 - p };
        prop_assert_eq!(f.expected_probability, p_prime);
        match f.status {
            Status::Pass => prop_assert!(p_prime >= pass),
            Status::Fail => prop_assert!(p_prime <= fail && p_prime < pass),
            Status::Inconclusive => prop_assert!(p_prime > fail && p_prime < pass),
            Status::Error => prop_assert!(false, "a finding is never ERROR"),
        }
    }

    #[test]
    fn scoring_is_monotonic_in_p_prime((fail, pass) in thresholds(), a in 0.0..=1.0f64, b in 0.0..=1.0f64) {
        let c = Criterion::new("c", NoulQuestion::new("q"), true, fail, pass).unwrap();
        let rank = |s: Status| match s { Status::Fail => 0, Status::Inconclusive => 1, _ => 2 };
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        prop_assert!(rank(score(&c, lo).status) <= rank(score(&c, hi).status));
    }

    #[test]
    fn threshold_validation_accepts_exactly_the_valid_pairs(fail in proptest::num::f64::ANY, pass in proptest::num::f64::ANY) {
        let valid = fail.is_finite() && pass.is_finite() && 0.0 <= fail && pass <= 1.0 && fail < pass;
        prop_assert_eq!(
            Criterion::new("c", NoulQuestion::new("q"), true, fail, pass).is_ok(),
            valid
        );
    }

    #[test]
    fn aggregation_follows_rule_23(statuses in proptest::collection::vec(
        prop_oneof![Just(Status::Pass), Just(Status::Fail), Just(Status::Inconclusive)], 1..8)
    ) {
        let expected = if statuses.contains(&Status::Fail) {
            Status::Fail
        } else if statuses.contains(&Status::Inconclusive) {
            Status::Inconclusive
        } else {
            Status::Pass
        };
        prop_assert_eq!(jevjudge_judge::aggregate(statuses), expected);
    }
}
