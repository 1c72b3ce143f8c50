//! `--rate-limit`, `--token-rate`, `--overload-rate` and `--retry-after`: real HTTP on 127.0.0.1
//! where no timing matters, the router under tokio's paused clock where it does.

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use jevjudge_fake::{Config, FakeServer, FakeState, Fault, FaultPlan, app};
use serde_json::{Value, json};
use tower::ServiceExt as _;

use crate::util::{noul_request, post_raw, server};

fn rate(text: &str) -> Option<jevjudge_fake::Rate> {
    Some(text.parse().expect("a rate"))
}

fn body() -> Vec<u8> {
    serde_json::to_vec(&noul_request()).expect("serialisable")
}

/// The status of one noul request to `server` with this `Authorization` value.
async fn sent(server: &FakeServer, authorization: Option<&str>) -> u16 {
    post_raw(server, body(), authorization).await.status
}

#[tokio::test]
async fn over_the_rate_limit_is_429_with_the_documented_body_and_no_retry_after() {
    // One request a minute, bursts of two: the third request within the test is refused.
    let server = server(Config {
        rate_limit: rate("1/m"),
        burst: Some(2),
        ..Config::default()
    })
    .await;
    let statuses: Vec<u16> = {
        let mut statuses = Vec::new();
        for _ in 0..3 {
            statuses.push(sent(&server, Some("Bearer K")).await);
        }
        statuses
    };
    assert_eq!(statuses, [200, 200, 429]);
    let refused = post_raw(&server, body(), Some("Bearer K")).await;
    assert_eq!(refused.status, 429);
    assert_eq!(
        refused.json(),
        json!({"detail": {"error_type": "rate_limit_error", "message": "Rate limit exceeded. Please slow down."}})
    );
    assert_eq!(refused.header("retry-after"), None);
    assert_eq!(refused.header("retry-after-ms"), None);
    assert!(refused.header("x-typesafe-request-id").is_some());
    // Another key has its own bucket; requests without a key share one.
    assert_eq!(sent(&server, Some("Bearer L")).await, 200);
    assert_eq!(sent(&server, None).await, 200);
    assert_eq!(sent(&server, None).await, 200);
    assert_eq!(sent(&server, None).await, 429);
    // Every request was received and journaled, refused or not.
    assert_eq!(server.request_count(), 8);
    server.shutdown().await;
}

#[tokio::test]
async fn retry_after_is_sent_only_when_configured() {
    let server = server(Config {
        rate_limit: rate("1/h"),
        retry_after: Some(7),
        ..Config::default()
    })
    .await;
    assert_eq!(sent(&server, None).await, 200);
    let refused = post_raw(&server, body(), None).await;
    assert_eq!(refused.status, 429);
    assert_eq!(refused.header("retry-after"), Some("7"));
    server.shutdown().await;
}

#[tokio::test]
async fn over_the_overload_rate_is_529_for_every_caller() {
    // The overload bucket holds one second's worth, at least one request.
    let server = server(Config {
        overload_rate: rate("1/h"),
        retry_after: Some(3),
        ..Config::default()
    })
    .await;
    assert_eq!(sent(&server, Some("Bearer A")).await, 200);
    let refused = post_raw(&server, body(), Some("Bearer B")).await;
    assert_eq!(refused.status, 529);
    assert_eq!(
        refused.json(),
        json!({"detail": {"error_type": "overloaded_error", "message": "The server is overloaded. Please retry later."}})
    );
    assert_eq!(refused.header("retry-after"), Some("3"));
    assert_eq!(sent(&server, None).await, 529);
    server.shutdown().await;
}

#[tokio::test]
async fn a_wrong_key_gets_401_not_429_and_costs_nothing() {
    let server = server(Config {
        key: Some("K".into()),
        rate_limit: rate("1/h"),
        ..Config::default()
    })
    .await;
    for _ in 0..3 {
        assert_eq!(sent(&server, Some("Bearer nope")).await, 401);
    }
    assert_eq!(sent(&server, None).await, 403);
    assert_eq!(sent(&server, Some("Bearer K")).await, 200);
    assert_eq!(sent(&server, Some("Bearer K")).await, 429);
    server.shutdown().await;
}

#[tokio::test]
async fn a_scripted_status_fault_wins_and_costs_nothing() {
    let server = server(Config {
        rate_limit: rate("1/h"),
        ..Config::default()
    })
    .await;
    server.script(FaultPlan::new().then(Fault::Overloaded));
    assert_eq!(sent(&server, None).await, 529);
    assert_eq!(sent(&server, None).await, 200);
    assert_eq!(sent(&server, None).await, 429);
    server.shutdown().await;
}

async fn status(state: &FakeState) -> u16 {
    status_of(state, body()).await
}

async fn status_of(state: &FakeState, body: Vec<u8>) -> u16 {
    let request = Request::post("/v1/systemone")
        .header("content-type", "application/json")
        .header("authorization", "Bearer K")
        .body(Body::from(body))
        .expect("a request");
    app(state.clone())
        .oneshot(request)
        .await
        .expect("infallible")
        .status()
        .as_u16()
}

#[tokio::test(start_paused = true)]
async fn the_bucket_refills_at_the_rate_on_the_paused_clock() {
    let state = FakeState::new(Config {
        rate_limit: rate("200/s"),
        ..Config::default()
    });
    let mut statuses = Vec::new();
    for _ in 0..201 {
        statuses.push(status(&state).await);
    }
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 200);
    assert_eq!(statuses[200], 429);
    // One request comes back every 5 ms.
    tokio::time::advance(Duration::from_millis(4)).await;
    assert_eq!(status(&state).await, 429);
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(status(&state).await, 200);
    assert_eq!(status(&state).await, 429);
    // Over one simulated second of steady asking, exactly the rate gets through.
    let mut passed = 0;
    for _ in 0..1_000 {
        tokio::time::advance(Duration::from_millis(1)).await;
        if status(&state).await == 200 {
            passed += 1;
        }
    }
    assert_eq!(passed, 200);
}

#[tokio::test(start_paused = true)]
async fn the_limiter_answers_before_the_latency() {
    let state = FakeState::new(Config {
        rate_limit: rate("1/s"),
        latency: Duration::from_millis(400),
        ..Config::default()
    });
    let start = tokio::time::Instant::now();
    assert_eq!(status(&state).await, 200);
    assert_eq!(start.elapsed(), Duration::from_millis(399));
    let refused = tokio::time::Instant::now();
    assert_eq!(status(&state).await, 429);
    assert_eq!(refused.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn the_token_rate_counts_body_bytes_over_four() {
    // 1 000 tokens a second: a body of 2 000 bytes costs 500, so two pass and the third waits
    // until 500 tokens have come back, half a second later.
    let state = FakeState::new(Config {
        token_rate: rate("1000/s"),
        ..Config::default()
    });
    let small = body();
    let mut request = noul_request();
    request["state"] = Value::String(String::new());
    let bare = serde_json::to_vec(&request).expect("serialisable").len();
    request["state"] = Value::String("x".repeat(2_000 - bare));
    let big = serde_json::to_vec(&request).expect("serialisable");
    assert_eq!(big.len(), 2_000);
    assert!(small.len() < 200);
    assert_eq!(status_of(&state, big.clone()).await, 200);
    assert_eq!(status_of(&state, big.clone()).await, 200);
    assert_eq!(status_of(&state, big.clone()).await, 429);
    // A small body (under 200 bytes, under 50 tokens) fits what 50 ms bring back.
    tokio::time::advance(Duration::from_millis(50)).await;
    assert_eq!(status(&state).await, 200);
    assert_eq!(status_of(&state, big.clone()).await, 429);
    tokio::time::advance(Duration::from_millis(500)).await;
    assert_eq!(status_of(&state, big).await, 200);
}
