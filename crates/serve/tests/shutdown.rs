//! Graceful shutdown: in-flight reviews finish, then the server stops accepting and returns.

use std::time::Duration;

use jevjudge_serve::Config;
use serde_json::json;

use crate::util::{Service, eventually, fake_with_latency, has_sample, refund_state};

#[tokio::test]
async fn shutdown_finishes_in_flight_reviews() {
    let fake = fake_with_latency(Duration::from_millis(400)).await;
    let mut service = Service::in_front_of(&fake, Config::default()).await;
    let url = service.url.clone();
    let state = service.state.clone();

    let in_flight = tokio::spawn({
        let url = url.clone();
        async move {
            let reply = crate::util::caller()
                .post(format!("{url}/v1/reviews/refund-answer-v1"))
                .body(serde_json::to_vec(&json!({"state": refund_state()})).unwrap())
                .send()
                .await
                .expect("the in-flight review is answered");
            (
                reply.status().as_u16(),
                reply.text().await.unwrap_or_default(),
            )
        }
    });
    eventually(|| has_sample(&state.render_metrics(), "jevjudge_reviews_in_flight 1")).await;

    service.begin_stop();
    let (status, verdict) = in_flight.await.unwrap();
    assert_eq!(status, 200);
    assert!(
        verdict.contains("\"definition_version\":\"refund-answer-v1\""),
        "{verdict}"
    );
    assert!(!verdict.contains("\"status\":\"ERROR\""), "{verdict}");
    service.stopped().await.unwrap();

    // Stopped: new connections are refused.
    let refused = crate::util::caller()
        .get(format!("{url}/healthz"))
        .send()
        .await;
    assert!(refused.is_err(), "the server still answers after shutdown");
}

#[tokio::test]
async fn an_idle_keep_alive_connection_does_not_hold_shutdown_up() {
    let fake = fake_with_latency(Duration::ZERO).await;
    let service = Service::in_front_of(&fake, Config::default()).await;
    let caller = crate::util::caller();
    let reply = caller
        .get(format!("{}/healthz", service.url))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let started = tokio::time::Instant::now();
    service.stop().await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    drop(caller);
}
