//! The store suite, run on SQLite and on a real PostgreSQL.
//!
//! The PostgreSQL half needs `JEVJUDGE_TEST_PG_URL` (a superuser URL; each test creates its
//! own database): `bash scripts/pg.sh -- cargo test -p jevjudge-store` starts a throwaway
//! server and sets it. Without the variable each PostgreSQL test is skipped with a line
//! `SKIPPED (no PostgreSQL): <test>` on standard error, and under CI (`CI` set) it fails;
//! `scripts/test.sh` runs them with a server.

use std::{
    path::PathBuf,
    time::{Duration, SystemTime},
};

use jevjudge_store::{
    Cursor, Filter, KeptState, NewReview, ReviewId, SCHEMA_VERSION, Store, StoreError, StoreUrl,
};
use jevjudge_test_support::{
    databases::{all_pages, postgres_database, sqlite_file},
    on_both_stores,
};
use jevjudge_wire::{
    Usage,
    record::{ReplayIndex, parse_line},
};
use serde_json::{Map, Value, json};

/// The review queue's suite.
#[path = "queue/mod.rs"]
mod queue;
mod queue_team;

/// What labelled exports read: inclusion probabilities.
#[path = "export/mod.rs"]
mod export;

/// Hostile input, per-reviewer lease caps and retention.
#[path = "hardening/mod.rs"]
mod hardening;

/// Routes: created once, read back, listed.
#[path = "routes/mod.rs"]
mod routes;

/// Group commit: shared transactions, a refused row fails alone.
#[path = "group_commit/mod.rs"]
mod group_commit;

fn sqlite_url() -> StoreUrl {
    StoreUrl::Sqlite(sqlite_file("jevjudge_store"))
}

/// A fresh database on the test server, or `None` (said on stderr) without one.
async fn pg_url() -> Option<StoreUrl> {
    postgres_database("jt", "bash scripts/pg.sh -- cargo test -p jevjudge-store")
        .await
        .map(StoreUrl::Postgres)
}

on_both_stores!(
    a_review_reads_back_as_written,
    lists_are_newest_first_and_filtered_with_cursor_pages,
    state_is_kept_only_when_asked_and_erased_by_retention,
    kept_state_exports_as_replayable_records,
    migrations_are_idempotent_and_a_newer_schema_is_refused,
    a_migration_applied_from_other_sql_is_refused,
    stores_opening_a_new_database_at_once_migrate_it_once,
    concurrent_writers_each_land_exactly_once,
);

fn review(reference: Option<&str>, status: &str, version: &str) -> NewReview {
    NewReview {
        id: ReviewId::new(),
        definition_version: version.to_owned(),
        definition_digest: format!("sha256:{version}"),
        state_digest: "sha256:00ff".to_owned(),
        reference: reference.map(str::to_owned),
        status: status.to_owned(),
        error: if status == "ERROR" { "TIMEOUT" } else { "NONE" }.to_owned(),
        detail: (status == "ERROR").then(|| "BUDGET_ELAPSED".to_owned()),
        findings: if status == "ERROR" {
            json!({})
        } else {
            json!({"supported": {"status": status, "yes_probability": 0.95, "expected_probability": 0.95}})
        },
        model: Some("jev-1.13.0".to_owned()),
        usage: Some(Usage {
            input_tokens: 120,
            output_tokens: 3,
        }),
        elapsed: Duration::from_micros(20_512),
        request_id: "req-1".to_owned(),
        backend: "fake".to_owned(),
        kept: None,
        shadow_of: None,
        route: None,
    }
}

async fn a_review_reads_back_as_written(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    store.ping().await.expect("healthy");
    let written = review(Some("ticket-4711"), "PASS", "refund-v1");
    store.insert(&written).await.expect("written");
    let read = store.get(written.id).await.expect("read").expect("found");
    assert_eq!(read.review_id, written.id);
    assert_eq!(read.reference.as_deref(), Some("ticket-4711"));
    assert_eq!(read.status, "PASS");
    assert_eq!(read.error, "NONE");
    assert_eq!(read.detail, None);
    assert_eq!(read.findings, written.findings);
    assert_eq!(read.model.as_deref(), Some("jev-1.13.0"));
    assert_eq!(read.usage, written.usage);
    assert_eq!(read.elapsed_millis, 20.512);
    assert_eq!(read.definition_digest, "sha256:refund-v1");
    assert_eq!(read.state_digest, "sha256:00ff");
    assert_eq!(read.request_id, "req-1");
    assert_eq!(read.backend, "fake");
    assert!(!read.state_kept);
    assert_eq!(
        read.received_at,
        humantime::format_rfc3339_millis(written.id.received_at()).to_string()
    );
    let json = serde_json::to_value(&read).unwrap();
    assert_eq!(json["review_id"], written.id.to_string());
    assert!(json.get("state").is_none(), "reads never return state text");

    let error = review(None, "ERROR", "refund-v1");
    store.insert(&error).await.expect("written");
    let read = store.get(error.id).await.unwrap().unwrap();
    assert_eq!(
        (
            read.status.as_str(),
            read.error.as_str(),
            read.detail.as_deref()
        ),
        ("ERROR", "TIMEOUT", Some("BUDGET_ELAPSED"))
    );
    assert_eq!(read.reference, None);

    assert_eq!(store.get(ReviewId::new()).await.unwrap(), None);
    // One id is one row.
    assert!(
        store.insert(&written).await.is_err(),
        "an id is written once"
    );
    store.close().await;
}

async fn lists_are_newest_first_and_filtered_with_cursor_pages(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let mut written = Vec::new();
    for i in 0..7 {
        let status = ["PASS", "FAIL", "INCONCLUSIVE"][i % 3];
        let version = if i < 4 { "v1" } else { "v2" };
        let reference = format!("ticket-{}", i % 2);
        let review = review(Some(&reference), status, version);
        store.insert(&review).await.unwrap();
        written.push(review.id);
    }
    let newest_first: Vec<ReviewId> = written.iter().rev().copied().collect();

    // Pages of 3: 3 + 3 + 1, newest first, nothing repeated or lost.
    let (seen, pages) = all_pages(async |cursor: Option<Cursor>| {
        let page = store.list(&Filter::default(), 3, cursor).await.unwrap();
        (
            page.reviews.iter().map(|r| r.review_id).collect(),
            page.next_cursor,
        )
    })
    .await;
    assert_eq!(pages, 3);
    assert_eq!(seen, newest_first);

    // A page exactly as long as what is left has no next cursor.
    let page = store.list(&Filter::default(), 7, None).await.unwrap();
    assert_eq!(page.reviews.len(), 7);
    assert_eq!(page.next_cursor, None);

    let by = |filter: Filter| {
        let store = store.clone();
        async move {
            let page = store.list(&filter, 100, None).await.unwrap();
            let ids: Vec<ReviewId> = page.reviews.iter().map(|r| r.review_id).collect();
            assert_eq!(store.count(&filter).await.unwrap(), ids.len() as u64);
            ids
        }
    };
    let expect = |keep: &dyn Fn(usize) -> bool| -> Vec<ReviewId> {
        (0..7)
            .rev()
            .filter(|i| keep(*i))
            .map(|i| written[i])
            .collect()
    };
    assert_eq!(
        by(Filter {
            reference: Some("ticket-1".into()),
            ..Filter::default()
        })
        .await,
        expect(&|i| i % 2 == 1)
    );
    assert_eq!(
        by(Filter {
            version: Some("v2".into()),
            status: Some("PASS".into()),
            ..Filter::default()
        })
        .await,
        expect(&|i| i >= 4 && i % 3 == 0)
    );
    assert_eq!(
        by(Filter {
            since: Some(written[5].received_at()),
            ..Filter::default()
        })
        .await
        .last()
        .copied()
        .map(|id| id <= written[5]),
        Some(true),
        "since includes the reviews received at or after it"
    );
    assert!(
        by(Filter {
            since: Some(SystemTime::now() + Duration::from_secs(3600)),
            ..Filter::default()
        })
        .await
        .is_empty()
    );
    assert!(
        by(Filter {
            reference: Some("nobody".into()),
            ..Filter::default()
        })
        .await
        .is_empty()
    );
    store.close().await;
}

fn kept(state: Value, answers: Option<Value>) -> KeptState {
    KeptState {
        state,
        answers: answers.map(|a| match a {
            Value::Object(map) => map,
            _ => Map::new(),
        }),
        requested_model: "jev-latest".to_owned(),
    }
}

async fn state_is_kept_only_when_asked_and_erased_by_retention(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let mut with_state = review(Some("a"), "PASS", "v1");
    with_state.kept = Some(kept(json!("PRIVATE TEXT"), None));
    let without = review(Some("b"), "PASS", "v1");
    store.insert(&with_state).await.unwrap();
    store.insert(&without).await.unwrap();
    assert!(store.get(with_state.id).await.unwrap().unwrap().state_kept);
    assert!(!store.get(without.id).await.unwrap().unwrap().state_kept);

    // A retention that does not reach the review keeps its state.
    let older = with_state.id.received_at() - Duration::from_secs(60);
    assert_eq!(store.erase_state_before(older).await.unwrap(), 0);
    assert!(store.get(with_state.id).await.unwrap().unwrap().state_kept);

    let later = SystemTime::now() + Duration::from_secs(1);
    assert_eq!(store.erase_state_before(later).await.unwrap(), 1);
    let erased = store.get(with_state.id).await.unwrap().unwrap();
    assert!(!erased.state_kept);
    assert!(erased.state_erased_at.is_some());
    assert_eq!(erased.status, "PASS", "the verdict is kept");
    assert_eq!(store.erase_state_before(later).await.unwrap(), 0);
    store.close().await;
}

async fn kept_state_exports_as_replayable_records(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let questions = json!({"supported": {"type": "noul", "instructions": "Is it supported?"}});
    store
        .put_definition("sha256:v1", "v1", &questions)
        .await
        .unwrap();
    store
        .put_definition("sha256:v1", "v1", &questions)
        .await
        .expect("a definition is kept once, again is a no-op");
    let state = json!({"assistant_answer": "No refund yet.", "n": [1, 2.5]});
    let answers = json!({"supported": {"type": "noul", "noul": 0.95}});
    let mut exchanged = review(Some("r"), "PASS", "v1");
    exchanged.kept = Some(kept(state.clone(), Some(answers.clone())));
    let mut failed = review(Some("r"), "ERROR", "v1");
    failed.kept = Some(kept(json!("x"), None));
    let plain = review(Some("r"), "PASS", "v1");
    for review in [&exchanged, &failed, &plain] {
        store.insert(review).await.unwrap();
    }
    let mut lines = String::new();
    let count = store
        .export_records(|record| {
            lines.push_str(&record.to_line().expect("a line"));
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(count, 1, "only reviews with kept state and answers export");
    let record = parse_line(lines.trim_end()).expect("a valid .jevl line");
    assert_eq!(record.model, "jev-1.13.0");
    assert_eq!(record.requested_model(), "jev-latest");
    assert!(record.is_fake(), "answers of the fake replay as fake");
    assert!(!record.is_fixture());
    assert_eq!(record.request.state, state);
    assert_eq!(Value::Object(record.answers.clone()), answers);
    assert_eq!(
        record.usage,
        Some(json!({"input_tokens": 120, "output_tokens": 3}))
    );
    let index = ReplayIndex::from_records(vec![record]).unwrap();
    assert!(index.get("jev-latest", &state, &questions).is_some());
    store.close().await;
}

async fn migrations_are_idempotent_and_a_newer_schema_is_refused(url: StoreUrl) {
    let store = Store::connect(&url).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), 0);
    assert!(matches!(
        store.check_schema().await,
        Err(StoreError::SchemaOutdated { found: 0, .. })
    ));
    let first = store.migrate().await.unwrap();
    assert_eq!((first.from, first.to), (0, SCHEMA_VERSION));
    let again = store.migrate().await.unwrap();
    assert_eq!((again.from, again.to), (SCHEMA_VERSION, SCHEMA_VERSION));
    store.check_schema().await.unwrap();
    // A jevjudge that still reads the hand-written migrator's table refuses the database
    // (it holds a version above 2).
    let pool = any_pool(&url).await;
    let legacy: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM jevjudge_schema")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(legacy, Some(3), "the last version recorded there");

    // A newer jevjudge migrated this database (a migration this one does not know): refused,
    // untouched.
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES ($1, 'future', TRUE, $2, 0)",
    )
    .bind(SCHEMA_VERSION + 1)
    .bind(vec![0_u8; 48])
    .execute(&pool)
    .await
    .unwrap();
    let error = Store::open(&url)
        .await
        .expect_err("a newer schema is refused");
    assert!(
        matches!(error, StoreError::SchemaTooNew { found, known } if found == SCHEMA_VERSION + 1 && known == SCHEMA_VERSION),
        "{error}"
    );
    assert!(
        error.to_string().contains("newer than this jevjudge knows"),
        "{error}"
    );
    assert!(matches!(
        store.check_schema().await,
        Err(StoreError::SchemaTooNew { .. })
    ));
    let recorded: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(
        recorded,
        migration_versions().len() as i64 + 1,
        "nothing was added or removed"
    );
    pool.close().await;
    store.close().await;
}

async fn a_migration_applied_from_other_sql_is_refused(url: StoreUrl) {
    Store::open(&url).await.unwrap().close().await;
    let pool = any_pool(&url).await;
    sqlx::query("UPDATE _sqlx_migrations SET checksum = $1 WHERE version = 1")
        .bind(vec![0_u8; 48])
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
    let error = Store::open(&url)
        .await
        .expect_err("a changed migration is refused");
    assert!(
        matches!(&error, StoreError::Migration(m) if m.contains("migration 1 was applied from different SQL")),
        "{error}"
    );
}

async fn stores_opening_a_new_database_at_once_migrate_it_once(url: StoreUrl) {
    // Six stores (as six replicas) open one new database at once.
    let mut opening = tokio::task::JoinSet::new();
    for _ in 0..6 {
        let url = url.clone();
        opening.spawn(async move { Store::open(&url).await });
    }
    while let Some(opened) = opening.join_next().await {
        opened
            .expect("the task ends")
            .expect("every store opens")
            .close()
            .await;
    }
    let pool = any_pool(&url).await;
    let recorded: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(recorded, migration_versions());
    pool.close().await;
}

/// The versions of this crate's migration files (`migrations/NNNN_name.sql`), ascending.
fn migration_versions() -> Vec<i64> {
    let directory = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
    let mut versions: Vec<i64> = std::fs::read_dir(directory)
        .unwrap()
        .map(|entry| {
            let name = entry.unwrap().file_name().into_string().unwrap();
            name.split('_').next().unwrap().parse().unwrap()
        })
        .collect();
    versions.sort_unstable();
    assert_eq!(versions.last(), Some(&SCHEMA_VERSION));
    versions
}

async fn any_pool(url: &StoreUrl) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    let text = match url {
        StoreUrl::Sqlite(path) => format!("sqlite://{}", path.display()),
        StoreUrl::Postgres(url) => url.clone(),
    };
    sqlx::AnyPool::connect(&text).await.unwrap()
}

async fn concurrent_writers_each_land_exactly_once(url: StoreUrl) {
    // Two stores (as two replicas) opening and writing at once.
    let (a, b) = tokio::join!(Store::open(&url), Store::open(&url));
    let (a, b) = (a.unwrap(), b.unwrap());
    let mut tasks = tokio::task::JoinSet::new();
    let mut ids = Vec::new();
    for i in 0..200 {
        let store = if i % 2 == 0 { a.clone() } else { b.clone() };
        let review = review(Some(&format!("ref-{i}")), "PASS", "v1");
        ids.push(review.id);
        tasks.spawn(async move { store.insert(&review).await });
    }
    while let Some(outcome) = tasks.join_next().await {
        outcome.unwrap().expect("every write lands");
    }
    assert_eq!(a.count(&Filter::default()).await.unwrap(), 200);
    let (listed, _) = all_pages(async |cursor: Option<Cursor>| {
        let page = b.list(&Filter::default(), 64, cursor).await.unwrap();
        (
            page.reviews.iter().map(|r| r.review_id).collect(),
            page.next_cursor,
        )
    })
    .await;
    ids.sort();
    ids.reverse();
    assert_eq!(listed, ids, "each id once, newest first");
    a.close().await;
    b.close().await;
}

#[cfg(unix)]
#[tokio::test]
async fn a_new_sqlite_file_is_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let url = sqlite_url();
    let store = Store::open(&url).await.unwrap();
    store.insert(&review(None, "PASS", "v1")).await.unwrap();
    let StoreUrl::Sqlite(path) = &url else {
        unreachable!()
    };
    for file in [
        path.clone(),
        PathBuf::from(format!("{}-wal", path.display())),
    ] {
        let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
    store.close().await;
}

#[tokio::test]
async fn a_missing_directory_is_named() {
    let url = StoreUrl::Sqlite(PathBuf::from("/nonexistent-jevjudge-dir/reviews.db"));
    let error = Store::open(&url).await.expect_err("no such directory");
    assert!(
        error
            .to_string()
            .starts_with("cannot create the SQLite file /nonexistent-jevjudge-dir/reviews.db"),
        "{error}"
    );
}

#[tokio::test]
async fn a_dead_postgres_is_unavailable_quickly() {
    // A port nothing listens on: connection refused, not a hang.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let url: StoreUrl = format!("postgresql://u:s3cret@127.0.0.1:{port}/db")
        .parse()
        .unwrap();
    let store = Store::connect(&url).await.unwrap();
    let error = store.ping().await.expect_err("nothing listens");
    assert!(matches!(error, StoreError::Unavailable(_)), "{error}");
    assert!(!error.to_string().contains("s3cret"));
    let error = Store::open(&url).await.expect_err("nothing listens");
    assert!(
        error.to_string().starts_with("the store is unavailable"),
        "{error}"
    );
}

/// Skips are never silent: without a server a PostgreSQL test says it was skipped on standard
/// error, through the harness's output capture; under CI (`CI` set and not empty) it fails.
#[test]
fn a_postgres_test_without_a_server_says_skipped_and_fails_under_ci() {
    const TEST: &str = "a_review_reads_back_as_written::postgres";
    let run = |ci: Option<&str>| {
        let mut command = std::process::Command::new(std::env::current_exe().unwrap());
        command.args(["--exact", TEST]);
        for variable in [
            "JEVJUDGE_TEST_PG_URL",
            "JEVJUDGE_TEST_PG_STOP",
            "JEVJUDGE_TEST_PG_START",
            "CI",
        ] {
            command.env_remove(variable);
        }
        if let Some(ci) = ci {
            command.env("CI", ci);
        }
        let output = command.output().expect("the test binary runs");
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        assert!(text.contains("running 1 test"), "{text}");
        (output.status.success(), text)
    };

    let (passed, text) = run(None);
    assert!(passed, "{text}");
    assert!(
        text.contains(&format!("SKIPPED (no PostgreSQL): {TEST}")),
        "{text}"
    );
    assert!(
        text.contains("bash scripts/pg.sh -- cargo test -p jevjudge-store runs them"),
        "{text}"
    );
    let (passed, text) = run(Some(""));
    assert!(passed, "an empty CI is not CI: {text}");

    let (passed, text) = run(Some("true"));
    assert!(!passed, "{text}");
    assert!(
        text.contains("CI is set, so this PostgreSQL test may not be skipped"),
        "{text}"
    );
    assert!(!text.contains("SKIPPED"), "{text}");
}
