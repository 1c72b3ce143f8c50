//! Routes on SQLite and on a real PostgreSQL: created once, read back, listed by name.

use jevjudge_store::{NewRoute, Store, StoreError, StoreUrl};
use jevjudge_test_support::on_both_stores;

use super::{pg_url, sqlite_url};

on_both_stores!(
    a_route_is_created_once_and_a_second_create_leaves_it_unchanged,
    routes_list_by_name_and_a_missing_route_is_none,
    a_shadow_sample_outside_zero_to_one_is_invalid,
);

fn route(name: &str, live: &str, shadows: &[&str], sample: f64) -> NewRoute {
    NewRoute {
        name: name.to_owned(),
        live: live.to_owned(),
        shadows: shadows.iter().map(|s| (*s).to_owned()).collect(),
        shadow_sample: sample,
    }
}

async fn a_route_is_created_once_and_a_second_create_leaves_it_unchanged(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let first = route("refund-answer", "refund-v1", &["refund-v1+cal.1"], 0.25);
    assert!(store.create_route_if_absent(&first).await.unwrap());
    assert!(
        store
            .set_route_live("refund-answer", "refund-v2")
            .await
            .unwrap()
    );
    let again = route("refund-answer", "refund-v1", &[], 1.0);
    assert!(!store.create_route_if_absent(&again).await.unwrap());
    let held = store.route("refund-answer").await.unwrap().expect("held");
    assert_eq!(held.live, "refund-v2");
    assert_eq!(held.shadows, ["refund-v1+cal.1"]);
    assert_eq!(held.shadow_sample, 0.25);
    assert!(held.created_at.ends_with('Z') && held.updated_at >= held.created_at);
}

async fn routes_list_by_name_and_a_missing_route_is_none(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    for name in ["b-route", "a-route"] {
        store
            .create_route_if_absent(&route(name, "v1", &[], 1.0))
            .await
            .unwrap();
    }
    let names: Vec<String> = store
        .routes()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.name)
        .collect();
    assert_eq!(names, ["a-route", "b-route"]);
    assert_eq!(store.route("c-route").await.unwrap(), None);
    assert!(!store.set_route_live("c-route", "v2").await.unwrap());
}

async fn a_shadow_sample_outside_zero_to_one_is_invalid(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let result = store
        .create_route_if_absent(&route("r", "v1", &[], 1.5))
        .await;
    assert!(matches!(result, Err(StoreError::Invalid(_))), "{result:?}");
    assert_eq!(store.routes().await.unwrap(), []);
}

/// Audited changes: put, promote, rollback, history and the promote gate's figures.
mod changes;
