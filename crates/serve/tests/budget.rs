//! Budgets: a caller's `budget_millis` is honoured below the server's maximum and capped at
//! it; the default applies when none is given (judge-contract D11, rule 32).

use std::time::Duration;

use jevjudge_fake::{Fault, FaultPlan};
use jevjudge_serve::Config;
use serde_json::json;
use tokio::time::Instant;

use crate::util::{Service, fake, refund_state};

async fn stalled_service(config: Config) -> (jevjudge_fake::FakeServer, Service) {
    let fake = fake(Default::default()).await;
    fake.script(FaultPlan::always(Fault::Stall));
    let service = Service::in_front_of(&fake, config).await;
    (fake, service)
}

fn timeout_millis(reply: &crate::util::Reply) -> f64 {
    assert_eq!(
        reply.status,
        200,
        "a timed-out review is a verdict: {}",
        reply.text()
    );
    let verdict = reply.json();
    assert_eq!(verdict["status"], "ERROR");
    assert_eq!(verdict["error"], "TIMEOUT");
    assert_eq!(verdict["detail"], "budget_elapsed");
    verdict["elapsed_millis"].as_f64().unwrap()
}

/// The service's default budget and its cap.
fn budgets(default_budget: Duration, max_budget: Duration) -> Config {
    Config {
        default_budget,
        max_budget,
        ..Config::default()
    }
}

#[tokio::test]
async fn a_budget_above_the_cap_times_out_at_the_cap() {
    let config = budgets(Duration::from_millis(200), Duration::from_millis(400));
    let (_fake, service) = stalled_service(config).await;
    let started = Instant::now();
    let reply = service.review_refund_within(60_000).await;
    let round_trip = started.elapsed();
    let elapsed = timeout_millis(&reply);
    assert!((400.0..900.0).contains(&elapsed), "elapsed {elapsed} ms");
    assert!(round_trip < Duration::from_secs(2), "{round_trip:?}");
}

#[tokio::test]
async fn a_budget_below_the_cap_is_honoured() {
    let config = budgets(Duration::from_millis(900), Duration::from_secs(5));
    let (_fake, service) = stalled_service(config).await;
    let reply = service.review_refund_within(150).await;
    let elapsed = timeout_millis(&reply);
    assert!((150.0..650.0).contains(&elapsed), "elapsed {elapsed} ms");
}

#[tokio::test]
async fn without_a_budget_the_default_applies() {
    let config = budgets(Duration::from_millis(250), Duration::from_secs(5));
    let (_fake, service) = stalled_service(config).await;
    let reply = service.review_refund().await;
    let elapsed = timeout_millis(&reply);
    assert!((250.0..750.0).contains(&elapsed), "elapsed {elapsed} ms");
}

/// One review slot; every backend call takes 1 s (on tokio's paused clock).
async fn one_slow_slot() -> jevjudge_serve::ServeState {
    let backend = jevjudge_judge::backend_fn(|_request| async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        Ok(jevjudge_wire::Response::from_slice(
            br#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":0.95}}}"#,
        )
        .expect("a valid response"))
    });
    let config = Config {
        max_concurrent: 1,
        max_budget: Duration::from_secs(10),
        ..Config::default()
    };
    crate::util::Built::builder(backend, crate::util::definitions())
        .config(config)
        .build()
        .await
        .expect("a valid configuration")
        .state()
        .clone()
}

async fn review_in_process(
    state: &jevjudge_serve::ServeState,
    budget_millis: u64,
) -> serde_json::Value {
    use tower::ServiceExt as _;
    let body = json!({"state": refund_state(), "budget_millis": budget_millis});
    let request = axum::http::Request::post("/v1/reviews/refund-answer-v1")
        .body(axum::body::Body::from(serde_json::to_vec(&body).unwrap()))
        .unwrap();
    let response = jevjudge_serve::app(state.clone())
        .oneshot(request)
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

#[tokio::test(start_paused = true)]
async fn the_budget_includes_the_wait_for_a_backend_slot() {
    let state = one_slow_slot().await;
    // The first review holds the only slot for 1 s.
    let first = tokio::spawn({
        let state = state.clone();
        async move { review_in_process(&state, 5_000).await }
    });
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(
        state
            .render_metrics()
            .contains("jevjudge_reviews_in_flight 1\n")
    );

    // The second asks for 1.5 s: 1 s (less the 1 ms above) waiting, so about 0.5 s to review,
    // which a 1 s backend call cannot meet.
    let started = Instant::now();
    let verdict = review_in_process(&state, 1_500).await;
    let round_trip = started.elapsed();
    assert_eq!(verdict["status"], "ERROR", "{verdict}");
    assert_eq!(verdict["error"], "TIMEOUT");
    assert_eq!(verdict["detail"], "budget_elapsed");
    let review_millis = verdict["elapsed_millis"].as_f64().unwrap();
    assert!((450.0..=501.0).contains(&review_millis), "{review_millis}");
    // End to end: never past the budget (the paused clock makes this exact).
    assert!(round_trip <= Duration::from_millis(1_500), "{round_trip:?}");
    assert!(round_trip >= Duration::from_millis(1_499), "{round_trip:?}");

    let first = first.await.unwrap();
    assert_eq!(first["status"], "PASS", "{first}");
}
