//! `--record` then `--replay`: recorded exchanges replay to identical verdicts, offline.

use std::{sync::Arc, time::Duration};

use jevjudge_judge::{
    Backend, BackendKind, Definition, ErrorCode, Judge, RecordWriter, Recording, ReplayBackend,
    Status, backend_fn,
};
use jevjudge_test_support::definition_file;
use jevjudge_wire::{Detail, Request, Response, record};
use serde_json::json;

fn support_draft_v1() -> Definition {
    Definition::from_path(definition_file("support-draft-v1")).expect("the shared definition loads")
}

/// A backend whose answer depends on the state, with usage and a resolved model, and answers
/// written with an integer and an unknown field so that "exactly as returned" is visible.
fn live_like() -> impl Backend {
    backend_fn(|request: Request| async move {
        let draft = request.state["draft"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let (covers, risk) = if draft.contains("complete") {
            ("0.9", "1")
        } else {
            ("0.85", "0.05")
        };
        let body = format!(
            r#"{{"model":"jev-1.13.0","answers":{{"covers_request":{{"type":"noul","noul":{covers},"note":"x"}},"unsupported_commitment":{{"type":"noul","noul":{risk}}}}},"usage":{{"input_tokens":300,"output_tokens":40}}}}"#
        );
        Ok(Response::from_slice(body.as_bytes()).unwrap())
    })
}

#[tokio::test]
async fn recorded_exchanges_replay_to_identical_verdicts() {
    let dir = jevjudge_test_support::temp_dir("record");
    let path = dir.join("audit.jevl");
    let writer = Arc::new(RecordWriter::append(&path).unwrap());
    let definition = support_draft_v1();
    let states = [
        json!({"draft": "Your refund is complete.", "record": "no refund"}),
        json!({"draft": "I will check the refund status.", "record": "no refund"}),
        json!("a plain string state"),
    ];
    let live = Judge::new(
        Recording::new(live_like(), writer.clone(), "jev-latest"),
        Duration::from_secs(1),
    )
    .unwrap();
    let mut verdicts = Vec::new();
    for state in &states {
        verdicts.push(live.review(state.clone(), &definition).await);
    }
    assert_eq!(writer.written(), 3);
    assert_eq!(writer.failed(), 0);

    let records = record::read_file(&path).unwrap();
    assert_eq!(records.len(), 3);
    assert_eq!(records[0].model, "jev-1.13.0");
    assert_eq!(records[0].requested_model(), "jev-latest");
    assert_eq!(
        serde_json::Value::Object(records[0].answers.clone()).to_string(),
        r#"{"covers_request":{"type":"noul","noul":0.9,"note":"x"},"unsupported_commitment":{"type":"noul","noul":1}}"#,
        "answers exactly as returned"
    );

    let replay = ReplayBackend::open(&path, "jev-latest").unwrap();
    assert_eq!(replay.kind(), BackendKind::Replay);
    let offline = Judge::new(replay, Duration::from_secs(1)).unwrap();
    for (state, live_verdict) in states.iter().zip(&verdicts) {
        let replayed = offline.review(state.clone(), &definition).await;
        assert_eq!(replayed.status, live_verdict.status);
        assert_eq!(replayed.findings, live_verdict.findings);
        assert_eq!(replayed.model, live_verdict.model);
        assert_eq!(replayed.usage, live_verdict.usage);
    }

    // A request that was never recorded: ERROR/BACKEND not_recorded, nothing sent.
    let missing = offline.review(json!({"draft": "new"}), &definition).await;
    assert_eq!(
        (missing.status, missing.error, missing.detail),
        (Status::Error, ErrorCode::Backend, Some(Detail::NotRecorded))
    );
    // Another model's answers are never replayed for this one.
    let preview = Judge::new(
        ReplayBackend::open(&path, "jev-preview").unwrap(),
        Duration::from_secs(1),
    )
    .unwrap();
    let other = preview.review(states[0].clone(), &definition).await;
    assert_eq!(other.detail, Some(Detail::NotRecorded));
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test]
async fn invalid_answers_are_not_recorded() {
    let dir = jevjudge_test_support::temp_dir("record-bad");
    let path = dir.join("audit.jevl");
    let writer = Arc::new(RecordWriter::append(&path).unwrap());
    let broken = backend_fn(|_| async {
        Ok(Response::from_slice(
            br#"{"model":"jev-1.13.0","answers":{"covers_request":{"type":"noul","noul":2}}}"#,
        )
        .unwrap())
    });
    let judge = Judge::new(
        Recording::new(broken, writer.clone(), "jev-latest"),
        Duration::from_secs(1),
    )
    .unwrap();
    let verdict = judge.review(json!("s"), &support_draft_v1()).await;
    assert_eq!(verdict.error, ErrorCode::InvalidResponse);
    assert_eq!(writer.written(), 0);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fixture_records_make_a_fixture_backend_and_bad_lines_name_the_line() {
    let dir = std::env::temp_dir().join(format!("jevjudge-fixture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = r#"{"v":1,"id":"sha256:00","ts":"2026-01-01T00:00:00Z","model":"offline-fixture","request":{"state":"s","questions":{"q":{"type":"noul","instructions":"x"}}},"answers":{"q":{"type":"noul","noul":0.5}},"meta":{"fixture":true,"requested_model":"jev-latest"}}"#;
    let path = dir.join("fixture.jevl");
    std::fs::write(&path, format!("{good}\n")).unwrap();
    let replay = ReplayBackend::open(&path, "jev-latest").unwrap();
    assert_eq!(replay.kind(), BackendKind::Fixture);
    let bad = dir.join("bad.jevl");
    std::fs::write(&bad, format!("{good}\n{{not json\n")).unwrap();
    let error = ReplayBackend::open(&bad, "jev-latest")
        .unwrap_err()
        .to_string();
    assert!(error.contains("bad.jevl:2"), "{error}");
    let newer = dir.join("newer.jevl");
    std::fs::write(&newer, good.replace(r#""v":1"#, r#""v":2"#) + "\n").unwrap();
    let error = ReplayBackend::open(&newer, "jev-latest")
        .unwrap_err()
        .to_string();
    assert!(error.contains("newer.jevl:1"), "{error}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A transport that answers every request with one noul answer, marked as jevjudge's fake
/// server's (`x-jevjudge-fake: 1`) when `marked`.
#[derive(Clone)]
struct Answering {
    marked: bool,
}

impl jevjudge_client::Transport for Answering {
    fn send(
        &self,
        _request: jevjudge_client::HttpRequest,
    ) -> impl std::future::Future<
        Output = Result<jevjudge_client::HttpResponse, jevjudge_client::TransportError>,
    > + Send {
        let body = r#"{"model":"jev-1.13.0","answers":{"covers_request":{"type":"noul","noul":0.9},"unsupported_commitment":{"type":"noul","noul":0.05}},"usage":{"input_tokens":30,"output_tokens":40}}"#;
        let mut response = jevjudge_client::HttpResponse::new(200, body)
            .with_header("content-type", "application/json");
        if self.marked {
            response = response.with_header(jevjudge_wire::FAKE_MARK_HEADER, "1");
        }
        std::future::ready(Ok(response))
    }
}

fn live_over(marked: bool) -> jevjudge_judge::SystemOneBackend<Answering> {
    let client = jevjudge_client::Client::builder()
        .env_lookup(|_| None)
        .api_key(jevjudge_client::ApiKey::new("test-key").unwrap())
        .transport(Answering { marked })
        .build()
        .unwrap();
    jevjudge_judge::SystemOneBackend::new(client)
}

#[tokio::test]
async fn answers_from_the_fake_server_are_labelled_fake_and_recorded_as_fake() {
    let dir = std::env::temp_dir().join(format!("jevjudge-record-fake-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fake.jevl");
    let _ = std::fs::remove_file(&path);
    let definition = support_draft_v1();

    // An unmarked server stays `systemone`, and so does its replay's source: `replay`.
    let unmarked = live_over(false);
    let judge = Judge::new(&unmarked, Duration::from_secs(1)).unwrap();
    assert_eq!(
        judge.review(json!("s"), &definition).await.status,
        Status::Pass
    );
    assert_eq!(unmarked.kind(), BackendKind::Systemone);

    // A marked one turns `fake` with its first answer, clones included.
    let marked = live_over(true);
    assert_eq!(
        marked.kind(),
        BackendKind::Systemone,
        "nothing answered yet"
    );
    let writer = Arc::new(RecordWriter::append(&path).unwrap());
    let recording = Recording::new(marked.clone(), writer.clone(), "jev-latest");
    let judge = Judge::new(&recording, Duration::from_secs(1)).unwrap();
    let verdict = judge.review(json!("s"), &definition).await;
    assert_eq!(verdict.status, Status::Pass);
    assert_eq!(marked.kind(), BackendKind::Fake);
    assert_eq!(recording.kind(), BackendKind::Fake);
    assert_eq!(writer.written(), 1);

    // The record says so, and its replay says `fake`, never the model it names.
    let records = record::read_file(&path).unwrap();
    assert!(records[0].is_fake());
    assert_eq!(records[0].model, "jev-1.13.0");
    assert_eq!(
        records[0].meta.as_ref().and_then(|meta| meta.get("fake")),
        Some(&json!(true))
    );
    let replay = ReplayBackend::open(&path, "jev-latest").unwrap();
    assert_eq!(replay.kind(), BackendKind::Fake);
    let replayed = Judge::new(replay, Duration::from_secs(1))
        .unwrap()
        .review(json!("s"), &definition)
        .await;
    assert_eq!(replayed.findings, verdict.findings);
    std::fs::remove_dir_all(&dir).ok();
}
