//! What goes on the wire, what a 200 becomes, and what errors keep (scripted transport).

use jevjudge_client::{CallOptions, ErrorKind, Method, USER_AGENT};
use jevjudge_wire::{AnswerError, DEFAULT_MODEL, Detail, Questions, Request, RequestError, Usage};
use serde_json::json;

use crate::support::*;

#[tokio::test(start_paused = true)]
async fn the_request_carries_the_exact_body_and_headers() {
    let script = Scripted::always(ok());
    let client = builder(script.clone()).build().unwrap();
    let request = noul_request();
    client
        .system_one(&request, CallOptions::default())
        .await
        .unwrap();
    let sent = &script.sent()[0].request;
    assert_eq!(sent.method, Method::Post);
    assert_eq!(sent.url, "https://api.typesafe.ai/v1/systemone");
    assert_eq!(sent.body, request.to_body(DEFAULT_MODEL).unwrap());
    let names: Vec<&str> = sent.headers.iter().map(|(name, _)| *name).collect();
    assert_eq!(
        names,
        ["Authorization", "Content-Type", "Accept", "User-Agent"]
    );
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert_eq!(sent.header("accept"), Some("application/json"));
    assert_eq!(sent.header("user-agent"), Some(USER_AGENT));
    assert_eq!(USER_AGENT, concat!("jevjudge/", env!("CARGO_PKG_VERSION")));
}

#[tokio::test(start_paused = true)]
async fn questions_keep_their_order_and_the_request_model_wins() {
    let script = Scripted::always(respond(500, "{}"));
    let client = builder(script.clone()).retries(0).build().unwrap();
    let mut request = mixed_request();
    request.model = Some("jev-1.13.0".into());
    let _ = client.system_one(&request, CallOptions::default()).await;
    let body: serde_json::Value = serde_json::from_slice(&script.sent()[0].request.body).unwrap();
    let ids = jevjudge_test_support::keys(&body["questions"]);
    assert_eq!(ids, ["zeta", "queue", "alpha"]);
    assert_eq!(body["model"], "jev-1.13.0");
    let keys = jevjudge_test_support::keys(&body);
    assert_eq!(keys, ["model", "state", "questions"]);
}

#[tokio::test(start_paused = true)]
async fn the_configured_model_is_sent_and_reported() {
    let script = Scripted::always(ok());
    let client = builder(script.clone())
        .model("jev-preview")
        .build()
        .unwrap();
    let exchange = call(&client).await.unwrap();
    assert_eq!(exchange.requested_model, "jev-preview");
    assert_eq!(exchange.response.model.as_deref(), Some("jev-1.13.0"));
    assert_eq!(
        exchange.response.usage,
        Some(Usage {
            input_tokens: 312,
            output_tokens: 20
        })
    );
    let body: serde_json::Value = serde_json::from_slice(&script.sent()[0].request.body).unwrap();
    assert_eq!(body["model"], "jev-preview");
}

#[tokio::test(start_paused = true)]
async fn a_refused_request_sends_nothing() {
    let script = Scripted::always(ok());
    let client = builder(script.clone()).build().unwrap();
    let cases = [
        (
            Request::new(json!(null), noul_request().questions),
            "null state",
        ),
        (
            Request::new(json!("s"), Questions::default()),
            "no questions",
        ),
        (
            Request {
                model: Some("  ".into()),
                ..noul_request()
            },
            "blank model",
        ),
    ];
    for (request, why) in cases {
        let error = client
            .system_one(&request, CallOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(error.kind(), ErrorKind::RequestRefused(_)),
            "{why}"
        );
        assert_eq!(error.detail(), Detail::RequestInvalid, "{why}");
        assert_eq!(error.attempts(), 0);
    }
    assert!(script.sent().is_empty());
    let error = client
        .system_one(
            &Request::new(json!("s"), Questions::default()),
            CallOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(
        error.kind(),
        &ErrorKind::RequestRefused(RequestError::QuestionsEmpty)
    );
}

#[tokio::test(start_paused = true)]
async fn a_200_with_bad_answers_is_never_retried_and_keeps_model_and_usage() {
    let body = r#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":1.5}},"usage":{"input_tokens":300,"output_tokens":20}}"#;
    let script = Scripted::always(respond(200, body));
    let client = builder(script.clone()).build().unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(
        error.kind(),
        &ErrorKind::InvalidAnswers(AnswerError::ProbabilityOutOfRange {
            id: "supported".into()
        })
    );
    assert_eq!(error.detail(), Detail::ProbabilityOutOfRange);
    assert_eq!(error.status(), Some(200));
    assert_eq!(error.model(), Some("jev-1.13.0"));
    assert_eq!(
        error.usage(),
        Some(Usage {
            input_tokens: 300,
            output_tokens: 20
        })
    );
    assert_eq!(error.request_id(), Some("req_200"));
    assert_eq!(script.sent().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn unreadable_200_bodies_are_body_unreadable() {
    let cases = [
        ")]}'\n{\"model\":\"m\",\"answers\":{}}",
        r#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":NaN}}}"#,
        "",
        "[]",
        r#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":0.5}"#,
    ];
    for body in cases {
        let script = Scripted::always(respond(200, body));
        let client = builder(script.clone()).build().unwrap();
        let error = call(&client).await.unwrap_err();
        assert_eq!(error.detail(), Detail::BodyUnreadable, "{body:?}");
        assert_eq!(error.model(), None);
        assert_eq!(script.sent().len(), 1);
    }
    // No `answers` object, but the model and usage are readable and kept (D3).
    let script = Scripted::always(respond(
        200,
        r#"{"model":"jev-1.13.0","usage":{"input_tokens":1,"output_tokens":2}}"#,
    ));
    let client = builder(script).build().unwrap();
    let error = call(&client).await.unwrap_err();
    assert_eq!(error.detail(), Detail::BodyUnreadable);
    assert_eq!(error.model(), Some("jev-1.13.0"));
    assert_eq!(error.usage().map(|u| u.output_tokens), Some(2));
}

#[tokio::test(start_paused = true)]
async fn missing_and_extra_answers_are_reported() {
    let cases = [
        (r#"{"model":"m","answers":{}}"#, Detail::AnswerMissing),
        (
            r#"{"model":"m","answers":{"supported":{"type":"noul","noul":0.5},"x":{"type":"noul","noul":0.5}}}"#,
            Detail::AnswerExtra,
        ),
        (
            r#"{"model":"m","answers":{"supported":{"type":"boolean","noul":0.5}}}"#,
            Detail::AnswerWrongType,
        ),
    ];
    for (body, detail) in cases {
        let client = builder(Scripted::always(respond(200, body)))
            .build()
            .unwrap();
        let error = call(&client).await.unwrap_err();
        assert_eq!(error.detail(), detail);
    }
}

#[tokio::test(start_paused = true)]
async fn usage_that_is_not_integer_counts_is_unknown() {
    let body = r#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":0.5}},"usage":{"input_tokens":70.0,"output_tokens":2.0}}"#;
    let client = builder(Scripted::always(respond(200, body)))
        .build()
        .unwrap();
    let exchange = call(&client).await.unwrap();
    assert_eq!(exchange.response.usage, None);
}

/// The error of one call, without retries, answered with `response`.
async fn failed_once(response: jevjudge_client::HttpResponse) -> jevjudge_client::Error {
    let client = builder(Scripted::always(Step::Respond(response)))
        .retries(0)
        .build()
        .unwrap();
    call(&client).await.unwrap_err()
}

#[tokio::test(start_paused = true)]
async fn the_request_id_falls_back_to_x_request_id() {
    let response = jevjudge_client::HttpResponse::new(503, "").with_header("X-Request-Id", "gw_42");
    assert_eq!(failed_once(response).await.request_id(), Some("gw_42"));
    // An absurd id is dropped rather than logged.
    let response = jevjudge_client::HttpResponse::new(503, "")
        .with_header("x-typesafe-request-id", "has space");
    assert_eq!(failed_once(response).await.request_id(), None);
}

#[tokio::test(start_paused = true)]
async fn no_key_means_no_authorization_header() {
    let script = Scripted::always(ok());
    let client = jevjudge_client::Client::builder()
        .env_lookup(|_| None)
        .base_url("http://127.0.0.1:9")
        .allow_no_key(true)
        .transport(script.clone())
        .build()
        .unwrap();
    call(&client).await.unwrap();
    assert_eq!(script.sent()[0].request.header("authorization"), None);
}

#[tokio::test(start_paused = true)]
async fn list_models_gets_the_models_url() {
    let body = r#"{"models":[{"name":"jev-latest","description":"d","release_date":"2026-09-10T18:38:01.391457+00:00"},{"name":"jev-preview"}]}"#;
    let script = Scripted::always(respond(200, body));
    let client = builder(script.clone())
        .base_url("https://gw.example/p/v1/systemone")
        .build()
        .unwrap();
    let models = client.list_models().await.unwrap();
    let names: Vec<&str> = models.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["jev-latest", "jev-preview"]);
    let sent = &script.sent()[0].request;
    assert_eq!(sent.method, Method::Get);
    assert_eq!(sent.url, "https://gw.example/p/v1/models");
    assert_eq!(sent.header("content-type"), None);
    assert!(sent.body.is_empty());

    let client = builder(Scripted::always(respond(200, r#"{"data":[]}"#)))
        .build()
        .unwrap();
    let error = client.list_models().await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::UnreadableBody);
    assert_eq!(error.detail(), Detail::BodyUnreadable);

    let client = builder(Scripted::always(respond(404, r#"{"detail":"Not Found"}"#)))
        .build()
        .unwrap();
    let error = client.list_models().await.unwrap_err();
    assert_eq!(error.detail(), Detail::HttpStatus(404));
    assert_eq!(error.message(), Some("Not Found"));
}

#[tokio::test(start_paused = true)]
async fn an_answer_marked_by_the_fake_server_says_so() {
    let marked = json(200, NOUL_OK).with_header(jevjudge_wire::FAKE_MARK_HEADER, "1");
    let script = Scripted::new([Step::Respond(marked), ok()]);
    let client = builder(script.clone()).build().unwrap();
    let first = client
        .system_one(&noul_request(), CallOptions::default())
        .await
        .unwrap();
    assert!(
        first.fake,
        "x-jevjudge-fake: 1 marks the answer as the fake's"
    );
    assert!(format!("{first:?}").contains("fake: true"));
    let second = client
        .system_one(&noul_request(), CallOptions::default())
        .await
        .unwrap();
    assert!(!second.fake, "an unmarked answer is not the fake's");
}
