//! Every endpoint over real HTTP, in front of the fake System One server.

use jevjudge_fake::{Fault, FaultPlan};
use jevjudge_serve::{Config, ROUTES};
use serde_json::json;

use crate::util::{
    Service, default_service, fake, fake_answering, has_sample, refund_state, supported_service,
};

#[tokio::test]
async fn a_review_returns_the_result_json() {
    let (fake, service) = supported_service().await;
    let reply = service.review_refund().await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let verdict = reply.json();
    let keys: Vec<&str> = verdict
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "definition_version",
            "status",
            "error",
            "detail",
            "findings",
            "model",
            "usage",
            "elapsed_millis",
            "backend"
        ]
    );
    assert_eq!(
        verdict["backend"], "fake",
        "the fake server marks its answers"
    );
    assert_eq!(verdict["definition_version"], "refund-answer-v1");
    assert_eq!(verdict["status"], "PASS");
    assert_eq!(verdict["error"], "NONE");
    assert_eq!(verdict["detail"], json!(null));
    assert_eq!(
        verdict["findings"],
        json!({"supported": {"status": "PASS", "yes_probability": 0.95, "expected_probability": 0.95}})
    );
    assert!(verdict["model"].is_string());
    assert!(verdict["usage"]["input_tokens"].is_u64());
    assert!(verdict["elapsed_millis"].as_f64().unwrap() > 0.0);
    let timing = reply
        .header("server-timing")
        .expect("a Server-Timing header");
    assert!(
        timing.starts_with("queue;dur=") && timing.contains(", review;dur="),
        "{timing}"
    );
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn a_two_criteria_review_keeps_definition_order() {
    let fake = fake_answering(&[("covers_request", 0.9), ("unsupported_commitment", 0.95)]).await;
    let service = Service::in_front_of(&fake, Config::default()).await;
    let state = json!({"request": "如果今天还不能发货，请帮我申请退款。", "draft": "您的退款已完成。",
                       "business_record": "尚未发起退款，发货状态待查询。"});
    let reply = service
        .review("support-draft-v1", &json!({"state": state}))
        .await;
    assert_eq!(reply.status, 200);
    let verdict = reply.json();
    // judge-contract F3.
    assert_eq!(verdict["status"], "FAIL");
    let findings: Vec<&String> = verdict["findings"].as_object().unwrap().keys().collect();
    assert_eq!(findings, ["covers_request", "unsupported_commitment"]);
    assert_eq!(
        verdict["findings"]["unsupported_commitment"]["expected_probability"],
        0.050000000000000044
    );
    // One review is one request, holding both questions.
    let journal = fake.journal();
    assert_eq!(journal.len(), 1);
}

#[tokio::test]
async fn an_error_verdict_is_still_200() {
    let (fake, service) = default_service().await;
    fake.script(FaultPlan::always(Fault::Html(500)));
    let reply = service.review_refund().await;
    assert_eq!(reply.status, 200, "the review ran: {}", reply.text());
    let verdict = reply.json();
    assert_eq!(verdict["status"], "ERROR");
    assert_eq!(verdict["error"], "BACKEND");
    assert_eq!(verdict["detail"], "http_status_500");
    assert_eq!(verdict["findings"], json!({}));
}

#[tokio::test]
async fn an_invalid_answer_is_an_invalid_response_verdict() {
    let (fake, service) = default_service().await;
    fake.script(FaultPlan::always(Fault::NoulOutOfRange));
    let reply = service
        .review("refund-answer-v1", &json!({"state": "plain text state"}))
        .await;
    assert_eq!(reply.status, 200);
    let verdict = reply.json();
    assert_eq!(verdict["status"], "ERROR");
    assert_eq!(verdict["error"], "INVALID_RESPONSE");
    assert_eq!(verdict["detail"], "probability_out_of_range");
}

#[tokio::test]
async fn request_ids_are_honoured_when_safe_and_made_otherwise() {
    let fake = fake_answering(&[("supported", 0.5)]).await;
    let service = Service::in_front_of(&fake, Config::default()).await;
    let body = serde_json::to_vec(&json!({"state": refund_state()})).unwrap();
    let reply = service
        .post(
            "refund-answer-v1",
            body.clone(),
            &[("x-request-id", "caller-42.a:b")],
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["status"], "INCONCLUSIVE");
    assert_eq!(reply.header("x-request-id"), Some("caller-42.a:b"));

    let reply = service
        .post("refund-answer-v1", body, &[("x-request-id", "not safe {}")])
        .await;
    let id = reply.header("x-request-id").unwrap();
    assert!(id.starts_with("req_") && id.len() == 36, "{id}");

    // Errors and other routes carry one too.
    let reply = service.get("/nowhere").await;
    assert_eq!(reply.status, 404);
    assert!(reply.header("x-request-id").unwrap().starts_with("req_"));
}

/// `GET /v1/definitions` lists versions, criteria and thresholds without the questions' text;
/// `GET /healthz` says ok.
#[tokio::test]
async fn definitions_list_thresholds_without_text_and_healthz_says_ok() {
    let (_fake, service) = default_service().await;
    let definitions = json!({"definitions": [
        {"version": "refund-answer-v1", "criteria": [
            {"id": "supported", "expected": true, "fail_at_or_below": 0.2, "pass_at_or_above": 0.8}
        ]},
        {"version": "support-draft-v1", "criteria": [
            {"id": "covers_request", "expected": true, "fail_at_or_below": 0.2, "pass_at_or_above": 0.8},
            {"id": "unsupported_commitment", "expected": false, "fail_at_or_below": 0.2, "pass_at_or_above": 0.8}
        ]}
    ]});
    for (path, expected) in [
        ("/v1/definitions", definitions),
        ("/healthz", json!({"status": "ok", "definitions": 2})),
    ] {
        let reply = service.get(path).await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.json(), expected, "{path}");
        assert!(!reply.text().contains("assistant_answer"), "{path}");
        assert!(!reply.text().contains("instructions"), "{path}");
    }
}

#[tokio::test]
async fn metrics_count_reviews_attempts_statuses_and_requests() {
    let fake = fake(Default::default()).await;
    fake.script(
        FaultPlan::new()
            .then(Fault::NoulValues(vec![("supported".into(), 0.95)]))
            .then(Fault::Html(503))
            .then(Fault::NoulValues(vec![("supported".into(), 0.05)])),
    );
    let metrics = jevjudge_serve::Metrics::new();
    // One retry, so the 503 is retried and answered.
    let client = crate::util::client(&fake, &metrics, "test-key", 1);
    let service = Service::start(
        jevjudge_judge::SystemOneBackend::new(client),
        Config::default(),
        metrics,
    )
    .await;
    let body = json!({"state": refund_state()});
    assert_eq!(
        service.review("refund-answer-v1", &body).await.json()["status"],
        "PASS"
    );
    assert_eq!(
        service.review("refund-answer-v1", &body).await.json()["status"],
        "FAIL"
    );
    assert_eq!(service.review("nope", &body).await.status, 404);

    let reply = service.get("/metrics").await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("content-type"),
        Some("application/openmetrics-text; version=1.0.0; charset=utf-8")
    );
    let text = reply.text();
    for sample in [
        r#"jevjudge_reviews_total{definition="refund-answer-v1",status="PASS",error="NONE"} 1"#,
        r#"jevjudge_reviews_total{definition="refund-answer-v1",status="FAIL",error="NONE"} 1"#,
        r#"jevjudge_review_duration_seconds_count{definition="refund-answer-v1"} 2"#,
        "jevjudge_backend_attempts_total 3",
        "jevjudge_backend_retries_total 1",
        r#"jevjudge_backend_responses_total{status="200"} 2"#,
        r#"jevjudge_backend_responses_total{status="503"} 1"#,
        "jevjudge_backend_attempt_duration_seconds_count 3",
        "jevjudge_reviews_in_flight 0",
        "jevjudge_reviews_waiting 0",
        "jevjudge_backend_slots 32",
        "jevjudge_queue_capacity 256",
        r#"jevjudge_queue_rejections_total{reason="full"} 0"#,
        r#"jevjudge_http_requests_total{route="/v1/reviews/{version}",method="POST",status="200"} 2"#,
        r#"jevjudge_http_requests_total{route="/v1/reviews/{version}",method="POST",status="404"} 1"#,
        // The two answered reviews' added time, observed once each response was written; the
        // 404 and the scrape are not reviews.
        "jevjudge_review_added_seconds_count 2",
    ] {
        assert!(has_sample(&text, sample), "missing `{sample}` in:\n{text}");
    }
}

#[tokio::test]
async fn the_openapi_document_describes_every_route() {
    let (_fake, service) = default_service().await;
    let reply = service.get("/openapi.json").await;
    assert_eq!(reply.status, 200);
    let document = reply.json();
    assert_eq!(document["openapi"], "3.1.0");
    let paths = document["paths"].as_object().unwrap();
    for (method, path) in ROUTES {
        let operation = &paths
            .get(path)
            .unwrap_or_else(|| panic!("{path} is not in the document"))[method.to_lowercase()];
        assert!(operation.is_object(), "{method} {path} is not described");
        assert!(operation["responses"]["200"].is_object(), "{method} {path}");
    }
    let mut templates: Vec<&str> = ROUTES.iter().map(|(_, path)| *path).collect();
    templates.dedup();
    templates.sort_unstable();
    templates.dedup();
    assert_eq!(
        paths.len(),
        templates.len(),
        "the document lists a route that does not exist"
    );
    // Every documented error status of the review route.
    let review = &paths["/v1/reviews/{version}"]["post"]["responses"];
    for status in ["200", "400", "401", "404", "413", "422", "503"] {
        assert!(review[status].is_object(), "{status}");
    }
    // Every listed route is really served (not the 404 fallback, not a 405).
    for (method, path) in ROUTES {
        let path = path.replace("{version}", "refund-answer-v1");
        let method = reqwest::Method::from_bytes(method.as_bytes()).unwrap();
        let reply = service.call(method.clone(), &path, &[]).await;
        // Not the fallback: a route may answer 404 with its own code (no decision log here).
        let fallback = reply.status == 404 && reply.json()["error"]["code"] == "not_found";
        assert!(
            !fallback && reply.status != 405,
            "{method} {path}: {}",
            reply.status
        );
    }
    // Every `$ref` points at a schema that exists.
    let text = reply.text();
    for reference in text.split("\"$ref\":\"").skip(1) {
        let name = reference
            .split('"')
            .next()
            .unwrap()
            .trim_start_matches("#/components/schemas/");
        assert!(
            document["components"]["schemas"][name].is_object(),
            "dangling $ref {name}"
        );
    }
}

#[tokio::test]
async fn unknown_routes_and_methods_are_json_errors() {
    let (_fake, service) = default_service().await;
    let reply = service.get("/v2/anything").await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.error_code(), "not_found");
    let reply = service
        .call(reqwest::Method::PUT, "/v1/reviews/refund-answer-v1", &[])
        .await;
    assert_eq!(reply.status, 405);
    assert_eq!(reply.error_code(), "method_not_allowed");
    let reply = service.call(reqwest::Method::DELETE, "/healthz", &[]).await;
    assert_eq!(reply.status, 405);
    assert_eq!(reply.error_code(), "method_not_allowed");
}
