//! systemone-wire.md §13 item 7: every scriptable fault, observed over a real socket.

use std::time::{Duration, Instant, SystemTime};

use jevjudge_fake::{FakeServer, Fault, FaultPlan};
use serde_json::{Value, json};

use crate::util::{
    Reply, client, client_with_timeout, keyed, mixed_request, noul_request, post, post_raw, read,
    server,
};

/// A fresh fake whose first request gets `fault`, and that request's complete response.
async fn first_reply(fault: Fault, request: &Value) -> (FakeServer, Reply) {
    let fake = scripted(FaultPlan::new().then(fault)).await;
    let reply = post(&fake, request).await;
    (fake, reply)
}

/// A fresh fake following `plan`.
async fn scripted(plan: FaultPlan) -> FakeServer {
    let fake = server(Default::default()).await;
    fake.script(plan);
    fake
}

/// One POST of the noul request; the connection's outcome, whatever it is.
async fn send_noul(fake: &FakeServer) -> reqwest::Result<reqwest::Response> {
    client()
        .post(format!("{}/v1/systemone", fake.url()))
        .body(noul_request().to_string())
        .send()
        .await
}

async fn mixed(fault: Fault) -> Value {
    first_reply(fault, &mixed_request()).await.1.json()
}

#[tokio::test]
async fn rate_limited_without_a_wait_hint() {
    let (fake, reply) = first_reply(Fault::RateLimited, &noul_request()).await;
    assert_eq!(reply.status, 429);
    assert_eq!(reply.json()["detail"]["error_type"], "rate_limit_error");
    assert!(reply.header("retry-after").is_none() && reply.header("retry-after-ms").is_none());
    assert_eq!(
        post(&fake, &noul_request()).await.status,
        200,
        "normal answers after the plan"
    );
}

#[tokio::test]
async fn rate_limited_with_a_wait_hint_in_seconds_or_ms() {
    for (fault, header, value) in [
        (Fault::RetryAfterSeconds(3), "retry-after", "3"),
        (Fault::RetryAfterMs(250), "retry-after-ms", "250"),
    ] {
        let (_fake, reply) = first_reply(fault, &noul_request()).await;
        assert_eq!(reply.status, 429, "{header}");
        assert_eq!(reply.header(header), Some(value));
    }
}

#[tokio::test]
async fn rate_limited_with_retry_after_as_an_http_date() {
    let when = SystemTime::now() + Duration::from_secs(5);
    let (_fake, reply) = first_reply(Fault::RetryAfterDate(when), &noul_request()).await;
    assert_eq!(reply.status, 429);
    let date = httpdate::parse_http_date(reply.header("retry-after").unwrap_or_default())
        .expect("an HTTP date");
    let wait = date.duration_since(SystemTime::now()).unwrap_or_default();
    assert!(
        wait > Duration::from_secs(3) && wait <= Duration::from_secs(6),
        "{wait:?}"
    );
}

#[tokio::test]
async fn overloaded_is_529() {
    let (_fake, reply) = first_reply(Fault::Overloaded, &noul_request()).await;
    assert_eq!(reply.status, 529);
    assert_eq!(reply.json()["detail"]["error_type"], "overloaded_error");
}

#[tokio::test]
async fn gateway_errors_have_html_bodies() {
    for status in [500, 502, 503, 504] {
        let (_fake, reply) = first_reply(Fault::Html(status), &noul_request()).await;
        assert_eq!(reply.status, status);
        assert_eq!(reply.header("content-type"), Some("text/html"));
        assert!(reply.text().starts_with("<html>"));
        assert!(serde_json::from_slice::<Value>(&reply.body).is_err());
        assert!(reply.header("x-typesafe-request-id").is_some());
    }
}

#[tokio::test]
async fn any_status_with_a_json_body() {
    let fault = Fault::Json {
        status: 401,
        body: json!({"message": "invalid key"}),
    };
    let (_fake, reply) = first_reply(fault, &noul_request()).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.json(), json!({"message": "invalid key"}));
    assert_eq!(reply.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn raw_responses_are_sent_as_given() {
    let fault = Fault::Raw {
        status: 503,
        headers: vec![
            ("content-type".into(), "text/plain".into()),
            ("x-extra".into(), "1".into()),
        ],
        body: b"upstream connect error".to_vec(),
    };
    let (_fake, reply) = first_reply(fault, &noul_request()).await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.header("content-type"), Some("text/plain"));
    assert_eq!(reply.header("x-extra"), Some("1"));
    assert_eq!(reply.body, b"upstream connect error");
}

#[tokio::test]
async fn a_custom_body_replaces_the_answer() {
    let body =
        json!({"model": "jev-9", "answers": {}, "usage": {"input_tokens": 1, "output_tokens": 0}});
    let (_fake, reply) = first_reply(Fault::Body(body.clone()), &mixed_request()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json(), body);
}

#[tokio::test]
async fn status_faults_come_before_auth() {
    let fake = keyed("K").await;
    fake.script(
        FaultPlan::new()
            .then(Fault::Overloaded)
            .then(Fault::TruncatedBody),
    );
    let body = serde_json::to_vec(&noul_request()).expect("serialisable");
    assert_eq!(post_raw(&fake, body.clone(), None).await.status, 529);
    let reply = post_raw(&fake, body, None).await;
    assert_eq!(reply.status, 403, "a body fault needs an answer to break");
    let _ = reply.json();
}

#[tokio::test]
async fn close_and_reset_drop_the_connection_without_a_response() {
    for fault in [Fault::Close, Fault::Reset] {
        let label = format!("{fault:?}");
        let fake = scripted(FaultPlan::new().then(fault)).await;
        let error = send_noul(&fake).await.expect_err("no response");
        assert!(!error.is_timeout(), "{label}: {error}");
        assert_eq!(fake.request_count(), 1, "{label}: the client did not retry");
        let next = post(&fake, &noul_request()).await.status;
        assert_eq!(next, 200, "{label}: the next connection is answered");
    }
}

#[tokio::test]
async fn close_mid_body_sends_headers_then_half_the_body() {
    let fake = scripted(FaultPlan::new().then(Fault::CloseMidBody)).await;
    let response = client()
        .post(format!("{}/v1/systemone", fake.url()))
        .body(mixed_request().to_string())
        .send()
        .await
        .expect("the headers arrive");
    assert_eq!(response.status().as_u16(), 200);
    assert!(response.content_length().is_some_and(|n| n > 0));
    assert!(response.bytes().await.is_err(), "the body is cut off");
}

#[tokio::test]
async fn delay_answers_late_but_normally() {
    let fake = scripted(FaultPlan::new().then(Fault::Delay(Duration::from_millis(200)))).await;
    let started = Instant::now();
    let reply = post(&fake, &noul_request()).await;
    assert_eq!(reply.status, 200);
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn stall_never_answers_and_shutdown_still_finishes() {
    let fake = scripted(FaultPlan::always(Fault::Stall)).await;
    let started = Instant::now();
    let outcome = client_with_timeout(Duration::from_millis(200))
        .post(format!("{}/v1/systemone", fake.url()))
        .body(noul_request().to_string())
        .send()
        .await;
    assert!(outcome.expect_err("no answer").is_timeout());
    assert!(started.elapsed() < Duration::from_secs(2));

    // A second stalled request is still open when the server shuts down.
    let url = format!("{}/v1/systemone", fake.url());
    let pending = tokio::spawn(async move {
        client()
            .post(url)
            .body(noul_request().to_string())
            .send()
            .await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stopping = Instant::now();
    fake.shutdown().await;
    assert!(stopping.elapsed() < Duration::from_secs(2));
    let outcome = pending.await.expect("the task ends");
    assert!(
        outcome.is_err(),
        "the stalled request ends without an answer"
    );
}

#[tokio::test]
async fn a_truncated_body_is_complete_http_but_cut_json() {
    let (_fake, reply) = first_reply(Fault::TruncatedBody, &mixed_request()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("content-length"),
        Some(reply.body.len().to_string().as_str())
    );
    assert!(reply.text().starts_with("{\"model\""));
    assert!(serde_json::from_slice::<Value>(&reply.body).is_err());
}

#[tokio::test]
async fn invalid_json_xssi_and_nan_bodies() {
    let (_fake, reply) = first_reply(Fault::InvalidJson, &noul_request()).await;
    assert_eq!(reply.status, 200);
    assert!(serde_json::from_slice::<Value>(&reply.body).is_err());

    let (_fake, reply) = first_reply(Fault::XssiPrefix, &noul_request()).await;
    assert!(reply.text().starts_with(")]}'\n{"));
    assert!(serde_json::from_str::<Value>(&reply.text()[5..]).is_ok());

    let (_fake, reply) = first_reply(Fault::NanToken, &noul_request()).await;
    assert!(reply.text().contains("\"x_debug\":NaN"));
    assert!(serde_json::from_slice::<Value>(&reply.body).is_err());

    let (_fake, reply) = first_reply(Fault::NoulNan, &noul_request()).await;
    assert!(reply.text().contains("\"noul\":NaN"));
}

#[tokio::test]
async fn missing_extra_and_mistyped_answers() {
    let body = mixed(Fault::MissingAnswer).await;
    let ids: Vec<&String> = body["answers"]
        .as_object()
        .map(|a| a.keys().collect())
        .unwrap_or_default();
    assert_eq!(ids, ["queue", "frustration"]);

    let body = mixed(Fault::ExtraAnswer).await;
    assert_eq!(body["answers"].as_object().map(|a| a.len()), Some(4));

    let body = mixed(Fault::UnknownAnswerType).await;
    assert!(
        body["answers"]
            .as_object()
            .is_some_and(|a| a.values().all(|v| v["type"] == "boolean"))
    );
}

#[tokio::test]
async fn broken_noul_values() {
    assert_eq!(
        mixed(Fault::NoulOutOfRange).await["answers"]["refund_intent"]["noul"],
        1.5
    );
    assert_eq!(
        mixed(Fault::NoulNull).await["answers"]["refund_intent"]["noul"],
        Value::Null
    );
}

#[tokio::test]
async fn broken_sums_and_keys() {
    let sum = |answer: &Value| -> f64 {
        answer["probabilities"]
            .as_object()
            .map(|p| p.values().filter_map(Value::as_f64).sum())
            .unwrap_or_default()
    };
    let body = mixed(Fault::BrokenChoiceSum).await;
    assert!((sum(&body["answers"]["queue"]) - 0.8).abs() < 1e-3);
    assert!((sum(&body["answers"]["frustration"]) - 1.0).abs() < 1e-3);
    let body = mixed(Fault::BrokenScoreSum).await;
    assert!((sum(&body["answers"]["frustration"]) - 0.8).abs() < 1e-3);

    let body = mixed(Fault::BrokenChoiceKeys).await;
    let queue = jevjudge_test_support::keys(&body["answers"]["queue"]["probabilities"]);
    assert_eq!(queue, ["billing", "technical", "other (renamed)"]);
    let body = mixed(Fault::BrokenScoreKeys).await;
    let levels = jevjudge_test_support::keys(&body["answers"]["frustration"]["probabilities"]);
    assert_eq!(levels, ["1", "2", "3"]);
}

#[tokio::test]
async fn envelope_faults() {
    let body = mixed(Fault::NullConfidence).await;
    assert_eq!(body["answers"]["queue"]["confidence"], Value::Null);
    assert_eq!(body["answers"]["frustration"]["confidence"], Value::Null);
    assert!(mixed(Fault::MissingUsage).await.get("usage").is_none());
    assert!(mixed(Fault::MissingModel).await.get("model").is_none());
    let (_fake, reply) = first_reply(Fault::FloatUsage, &noul_request()).await;
    assert!(reply.json()["usage"]["input_tokens"].is_f64());
    assert!(reply.text().contains("\"output_tokens\":20.0"));
}

#[tokio::test]
async fn scripted_noul_probabilities() {
    let request = json!({"model": "jev-latest", "state": "s", "questions": {
        "covers_request": {"type": "noul", "instructions": "Covers?"},
        "supported": {"type": "noul", "instructions": "Supported?"},
        "other": {"type": "noul", "instructions": "Other?"}}});
    let normal = crate::util::post(&server(Default::default()).await, &request)
        .await
        .json();
    let fault = Fault::NoulValues(vec![
        ("covers_request".into(), 0.9),
        ("supported".into(), 0.05),
    ]);
    let body = first_reply(fault, &request).await.1.json();
    assert_eq!(body["answers"]["covers_request"]["noul"], 0.9);
    assert_eq!(body["answers"]["supported"]["noul"], 0.05);
    assert_eq!(body["answers"]["other"], normal["answers"]["other"]);
    assert_eq!(body["usage"], normal["usage"]);
}

#[tokio::test]
async fn scripted_answers_replace_whole_answers() {
    let answer = json!({"type": "choice", "choice": "other", "confidence": 1.0,
                        "probabilities": {"billing": 0.0, "technical": 0.0, "other": 1.0}});
    let body = mixed(Fault::Answers(vec![("queue".into(), answer.clone())])).await;
    assert_eq!(body["answers"]["queue"], answer);
    assert_eq!(body["answers"]["refund_intent"]["type"], "noul");
}

#[tokio::test]
async fn plans_pin_repeat_and_sequence() {
    let fake = scripted(FaultPlan::at(2, Fault::Overloaded)).await;
    let statuses = [
        post(&fake, &noul_request()).await.status,
        post(&fake, &noul_request()).await.status,
        post(&fake, &noul_request()).await.status,
    ];
    assert_eq!(statuses, [200, 529, 200]);

    fake.script(FaultPlan::always(Fault::RateLimited));
    for _ in 0..3 {
        assert_eq!(post(&fake, &noul_request()).await.status, 429);
    }

    fake.script(
        FaultPlan::new()
            .then(Fault::Overloaded)
            .then(Fault::Html(503))
            .otherwise(Fault::RateLimited),
    );
    let statuses = [
        post(&fake, &noul_request()).await.status,
        post(&fake, &noul_request()).await.status,
        post(&fake, &noul_request()).await.status,
    ];
    assert_eq!(statuses, [529, 503, 429]);

    fake.script(FaultPlan::new());
    assert_eq!(post(&fake, &noul_request()).await.status, 200);
    assert_eq!(fake.request_count(), 10);
}

#[tokio::test]
async fn faults_only_count_systemone_posts() {
    let fake = scripted(FaultPlan::new().then(Fault::Overloaded)).await;
    let models = read(
        client()
            .get(format!("{}/v1/models", fake.url()))
            .send()
            .await
            .expect("a response"),
    )
    .await;
    assert_eq!(models.status, 200);
    assert_eq!(post(&fake, &noul_request()).await.status, 529);
}

#[tokio::test]
async fn reset_is_a_tcp_reset() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let fake = scripted(FaultPlan::new().then(Fault::Reset)).await;
    let body = noul_request().to_string();
    let mut stream = tokio::net::TcpStream::connect(fake.addr())
        .await
        .expect("connected");
    let request = format!(
        "POST /v1/systemone HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("sent");
    let mut buffer = Vec::new();
    let error = stream
        .read_to_end(&mut buffer)
        .await
        .expect_err("a reset, not a clean end");
    assert_eq!(error.kind(), std::io::ErrorKind::ConnectionReset);
    assert!(buffer.is_empty());
}
