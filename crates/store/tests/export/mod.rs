//! What a labelled export and monitoring read from the queue, on SQLite and on a real
//! PostgreSQL: each queued review's inclusion probability π, one definition version at a
//! time, and the queue's gauges (pending, oldest pending, decisions, expired leases).

use std::{
    collections::BTreeMap,
    time::{Duration, SystemTime},
};

use jevjudge_store::{
    Decision, Enqueue, Inclusion, KeptState, Labelled, NewReview, PendingVersion, QueueReason,
    Store, StoreUrl,
};
use jevjudge_test_support::on_both_stores;
use serde_json::json;

use super::{pg_url, review, sqlite_url};

on_both_stores!(
    each_queued_review_keeps_its_inclusion_probability,
    versions_are_counted_over_every_review_and_an_export_reads_one,
    gauges_count_pending_items_decisions_and_leases_that_ran_out,
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

async fn gauges_count_pending_items_decisions_and_leases_that_ran_out(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let questions = json!({"supported": {"type": "noul", "instructions": "Is it supported?"}});
    store
        .put_definition("sha256:v1", "v1", &questions)
        .await
        .unwrap();
    let once = Enqueue {
        reason: QueueReason::Status,
        copies: 1,
    };
    let start = SystemTime::now();
    let lease = Duration::from_secs(600);
    for version in ["v1", "v1", "v1", "v2"] {
        store
            .insert_queued(&kept_of("FAIL", version), Some(&once))
            .await
            .unwrap();
    }
    let empty = store.queue_gauges_at(start).await.unwrap();
    let pending = |gauges: &jevjudge_store::QueueGauges| -> BTreeMap<String, u64> {
        gauges
            .pending
            .iter()
            .map(|(version, p)| (version.clone(), p.items))
            .collect()
    };
    assert_eq!(
        pending(&empty),
        BTreeMap::from([("v1".to_owned(), 3), ("v2".to_owned(), 1)])
    );
    let PendingVersion {
        oldest_queued_at_millis,
        ..
    } = empty.pending["v1"];
    let start_millis = start
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!(
        (start_millis - 5_000..=start_millis + 5_000).contains(&oldest_queued_at_millis),
        "queued about now"
    );
    assert_eq!(
        (
            empty.decisions_answered,
            empty.decisions_cant_tell,
            empty.leases_expired
        ),
        (0, 0, 0)
    );

    // ana takes two items of v1: one she decides with a can't-tell, one whose lease runs out.
    let decided = store
        .claim_at("ana", Some("v1"), lease, start)
        .await
        .unwrap()
        .unwrap();
    let unsure = Decision {
        findings: BTreeMap::from([("supported".to_owned(), None)]),
        note: None,
    };
    store
        .decide_at(decided.item, "ana", &unsure, start)
        .await
        .unwrap();
    let lapsed = store
        .claim_at("ana", Some("v1"), lease, start)
        .await
        .unwrap()
        .unwrap();
    let leased = store.queue_gauges_at(start).await.unwrap();
    assert_eq!(
        pending(&leased),
        BTreeMap::from([("v1".to_owned(), 1), ("v2".to_owned(), 1)])
    );
    assert_eq!(
        (
            leased.decisions_answered,
            leased.decisions_cant_tell,
            leased.leases_expired
        ),
        (0, 1, 0)
    );
    // Past the lease: the lapsed item is pending again and its lease counts as expired, before
    // and after ben claims it again (and decides it).
    let later = start + lease + Duration::from_secs(1);
    let lapsed_now = store.queue_gauges_at(later).await.unwrap();
    assert_eq!(lapsed_now.pending["v1"].items, 2);
    assert_eq!(lapsed_now.leases_expired, 1);
    let again = store
        .claim_at("ben", Some("v1"), lease, later)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again.item, lapsed.item, "the oldest pending item");
    let yes = Decision {
        findings: BTreeMap::from([("supported".to_owned(), Some(true))]),
        note: None,
    };
    store
        .decide_at(again.item, "ben", &yes, later)
        .await
        .unwrap();
    let after = store.queue_gauges_at(later).await.unwrap();
    assert_eq!(
        (
            after.decisions_answered,
            after.decisions_cant_tell,
            after.leases_expired
        ),
        (1, 1, 1)
    );
    assert_eq!(
        pending(&after),
        BTreeMap::from([("v1".to_owned(), 1), ("v2".to_owned(), 1)])
    );
    store.close().await;
}
