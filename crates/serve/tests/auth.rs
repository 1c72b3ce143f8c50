//! Callers' bearer tokens: 401 without a valid one on `/v1/*` and `/metrics`; health and the
//! OpenAPI document stay open.

use jevjudge_serve::{AuthTokens, Config};
use serde_json::json;

use crate::util::{Service, fake_answering, refund_state, supported_service};

fn with_tokens(tokens: &str) -> Config {
    Config {
        auth_tokens: AuthTokens::parse(tokens).unwrap(),
        ..Config::default()
    }
}

#[tokio::test]
async fn reviews_need_one_of_the_tokens() {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let service = Service::in_front_of(
        &fake,
        with_tokens("tok-alpha-0123456789,tok-beta-0123456789"),
    )
    .await;
    let body = serde_json::to_vec(&json!({"state": refund_state()})).unwrap();

    for headers in [
        vec![],
        vec![("authorization", "Bearer tok-gamma-0123456789")],
        vec![("authorization", "Bearer tok-alpha-012345678")],
        vec![("authorization", "Bearer tok-alpha-0123456789X")],
        vec![("authorization", "Basic dG9rLWFscGhh")],
        vec![("authorization", "tok-alpha-0123456789")],
    ] {
        let reply = service
            .post("refund-answer-v1", body.clone(), &headers)
            .await;
        assert_eq!(reply.status, 401, "{headers:?}");
        assert_eq!(reply.error_code(), "unauthorized");
        assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
        assert!(reply.header("x-request-id").is_some());
    }
    assert_eq!(fake.request_count(), 0, "nothing reached the backend");

    for token in ["Bearer tok-alpha-0123456789", "bearer tok-beta-0123456789"] {
        let reply = service
            .post(
                "refund-answer-v1",
                body.clone(),
                &[("authorization", token)],
            )
            .await;
        assert_eq!(reply.status, 200, "{token}");
        assert_eq!(reply.json()["status"], "PASS");
    }
}

#[tokio::test]
async fn auth_comes_before_version_and_body_checks() {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let service = Service::in_front_of(&fake, with_tokens("tok-alpha-0123456789")).await;
    let reply = service
        .post("no-such-version", b"not json".to_vec(), &[])
        .await;
    assert_eq!(reply.status, 401);
}

#[tokio::test]
async fn definitions_and_metrics_are_protected_health_and_openapi_are_not() {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let service = Service::in_front_of(&fake, with_tokens("tok-alpha-0123456789")).await;
    for path in ["/v1/definitions", "/metrics"] {
        assert_eq!(service.get(path).await.status, 401, "{path}");
        let reply = service
            .call(
                reqwest::Method::GET,
                path,
                &[("authorization", "Bearer tok-alpha-0123456789")],
            )
            .await;
        assert_eq!(reply.status, 200, "{path}");
    }
    for path in ["/healthz", "/openapi.json"] {
        assert_eq!(service.get(path).await.status, 200, "{path}");
    }
    let document = service.get("/openapi.json").await.json();
    assert_eq!(
        document["paths"]["/v1/reviews/{version}"]["post"]["security"],
        json!([{"bearer": []}])
    );
}

#[tokio::test]
async fn without_tokens_no_header_is_needed() {
    let (_fake, service) = supported_service().await;
    let reply = service.review_refund().await;
    assert_eq!(reply.status, 200);
    assert_eq!(service.get("/metrics").await.status, 200);
}
