//! `--replay`: recorded requests get their recorded model, answers and usage; others by hash.

use jevjudge_fake::{Config, Recorded, Replay};
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

#[tokio::test]
async fn recorded_requests_get_their_recorded_answers() {
    let replay = Replay::from_records(vec![record("jev-latest")]).expect("an index");
    let fake = server(Config {
        replay: Some(replay),
        ..Config::default()
    })
    .await;

    let body = post(&fake, &noul_request()).await.json();
    assert_eq!(body["model"], "jev-1.12.9");
    assert_eq!(body["answers"], Value::Object(recorded_answers()));
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
    let fake = server(Config {
        replay: Some(replay),
        ..Config::default()
    })
    .await;
    let body = post(&fake, &noul_request()).await.json();
    assert_eq!(body["model"], "jev-0.1.0");
    assert!(body["usage"]["input_tokens"].is_u64());
}
