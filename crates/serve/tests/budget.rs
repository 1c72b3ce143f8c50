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

#[tokio::test]
async fn a_budget_above_the_cap_times_out_at_the_cap() {
    let config = Config {
        default_budget: Duration::from_millis(200),
        max_budget: Duration::from_millis(400),
        ..Config::default()
    };
    let (_fake, service) = stalled_service(config).await;
    let started = Instant::now();
    let reply = service
        .review(
            "refund-answer-v1",
            &json!({"state": refund_state(), "budget_millis": 60_000}),
        )
        .await;
    let round_trip = started.elapsed();
    let elapsed = timeout_millis(&reply);
    assert!((400.0..900.0).contains(&elapsed), "elapsed {elapsed} ms");
    assert!(round_trip < Duration::from_secs(2), "{round_trip:?}");
}

#[tokio::test]
async fn a_budget_below_the_cap_is_honoured() {
    let config = Config {
        default_budget: Duration::from_millis(900),
        max_budget: Duration::from_secs(5),
        ..Config::default()
    };
    let (_fake, service) = stalled_service(config).await;
    let reply = service
        .review(
            "refund-answer-v1",
            &json!({"state": refund_state(), "budget_millis": 150}),
        )
        .await;
    let elapsed = timeout_millis(&reply);
    assert!((150.0..650.0).contains(&elapsed), "elapsed {elapsed} ms");
}

#[tokio::test]
async fn without_a_budget_the_default_applies() {
    let config = Config {
        default_budget: Duration::from_millis(250),
        max_budget: Duration::from_secs(5),
        ..Config::default()
    };
    let (_fake, service) = stalled_service(config).await;
    let reply = service
        .review("refund-answer-v1", &json!({"state": refund_state()}))
        .await;
    let elapsed = timeout_millis(&reply);
    assert!((250.0..750.0).contains(&elapsed), "elapsed {elapsed} ms");
}
