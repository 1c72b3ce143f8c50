//! Audited route changes on SQLite and on a real PostgreSQL: put, promote behind the gate,
//! rollback, the history, the gate's figures from queue labels, and promotes racing.

use std::{collections::BTreeMap, time::Duration};

use jevjudge_store::{
    Actor, Decision, Enqueue, PromoteFigures, PromoteGate, PromoteRefusal, PromoteRequest,
    PutRoute, QueueReason, ReviewId, RouteError, Store, StoreUrl,
};
use jevjudge_test_support::on_both_stores;
use serde_json::json;

use super::super::{any_pool, pg_url, review, sqlite_url};

on_both_stores!(
    put_creates_a_route_then_changes_only_its_shadows_and_the_history_lists_both,
    promote_makes_the_version_live_and_rollback_returns_to_the_one_before,
    promote_figures_count_shadowed_reviews_and_labelled_false_pass_on_the_same_reviews,
    promote_refused_by_the_gate_goes_through_with_force_recorded_as_forced,
    concurrent_promotes_leave_one_consistent_chain_of_changes,
    a_route_seeded_from_a_file_has_a_create_row_by_routes_file,
);

fn actor(name: &str, reason: Option<&str>) -> Actor {
    Actor {
        name: name.to_owned(),
        reason: reason.map(str::to_owned),
    }
}

fn put(name: &str, live: Option<&str>, shadows: &[&str], sample: f64) -> PutRoute {
    PutRoute {
        name: name.to_owned(),
        live: live.map(str::to_owned),
        shadows: shadows.iter().map(|s| (*s).to_owned()).collect(),
        shadow_sample: sample,
    }
}

fn promote(route: &str, version: &str, force: bool) -> PromoteRequest {
    PromoteRequest {
        route: route.to_owned(),
        version: version.to_owned(),
        force,
    }
}

const OPEN: PromoteGate = PromoteGate {
    min_shadow_reviews: 0,
};

async fn put_creates_a_route_then_changes_only_its_shadows_and_the_history_lists_both(
    url: StoreUrl,
) {
    let store = Store::open(&url).await.expect("the store opens");
    let admin = actor("ops", Some("first rollout"));
    let missing = store
        .put_route(&put("refund", None, &[], 1.0), &admin)
        .await;
    assert!(
        matches!(missing, Err(RouteError::LiveRequired(_))),
        "{missing:?}"
    );
    let created = store
        .put_route(&put("refund", Some("v1"), &["v2"], 0.5), &admin)
        .await
        .unwrap();
    assert!(created.created && created.changed);
    assert_eq!(
        (
            created.route.live.as_str(),
            created.route.shadows.as_slice()
        ),
        ("v1", &["v2".to_owned()][..])
    );

    let other_live = store
        .put_route(&put("refund", Some("v2"), &[], 1.0), &admin)
        .await;
    assert!(
        matches!(&other_live, Err(RouteError::UsePromote { live, .. }) if live == "v1"),
        "{other_live:?}"
    );
    let same = store
        .put_route(&put("refund", Some("v1"), &["v2"], 0.5), &admin)
        .await
        .unwrap();
    assert!(!same.created && !same.changed);
    let changed = store
        .put_route(
            &put("refund", None, &["v2", "v3"], 0.25),
            &actor("ops", None),
        )
        .await
        .unwrap();
    assert!(changed.changed && !changed.created);
    assert_eq!(changed.route.shadows, ["v2", "v3"]);
    assert_eq!(changed.route.shadow_sample, 0.25);
    assert_eq!(store.route("refund").await.unwrap().unwrap(), changed.route);

    let history = store.route_history("refund").await.unwrap();
    let rows: Vec<(u64, &str, Option<&str>, &str)> = history
        .iter()
        .map(|c| {
            (
                c.seq,
                c.action.as_str(),
                c.from_live.as_deref(),
                c.to_live.as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [(1, "create", None, "v1"), (2, "shadows", Some("v1"), "v1")]
    );
    assert_eq!(history[0].reason.as_deref(), Some("first rollout"));
    assert_eq!(history[1].shadows, ["v2", "v3"]);
    assert!(history[0].changed_at.ends_with('Z') && !history[1].forced);
}

async fn promote_makes_the_version_live_and_rollback_returns_to_the_one_before(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let admin = actor("ops", None);
    store
        .put_route(&put("refund", Some("v1"), &["v2", "v3"], 1.0), &admin)
        .await
        .unwrap();
    let promoted = store
        .promote_route(
            &promote("refund", "v2", false),
            &OPEN,
            true,
            &actor("ops", Some("better")),
        )
        .await
        .unwrap();
    assert_eq!(promoted.route.live, "v2");
    assert_eq!(
        promoted.route.shadows,
        ["v1", "v3"],
        "the old live version shadows first"
    );
    assert_eq!(promoted.forced, None);
    let again = store
        .promote_route(&promote("refund", "v2", false), &OPEN, true, &admin)
        .await;
    assert!(
        matches!(again, Err(RouteError::AlreadyLive { .. })),
        "{again:?}"
    );
    store
        .promote_route(&promote("refund", "v3", false), &OPEN, true, &admin)
        .await
        .unwrap();

    let back = store
        .rollback_route("refund", &actor("ops", Some("regression")))
        .await
        .unwrap();
    assert_eq!(back.live, "v2");
    assert_eq!(
        back.shadows,
        ["v3", "v1"],
        "the rolled-back version shadows first"
    );
    let back = store.rollback_route("refund", &admin).await.unwrap();
    assert_eq!(back.live, "v1");
    let none = store.rollback_route("refund", &admin).await;
    assert!(
        matches!(none, Err(RouteError::NothingToRollBack(_))),
        "{none:?}"
    );
    assert_eq!(store.route("refund").await.unwrap().unwrap().live, "v1");

    let actions: Vec<(String, Option<String>, String)> = store
        .route_history("refund")
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.action, c.from_live, c.to_live))
        .collect();
    let expected = [
        ("create", None, "v1"),
        ("promote", Some("v1"), "v2"),
        ("promote", Some("v2"), "v3"),
        ("rollback", Some("v3"), "v2"),
        ("rollback", Some("v2"), "v1"),
    ];
    let expected: Vec<(String, Option<String>, String)> = expected
        .iter()
        .map(|(a, f, t)| ((*a).to_owned(), f.map(str::to_owned), (*t).to_owned()))
        .collect();
    assert_eq!(actions, expected);
    let missing = store.rollback_route("nope", &admin).await;
    assert!(
        matches!(missing, Err(RouteError::NotFound(_))),
        "{missing:?}"
    );
}

/// The store with the definitions `v1` to `v3` kept (expected: supported, not rude).
async fn labelled_store(url: &StoreUrl) -> Store {
    let store = Store::open(url).await.expect("the store opens");
    let questions = json!({"supported": {"type": "noul", "instructions": "Supported?"}});
    for version in ["v1", "v2", "v3"] {
        let digest = format!("sha256:{version}");
        store
            .put_definition(&digest, version, &questions)
            .await
            .unwrap();
        store
            .put_definition_expected(&digest, &BTreeMap::from([("supported".to_owned(), true)]))
            .await
            .unwrap();
    }
    store
}

/// A live review of `route` by v1 with `status`; queued when `label` is given, and decided
/// with it when it is `Some(Some(_))`.
async fn live(
    store: &Store,
    url: &StoreUrl,
    status: &str,
    label: Option<Option<bool>>,
) -> ReviewId {
    let review = review(None, status, "v1");
    match label {
        None => store.insert(&review).await.unwrap(),
        Some(found) => {
            let queued = Enqueue {
                reason: QueueReason::Status,
                copies: 1,
            };
            store.insert_queued(&review, Some(&queued)).await.unwrap();
            if let Some(supported) = found {
                let claimed = store
                    .claim("ana", None, Duration::from_secs(600))
                    .await
                    .unwrap()
                    .expect("the item is pending");
                let decision = Decision {
                    findings: BTreeMap::from([("supported".to_owned(), Some(supported))]),
                    note: None,
                };
                store.decide(claimed.item, "ana", &decision).await.unwrap();
            }
        }
    }
    mark(url, review.id, "refund", None).await;
    review.id
}

/// A shadow review by `version` of the live review `of`.
async fn shadow(store: &Store, url: &StoreUrl, version: &str, status: &str, of: ReviewId) {
    let review = review(None, status, version);
    store.insert(&review).await.unwrap();
    mark(url, review.id, "refund", Some(of)).await;
}

/// Sets a review's route and `shadow_of` as the service logs them.
async fn mark(url: &StoreUrl, id: ReviewId, route: &str, shadow_of: Option<ReviewId>) {
    let pool = any_pool(url).await;
    sqlx::query("UPDATE reviews SET route = $1, shadow_of = $2 WHERE id = $3")
        .bind(route)
        .bind(shadow_of.map(|id| id.to_string()))
        .bind(id.to_string())
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}

/// Five live reviews, each shadowed by v2 (and one also by v3): labelled not supported and
/// passed by both; labelled supported; labelled not supported and passed by v2 only; not
/// queued; queued but undecided.
async fn shadowed_route(url: &StoreUrl) -> Store {
    let store = labelled_store(url).await;
    store
        .put_route(
            &put("refund", Some("v1"), &["v2", "v3"], 1.0),
            &actor("ops", None),
        )
        .await
        .unwrap();
    let both = live(&store, url, "PASS", Some(Some(false))).await;
    shadow(&store, url, "v2", "PASS", both).await;
    shadow(&store, url, "v3", "PASS", both).await;
    let supported = live(&store, url, "PASS", Some(Some(true))).await;
    shadow(&store, url, "v2", "FAIL", supported).await;
    let only_v2 = live(&store, url, "FAIL", Some(Some(false))).await;
    shadow(&store, url, "v2", "PASS", only_v2).await;
    let unqueued = live(&store, url, "PASS", None).await;
    shadow(&store, url, "v2", "PASS", unqueued).await;
    let undecided = live(&store, url, "PASS", Some(None)).await;
    shadow(&store, url, "v2", "PASS", undecided).await;
    store
}

async fn promote_figures_count_shadowed_reviews_and_labelled_false_pass_on_the_same_reviews(
    url: StoreUrl,
) {
    let store = shadowed_route(&url).await;
    assert_eq!(
        store.promote_figures("refund", "v2").await.unwrap(),
        PromoteFigures {
            shadowed_reviews: 5,
            labelled_reviews: 3,
            false_pass: 2,
            live_false_pass: 1,
        }
    );
    assert_eq!(
        store.promote_figures("refund", "v3").await.unwrap(),
        PromoteFigures {
            shadowed_reviews: 1,
            labelled_reviews: 1,
            false_pass: 1,
            live_false_pass: 1,
        }
    );
    assert_eq!(
        store.promote_figures("other", "v2").await.unwrap(),
        PromoteFigures::default()
    );
    assert!(store.knows_version("v2").await.unwrap());
    assert!(!store.knows_version("v9").await.unwrap());
}

async fn promote_refused_by_the_gate_goes_through_with_force_recorded_as_forced(url: StoreUrl) {
    let store = shadowed_route(&url).await;
    let gate = PromoteGate::default();
    let admin = actor("ops", Some("calibrated"));
    let refused = store
        .promote_route(&promote("refund", "v2", false), &gate, true, &admin)
        .await;
    let Err(RouteError::Refused { refusal, figures }) = refused else {
        panic!("refused: {refused:?}");
    };
    assert_eq!(
        refusal.to_string(),
        "v2 has 5 shadowed reviews, fewer than 100"
    );
    assert_eq!(figures.shadowed_reviews, 5);
    let low = PromoteGate {
        min_shadow_reviews: 5,
    };
    let refused = store
        .promote_route(&promote("refund", "v2", false), &low, true, &admin)
        .await;
    assert!(
        matches!(
            &refused,
            Err(RouteError::Refused {
                refusal: PromoteRefusal::MoreFalsePass {
                    false_pass: 2,
                    live_false_pass: 1,
                    ..
                },
                ..
            })
        ),
        "{refused:?}"
    );
    let not_loaded = store
        .promote_route(&promote("refund", "v2", false), &low, false, &admin)
        .await;
    assert!(
        matches!(
            &not_loaded,
            Err(RouteError::Refused {
                refusal: PromoteRefusal::NotLoaded { .. },
                ..
            })
        ),
        "{not_loaded:?}"
    );
    assert_eq!(store.route("refund").await.unwrap().unwrap().live, "v1");

    let forced = store
        .promote_route(&promote("refund", "v2", true), &low, true, &admin)
        .await
        .unwrap();
    assert_eq!(forced.route.live, "v2");
    assert!(matches!(
        forced.forced,
        Some(PromoteRefusal::MoreFalsePass { .. })
    ));
    let last = store.route_history("refund").await.unwrap().pop().unwrap();
    assert_eq!((last.action.as_str(), last.forced), ("promote", true));
    assert_eq!(last.reason.as_deref(), Some("calibrated"));
}

async fn concurrent_promotes_leave_one_consistent_chain_of_changes(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let versions: Vec<String> = (2..=9).map(|n| format!("v{n}")).collect();
    let shadows: Vec<&str> = versions.iter().map(String::as_str).collect();
    store
        .put_route(
            &put("refund", Some("v1"), &shadows, 1.0),
            &actor("ops", None),
        )
        .await
        .unwrap();
    // Each replica its own pool, all asking at once.
    let mut replicas = Vec::new();
    for _ in &versions {
        replicas.push(Store::open(&url).await.unwrap());
    }
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(versions.len()));
    let mut tasks = Vec::new();
    for (replica, version) in replicas.into_iter().zip(versions.clone()) {
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            replica
                .promote_route(
                    &promote("refund", &version, false),
                    &OPEN,
                    true,
                    &actor("ops", None),
                )
                .await
        }));
    }
    let mut won = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => won += 1,
            Err(RouteError::Changed(route)) => assert_eq!(route, "refund"),
            Err(other) => panic!("a promote failed otherwise: {other}"),
        }
    }
    assert!(won >= 1);
    let history = store.route_history("refund").await.unwrap();
    let promotes: Vec<_> = history.iter().filter(|c| c.action == "promote").collect();
    assert_eq!(promotes.len(), won, "one audit row per promote that won");
    // Every promote starts where the one before it ended: none was lost or applied twice.
    for pair in history.windows(2) {
        assert_eq!(pair[1].from_live.as_deref(), Some(pair[0].to_live.as_str()));
        assert_eq!(pair[1].seq, pair[0].seq + 1);
    }
    let held = store.route("refund").await.unwrap().unwrap();
    assert_eq!(held.live, history.last().unwrap().to_live);
    assert_eq!(held.shadows, history.last().unwrap().shadows);
}

async fn a_route_seeded_from_a_file_has_a_create_row_by_routes_file(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let seeded = jevjudge_store::NewRoute {
        name: "refund".to_owned(),
        live: "v1".to_owned(),
        shadows: vec!["v2".to_owned()],
        shadow_sample: 1.0,
    };
    assert!(store.create_route_if_absent(&seeded).await.unwrap());
    assert!(!store.create_route_if_absent(&seeded).await.unwrap());
    let history = store.route_history("refund").await.unwrap();
    assert_eq!(history.len(), 1, "a second seed writes nothing");
    assert_eq!(
        (
            history[0].action.as_str(),
            history[0].actor.as_str(),
            history[0].shadows.as_slice()
        ),
        ("create", "routes-file", &["v2".to_owned()][..])
    );
}
