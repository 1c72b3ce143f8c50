//! What a labelled export reads from the queue on SQLite and on a real PostgreSQL: each
//! queued review's inclusion probability π, and one definition version at a time.

use jevjudge_store::{
    Enqueue, Inclusion, KeptState, Labelled, NewReview, QueueReason, Store, StoreUrl,
};
use jevjudge_test_support::on_both_stores;
use serde_json::json;

use super::{pg_url, review, sqlite_url};

on_both_stores!(
    each_queued_review_keeps_its_inclusion_probability,
    versions_are_counted_over_every_review_and_an_export_reads_one,
);

fn kept(status: &str) -> NewReview {
    kept_of(status, "v1")
}

fn kept_of(status: &str, version: &str) -> NewReview {
    let mut review = review(Some("ticket"), status, version);
    review.kept = Some(KeptState {
        state: json!({"assistant_answer": "No refund yet."}),
        answers: None,
        requested_model: "jev-latest".to_owned(),
    });
    review
}

async fn labelled(store: &Store) -> Vec<Labelled> {
    let mut seen = Vec::new();
    store
        .export_labelled(|labelled| {
            seen.push(labelled);
            Ok(())
        })
        .await
        .unwrap();
    seen
}

async fn each_queued_review_keeps_its_inclusion_probability(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let queue = |reason, copies| Enqueue { reason, copies };
    let by_status = kept("FAIL");
    store
        .insert_queued(&by_status, Some(&queue(QueueReason::Status, 1)))
        .await
        .unwrap();
    // A PASS sampled at 30 %, decided by two reviewers: both copies hold its π.
    let sampled = kept("PASS");
    let rate = Inclusion::new(0.3).unwrap();
    store
        .insert_queued_with(&sampled, Some(&queue(QueueReason::SampledPass, 2)), rate)
        .await
        .unwrap();
    // A sampled PASS queued without its rate: π is not recorded.
    let unrecorded = kept("PASS");
    store
        .insert_queued(&unrecorded, Some(&queue(QueueReason::SampledPass, 1)))
        .await
        .unwrap();

    let seen = labelled(&store).await;
    let inclusion = |id| {
        seen.iter()
            .find(|l| l.review_id == id)
            .expect("queued")
            .inclusion
    };
    assert_eq!(inclusion(by_status.id), Some(Inclusion::FULL));
    assert_eq!(inclusion(sampled.id), Some(rate));
    assert_eq!(inclusion(sampled.id).unwrap().weight(), 1.0 / 0.3);
    assert_eq!(inclusion(unrecorded.id), None);
    store.close().await;
}

async fn versions_are_counted_over_every_review_and_an_export_reads_one(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let once = Enqueue {
        reason: QueueReason::Status,
        copies: 1,
    };
    let mut queued = Vec::new();
    for (status, version) in [("FAIL", "v1"), ("INCONCLUSIVE", "v1"), ("FAIL", "v2")] {
        let review = kept_of(status, version);
        store.insert_queued(&review, Some(&once)).await.unwrap();
        queued.push(review.id);
    }
    // Reviews never queued count too (any status): two PASS of v1, an ERROR of v3.
    for (status, version) in [("PASS", "v1"), ("PASS", "v1"), ("ERROR", "v3")] {
        store.insert(&kept_of(status, version)).await.unwrap();
    }
    assert_eq!(
        store.review_versions().await.unwrap(),
        vec![
            ("v1".to_owned(), 4),
            ("v2".to_owned(), 1),
            ("v3".to_owned(), 1)
        ]
    );
    let read = |version: Option<&'static str>| {
        let store = &store;
        async move {
            let mut ids = Vec::new();
            let count = store
                .export_labelled_of(version, |labelled| {
                    ids.push(labelled.review_id);
                    Ok(())
                })
                .await
                .unwrap();
            assert_eq!(count, ids.len() as u64);
            ids
        }
    };
    assert_eq!(read(Some("v1")).await, queued[..2]);
    assert_eq!(read(Some("v2")).await, queued[2..]);
    assert!(
        read(Some("v3")).await.is_empty(),
        "nothing of v3 was queued"
    );
    assert_eq!(read(None).await, queued);
    store.close().await;
}
