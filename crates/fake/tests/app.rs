//! The router in-process, as `fn app(state) -> Router` is meant to be used: tower `oneshot`.

use axum::body::{Body, to_bytes};
use axum::http::{Request, StatusCode};
use jevjudge_fake::{Config, FakeState, Fault, FaultPlan, answer, app};
use serde_json::Value;
use tower::ServiceExt as _;

use crate::util::{is_request_id, mixed_request};

fn post(body: &Value) -> Request<Body> {
    Request::post("/v1/systemone")
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a request")
}

#[tokio::test]
async fn the_router_answers_like_the_pure_answerer() {
    let state = FakeState::new(Config::default());
    let response = app(state.clone())
        .oneshot(post(&mixed_request()))
        .await
        .expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
    assert!(
        response
            .headers()
            .get("x-typesafe-request-id")
            .and_then(|v| v.to_str().ok())
            .is_some_and(is_request_id)
    );
    let bytes = to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("a body");
    let body: Value = serde_json::from_slice(&bytes).expect("JSON");
    assert_eq!(Ok(body), answer(&mixed_request()));
    assert_eq!(state.request_count(), 1);
    assert_eq!(state.journal().len(), 1);
}

#[tokio::test]
async fn the_router_applies_the_plan() {
    let state = FakeState::new(Config::default());
    state.script(FaultPlan::new().then(Fault::Overloaded));
    let response = app(state.clone())
        .oneshot(post(&mixed_request()))
        .await
        .expect("infallible");
    assert_eq!(response.status().as_u16(), 529);
    let response = app(state)
        .oneshot(post(&mixed_request()))
        .await
        .expect("infallible");
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_pure_answerer_rejects_like_the_server() {
    let mut request = mixed_request();
    request["model"] = Value::from("jev-typo");
    let rejection = answer(&request).expect_err("an unknown model");
    assert_eq!(rejection.status, 400);
    assert_eq!(
        rejection.body["detail"]["message"],
        "Unknown model: jev-typo"
    );
}
