//! What a labelled export reads from the queue on SQLite and on a real PostgreSQL: each
//! queued review's inclusion probability π.

use jevjudge_store::{
    Enqueue, Inclusion, KeptState, Labelled, NewReview, QueueReason, Store, StoreUrl,
};
use jevjudge_test_support::on_both_stores;
use serde_json::json;

use super::{pg_url, review, sqlite_url};

on_both_stores!(each_queued_review_keeps_its_inclusion_probability,);

fn kept(status: &str) -> NewReview {
    let mut review = review(Some("ticket"), status, "v1");
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
