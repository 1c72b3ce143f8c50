//! A team's queue on SQLite and on a real PostgreSQL: held items handed back first,
//! adjudication of disagreements and can't-tells by a lead (whose decision is the label), and
//! the decisions read back in keyset pages.

use std::{
    collections::BTreeMap,
    time::{Duration, SystemTime},
};

use jevjudge_store::{
    AdjudicationClaim, Claim, Decision, DecisionCursor, DecisionFilter, Enqueue, Findings,
    ItemKind, KeptState, NewReview, QueueError, QueueItemId, QueueReason, Store, StoreUrl,
};
use jevjudge_test_support::on_both_stores;
use serde_json::{Value, json};

use super::{pg_url, review, sqlite_url};

on_both_stores!(
    a_claim_hands_back_a_held_item_before_a_new_one,
    disagreements_and_cant_tells_go_to_a_lead_whose_decision_is_the_label,
    decisions_are_listed_in_pages_filtered_by_disagreement_reviewer_and_version,
    two_decisions_saved_at_once_send_their_review_to_adjudication_once,
);

const LEASE: Duration = Duration::from_secs(600);

fn questions() -> Value {
    json!({
        "supported": {"type": "noul", "instructions": "Is it supported?"},
        "polite": {"type": "noul", "instructions": "Is it polite?"},
    })
}

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

async fn queued(store: &Store, version: &str, copies: u8) -> (NewReview, Vec<QueueItemId>) {
    let mut review = review(Some("ticket"), "INCONCLUSIVE", version);
    review.kept = Some(KeptState {
        state: json!({"assistant_answer": "No refund yet."}),
        answers: None,
        requested_model: "jev-latest".to_owned(),
    });
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
    (review, items)
}

fn decision(supported: Option<bool>, polite: Option<bool>, note: &str) -> Decision {
    Decision {
        findings: BTreeMap::from([
            ("supported".to_owned(), supported),
            ("polite".to_owned(), polite),
        ]),
        note: Some(note.to_owned()),
    }
}

fn leased(claim: (Claim, bool)) -> (QueueItemId, bool) {
    match claim {
        (Claim::Leased(claimed), resumed) => (claimed.item, resumed),
        other => panic!("expected an item, got {other:?}"),
    }
}

/// Claims (new) and decides one item as `reviewer`.
async fn claim_and_decide(store: &Store, reviewer: &str, decided: &Decision) -> QueueItemId {
    let now = SystemTime::now();
    let (item, _) = leased(
        store
            .claim_or_resume_at(reviewer, None, LEASE, 50, true, now)
            .await
            .unwrap(),
    );
    store.decide_at(item, reviewer, decided, now).await.unwrap();
    item
}

async fn a_claim_hands_back_a_held_item_before_a_new_one(url: StoreUrl) {
    let store = store(&url).await;
    let (_, first) = queued(&store, "v1", 1).await;
    let (_, second) = queued(&store, "v2", 1).await;
    let now = SystemTime::now();
    let (item, resumed) = leased(
        store
            .claim_or_resume_at("ana", None, LEASE, 2, false, now)
            .await
            .unwrap(),
    );
    assert_eq!((item, resumed), (first[0], false));
    // Back and claim again: the held item, its lease unchanged.
    let later = now + Duration::from_secs(30);
    let (again, resumed) = leased(
        store
            .claim_or_resume_at("ana", None, LEASE, 2, false, later)
            .await
            .unwrap(),
    );
    assert_eq!((again, resumed), (first[0], true));
    let held = store.held_at("ana", later).await.unwrap();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].item, first[0]);
    assert_eq!(held[0].kind, ItemKind::Review);
    assert_eq!(held[0].definition_version, "v1");
    // Of another version: nothing held of it, so a new item.
    let (other, resumed) = leased(
        store
            .claim_or_resume_at("ana", Some("v2"), LEASE, 2, false, later)
            .await
            .unwrap(),
    );
    assert_eq!((other, resumed), (second[0], false));
    // `new` asks for another one, within the cap.
    let (_, more) = queued(&store, "v1", 1).await;
    match store
        .claim_or_resume_at("ana", None, LEASE, 2, true, later)
        .await
        .unwrap()
    {
        (Claim::AtCap { held }, false) => assert_eq!(held.len(), 2),
        other => panic!("expected the cap, got {other:?}"),
    }
    let (third, resumed) = leased(
        store
            .claim_or_resume_at("ana", None, LEASE, 3, true, later)
            .await
            .unwrap(),
    );
    assert_eq!((third, resumed), (more[0], false));
    assert_eq!(store.held_at("ana", later).await.unwrap().len(), 3);
    assert!(store.held_at("bob", later).await.unwrap().is_empty());
    // Once the leases end, nothing is held.
    assert!(
        store
            .held_at("ana", later + LEASE + Duration::from_secs(1))
            .await
            .unwrap()
            .is_empty()
    );
}

async fn disagreements_and_cant_tells_go_to_a_lead_whose_decision_is_the_label(url: StoreUrl) {
    let store = store(&url).await;
    let now = SystemTime::now();
    // Agreeing: no adjudication. Disagreeing on `polite`: adjudication. Agreeing but one
    // can't tell: adjudication (no disagreement). Single review with a can't-tell: none.
    let (agreed, _) = queued(&store, "v1", 2).await;
    claim_and_decide(&store, "ana", &decision(Some(true), Some(false), "a")).await;
    claim_and_decide(&store, "bob", &decision(Some(true), Some(false), "b")).await;
    let (disputed, _) = queued(&store, "v1", 2).await;
    claim_and_decide(
        &store,
        "ana",
        &decision(Some(true), Some(false), "ana: fine"),
    )
    .await;
    claim_and_decide(
        &store,
        "bob",
        &decision(Some(true), Some(true), "bob: rude"),
    )
    .await;
    let (unsure, _) = queued(&store, "v1", 2).await;
    claim_and_decide(&store, "ana", &decision(Some(true), None, "ana: unsure")).await;
    claim_and_decide(&store, "bob", &decision(Some(true), None, "bob: unsure")).await;
    let (single, _) = queued(&store, "v1", 1).await;
    claim_and_decide(&store, "ana", &decision(None, Some(false), "one")).await;

    let stats = store.adjudication_stats().await.unwrap();
    assert_eq!((stats.pending, stats.decided), (2, 0));

    // A reviewer of the review never adjudicates it.
    assert_eq!(
        store
            .claim_adjudication_at("ana", LEASE, 5, false, now)
            .await
            .unwrap(),
        AdjudicationClaim::Empty
    );
    let AdjudicationClaim::Leased {
        adjudication,
        resumed: false,
    } = store
        .claim_adjudication_at("lea", LEASE, 5, false, now)
        .await
        .unwrap()
    else {
        panic!("expected an adjudication");
    };
    assert!(adjudication.disagreement);
    let answers: Vec<(&str, Option<&str>)> = adjudication
        .answers
        .iter()
        .map(|a| (a.name.as_str(), a.note.as_deref()))
        .collect();
    assert_eq!(
        answers,
        [("ana", Some("ana: fine")), ("bob", Some("bob: rude"))]
    );
    assert_eq!(
        adjudication.state,
        Some(json!({"assistant_answer": "No refund yet."}))
    );
    // Claimed again: the same one, resumed.
    let AdjudicationClaim::Leased {
        adjudication: again,
        resumed: true,
    } = store
        .claim_adjudication_at("lea", LEASE, 5, false, now)
        .await
        .unwrap()
    else {
        panic!("expected the held adjudication");
    };
    assert_eq!(again.item, adjudication.item);
    let held = store.held_at("lea", now).await.unwrap();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].kind, ItemKind::Adjudication);
    // Only the holder decides; the decision answers every criterion.
    assert!(matches!(
        store
            .decide_adjudication_at(
                adjudication.item,
                "bob",
                &decision(Some(true), Some(true), "x"),
                now
            )
            .await,
        Err(QueueError::LeaseNotHeld)
    ));
    let mut partial = decision(Some(true), None, "x");
    partial.findings.remove("polite");
    assert!(matches!(
        store
            .decide_adjudication_at(adjudication.item, "lea", &partial, now)
            .await,
        Err(QueueError::Invalid(_))
    ));
    let decided = store
        .decide_adjudication_at(
            adjudication.item,
            "lea",
            &decision(Some(true), Some(true), "lea: bob is right"),
            now,
        )
        .await
        .unwrap();
    assert_eq!(decided.upheld.as_deref(), Some("second"));
    assert!(matches!(
        store
            .decide_adjudication_at(
                adjudication.item,
                "lea",
                &decision(Some(true), Some(true), "x"),
                now
            )
            .await,
        Err(QueueError::AlreadyDecided)
    ));
    // The second one (both could not tell), decided as the first reviewer said.
    let AdjudicationClaim::Leased { adjudication, .. } = store
        .claim_adjudication_at("lea", LEASE, 5, false, now)
        .await
        .unwrap()
    else {
        panic!("expected the second adjudication");
    };
    assert!(!adjudication.disagreement);
    store
        .decide_adjudication_at(
            adjudication.item,
            "lea",
            &decision(Some(true), Some(false), "lea: it is polite enough"),
            now,
        )
        .await
        .unwrap();
    let stats = store.adjudication_stats().await.unwrap();
    assert_eq!((stats.pending, stats.decided), (0, 2));
    assert_eq!(
        (
            stats.upheld.first,
            stats.upheld.second,
            stats.upheld.both,
            stats.upheld.neither
        ),
        (0, 1, 0, 1)
    );
    assert_eq!(stats.by_reviewer["bob"].upheld, 1);
    assert_eq!(stats.by_reviewer["bob"].overruled, 1);
    assert_eq!(stats.by_reviewer["ana"].overruled, 2);

    // The labelled reads give an adjudicated review the lead's findings only.
    let mut labels: BTreeMap<String, Vec<Option<Findings>>> = BTreeMap::new();
    store
        .export_labelled(|labelled| {
            labels.insert(labelled.review_id.to_string(), labelled.decisions);
            Ok(())
        })
        .await
        .unwrap();
    let lead = |s, p| Some(decision(s, p, "").findings);
    assert_eq!(
        labels[&disputed.id.to_string()],
        vec![lead(Some(true), Some(true))]
    );
    assert_eq!(
        labels[&unsure.id.to_string()],
        vec![lead(Some(true), Some(false))]
    );
    assert_eq!(labels[&agreed.id.to_string()].len(), 2);
    assert_eq!(
        labels[&single.id.to_string()],
        vec![lead(None, Some(false))]
    );
}

async fn decisions_are_listed_in_pages_filtered_by_disagreement_reviewer_and_version(
    url: StoreUrl,
) {
    let store = store(&url).await;
    let mut disputed = Vec::new();
    for n in 0..5 {
        let version = if n % 2 == 0 { "v1" } else { "v2" };
        let (review, _) = queued(&store, version, 2).await;
        claim_and_decide(&store, "ana", &decision(Some(true), Some(false), "a")).await;
        let polite = n % 2 == 0;
        claim_and_decide(&store, "bob", &decision(Some(true), Some(polite), "b")).await;
        if polite {
            disputed.push(review.id);
        }
    }
    let (solo, _) = queued(&store, "v1", 1).await;
    claim_and_decide(&store, "cy", &decision(Some(false), Some(false), "c")).await;

    // Every page of two, in order, covers the six reviews once.
    let mut seen = Vec::new();
    let mut cursor: Option<DecisionCursor> = None;
    loop {
        let page = store
            .queue_decisions(&DecisionFilter::default(), 2, cursor.as_ref())
            .await
            .unwrap();
        seen.extend(page.decisions.iter().map(|d| d.review_id));
        match page.next_cursor {
            Some(next) => cursor = Some(next.parse().unwrap()),
            None => break,
        }
    }
    assert_eq!(seen.len(), 6);
    let mut unique = seen.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 6);

    let only = |disagreement| DecisionFilter {
        disagreement: Some(disagreement),
        ..DecisionFilter::default()
    };
    let page = store.queue_decisions(&only(true), 100, None).await.unwrap();
    let listed: Vec<_> = page.decisions.iter().map(|d| d.review_id).collect();
    assert_eq!(listed, disputed);
    for record in &page.decisions {
        assert!(record.disagreement);
        assert_eq!(record.adjudication.as_ref().unwrap().state, "pending");
        assert_eq!(record.label, None);
        assert_eq!(record.reviewers.len(), 2);
    }
    assert_eq!(
        store
            .queue_decisions(&only(false), 100, None)
            .await
            .unwrap()
            .decisions
            .len(),
        3
    );
    let by_cy = DecisionFilter {
        reviewer: Some("cy".to_owned()),
        ..DecisionFilter::default()
    };
    let page = store.queue_decisions(&by_cy, 100, None).await.unwrap();
    assert_eq!(page.decisions.len(), 1);
    assert_eq!(page.decisions[0].review_id, solo.id);
    assert_eq!(page.decisions[0].label_by, ["cy"]);
    let v2 = DecisionFilter {
        version: Some("v2".to_owned()),
        ..DecisionFilter::default()
    };
    let page = store.queue_decisions(&v2, 100, None).await.unwrap();
    assert_eq!(page.decisions.len(), 2);
    for record in &page.decisions {
        assert_eq!(record.label_by, ["ana", "bob"]);
        assert_eq!(record.label.as_ref().unwrap()["polite"], Some(false));
    }
    let future = DecisionFilter {
        since: Some(SystemTime::now() + Duration::from_secs(3600)),
        ..DecisionFilter::default()
    };
    assert!(
        store
            .queue_decisions(&future, 100, None)
            .await
            .unwrap()
            .decisions
            .is_empty()
    );
    // The reviewer's own history, newest first.
    let history = store.reviewer_history("ana", 3).await.unwrap();
    assert_eq!(history.len(), 3);
    assert!(history[0].decided_at >= history[2].decided_at);
}

async fn two_decisions_saved_at_once_send_their_review_to_adjudication_once(url: StoreUrl) {
    let store = store(&url).await;
    for _ in 0..10 {
        queued(&store, "v1", 2).await;
    }
    let now = SystemTime::now();
    let mut pairs = Vec::new();
    for _ in 0..10 {
        let (a, _) = leased(
            store
                .claim_or_resume_at("ana", None, LEASE, 50, true, now)
                .await
                .unwrap(),
        );
        let (b, _) = leased(
            store
                .claim_or_resume_at("bob", None, LEASE, 50, true, now)
                .await
                .unwrap(),
        );
        pairs.push((a, b));
    }
    let tasks: Vec<_> = pairs
        .into_iter()
        .flat_map(|(a, b)| {
            [(a, "ana", Some(true)), (b, "bob", Some(false))].map(|(item, who, polite)| {
                let store = store.clone();
                tokio::spawn(async move {
                    store
                        .decide_at(item, who, &decision(Some(true), polite, who), now)
                        .await
                })
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().expect("decided");
    }
    let stats = store.adjudication_stats().await.unwrap();
    assert_eq!(stats.pending, 10, "every disagreeing pair, once");
}
