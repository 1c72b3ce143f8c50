//! Every refusal of a review request: 404, 400, 422, 413, each a JSON error naming the
//! problem, and none of them reaching the backend.

use std::time::Duration;

use jevjudge_serve::Config;
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::util::{Service, fake_answering, refund_state, supported_service};

#[tokio::test]
async fn an_unknown_version_is_404() {
    let (fake, service) = supported_service().await;
    for version in ["refund-answer-v2", "REFUND-ANSWER-V1", "%20"] {
        let reply = service
            .review(version, &json!({"state": refund_state()}))
            .await;
        assert_eq!(reply.status, 404, "{version}");
        assert_eq!(reply.error_code(), "unknown_version");
        assert!(
            reply.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains("GET /v1/definitions")
        );
    }
    assert_eq!(fake.request_count(), 0);
}

#[tokio::test]
async fn a_body_that_is_not_json_is_400() {
    let (fake, service) = supported_service().await;
    for (body, message) in [
        ("", "the body is empty; send {\"state\": ...}"),
        (
            "{\"state\": ",
            "the body ends before the JSON is complete (line 1, column 10)",
        ),
        (
            "{\"state\": tru}",
            "the body is not valid JSON (line 1, column 14)",
        ),
        ("not json", "the body is not valid JSON (line 1, column 2)"),
    ] {
        let reply = service
            .post("refund-answer-v1", body.as_bytes().to_vec(), &[])
            .await;
        assert_eq!(reply.status, 400, "{body}");
        assert_eq!(
            reply.json(),
            json!({"error": {"code": "malformed_json", "message": message}}),
            "{body}"
        );
    }
    assert_eq!(fake.request_count(), 0);
}

#[tokio::test]
async fn json_of_the_wrong_shape_is_422_naming_the_field() {
    let (fake, service) = supported_service().await;
    for (body, field) in [
        (json!(["state"]), "the body must be a JSON object"),
        (json!({"budget_millis": 100}), "missing field `state`"),
        (
            json!({"state": 42}),
            "`state` must be a JSON string, object or array, not number",
        ),
        (json!({"state": true}), "not boolean"),
        (json!({"state": "x", "extra": 1}), "unknown field `extra`"),
        (json!({"state": "x", "budget_millis": 0}), "`budget_millis`"),
        (
            json!({"state": "x", "budget_millis": "2s"}),
            "`budget_millis`",
        ),
    ] {
        let reply = service.review("refund-answer-v1", &body).await;
        assert_eq!(reply.status, 422, "{body}");
        assert_eq!(reply.error_code(), "invalid_body");
        let message = reply.json()["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains(field), "{body}: {message}");
    }
    assert_eq!(fake.request_count(), 0);
}

/// The default config with a body limit of `bytes`.
fn body_limit(bytes: usize) -> Config {
    Config {
        max_body_bytes: bytes,
        ..Config::default()
    }
}

#[tokio::test]
async fn a_body_over_the_limit_is_413() {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let service = Service::in_front_of(&fake, body_limit(1000)).await;
    // Just under the limit: reviewed.
    let state = "x".repeat(1000 - r#"{"state":""}"#.len());
    let body = serde_json::to_vec(&json!({"state": state})).unwrap();
    assert_eq!(body.len(), 1000);
    let reply = service.post("refund-answer-v1", body, &[]).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    // One byte over: refused from its Content-Length.
    let body = serde_json::to_vec(&json!({"state": format!("{state}x")})).unwrap();
    let reply = service.post("refund-answer-v1", body, &[]).await;
    assert_eq!(reply.status, 413);
    assert_eq!(
        reply.json(),
        json!({"error": {"code": "body_too_large",
                         "message": "the body is larger than the limit of 1000 bytes"}})
    );
    assert_eq!(fake.request_count(), 1);
}

#[tokio::test]
async fn a_chunked_body_over_the_limit_is_413() {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let service = Service::in_front_of(&fake, body_limit(64)).await;
    let addr = service.url.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    // No Content-Length: the limit is enforced while reading the chunks.
    let chunk = "y".repeat(40);
    let request = format!(
        "POST /v1/reviews/refund-answer-v1 HTTP/1.1\r\nHost: {addr}\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
         28\r\n{chunk}\r\n28\r\n{chunk}\r\n0\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = String::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_string(&mut response))
        .await
        .expect("an answer within 5 s")
        .unwrap();
    assert!(response.starts_with("HTTP/1.1 413"), "{response}");
    assert!(response.contains("body_too_large"), "{response}");
    assert_eq!(fake.request_count(), 0);
}

#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_is_408_and_frees_its_place() {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let config = Config {
        default_budget: Duration::from_millis(100),
        max_budget: Duration::from_millis(300),
        max_concurrent: 1,
        queue: 0,
        ..Config::default()
    };
    let service = Service::in_front_of(&fake, config).await;
    let addr = service.url.trim_start_matches("http://").to_owned();
    let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
    // Promises 100 bytes, sends 10, then stalls.
    let request = format!(
        "POST /v1/reviews/refund-answer-v1 HTTP/1.1\r\nHost: {addr}\r\n\
         Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"state\": "
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = vec![0; 4096];
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut response))
        .await
        .expect("an answer within 5 s")
        .unwrap();
    let response = String::from_utf8_lossy(&response[..read]).into_owned();
    assert!(response.starts_with("HTTP/1.1 408"), "{response}");
    assert!(response.contains("body_timeout"), "{response}");
    // Its place (the only one) is free again.
    let reply = service.review_refund().await;
    assert_eq!(reply.status, 200);
}
