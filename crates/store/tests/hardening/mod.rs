//! Hostile input and retention on SQLite and on a real PostgreSQL: control characters are
//! refused as invalid (never an outage).

use std::{collections::BTreeMap, time::Duration};

use jevjudge_store::{
    Claim, Decision, Enqueue, Filter, KeptState, QueueError, QueueReason, Store, StoreError,
    StoreUrl,
};
use jevjudge_test_support::on_both_stores;
use serde_json::json;

use super::{pg_url, review, sqlite_url};

on_both_stores!(
    defect_4_control_characters_are_invalid_not_unavailable,
    defect_6_a_reviewer_holds_at_most_the_cap_and_others_still_claim,
    defect_6_concurrent_claims_of_one_reviewer_never_pass_the_cap,
);

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

async fn defect_6_a_reviewer_holds_at_most_the_cap_and_others_still_claim(url: StoreUrl) {
    let store = store(&url).await;
    for n in 0..30 {
        queue_one(&store, &format!("item {n}")).await;
    }
    let mut leased = Vec::new();
    for attempt in 0..30 {
        match store
            .claim_capped("ana", None, LEASE, 5)
            .await
            .expect("answers")
        {
            Claim::Leased(claimed) => leased.push(claimed.item),
            Claim::AtCap { held } => {
                assert!(attempt >= 5, "the sixth claim is the first refused");
                let mut held = held;
                held.sort();
                let mut expected = leased.clone();
                expected.sort();
                assert_eq!(held, expected, "the refusal lists what ana holds");
            }
            Claim::Empty => panic!("30 items are pending"),
        }
    }
    assert_eq!(leased.len(), 5);
    // Another reviewer still gets items, up to the cap too.
    for _ in 0..5 {
        assert!(matches!(
            store.claim_capped("ben", None, LEASE, 5).await.unwrap(),
            Claim::Leased(_)
        ));
    }
    // A decision frees a slot under the cap.
    let decision = Decision {
        findings: BTreeMap::from([("supported".to_owned(), Some(true))]),
        note: None,
    };
    store
        .decide(leased[0], "ana", &decision)
        .await
        .expect("decided");
    assert!(matches!(
        store.claim_capped("ana", None, LEASE, 5).await.unwrap(),
        Claim::Leased(_)
    ));
    assert_eq!(store.queue_stats().await.unwrap().claimed, 10);
    store.close().await;
}

async fn defect_6_concurrent_claims_of_one_reviewer_never_pass_the_cap(url: StoreUrl) {
    let store = store(&url).await;
    for n in 0..30 {
        queue_one(&store, &format!("item {n}")).await;
    }
    // Two "replicas" (two pools) claiming for ana at once, 12 claims each.
    let other = Store::open(&url).await.expect("a second pool");
    let mut tasks = Vec::new();
    for n in 0..24 {
        let store = if n % 2 == 0 {
            store.clone()
        } else {
            other.clone()
        };
        tasks.push(tokio::spawn(async move {
            store.claim_capped("ana", None, LEASE, 5).await
        }));
    }
    let mut leased = 0;
    for task in tasks {
        match task
            .await
            .expect("the task ends")
            .expect("the store answers")
        {
            Claim::Leased(_) => leased += 1,
            Claim::AtCap { held } => assert!(held.len() >= 5, "{held:?}"),
            Claim::Empty => panic!("30 items are pending"),
        }
    }
    assert_eq!(leased, 5, "exactly the cap");
    assert_eq!(store.queue_stats().await.unwrap().claimed, 5);
    other.close().await;
    store.close().await;
}
