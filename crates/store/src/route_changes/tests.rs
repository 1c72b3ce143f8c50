//! Tests of route changes: the pure rules, and a change computed from a stale read.

use super::*;

#[test]
fn promote_keeps_the_old_live_version_first_among_the_shadows_and_drops_the_promoted_one() {
    let shadows = ["v2".to_owned(), "v3".to_owned()];
    assert_eq!(shadows_after("v1", &shadows, "v2"), ["v1", "v3"]);
    assert_eq!(shadows_after("v1", &[], "v9"), ["v1"]);
    let with_old = ["v1".to_owned(), "v2".to_owned()];
    assert_eq!(shadows_after("v1", &with_old, "v2"), ["v1"]);
}

#[test]
fn shadows_given_twice_the_live_version_as_a_shadow_or_a_share_over_one_are_invalid() {
    let twice = ["v2".to_owned(), "v2".to_owned()];
    let error = check_shadows("r", "v1", &twice, 1.0).unwrap_err();
    assert_eq!(error.to_string(), "route r: shadow v2 is given twice");
    let live = ["v1".to_owned()];
    let error = check_shadows("r", "v1", &live, 1.0).unwrap_err();
    assert_eq!(error.to_string(), "route r: shadow v1 is the live version");
    let error = check_shadows("r", "v1", &[], 1.5).unwrap_err();
    assert_eq!(
        error.to_string(),
        "route r: shadow_sample 1.5 is outside 0 to 1"
    );
    assert!(check_shadows("r", "v1", &["v2".to_owned()], 0.5).is_ok());
}

#[test]
fn a_change_reads_as_one_line_with_its_move_actor_and_reason() {
    let change = RouteChange {
        route: "refund".to_owned(),
        seq: 3,
        changed_at: "2026-12-07T01:02:03.000Z".to_owned(),
        action: "promote".to_owned(),
        actor: "admin".to_owned(),
        from_live: Some("v1".to_owned()),
        to_live: "v2".to_owned(),
        shadows: vec!["v1".to_owned()],
        reason: Some("calibrated".to_owned()),
        forced: true,
    };
    assert_eq!(
        change.to_string(),
        "3  2026-12-07T01:02:03.000Z  promote  v1 → v2  shadows v1  by admin  forced  \"calibrated\""
    );
}

#[test]
fn a_reason_over_the_limit_or_with_a_control_character_is_invalid() {
    let long = Actor {
        name: "cli".to_owned(),
        reason: Some("x".repeat(MAX_REASON_CHARS + 1)),
    };
    assert!(
        check_actor(&long)
            .unwrap_err()
            .to_string()
            .contains("at most 1000")
    );
    let control = Actor {
        name: "cli".to_owned(),
        reason: Some("a\u{7}b".to_owned()),
    };
    assert!(
        check_actor(&control)
            .unwrap_err()
            .to_string()
            .contains("reason")
    );
    assert!(check_name("a/b").is_err() && check_name("").is_err() && check_name("ok").is_ok());
}

use crate::StoreUrl;
use jevjudge_test_support::{
    databases::{postgres_database, sqlite_file},
    on_both_stores,
};

fn sqlite_url() -> StoreUrl {
    StoreUrl::Sqlite(sqlite_file("jevjudge_route_changes"))
}

async fn pg_url() -> Option<StoreUrl> {
    postgres_database("jrc", "bash scripts/pg.sh -- cargo test -p jevjudge-store")
        .await
        .map(StoreUrl::Postgres)
}

on_both_stores!(a_change_computed_from_a_stale_read_loses_as_changed);

/// Two replicas read the route, one promotes: the other's change, computed from what it
/// read, is refused and leaves no audit row.
async fn a_change_computed_from_a_stale_read_loses_as_changed(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let ops = Actor {
        name: "ops".to_owned(),
        reason: None,
    };
    let put = PutRoute {
        name: "refund".to_owned(),
        live: Some("v1".to_owned()),
        shadows: vec!["v2".to_owned(), "v3".to_owned()],
        shadow_sample: 1.0,
    };
    store.put_route(&put, &ops).await.unwrap();
    let stale = store.held("refund").await.unwrap().expect("held");
    let request = PromoteRequest {
        route: "refund".to_owned(),
        version: "v2".to_owned(),
        force: true,
    };
    let gate = PromoteGate::default();
    store
        .promote_route(&request, &gate, true, &ops)
        .await
        .unwrap();
    let shadows = ["v1".to_owned()];
    let change = Change {
        action: "promote",
        live: "v3",
        shadows: &shadows,
        shadow_sample: 1.0,
        forced: false,
    };
    let lost = store.apply(&stale, &change, &ops).await;
    assert!(matches!(lost, Err(RouteError::Changed(_))), "{lost:?}");
    assert_eq!(store.route("refund").await.unwrap().unwrap().live, "v2");
    assert_eq!(store.route_history("refund").await.unwrap().len(), 2);
}
