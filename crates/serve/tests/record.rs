//! The audit trail: with a [`Recording`] backend (`jevjudge serve --record FILE.jevl`) every
//! exchange is written with its state, and the file replays offline to identical verdicts.

use std::sync::Arc;

use jevjudge_judge::{RecordWriter, Recording, ReplayBackend, SystemOneBackend, Verdict};
use jevjudge_serve::{Config, Metrics};
use serde_json::{Value, json};

use crate::util::{Service, client, fake};

/// The verdict without what differs between a live run and its replay: the time and the
/// backend's name.
fn without_elapsed(verdict: &Value) -> Value {
    let mut verdict = verdict.clone();
    verdict["elapsed_millis"] = json!(0);
    verdict["backend"] = json!(null);
    verdict
}

#[tokio::test]
async fn a_recorded_service_replays_to_identical_verdicts() {
    let dir = jevjudge_test_support::temp_dir("serve-record");
    let path = dir.join("audit.jevl");

    // Live: through the fake (answers by hash of the state), recording every exchange.
    let fake = fake(Default::default()).await;
    let metrics = Metrics::new();
    let writer = Arc::new(RecordWriter::append(&path).unwrap());
    let backend = Recording::new(
        SystemOneBackend::new(client(&fake, &metrics, "test-key", 0)),
        writer.clone(),
        jevjudge_wire::DEFAULT_MODEL,
    );
    let live = Service::start(backend, Config::default(), metrics).await;
    let requests = [
        (
            "refund-answer-v1",
            json!({"assistant_answer": "The refund is complete."}),
        ),
        (
            "refund-answer-v1",
            json!({"assistant_answer": "No refund yet; I will check."}),
        ),
        (
            "support-draft-v1",
            json!({"draft": "您的退款已完成。", "request": "退款"}),
        ),
        ("support-draft-v1", json!("a plain string state")),
        ("refund-answer-v1", json!([{"turn": 1}, {"turn": 2}])),
    ];
    let mut recorded = Vec::new();
    for (version, state) in &requests {
        let reply = live.review(version, &json!({"state": state})).await;
        assert_eq!(reply.status, 200);
        recorded.push(reply.json());
    }
    live.stop().await.unwrap();
    assert_eq!(writer.written(), requests.len() as u64);
    assert_eq!(writer.failed(), 0);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("您的退款已完成。"),
        "the state is in the record"
    );

    // Offline: the same requests against the replay of the file, nothing sent anywhere.
    let replay = ReplayBackend::open(&path, jevjudge_wire::DEFAULT_MODEL).unwrap();
    assert_eq!(replay.len(), requests.len());
    let offline = Service::start(replay, Config::default(), Metrics::new()).await;
    for ((version, state), live_verdict) in requests.iter().zip(&recorded) {
        let reply = offline.review(version, &json!({"state": state})).await;
        assert_eq!(reply.status, 200);
        let mut verdict = reply.json();
        // Recorded against the fake server: live and replayed, the backend says `fake`.
        assert_eq!(live_verdict["backend"], "fake");
        assert_eq!(verdict["backend"], "fake");
        assert_eq!(without_elapsed(&verdict), without_elapsed(live_verdict));
        verdict.as_object_mut().unwrap().remove("backend");
        // Both are real verdicts (not not_recorded errors).
        let parsed: Verdict = serde_json::from_value(verdict).unwrap();
        assert_eq!(parsed.detail, None, "{parsed}");
    }
    // A state that was never recorded is ERROR/BACKEND not_recorded (still a 200).
    let reply = offline
        .review("refund-answer-v1", &json!({"state": "never seen"}))
        .await;
    assert_eq!(reply.json()["detail"], "not_recorded");
    offline.stop().await.unwrap();
    assert_eq!(fake.request_count(), requests.len());
    let _ = std::fs::remove_dir_all(&dir);
}
