//! `jevjudge routes promote|rollback|history` through the real binary on an SQLite store: the
//! promote gate refuses (exit 1, naming the figure) unless --force, rollback returns to the
//! version before, and the history lists every change with its actor and reason.

use jevjudge_store::{NewRoute, Store, StoreUrl};
use jevjudge_test_support::{expect::contains, run as output, temp_dir};
use serde_json::{Value, json};

use crate::jevjudge;

#[tokio::test(flavor = "multi_thread")]
async fn routes_promote_rollback_and_history_on_the_store() {
    let dir = temp_dir("routes-cmd");
    let db = dir.join("reviews.db");
    let store = Store::open(&StoreUrl::Sqlite(db.clone())).await.unwrap();
    let questions = json!({"supported": {"type": "noul", "instructions": "Supported?"}});
    for version in ["v1", "v2"] {
        store
            .put_definition(&format!("sha256:{version}"), version, &questions)
            .await
            .unwrap();
    }
    let route = NewRoute {
        name: "refund".to_owned(),
        live: "v1".to_owned(),
        shadows: vec!["v2".to_owned()],
        shadow_sample: 1.0,
    };
    assert!(store.create_route_if_absent(&route).await.unwrap());
    store.close().await;
    let url = format!("sqlite:{}", db.display());
    let routes = |args: &[&str]| {
        let mut command = jevjudge();
        command
            .args(["routes"])
            .args(args)
            .args(["--store", &url, "--route", "refund"])
            .env("USER", "alice");
        command
    };

    let refused = output(&mut routes(&["promote", "--version", "v2"])).await;
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    contains(
        &stderr,
        "promote refused: v2 has 0 shadowed reviews, fewer than 100",
    );
    contains(&stderr, "--force");
    let unknown = output(&mut routes(&[
        "promote",
        "--version",
        "v9",
        "--min-shadow-reviews",
        "0",
    ]))
    .await;
    assert_eq!(unknown.status.code(), Some(1));
    contains(
        &String::from_utf8_lossy(&unknown.stderr),
        "v9 is not loaded",
    );

    let forced = output(&mut routes(&[
        "promote",
        "--version",
        "v2",
        "--reason",
        "calibrated",
        "--force",
    ]))
    .await;
    assert_eq!(forced.status.code(), Some(0), "{forced:?}");
    let stdout = String::from_utf8_lossy(&forced.stdout);
    contains(&stdout, "promoted refund: live v2, shadows v1 (share 1)");
    contains(
        &stdout,
        "forced past: v2 has 0 shadowed reviews, fewer than 100",
    );

    let back = output(&mut routes(&[
        "rollback",
        "--reason",
        "regression",
        "--json",
    ]))
    .await;
    assert_eq!(back.status.code(), Some(0), "{back:?}");
    let back: Value = serde_json::from_slice(&back.stdout).unwrap();
    assert_eq!(
        (back["live"].as_str(), &back["shadows"]),
        (Some("v1"), &json!(["v2"]))
    );
    let none = output(&mut routes(&["rollback"])).await;
    assert_eq!(none.status.code(), Some(2));
    contains(
        &String::from_utf8_lossy(&none.stderr),
        "route refund has no promote to roll back",
    );

    let open = output(&mut routes(&[
        "promote",
        "--version",
        "v2",
        "--min-shadow-reviews",
        "0",
        "--json",
    ]))
    .await;
    assert_eq!(open.status.code(), Some(0), "{open:?}");
    let open: Value = serde_json::from_slice(&open.stdout).unwrap();
    assert_eq!(
        (open["forced"].as_bool(), open["route"]["live"].as_str()),
        (Some(false), Some("v2"))
    );
    assert_eq!(open["figures"]["shadowed_reviews"], 0);

    let history = output(&mut routes(&["history", "--json"])).await;
    assert_eq!(history.status.code(), Some(0), "{history:?}");
    let history: Value = serde_json::from_slice(&history.stdout).unwrap();
    let rows: Vec<(&str, &str, bool, Option<&str>)> = history["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["action"].as_str().unwrap(),
                c["actor"].as_str().unwrap(),
                c["forced"].as_bool().unwrap(),
                c["reason"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("create", "routes-file", false, None),
            ("promote", "cli:alice", true, Some("calibrated")),
            ("rollback", "cli:alice", false, Some("regression")),
            ("promote", "cli:alice", false, None),
        ]
    );
    let lines = output(&mut routes(&["history"])).await;
    let lines = String::from_utf8_lossy(&lines.stdout);
    assert_eq!(lines.lines().count(), 4, "{lines}");
    contains(
        &lines,
        "promote  v1 → v2  shadows v1  by cli:alice  forced  \"calibrated\"",
    );

    let mut missing = jevjudge();
    missing.args(["routes", "history", "--store", &url, "--route", "nope"]);
    let missing = output(&mut missing).await;
    assert_eq!(missing.status.code(), Some(2));
    contains(
        &String::from_utf8_lossy(&missing.stderr),
        "no route is named nope",
    );
    let _ = std::fs::remove_dir_all(&dir);
}
