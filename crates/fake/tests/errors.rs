//! systemone-wire.md §8 and §13 items 3–5: every error status and shape, leniency, no 5xx.

use serde_json::{Map, Value, json};

use jevjudge_fake::FakeServer;

use crate::util::{Reply, noul_request, post, post_raw, server};

fn with_questions(questions: Value) -> Value {
    json!({"model": "jev-latest", "state": "s", "questions": questions})
}

fn assert_fastapi_422(body: &Value) {
    let detail = body["detail"].as_array().expect("a detail list");
    assert!(!detail.is_empty());
    for entry in detail {
        assert_eq!(entry["loc"][0], "body", "{entry}");
        assert!(
            entry["msg"].is_string() && entry["type"].is_string() && entry.get("input").is_some(),
            "{entry}"
        );
    }
}

#[tokio::test]
async fn a_body_that_is_not_json_gets_json_invalid() {
    let fake = server(Default::default()).await;
    let reply = post_raw(
        &fake,
        br#"{"model": "jev-latest", "state": "x", "questions": {"#.to_vec(),
        None,
    )
    .await;
    assert_eq!(reply.status, 422);
    let body = reply.json();
    assert_fastapi_422(&body);
    assert_eq!(body["detail"][0]["type"], "json_invalid");
}

#[tokio::test]
async fn schema_failures_get_fastapi_422s() {
    let fake = server(Default::default()).await;
    let noul = json!({"type": "noul", "instructions": "Refund?"});
    let cases = [
        (
            "not an object",
            json!("just a string"),
            "model_attributes_type",
        ),
        (
            "missing model",
            json!({"state": "s", "questions": {"q": noul}}),
            "missing",
        ),
        (
            "missing state",
            json!({"model": "jev-latest", "questions": {"q": noul}}),
            "missing",
        ),
        (
            "missing questions",
            json!({"model": "jev-latest", "state": "s"}),
            "missing",
        ),
        (
            "model not a string",
            json!({"model": 1, "state": "s", "questions": {"q": noul}}),
            "string_type",
        ),
        (
            "state a number",
            json!({"model": "jev-latest", "state": 42, "questions": {"q": noul}}),
            "string_type",
        ),
        (
            "state null",
            json!({"model": "jev-latest", "state": null, "questions": {"q": noul}}),
            "string_type",
        ),
        (
            "questions a list",
            with_questions(json!([noul])),
            "dict_type",
        ),
        ("questions empty", with_questions(json!({})), "too_short"),
        (
            "no type",
            with_questions(json!({"q": {"instructions": "Refund?"}})),
            "missing",
        ),
        (
            "instructions a number",
            with_questions(json!({"q": {"type": "noul", "instructions": 3}})),
            "string_type",
        ),
        (
            "empty choice",
            with_questions(json!({"q": {"type": "choice", "instructions": "?", "criteria": {}}})),
            "too_short",
        ),
        (
            "empty score",
            with_questions(json!({"q": {"type": "score", "instructions": "?", "criteria": []}})),
            "too_short",
        ),
        (
            "score as a map",
            with_questions(
                json!({"q": {"type": "score", "instructions": "?", "criteria": {"0": "a", "1": "b"}}}),
            ),
            "list_type",
        ),
        (
            "null level",
            with_questions(
                json!({"q": {"type": "score", "instructions": "?", "criteria": ["a", null]}}),
            ),
            "string_type",
        ),
    ];
    for (name, request, kind) in cases {
        let reply = post(&fake, &request).await;
        assert_eq!(reply.status, 422, "{name}");
        let body = reply.json();
        assert_fastapi_422(&body);
        assert_eq!(body["detail"][0]["type"], kind, "{name}: {body}");
    }
}

#[tokio::test]
async fn empty_questions_name_the_field() {
    let fake = server(Default::default()).await;
    let body = post(&fake, &with_questions(json!({}))).await.json();
    assert_eq!(body["detail"][0]["loc"], json!(["body", "questions"]));
    assert_eq!(body["detail"][0]["input"], json!({}));
}

#[tokio::test]
async fn unknown_question_types_get_api_usage_error() {
    let fake = server(Default::default()).await;
    for kind in ["box", "boolean", "Noul"] {
        let reply = post_question(&fake, json!({"type": kind, "instructions": "?"})).await;
        assert_eq!(reply.status, 400, "{kind}");
        assert_eq!(reply.json(), usage_error("Invalid request."));
    }
}

#[tokio::test]
async fn unknown_models_are_named() {
    let fake = server(Default::default()).await;
    let mut request = noul_request();
    request["model"] = json!("jev-typo");
    let reply = post(&fake, &request).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json(), usage_error("Unknown model: jev-typo"));
}

#[tokio::test]
async fn too_many_options_or_levels_get_a_string_detail() {
    let fake = server(Default::default()).await;
    let options: Map<String, Value> = (0..256)
        .map(|i| (format!("Queue {i:03}"), Value::Null))
        .collect();
    let question = json!({"type": "choice", "instructions": "?", "criteria": options});
    let reply = post_question(&fake, question).await;
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.json(),
        json!({"detail": "Too many choices. Must have at most 255 choices."})
    );

    let levels: Vec<String> = (0..11).map(|i| format!("Level {i}")).collect();
    let question = json!({"type": "score", "instructions": "?", "criteria": levels});
    let reply = post_question(&fake, question).await;
    assert_eq!(reply.status, 400);
    assert!(
        reply.json()["detail"]
            .as_str()
            .is_some_and(|d| d.ends_with("Must have at most 10 levels."))
    );
}

#[tokio::test]
async fn the_limits_themselves_are_accepted() {
    let fake = server(Default::default()).await;
    let options: Map<String, Value> = (0..255)
        .map(|i| (format!("Queue {i:03}"), json!("desc")))
        .collect();
    let levels: Vec<String> = (0..10).map(|i| format!("Level {i}")).collect();
    let request = with_questions(json!({
        "c": {"type": "choice", "instructions": "?", "criteria": options},
        "s": {"type": "score", "instructions": "?", "criteria": levels}}));
    let reply = post(&fake, &request).await;
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(
        body["answers"]["c"]["probabilities"]
            .as_object()
            .map(Map::len),
        Some(255)
    );
    let sum: f64 = body["answers"]["c"]["probabilities"]
        .as_object()
        .map(|p| p.values().filter_map(Value::as_f64).sum())
        .unwrap_or_default();
    assert!((sum - 1.0).abs() <= 5e-5 * 255.0);
}

#[tokio::test]
async fn over_the_token_limits_is_max_tokens_exceeded() {
    let fake = server(Default::default()).await;
    let big_state = json!({"model": "jev-latest", "state": "word ".repeat(30_000),
                           "questions": {"q": {"type": "noul", "instructions": "?"}}});
    let reply = post(&fake, &big_state).await;
    assert_eq!(reply.status, 400);
    assert_eq!(
        reply.json(),
        json!({"detail": {"error_type": "max_tokens_exceeded"}})
    );

    let long = "x".repeat(70_000);
    let questions: Map<String, Value> = (0..4)
        .map(|i| {
            (
                format!("q{i}"),
                json!({"type": "noul", "instructions": long}),
            )
        })
        .collect();
    let reply = post(&fake, &with_questions(Value::Object(questions))).await;
    assert_eq!(reply.status, 400, "state + all questions over 64k");
    assert_eq!(reply.json()["detail"]["error_type"], "max_tokens_exceeded");
}

#[tokio::test]
async fn live_leniency_is_kept() {
    let fake = server(Default::default()).await;
    for request in [
        with_questions(json!({"q": {"type": "noul", "instructions": null}})),
        with_questions(json!({"q": {"type": "noul"}})),
        with_questions(
            json!({"q": {"type": "noul", "instructions": "?", "criteria": {"true": "yes"}}}),
        ),
        with_questions(
            json!({"q": {"type": "noul", "instructions": "?", "criteria": {"false": "no"}}}),
        ),
        with_questions(
            json!({"q": {"type": "choice", "instructions": "?", "criteria": {"only": null}}}),
        ),
        with_questions(json!({"q": {"type": "score", "instructions": "?", "criteria": ["only"]}})),
        with_questions(json!({"q": {"type": "noul", "instructions": "?", "unknown": 1}})),
        json!({"model": "jev-latest", "state": ["a", 1, null], "questions": {"q": {"type": "noul"}}, "seed": 7}),
    ] {
        let reply = post(&fake, &request).await;
        assert_eq!(reply.status, 200, "{request}: {}", reply.text());
    }
}

#[tokio::test]
async fn malformed_requests_never_get_a_5xx() {
    let fake = server(Default::default()).await;
    let bodies: Vec<Vec<u8>> = vec![
        Vec::new(),
        b"null".to_vec(),
        b"[]".to_vec(),
        b"{\"model\": NaN}".to_vec(),
        vec![0xff, 0xfe, 0x00],
        "[".repeat(10_000).into_bytes(),
        br#"{"model":"jev-latest","state":"s","questions":{"q":null}}"#.to_vec(),
        br#"{"model":"jev-latest","state":"s","questions":{"q":{"type":"choice","instructions":"?","criteria":["a","b"]}}}"#
            .to_vec(),
        br#"{"model":"jev-latest","state":"s","questions":{"q":{"type":"choice","instructions":"?","criteria":{"a":1}}}}"#
            .to_vec(),
        br#"{"model":"jev-latest","state":"s","questions":{"q":{"type":"noul","instructions":""}}}"#.to_vec(),
        br#"{"model":"jev-latest","state":"s","questions":{"q":{"type":"noul","criteria":[1]}}}"#.to_vec(),
        br#"{"model":"","state":{},"questions":{"":{"type":"score","criteria":"abc"}}}"#.to_vec(),
    ];
    for body in bodies {
        let shown = String::from_utf8_lossy(&body)
            .chars()
            .take(60)
            .collect::<String>();
        let reply = post_raw(&fake, body, None).await;
        assert!(
            (400..500).contains(&reply.status),
            "{shown}: {}",
            reply.status
        );
        let _ = reply.json();
    }
}

/// The fake's 400 body for a request it refuses with `message`.
fn usage_error(message: &str) -> Value {
    json!({"detail": {"error_type": "api_usage_error", "message": message}})
}

/// POSTs a request whose one question, `q`, is `question`.
async fn post_question(fake: &FakeServer, question: Value) -> Reply {
    post(fake, &with_questions(json!({ "q": question }))).await
}
