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
    defect_5_items_whose_state_was_erased_expire_and_are_never_handed_out,
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

async fn defect_5_items_whose_state_was_erased_expire_and_are_never_handed_out(url: StoreUrl) {
    let store = store(&url).await;
    let decided_review = queue_one(&store, "decided before the sweep").await;
    let held_review = queue_one(&store, "held during the sweep").await;
    for n in 0..3 {
        queue_one(&store, &format!("pending {n}")).await;
    }
    let first = store.claim("ana", None, LEASE).await.unwrap().unwrap();
    assert_eq!(first.subject.review.review_id, decided_review);
    let decision = Decision {
        findings: BTreeMap::from([("supported".to_owned(), Some(false))]),
        note: None,
    };
    store.decide(first.item, "ana", &decision).await.unwrap();
    let held = store.claim("ben", None, LEASE).await.unwrap().unwrap();
    assert_eq!(held.subject.review.review_id, held_review);

    let later = std::time::SystemTime::now() + Duration::from_secs(60);
    let erased = store.erase_state_before_counting(later).await.unwrap();
    assert_eq!((erased.reviews, erased.expired_items), (5, 4));
    // Nothing is handed out without its state, capped or not.
    assert!(store.claim("cem", None, LEASE).await.unwrap().is_none());
    assert!(matches!(
        store.claim_capped("cem", None, LEASE, 5).await.unwrap(),
        Claim::Empty
    ));
    let stats = store.queue_stats().await.unwrap();
    assert_eq!(stats.pending_by_version.values().sum::<u64>(), 0);
    assert_eq!((stats.claimed, stats.decided, stats.expired), (0, 1, 4));
    let capped = store.queue_counts_capped(2).await.unwrap();
    assert_eq!(capped.expired, 2, "capped at 2");
    assert!(
        store
            .queue_page(None, 10, None)
            .await
            .unwrap()
            .items
            .is_empty()
    );
    // The holder learns it expired, not that it is someone else's.
    assert!(matches!(
        store.decide(held.item, "ben", &decision).await,
        Err(QueueError::Expired)
    ));
    assert!(matches!(
        store.release(held.item, "ben").await,
        Err(QueueError::Expired)
    ));
    // The labelled read says which reviews expired; the decided one did not.
    let mut labelled = Vec::new();
    store
        .export_labelled(|one| {
            labelled.push((one.review_id, one.expired));
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(labelled.len(), 5);
    for (review_id, expired) in labelled {
        assert_eq!(expired, review_id != decided_review, "{review_id}");
    }
    // A second sweep finds nothing more to close.
    let again = store.erase_state_before_counting(later).await.unwrap();
    assert_eq!((again.reviews, again.expired_items), (0, 0));
    store.close().await;
}

/// How often `marker` occurs in the file at `path` (0 when there is no such file).
fn copies(path: &std::path::Path, marker: &[u8]) -> usize {
    let bytes = std::fs::read(path).unwrap_or_default();
    bytes
        .windows(marker.len())
        .filter(|window| *window == marker)
        .count()
}

#[tokio::test]
async fn defect_5_erased_state_leaves_no_copy_in_the_sqlite_file_or_its_wal() {
    let path = jevjudge_test_support::databases::sqlite_file("jevjudge_store_erase");
    let url = StoreUrl::Sqlite(path.clone());
    let store = store(&url).await;
    let marker = format!("erase-me-{}", jevjudge_store::ReviewId::new());
    for n in 0..40 {
        // Long states overflow pages; short ones sit in the row.
        let filler = "x".repeat(if n % 2 == 0 { 10 } else { 5000 });
        queue_one(&store, &format!("{marker} {n} {filler}")).await;
    }
    let wal = path.with_file_name(format!(
        "{}-wal",
        path.file_name().unwrap().to_string_lossy()
    ));
    let before = copies(&path, marker.as_bytes()) + copies(&wal, marker.as_bytes());
    assert!(before >= 40, "the marker is written: {before} copies");
    let later = std::time::SystemTime::now() + Duration::from_secs(60);
    assert_eq!(store.erase_state_before(later).await.unwrap(), 40);
    assert_eq!(copies(&path, marker.as_bytes()), 0, "in the database file");
    assert_eq!(copies(&wal, marker.as_bytes()), 0, "in the write-ahead log");
    store.close().await;
    assert_eq!(copies(&path, marker.as_bytes()), 0, "after closing");
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(&wal);
}
