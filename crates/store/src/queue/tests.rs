//! Unit tests of the queue's ids, cursors and checks.

use super::{sql::*, *};

#[test]
fn item_ids_and_cursors_round_trip() {
    let id = QueueItemId::new();
    assert_eq!(id.to_string().parse::<QueueItemId>(), Ok(id));
    assert!("nope".parse::<QueueItemId>().is_err());
    let cursor = QueueCursor {
        queued_at: 1_795_996_800_000,
        item: id,
    };
    assert_eq!(cursor.to_string(), format!("q1.1795996800000.{id}"));
    assert_eq!(cursor.to_string().parse::<QueueCursor>(), Ok(cursor));
    assert!(format!("r1.{id}").parse::<QueueCursor>().is_err());
    assert!(format!("q1.{id}").parse::<QueueCursor>().is_err());
    assert!(format!("q1.-5.{id}").parse::<QueueCursor>().is_err());
}

#[test]
fn a_decision_answers_exactly_the_criteria() {
    let criteria = vec!["a".to_owned(), "b".to_owned()];
    let decision = |pairs: &[(&str, Option<bool>)]| Decision {
        findings: pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
        note: None,
    };
    assert!(check_decision(&decision(&[("a", Some(true)), ("b", None)]), &criteria).is_ok());
    let unknown = check_decision(
        &decision(&[("a", Some(true)), ("b", None), ("c", Some(false))]),
        &criteria,
    )
    .unwrap_err();
    assert!(
        unknown
            .to_string()
            .contains("`findings.c` is not a criterion")
    );
    let missing = check_decision(&decision(&[("a", Some(true))]), &criteria).unwrap_err();
    assert!(missing.to_string().contains("`findings.b` is missing"));
    let long = Decision {
        note: Some("x".repeat(MAX_NOTE_CHARS + 1)),
        ..decision(&[("a", None), ("b", None)])
    };
    assert!(matches!(
        check_decision(&long, &criteria),
        Err(QueueError::Invalid(_))
    ));
}

#[test]
fn decisions_refuse_unknown_fields() {
    let ok: Decision =
        serde_json::from_str(r#"{"findings": {"a": true, "b": null}, "note": "n"}"#).unwrap();
    assert_eq!(ok.findings["b"], None);
    assert!(serde_json::from_str::<Decision>(r#"{"findings": {}, "extra": 1}"#).is_err());
    assert!(serde_json::from_str::<Decision>(r#"{"findings": {"a": "yes"}}"#).is_err());
}

#[tokio::test]
async fn a_version_1_store_upgrades_to_the_queue_and_keeps_its_reviews() {
    use sqlx::Executor as _;
    let path = std::env::temp_dir().join(format!(
        "jevjudge_queue_upgrade_{}_{}.db",
        std::process::id(),
        QueueItemId::new()
    ));
    let url = crate::StoreUrl::Sqlite(path.clone());
    let store = Store::connect(&url).await.unwrap();
    // Version 1 exactly as the hand-written migrator left it before the queue.
    let mut connection = store.pool.acquire().await.unwrap();
    connection
        .execute(include_str!("../../migrations/0001_reviews.sql"))
        .await
        .unwrap();
    connection
        .execute(
            "CREATE TABLE jevjudge_schema \
             (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL); \
             INSERT INTO jevjudge_schema (version, name, applied_at) VALUES (1, 'reviews', 0)",
        )
        .await
        .unwrap();
    drop(connection);
    assert_eq!(store.schema_version().await.unwrap(), 1);
    let questions = serde_json::json!({"ok": {"type": "noul", "instructions": "OK?"}});
    store
        .put_definition("sha256:old", "old", &questions)
        .await
        .unwrap();

    let migrated = store.migrate().await.unwrap();
    assert_eq!((migrated.from, migrated.to), (1, crate::SCHEMA_VERSION));
    store
        .put_definition_expected("sha256:old", &BTreeMap::from([("ok".to_owned(), true)]))
        .await
        .expect("a definition kept by version 1 takes its expected flags");
    assert!(matches!(
        store
            .put_definition_expected("sha256:none", &BTreeMap::new())
            .await,
        Err(StoreError::Invalid(_))
    ));
    store.close().await;
    let _ = std::fs::remove_file(&path);
}

#[test]
fn claims_lock_on_postgres_only() {
    assert!(claim_sql(StoreKind::Postgres, false).contains("FOR UPDATE SKIP LOCKED"));
    assert!(!claim_sql(StoreKind::Sqlite, true).contains("FOR UPDATE"));
    assert!(claim_sql(StoreKind::Sqlite, true).contains("$4"));
}
