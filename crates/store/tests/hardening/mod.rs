//! Hostile input and retention on SQLite and on a real PostgreSQL: control characters are
//! refused as invalid (never an outage).

use std::{collections::BTreeMap, time::Duration};

use jevjudge_store::{
    Decision, Enqueue, Filter, KeptState, QueueError, QueueReason, Store, StoreError, StoreUrl,
};
use jevjudge_test_support::on_both_stores;
use serde_json::json;

use super::{pg_url, review, sqlite_url};

on_both_stores!(defect_4_control_characters_are_invalid_not_unavailable);

const LEASE: Duration = Duration::from_secs(600);

/// A store with definition `v1` kept (one criterion, `supported`).
async fn store(url: &StoreUrl) -> Store {
    let store = Store::open(url).await.expect("the store opens");
    let questions = json!({"supported": {"type": "noul", "instructions": "Supported?"}});
    store
        .put_definition("sha256:v1", "v1", &questions)
        .await
        .expect("kept");
    store
}

/// Queues one review of `v1` whose state holds `marker`; its review id.
async fn queue_one(store: &Store, marker: &str) -> jevjudge_store::ReviewId {
    let mut queued = review(Some("ticket"), "INCONCLUSIVE", "v1");
    queued.kept = Some(KeptState {
        state: json!({"assistant_answer": marker}),
        answers: None,
        requested_model: "jev-latest".to_owned(),
    });
    store
        .insert_queued(
            &queued,
            Some(&Enqueue {
                reason: QueueReason::Status,
                copies: 1,
            }),
        )
        .await
        .expect("queued");
    queued.id
}

fn invalid_naming<T: std::fmt::Debug>(result: Result<T, StoreError>, field: &str) {
    match result {
        Err(StoreError::Invalid(message)) => {
            assert!(message.contains(&format!("`{field}`")), "{message}");
        }
        other => panic!("expected Invalid naming {field}, got {other:?}"),
    }
}

async fn defect_4_control_characters_are_invalid_not_unavailable(url: StoreUrl) {
    let store = store(&url).await;
    queue_one(&store, "fine").await;
    for control in ["\u{0}", "\u{1b}", "\u{7f}"] {
        let bad = format!("v1{control}");
        let filter = Filter {
            version: Some(bad.clone()),
            ..Filter::default()
        };
        invalid_naming(store.list(&filter, 10, None).await, "version");
        invalid_naming(store.count(&filter).await, "version");
        let filter = Filter {
            reference: Some(bad.clone()),
            ..Filter::default()
        };
        invalid_naming(store.list(&filter, 10, None).await, "reference");
        invalid_naming(store.claim("ana", Some(&bad), LEASE).await, "version");
        invalid_naming(store.queue_page(Some(&bad), 10, None).await, "version");
    }
    // The store still answers, and the item is still there to claim and decide.
    let claimed = store
        .claim("ana", Some("v1"), LEASE)
        .await
        .expect("answers")
        .expect("pending");
    let decision = |note: &str| Decision {
        findings: BTreeMap::from([("supported".to_owned(), Some(true))]),
        note: Some(note.to_owned()),
    };
    match store
        .decide(claimed.item, "ana", &decision("a\u{0}b"))
        .await
    {
        Err(QueueError::Invalid(message)) => assert!(message.contains("`note`"), "{message}"),
        other => panic!("expected Invalid naming note, got {other:?}"),
    }
    store
        .decide(claimed.item, "ana", &decision("line\r\nnext\tend"))
        .await
        .expect("line breaks and tabs are a note's own");
    store.close().await;
}
