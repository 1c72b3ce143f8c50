//! `--replay`: recorded requests get their recorded model, answers and usage; others by hash.

use jevjudge_fake::{Config, FakeServer, Recorded, Replay};
use jevjudge_wire::record::Record;
use serde_json::{Map, Value, json};

use crate::util::{mixed_request, noul_request, post, server};

fn recorded_answers() -> Map<String, Value> {
    json!({"refund": {"type": "noul", "noul": 0.125}})
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn record(requested_model: &str) -> Record {
    let request = noul_request();
    Record::new(
        "jev-1.12.9",
        requested_model,
        request["state"].clone(),
        request["questions"]
            .as_object()
            .cloned()
            .unwrap_or_default(),
        recorded_answers(),
        Some(json!({"input_tokens": 301, "output_tokens": 19})),
        "2026-09-19T19:40:00Z".to_owned(),
    )
    .expect("a record")
}

/// A fake that answers from `replay` first.
async fn replaying(replay: Replay) -> FakeServer {
    server(Config {
        replay: Some(replay),
        ..Config::default()
    })
    .await
}

/// The noul request's answer: the recorded model and answers.
async fn assert_recorded_answer(fake: &FakeServer) -> Value {
    let body = post(fake, &noul_request()).await.json();
    assert_eq!(body["model"], "jev-1.12.9");
    assert_eq!(body["answers"], Value::Object(recorded_answers()));
    body
}

#[tokio::test]
async fn recorded_requests_get_their_recorded_answers() {
    let replay = Replay::from_records(vec![record("jev-latest")]).expect("an index");
    let fake = replaying(replay).await;

    let body = assert_recorded_answer(&fake).await;
    assert_eq!(
        body["usage"],
        json!({"input_tokens": 301, "output_tokens": 19})
    );

    let mut versioned = noul_request();
    versioned["model"] = json!("jev-1.12.9");
    let reply = post(&fake, &versioned).await;
    assert_eq!(
        reply.status, 400,
        "the model is still checked before the lookup"
    );

    let mut other_alias = noul_request();
    other_alias["model"] = json!("jev-preview");
    let body = post(&fake, &other_alias).await.json();
    assert_eq!(
        body["model"], "jev-1.13.0",
        "another model is answered by hash"
    );
    assert_ne!(body["answers"], Value::Object(recorded_answers()));

    let body = post(&fake, &mixed_request()).await.json();
    assert_eq!(
        body["model"], "jev-1.13.0",
        "unrecorded requests are answered by hash"
    );
}

#[tokio::test]
async fn a_custom_lookup_without_usage_gets_an_estimate() {
    let replay = Replay::from_fn(|_, _, _| {
        Some(Recorded {
            model: "jev-0.1.0".into(),
            answers: recorded_answers(),
            usage: None,
        })
    });
    let fake = replaying(replay).await;
    let body = post(&fake, &noul_request()).await.json();
    assert_eq!(body["model"], "jev-0.1.0");
    assert!(body["usage"]["input_tokens"].is_u64());
}

#[tokio::test]
async fn the_recordings_one_model_answers_whatever_model_a_request_names() {
    // Recorded when `jev-preview` was asked; a client asking `jev-latest` still gets it.
    let (replay, pinned) =
        Replay::from_records_for_model(vec![record("jev-preview")], None).expect("an index");
    assert_eq!(pinned.as_deref(), Some("jev-1.12.9"));
    let fake = replaying(replay).await;
    assert_recorded_answer(&fake).await;
    // A request that was never recorded is still answered by hash, as the fake's own model.
    assert_eq!(
        post(&fake, &mixed_request()).await.json()["model"],
        "jev-1.13.0"
    );
    fake.shutdown().await;

    // The plain index looks up by the request's model, so the same request misses.
    let by_request = Replay::from_records(vec![record("jev-preview")]).expect("an index");
    let fake = replaying(by_request).await;
    assert_ne!(
        post(&fake, &noul_request()).await.json()["answers"],
        Value::Object(recorded_answers())
    );
    fake.shutdown().await;
}

#[test]
fn a_model_the_recording_does_not_hold_is_refused_naming_those_it_holds() {
    let error = Replay::from_records_for_model(vec![record("jev-latest")], Some("jev-preview"))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert_eq!(
        error,
        "the recording holds no exchange of model `jev-preview`; it holds: jev-1.12.9 (asked as jev-latest)"
    );
    let empty = Replay::from_records_for_model(Vec::new(), Some("jev-latest"))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(empty.ends_with("it holds no records"), "{empty}");
    for held in ["jev-latest", "jev-1.12.9"] {
        let (_, pinned) = Replay::from_records_for_model(vec![record("jev-latest")], Some(held))
            .expect("a held model");
        assert_eq!(pinned.as_deref(), Some(held));
    }
}
