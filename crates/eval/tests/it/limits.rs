//! The runner with a shared limiter: waiting is not review time, a refused key
//! leaves the rest not run, and no case starts that could pass the input-token cap.

use std::{sync::Arc, time::Duration};

use jevjudge_client::{
    AttemptOutcome,
    limit::{LimitConfig, Limiter, Stop},
};
use jevjudge_eval::{Case, CaseInput, Evaluator, EvaluatorRequest, JevEvaluator, Run, Runner};
use jevjudge_judge::{Backend, BackendError, Criterion, Definition, Judge, Status, backend_fn};
use jevjudge_wire::{Answer, Detail, NoulAnswer, NoulQuestion, Request, Response, Usage};
use tokio::time::Instant;

fn definition() -> Definition {
    Definition::new(
        "limits-v1",
        vec![Criterion::new("supported", NoulQuestion::new("Supported?"), true, 0.2, 0.8).unwrap()],
    )
    .unwrap()
}

fn answer(input_tokens: u64) -> Response {
    Response {
        model: Some("fixture".into()),
        answers: vec![(
            "supported".into(),
            Answer::Noul(NoulAnswer { noul: Some(0.9) }),
        )],
        usage: Some(Usage {
            input_tokens,
            output_tokens: 1,
        }),
        raw_answers: None,
    }
}

/// An evaluator whose backend answers after `millis` ms, spending `input_tokens`, with a
/// review budget of `budget`.
fn sleepy(millis: u64, input_tokens: u64, budget: Duration) -> JevEvaluator<impl Backend> {
    let backend = backend_fn(move |_request: Request| async move {
        tokio::time::sleep(Duration::from_millis(millis)).await;
        Ok(answer(input_tokens))
    });
    JevEvaluator::new(Judge::new(backend, budget).unwrap(), definition())
}

/// `n` cases through a runner of `concurrency` sharing `limiter`, each request estimated at
/// `estimate` input tokens.
async fn run_limited(
    concurrency: usize,
    limiter: Arc<Limiter>,
    estimate: u64,
    evaluator: &impl Evaluator,
    n: usize,
) -> Run {
    Runner::new(concurrency)
        .unwrap()
        .limiter(limiter, move |_| estimate)
        .run(evaluator, cases(n), ())
        .await
        .unwrap()
}

fn cases(n: usize) -> Vec<Case> {
    (0..n)
        .map(|i| Case {
            scenario: "s".into(),
            id: format!("c{i}"),
            input: CaseInput::Evaluator(EvaluatorRequest {
                question: "q".into(),
                supporting_context: vec!["evidence".into()],
                answer: format!("answer {i}"),
            }),
            expected_pass: true,
            expected_findings: None,
            weight: 1.0,
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn time_waiting_for_a_slot_is_not_review_time() {
    let evaluator = sleepy(100, 10, Duration::from_millis(150));
    // The runner could start 8 at once, but the limiter lets one go at a time: the eighth
    // waits 700 ms, yet its review takes 100 ms of its 150 ms budget, not a timeout.
    let limiter = Limiter::new(LimitConfig::fixed(1));
    let start = Instant::now();
    let run = run_limited(8, limiter, 1, &evaluator, 8).await;
    assert_eq!(start.elapsed(), Duration::from_millis(800));
    assert!(run.complete);
    assert_eq!(run.overall.errors, 0);
    assert_eq!(run.overall.p95_millis, 100.0, "P95 stays review time");
    for row in &run.rows {
        assert_eq!(row.verdict.elapsed, Duration::from_millis(100));
    }
}

#[tokio::test(start_paused = true)]
async fn after_a_refused_key_no_new_case_starts_and_the_rest_are_not_run() {
    let limiter = Limiter::new(LimitConfig::fixed(2));
    let backend = {
        let limiter = limiter.clone();
        backend_fn(move |request: Request| {
            let limiter = limiter.clone();
            async move {
                let sent = Instant::now();
                tokio::time::sleep(Duration::from_millis(10)).await;
                // The third case's request meets a revoked key, as the client would report it.
                if request.state["assistant_answer"] == "answer 2" {
                    limiter.record_attempt(AttemptOutcome::Status(401), 1, sent, None);
                    return Err(BackendError::new(Detail::HttpStatus(401)));
                }
                limiter.record_attempt(AttemptOutcome::Status(200), 1, sent, None);
                Ok(answer(10))
            }
        })
    };
    let evaluator = JevEvaluator::new(
        Judge::new(backend, Duration::from_secs(1)).unwrap(),
        definition(),
    );
    let run = run_limited(4, limiter.clone(), 1, &evaluator, 10).await;
    assert!(!run.complete);
    assert_eq!(run.stopped, Some(Stop::KeyRefused { status: 401 }));
    let ids: Vec<&str> = run.rows.iter().map(|row| row.id.as_str()).collect();
    // c2 got the 401; c3 was already in flight beside it; nothing started after.
    assert_eq!(ids, ["c0", "c1", "c2", "c3"]);
    assert_eq!(run.rows[2].verdict.status, Status::Error);
    assert_eq!(limiter.snapshot().attempts.total, 4);
}

#[tokio::test(start_paused = true)]
async fn no_case_starts_that_could_pass_the_input_token_cap() {
    // Each request is estimated at 100 tokens and spends 90: 90 × 3 + 100 = 370 ≤ 400, a fifth
    // could reach 460.
    let evaluator = sleepy(10, 90, Duration::from_secs(1));
    let limiter = Limiter::new(LimitConfig {
        max_input_tokens: Some(400),
        ..LimitConfig::fixed(2)
    });
    let run = run_limited(2, limiter.clone(), 100, &evaluator, 10).await;
    assert_eq!(run.rows.len(), 4);
    assert_eq!(run.overall.input_tokens, Some(360));
    assert!(!run.complete);
    assert_eq!(
        run.stopped,
        Some(Stop::InputTokenCap {
            cap: 400,
            spent: 360,
            next_estimate: 100
        })
    );
}

#[tokio::test(start_paused = true)]
async fn one_limiter_is_shared_by_concurrent_runs() {
    let backend = Arc::new(backend_fn(|_request: Request| async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        Ok(answer(1))
    }));
    let limiter = Limiter::new(LimitConfig::fixed(2));
    let evaluator = JevEvaluator::new(
        Judge::new(backend, Duration::from_secs(1)).unwrap(),
        definition(),
    );
    let runner = Runner::new(8).unwrap().limiter(limiter, |_| 1);
    let start = Instant::now();
    let (a, b) = tokio::join!(
        runner.run(&evaluator, cases(4), ()),
        runner.run(&evaluator, cases(4), ())
    );
    assert!(a.unwrap().complete && b.unwrap().complete);
    // 8 reviews of 50 ms, two at a time across both runs.
    assert_eq!(start.elapsed(), Duration::from_millis(200));
}
