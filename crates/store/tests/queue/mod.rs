//! The review queue on SQLite and on a real PostgreSQL: claims, leases, decisions,
//! the second-review slot rule, agreement, pages, and many claimers at once.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    time::{Duration, SystemTime},
};

use jevjudge_store::{
    Claimed, Decision, Enqueue, KeptState, NewReview, QueueCursor, QueueError, QueueItemId,
    QueueReason, Store, StoreError, StoreUrl,
};
use jevjudge_test_support::{
    databases::{all_pages, nothing_pending},
    on_both_stores,
};
use serde_json::{Value, json};

// `review` builds the reviews; `on_both_stores!` takes its URLs from the store suite.
use super::{pg_url, review, sqlite_url};

on_both_stores!(
    a_claimed_item_is_decided_once_by_its_holder,
    an_expired_lease_returns_the_item_to_the_queue,
    the_two_slots_of_a_second_review_go_to_different_reviewers,
    concurrent_claims_never_hand_out_an_item_twice,
    agreement_is_scotts_pi_and_cohens_kappa_per_criterion,
    queue_pages_are_oldest_first_with_cursors_and_versions,
    a_review_and_its_items_are_written_together_or_not_at_all,
    labelled_reads_give_each_queued_review_its_decisions_and_record,
);

const LEASE: Duration = Duration::from_secs(600);

fn questions() -> Value {
    json!({
        "supported": {"type": "noul", "instructions": "Is it supported?"},
        "polite": {"type": "noul", "instructions": "Is it polite?"},
    })
}

/// A store with the definition `v1` (and `v2`) kept, expected flags included.
async fn store(url: &StoreUrl) -> Store {
    let store = Store::open(url).await.expect("the store opens");
    for version in ["v1", "v2"] {
        let digest = format!("sha256:{version}");
        store
            .put_definition(&digest, version, &questions())
            .await
            .unwrap();
        store
            .put_definition_expected(
                &digest,
                &BTreeMap::from([("supported".to_owned(), true), ("polite".to_owned(), false)]),
            )
            .await
            .unwrap();
    }
    store
}

fn kept_review(status: &str, version: &str) -> NewReview {
    let mut review = review(Some("ticket"), status, version);
    review.kept = Some(KeptState {
        state: json!({"assistant_answer": "No refund yet."}),
        answers: None,
        requested_model: "jev-latest".to_owned(),
    });
    review
}

async fn queue(store: &Store, version: &str, copies: u8) -> (NewReview, Vec<QueueItemId>) {
    let review = kept_review("INCONCLUSIVE", version);
    let items = store
        .insert_queued(
            &review,
            Some(&Enqueue {
                reason: QueueReason::Status,
                copies,
            }),
        )
        .await
        .expect("queued");
    assert_eq!(items.len(), usize::from(copies));
    (review, items)
}

/// The keys of a JSON object, in their order.
fn keys_of(json: &Value) -> Vec<&str> {
    json.as_object()
        .expect("an object")
        .keys()
        .map(String::as_str)
        .collect()
}

fn decision(supported: Option<bool>, polite: Option<bool>) -> Decision {
    Decision {
        findings: BTreeMap::from([
            ("supported".to_owned(), supported),
            ("polite".to_owned(), polite),
        ]),
        note: Some("checked the order system".to_owned()),
    }
}

async fn a_claimed_item_is_decided_once_by_its_holder(url: StoreUrl) {
    let store = store(&url).await;
    let (review, items) = queue(&store, "v1", 1).await;
    let t0 = SystemTime::now();

    let claimed = claim(&store, "ana", None, LEASE, t0)
        .await
        .expect("one item is pending");
    assert_eq!(claimed.item, items[0]);
    assert_eq!(claimed.subject.review.review_id, review.id);
    assert_eq!(
        claimed.subject.state,
        Some(json!({"assistant_answer": "No refund yet."}))
    );
    assert_eq!(claimed.subject.questions, questions());
    assert_eq!(
        claimed.subject.expected,
        Some(BTreeMap::from([
            ("supported".to_owned(), true),
            ("polite".to_owned(), false)
        ]))
    );
    assert_eq!((claimed.reason.as_str(), claimed.slot), ("status", 1));
    let json = serde_json::to_value(&claimed).unwrap();
    assert!(json["lease_expires"].as_str().unwrap().ends_with('Z'));
    assert_eq!(json["item"], items[0].to_string());
    // The subject's fields stand in place, in the order they always had.
    assert_eq!(
        keys_of(&json),
        [
            "item",
            "review",
            "state",
            "questions",
            "expected",
            "reason",
            "slot",
            "lease_expires"
        ]
    );
    assert!(
        !format!("{claimed:?}").contains("No refund yet"),
        "Debug never shows state text"
    );

    // Leased: nobody else gets it, and only its holder may decide or release it.
    assert!(claim(&store, "ben", None, LEASE, t0).await.is_none());
    let stats = store.queue_stats_at(t0).await.unwrap();
    assert_eq!(stats.claimed, 1);
    assert_eq!(stats.pending_by_version.get("v1"), None);
    assert!(matches!(
        store
            .decide_at(items[0], "ben", &decision(Some(true), Some(false)), t0)
            .await,
        Err(QueueError::LeaseNotHeld)
    ));
    assert!(matches!(
        store.release_at(items[0], "ben", t0).await,
        Err(QueueError::LeaseNotHeld)
    ));

    // Findings answer exactly the definition's criteria.
    let mut unknown = decision(Some(true), Some(false));
    unknown.findings.insert("invented".to_owned(), Some(true));
    let error = store
        .decide_at(items[0], "ana", &unknown, t0)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, QueueError::Invalid(m) if m.contains("`findings.invented` is not a criterion")),
        "{error}"
    );
    let mut missing = decision(Some(true), None);
    missing.findings.remove("polite");
    assert!(matches!(
        store.decide_at(items[0], "ana", &missing, t0).await,
        Err(QueueError::Invalid(_))
    ));

    let decided = store
        .decide_at(items[0], "ana", &decision(Some(true), None), t0)
        .await
        .expect("decided by the holder");
    assert_eq!(decided.item, items[0]);
    assert_eq!(decided.findings_by_jev, review.findings);
    assert_eq!(decided.review.review_id, review.id);

    // Decided once: a second decision or a release is refused; unknown items are not found.
    assert!(matches!(
        store
            .decide_at(items[0], "ana", &decision(Some(false), None), t0)
            .await,
        Err(QueueError::AlreadyDecided)
    ));
    assert!(matches!(
        store.release_at(items[0], "ana", t0).await,
        Err(QueueError::AlreadyDecided)
    ));
    assert!(matches!(
        store
            .decide_at(QueueItemId::new(), "ana", &decision(None, None), t0)
            .await,
        Err(QueueError::NotFound)
    ));
    assert!(matches!(
        store.release_at(QueueItemId::new(), "ana", t0).await,
        Err(QueueError::NotFound)
    ));
    assert!(claim(&store, "ana", None, LEASE, t0).await.is_none());

    let view = store.queue_item(items[0]).await.unwrap().expect("found");
    let json = serde_json::to_value(&view).unwrap();
    assert_eq!(
        keys_of(&json),
        [
            "entry",
            "review",
            "state",
            "questions",
            "expected",
            "decision"
        ]
    );
    assert_eq!(json["state"], json!({"assistant_answer": "No refund yet."}));
    assert!(
        !format!("{view:?}").contains("No refund yet"),
        "Debug shows no state text"
    );
    let saved = view.decision.expect("decided");
    assert_eq!(saved.reviewer, "ana");
    assert_eq!(saved.findings, decision(Some(true), None).findings);
    assert_eq!(saved.note.as_deref(), Some("checked the order system"));
    assert_eq!(view.subject.questions, questions());
    assert!(
        store
            .queue_item(QueueItemId::new())
            .await
            .unwrap()
            .is_none()
    );
    let stats = store.queue_stats_at(t0).await.unwrap();
    assert_eq!((stats.claimed, stats.decided), (0, 1));
    store.close().await;
}

async fn an_expired_lease_returns_the_item_to_the_queue(url: StoreUrl) {
    let store = store(&url).await;
    let (_, items) = queue(&store, "v1", 1).await;
    let t0 = SystemTime::now();
    let lease = Duration::from_secs(10);
    let at = |seconds: u64| t0 + Duration::from_secs(seconds);

    let claimed = claim(&store, "ana", None, lease, t0).await.unwrap();
    assert_eq!(claimed.lease_expires, t0 + lease - sub_millis(t0));
    assert!(claim(&store, "ben", None, lease, at(9)).await.is_none());
    // At its end the lease has expired: the item is pending again and ben gets it.
    assert_eq!(
        store
            .queue_stats_at(at(10))
            .await
            .unwrap()
            .pending_by_version["v1"],
        1
    );
    let again = claim(&store, "ben", None, lease, at(10)).await.unwrap();
    assert_eq!(again.item, items[0]);
    // ana's expired lease no longer lets her decide or release.
    assert!(matches!(
        store
            .decide_at(items[0], "ana", &decision(None, None), at(11))
            .await,
        Err(QueueError::LeaseNotHeld)
    ));
    assert!(matches!(
        store.release_at(items[0], "ana", at(11)).await,
        Err(QueueError::LeaseNotHeld)
    ));
    // ben's lease also expires unused: deciding after it is refused.
    assert!(matches!(
        store
            .decide_at(items[0], "ben", &decision(None, None), at(20))
            .await,
        Err(QueueError::LeaseNotHeld)
    ));
    // A release gives the item back at once.
    let third = claim(&store, "cem", None, lease, at(20)).await.unwrap();
    store.release_at(third.item, "cem", at(21)).await.unwrap();
    let page = store.queue_page_at(None, 10, None, at(21)).await.unwrap();
    assert_eq!(page.items[0].claimed_by, None);
    let fourth = claim(&store, "ana", None, lease, at(21)).await.unwrap();
    store
        .decide_at(
            fourth.item,
            "ana",
            &decision(Some(false), Some(false)),
            at(30),
        )
        .await
        .expect("decided within the lease");
    store.close().await;
}

/// `reviewer` claims the next item (of `version`, or any) at `now`; the store must answer.
async fn claim(
    store: &Store,
    reviewer: &str,
    version: Option<&str>,
    lease: Duration,
    now: SystemTime,
) -> Option<Claimed> {
    store
        .claim_at(reviewer, version, lease, now)
        .await
        .expect("the store answers a claim")
}

/// The part of `time` below a millisecond (the store keeps milliseconds).
fn sub_millis(time: SystemTime) -> Duration {
    let since = time.duration_since(SystemTime::UNIX_EPOCH).unwrap();
    Duration::from_nanos(u64::from(since.subsec_nanos() % 1_000_000))
}

async fn the_two_slots_of_a_second_review_go_to_different_reviewers(url: StoreUrl) {
    let store = store(&url).await;
    let (review, items) = queue(&store, "v1", 2).await;
    let t0 = SystemTime::now();
    let first = claim(&store, "ana", None, LEASE, t0).await.unwrap();
    assert_eq!((first.item, first.slot), (items[0], 1));
    // Slot 2 is pending, but never for the reviewer of slot 1: not while she holds it…
    assert!(claim(&store, "ana", None, LEASE, t0).await.is_none());
    store
        .decide_at(first.item, "ana", &decision(Some(true), Some(true)), t0)
        .await
        .unwrap();
    // …nor after she decided it.
    assert!(claim(&store, "ana", None, LEASE, t0).await.is_none());
    let second = claim(&store, "ben", None, LEASE, t0).await.unwrap();
    assert_eq!((second.item, second.slot), (items[1], 2));
    assert_eq!(second.reason, "second_review");
    assert_eq!(second.subject.review.review_id, review.id);
    // A released slot 1 lease lets its reviewer take slot 2 afterwards, not both at once.
    let (_, other) = queue(&store, "v1", 2).await;
    let a = claim(&store, "cem", None, LEASE, t0).await.unwrap();
    assert_eq!(a.item, other[0]);
    store.release_at(a.item, "cem", t0).await.unwrap();
    let b = claim(&store, "dan", None, LEASE, t0).await.unwrap();
    assert_eq!(b.item, other[0], "the oldest first");
    let c = claim(&store, "cem", None, LEASE, t0).await.unwrap();
    assert_eq!(c.item, other[1]);
    store.close().await;
}

async fn concurrent_claims_never_hand_out_an_item_twice(url: StoreUrl) {
    // Two handles on one database, as two replicas; 50 reviews queued twice and 50 once.
    let a = store(&url).await;
    let b = Store::open(&url).await.unwrap();
    let mut slots_of: HashMap<QueueItemId, (jevjudge_store::ReviewId, u8)> = HashMap::new();
    for i in 0..100 {
        let copies = if i % 2 == 0 { 2 } else { 1 };
        let (review, items) = queue(&a, "v1", copies).await;
        for (slot, item) in items.into_iter().enumerate() {
            slots_of.insert(item, (review.id, slot as u8 + 1));
        }
    }
    assert_eq!(slots_of.len(), 150);
    // 8 reviewers × 25 claims, all at once, alternating handles: 200 claims for 150 items.
    let mut tasks = tokio::task::JoinSet::new();
    for claim in 0..200 {
        let store = if claim % 2 == 0 { a.clone() } else { b.clone() };
        let reviewer = format!("reviewer-{}", claim % 8);
        tasks.spawn(async move {
            let claimed = store.claim(&reviewer, None, LEASE).await;
            (reviewer, claimed)
        });
    }
    let mut seen = HashSet::new();
    let mut reviews_of: HashMap<String, HashSet<jevjudge_store::ReviewId>> = HashMap::new();
    let mut none = 0;
    while let Some(outcome) = tasks.join_next().await {
        let (reviewer, claimed) = outcome.unwrap();
        match claimed.expect("every claim is answered") {
            Some(claimed) => {
                assert!(
                    seen.insert(claimed.item),
                    "{} handed out twice",
                    claimed.item
                );
                assert_eq!(
                    slots_of[&claimed.item],
                    (claimed.subject.review.review_id, claimed.slot)
                );
                assert!(
                    reviews_of
                        .entry(reviewer.clone())
                        .or_default()
                        .insert(claimed.subject.review.review_id),
                    "{reviewer} got both slots of one review"
                );
            }
            None => none += 1,
        }
    }
    assert_eq!(seen.len(), 150, "every item handed out once");
    assert_eq!(none, 50);
    assert_eq!(a.queue_stats().await.unwrap().claimed, 150);
    a.close().await;
    b.close().await;
}

async fn agreement_is_scotts_pi_and_cohens_kappa_per_criterion(url: StoreUrl) {
    let store = store(&url).await;
    let t0 = SystemTime::now();
    // `supported`: 2 both yes, 1 yes/no, 1 both no (n = 4): pₒ = 0.75; first yes 3/4,
    // second yes 2/4; pₑ = 3/8 + 1/8 = 0.5; κ = 0.25 / 0.5 = 0.5.
    // `polite`: always no from both: pₒ = 1, κ undefined; one pair has a can't-tell.
    let pairs = [
        ((Some(true), Some(false)), (Some(true), Some(false))),
        ((Some(true), Some(false)), (Some(true), Some(false))),
        ((Some(true), Some(false)), (Some(false), None)),
        ((Some(false), Some(false)), (Some(false), Some(false))),
    ];
    for (first, second) in pairs {
        queue(&store, "v1", 2).await;
        let one = claim(&store, "ana", None, LEASE, t0).await.unwrap();
        store
            .decide_at(one.item, "ana", &decision(first.0, first.1), t0)
            .await
            .unwrap();
        let two = claim(&store, "ben", None, LEASE, t0).await.unwrap();
        assert_eq!(two.subject.review.review_id, one.subject.review.review_id);
        store
            .decide_at(two.item, "ben", &decision(second.0, second.1), t0)
            .await
            .unwrap();
    }
    // A review decided once counts as decided but not in agreement.
    queue(&store, "v1", 1).await;
    let single = claim(&store, "ana", None, LEASE, t0).await.unwrap();
    store
        .decide_at(single.item, "ana", &decision(Some(true), Some(true)), t0)
        .await
        .unwrap();

    let stats = store.queue_stats_at(t0).await.unwrap();
    assert_eq!(stats.decided, 9);
    let supported = stats.agreement["supported"];
    assert_eq!(supported.items, 4);
    assert_eq!(supported.observed, Some(0.75));
    assert!((supported.kappa.unwrap() - 0.5).abs() < 1e-12);
    // Scott's π pools both slots: yes 5/8, pₑ = (5/8)² + (3/8)² = 17/32; π = (3/4 − 17/32) /
    // (1 − 17/32) = 7/15.
    assert!((supported.scott_pi.unwrap() - 7.0 / 15.0).abs() < 1e-12);
    let polite = stats.agreement["polite"];
    assert_eq!(
        (polite.items, polite.observed, polite.kappa),
        (3, Some(1.0), None)
    );
    let json = serde_json::to_value(&stats).unwrap();
    assert_eq!(json["agreement"]["polite"]["kappa"], Value::Null);
    assert_eq!(json["agreement"]["polite"]["scott_pi"], Value::Null);
    store.close().await;
}

async fn queue_pages_are_oldest_first_with_cursors_and_versions(url: StoreUrl) {
    let store = store(&url).await;
    let mut items = Vec::new();
    for i in 0..7 {
        let version = if i % 2 == 0 { "v1" } else { "v2" };
        let (_, queued) = queue(&store, version, 1).await;
        items.push((queued[0], version));
    }
    let t0 = SystemTime::now();
    let (seen, pages) = all_pages(async |cursor: Option<QueueCursor>| {
        let page = store
            .queue_page_at(None, 3, cursor.as_ref(), t0)
            .await
            .unwrap();
        (
            page.items.iter().map(|e| e.item).collect(),
            page.next_cursor,
        )
    })
    .await;
    assert_eq!(pages, 3);
    assert_eq!(seen, items.iter().map(|(i, _)| *i).collect::<Vec<_>>());
    let v2 = store
        .queue_page_at(Some("v2"), 100, None, t0)
        .await
        .unwrap();
    assert_eq!(
        v2.items.iter().map(|e| e.item).collect::<Vec<_>>(),
        items
            .iter()
            .filter(|(_, v)| *v == "v2")
            .map(|(i, _)| *i)
            .collect::<Vec<_>>()
    );
    assert!(
        v2.items
            .iter()
            .all(|e| e.status == "INCONCLUSIVE" && e.slot == 1)
    );

    // A claimed item stays on the page, marked; a decided one leaves it.
    let claimed = claim(&store, "ana", Some("v2"), LEASE, t0).await.unwrap();
    assert_eq!(claimed.item, v2.items[0].item, "the version's oldest");
    let page = store
        .queue_page_at(Some("v2"), 100, None, t0)
        .await
        .unwrap();
    assert_eq!(page.items[0].claimed_by.as_deref(), Some("ana"));
    assert!(page.items[0].lease_expires.is_some());
    store
        .decide_at(claimed.item, "ana", &decision(None, None), t0)
        .await
        .unwrap();
    let page = store
        .queue_page_at(Some("v2"), 100, None, t0)
        .await
        .unwrap();
    assert_eq!(page.items.len(), 2);
    assert!(page.items.iter().all(|e| e.item != claimed.item));
    let stats = store.queue_stats_at(t0).await.unwrap();
    assert_eq!(
        stats.pending_by_version,
        BTreeMap::from([("v1".to_owned(), 4), ("v2".to_owned(), 2)])
    );
    // The page's counts: the stats without agreement; capped ones exact below the cap and
    // the cap itself once reached.
    let counts = store.queue_counts_at(t0).await.unwrap();
    assert_eq!(counts.pending_by_version, stats.pending_by_version);
    assert_eq!((counts.claimed, counts.decided), (0, 1));
    assert!(counts.agreement.is_empty());
    let exact = store.queue_counts_capped(100).await.unwrap();
    assert_eq!(exact.pending_by_version, stats.pending_by_version);
    assert_eq!((exact.claimed, exact.decided), (0, 1));
    // Pending, oldest first: v1 v1 v2 v1 v2 v1; the oldest 3 are two of v1 and one of v2.
    let capped = store.queue_counts_capped(3).await.unwrap();
    assert_eq!(
        capped.pending_by_version,
        BTreeMap::from([("v1".to_owned(), 2), ("v2".to_owned(), 1)])
    );
    let claimed = store
        .claim("bob", Some("v1"), LEASE)
        .await
        .unwrap()
        .unwrap();
    let capped = store.queue_counts_capped(1).await.unwrap();
    assert_eq!((capped.claimed, capped.decided), (1, 1), "claimed is exact");
    assert_eq!(
        capped.pending_by_version,
        BTreeMap::from([("v1".to_owned(), 1)])
    );
    store.release(claimed.item, "bob").await.unwrap();
    assert!(claim(&store, "ana", Some("v9"), LEASE, t0).await.is_none());
    assert!("r1.x".parse::<QueueCursor>().is_err());
    store.close().await;
}

async fn a_review_and_its_items_are_written_together_or_not_at_all(url: StoreUrl) {
    let store = store(&url).await;
    let review = kept_review("FAIL", "v1");
    let three = Enqueue {
        reason: QueueReason::Status,
        copies: 3,
    };
    assert!(matches!(
        store.insert_queued(&review, Some(&three)).await,
        Err(StoreError::Invalid(_))
    ));
    assert!(store.get(review.id).await.unwrap().is_none());
    // Not queued: the review alone.
    assert!(store.insert_queued(&review, None).await.unwrap().is_empty());
    assert!(store.get(review.id).await.unwrap().is_some());
    // A review id written twice fails whole: no item without its review row.
    let once = Enqueue {
        reason: QueueReason::SampledPass,
        copies: 1,
    };
    assert!(store.insert_queued(&review, Some(&once)).await.is_err());
    assert!(nothing_pending(&store).await);
    let sampled = kept_review("PASS", "v1");
    store.insert_queued(&sampled, Some(&once)).await.unwrap();
    let claimed = store.claim("ana", None, LEASE).await.unwrap().unwrap();
    assert_eq!(claimed.reason, "sampled_pass");
    store.close().await;
}

async fn labelled_reads_give_each_queued_review_its_decisions_and_record(url: StoreUrl) {
    let store = store(&url).await;
    let t0 = SystemTime::now();
    // Three reviews: once (decided), twice (slot 1 decided, slot 2 not), once without answers.
    let mut with_record = kept_review("INCONCLUSIVE", "v1");
    if let Some(kept) = with_record.kept.as_mut() {
        kept.answers = Some(
            json!({"supported": {"type": "noul", "noul": 0.5}, "polite": {"type": "noul", "noul": 0.4}})
                .as_object()
                .unwrap()
                .clone(),
        );
    }
    let once = Enqueue {
        reason: QueueReason::Status,
        copies: 1,
    };
    store
        .insert_queued(&with_record, Some(&once))
        .await
        .unwrap();
    let (twice, _) = queue(&store, "v2", 2).await;
    let (no_answers, _) = queue(&store, "v1", 1).await;
    let first = claim(&store, "ana", None, LEASE, t0).await.unwrap();
    store
        .decide_at(first.item, "ana", &decision(Some(true), Some(false)), t0)
        .await
        .unwrap();
    let second = claim(&store, "ana", None, LEASE, t0).await.unwrap();
    assert_eq!(second.subject.review.review_id, twice.id);
    store
        .decide_at(second.item, "ana", &decision(None, Some(true)), t0)
        .await
        .unwrap();

    let mut seen = Vec::new();
    let count = store
        .export_labelled(|labelled| {
            seen.push(labelled);
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(count, 3);
    let ids: Vec<_> = seen.iter().map(|l| l.review_id).collect();
    assert_eq!(
        ids,
        vec![with_record.id, twice.id, no_answers.id],
        "review id order"
    );
    let expected = BTreeMap::from([("supported".to_owned(), true), ("polite".to_owned(), false)]);
    assert!(seen.iter().all(|l| l.expected.as_ref() == Some(&expected)));
    assert!(seen.iter().all(|l| {
        l.criteria.as_deref() == Some(&["supported".to_owned(), "polite".to_owned()][..])
    }));

    assert_eq!(seen[0].definition_version, "v1");
    assert_eq!(
        seen[0].decisions,
        vec![Some(decision(Some(true), Some(false)).findings)]
    );
    let record = seen[0]
        .record
        .as_ref()
        .expect("state, answers and model are kept");
    assert_eq!(
        record.request.state,
        json!({"assistant_answer": "No refund yet."})
    );
    assert_eq!(record.requested_model(), "jev-latest");

    assert_eq!(seen[1].definition_version, "v2");
    assert_eq!(
        seen[1].decisions,
        vec![Some(decision(None, Some(true)).findings), None],
        "slot 2 is not decided"
    );
    assert!(seen[2].state.is_some());
    assert!(seen[2].record.is_none(), "no answers kept: no record");
    assert_eq!(seen[2].decisions, vec![None]);
    store.close().await;
}
