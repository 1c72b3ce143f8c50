//! Databases written by the hand-written migrator (schema version 2, recorded in
//! `jevjudge_schema`) open with today's store, upgrade in place and keep every row: the
//! fixtures of `tests/fixtures/` (see its README), on SQLite and on a real PostgreSQL.
//!
//! The PostgreSQL half needs `JEVJUDGE_TEST_PG_URL`: `bash scripts/pg.sh -- cargo test -p
//! jevjudge-store --test upgrade` starts a throwaway server and sets it.

use std::{collections::BTreeMap, path::PathBuf, time::Duration};

use jevjudge_store::{
    Decision, Filter, Inclusion, ReviewId, SCHEMA_VERSION, Store, StoreError, StoreUrl,
};
use jevjudge_test_support::{
    databases::{postgres_database, sqlite_file},
    on_both_stores,
};
use jevjudge_wire::Usage;
use serde_json::json;
use sqlx::{Connection as _, Executor as _};

on_both_stores!(
    a_database_of_the_hand_written_migrator_upgrades_in_place_and_keeps_its_rows,
    an_upgraded_database_migrates_again_without_change,
    an_upgraded_database_is_refused_by_a_jevjudge_that_reads_only_the_old_table,
);

const TICKET_1: &str = "019bc119-0100-7000-8000-000000000001";
const TICKET_2: &str = "019bc119-eb60-7000-8000-000000000002";
const TICKET_3: &str = "019bc11a-d5c0-7000-8000-000000000003";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A copy of the SQLite fixture (the committed file is never written).
fn sqlite_url() -> StoreUrl {
    let path = sqlite_file("jevjudge_upgrade");
    std::fs::copy(fixture("v2.sqlite"), &path).expect("the SQLite fixture copies");
    StoreUrl::Sqlite(path)
}

/// A fresh database on the test server loaded from the PostgreSQL fixture's dump, or `None`
/// (said on stderr) without a server.
async fn pg_url() -> Option<StoreUrl> {
    let url = postgres_database(
        "ju",
        "bash scripts/pg.sh -- cargo test -p jevjudge-store --test upgrade",
    )
    .await?;
    let dump = std::fs::read_to_string(fixture("v2.postgres.sql")).expect("the dump reads");
    // psql's meta-commands (`\restrict`) are not SQL; everything else is.
    let sql: Vec<&str> = dump.lines().filter(|l| !l.starts_with('\\')).collect();
    let mut connection = sqlx::postgres::PgConnection::connect(&url)
        .await
        .expect("the test database accepts connections");
    connection
        .execute(sqlx::raw_sql(&sql.join("\n")))
        .await
        .expect("the dump loads");
    connection.close().await.expect("the connection closes");
    Some(StoreUrl::Postgres(url))
}

fn id(text: &str) -> ReviewId {
    text.parse().expect("a fixture review id")
}

/// Every row the fixture holds, read back through the store.
async fn the_fixtures_rows_read_back(store: &Store) {
    assert_eq!(store.count(&Filter::default()).await.unwrap(), 3);
    for (review_id, reference, status, kept, received_at) in [
        (
            TICKET_1,
            "ticket-1",
            "PASS",
            false,
            "2026-01-15T10:00:00.000Z",
        ),
        (
            TICKET_2,
            "ticket-2",
            "INCONCLUSIVE",
            true,
            "2026-01-15T10:01:00.000Z",
        ),
        (
            TICKET_3,
            "ticket-3",
            "FAIL",
            true,
            "2026-01-15T10:02:00.000Z",
        ),
    ] {
        let review = store
            .get(id(review_id))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{reference} is kept"));
        assert_eq!(review.reference.as_deref(), Some(reference));
        assert_eq!(review.status, status);
        assert_eq!(review.state_kept, kept, "{reference}");
        assert_eq!(review.received_at, received_at);
        assert_eq!(review.findings["supported"]["status"], status);
        assert_eq!(
            review.usage,
            Some(Usage {
                input_tokens: 120,
                output_tokens: 3
            })
        );
        assert_eq!(review.request_id, format!("req-{reference}"));
    }

    let stats = store.queue_stats().await.unwrap();
    assert_eq!(stats.decided, 2);
    assert_eq!(
        stats.pending_by_version,
        BTreeMap::from([("refund-v1".to_owned(), 1)])
    );

    let mut labelled = Vec::new();
    let count = store
        .export_labelled(|one| {
            labelled.push(one);
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(count, 2);
    let expected = BTreeMap::from([("supported".to_owned(), true), ("polite".to_owned(), false)]);
    assert_eq!(labelled[0].review_id, id(TICKET_2));
    assert_eq!(labelled[0].expected.as_ref(), Some(&expected));
    assert_eq!(
        labelled[0].state,
        Some(json!({"assistant_answer": "Answer of ticket-2."}))
    );
    assert_eq!(
        labelled[0].decisions,
        [Some(BTreeMap::from([
            ("supported".to_owned(), Some(true)),
            ("polite".to_owned(), None)
        ]))]
    );
    assert_eq!(labelled[1].review_id, id(TICKET_3));
    assert_eq!(
        labelled[1].decisions,
        [
            Some(BTreeMap::from([
                ("supported".to_owned(), Some(false)),
                ("polite".to_owned(), Some(false))
            ])),
            None
        ]
    );
}

async fn a_database_of_the_hand_written_migrator_upgrades_in_place_and_keeps_its_rows(
    url: StoreUrl,
) {
    let store = Store::connect(&url).await.unwrap();
    assert_eq!(store.schema_version().await.unwrap(), 2);
    assert!(matches!(
        store.check_schema().await,
        Err(StoreError::SchemaOutdated { found: 2, known }) if known == SCHEMA_VERSION
    ));

    let migrated = store.migrate().await.expect("the old database upgrades");
    assert_eq!((migrated.from, migrated.to), (2, SCHEMA_VERSION));
    store.check_schema().await.unwrap();
    the_fixtures_rows_read_back(&store).await;

    // The old pending copy is claimed and decided with today's code; the pair agrees on
    // `supported` only.
    let claimed = store
        .claim("ana", None, Duration::from_secs(600))
        .await
        .unwrap()
        .expect("ticket-3's second copy is pending");
    assert_eq!(
        (claimed.subject.review.review_id, claimed.slot),
        (id(TICKET_3), 2)
    );
    let decision = Decision {
        findings: BTreeMap::from([
            ("supported".to_owned(), Some(false)),
            ("polite".to_owned(), Some(true)),
        ]),
        note: None,
    };
    store.decide(claimed.item, "ana", &decision).await.unwrap();
    // Items queued for their status before inclusion probabilities were recorded: π = 1.
    let mut inclusions = Vec::new();
    store
        .export_labelled(|labelled| {
            inclusions.push(labelled.inclusion);
            Ok(())
        })
        .await
        .unwrap();
    assert_eq!(inclusions, vec![Some(Inclusion::FULL); 2]);
    let stats = store.queue_stats().await.unwrap();
    assert_eq!(stats.decided, 3);
    assert_eq!(stats.agreement["supported"].observed, Some(1.0));
    assert_eq!(stats.agreement["polite"].observed, Some(0.0));
    store.close().await;
}

async fn an_upgraded_database_migrates_again_without_change(url: StoreUrl) {
    let first = Store::open(&url).await.expect("the old database upgrades");
    first.close().await;
    let store = Store::connect(&url).await.unwrap();
    let again = store.migrate().await.expect("migrating again succeeds");
    assert_eq!((again.from, again.to), (SCHEMA_VERSION, SCHEMA_VERSION));
    the_fixtures_rows_read_back(&store).await;
    store.close().await;
}

async fn an_upgraded_database_is_refused_by_a_jevjudge_that_reads_only_the_old_table(
    url: StoreUrl,
) {
    let store = Store::open(&url).await.expect("the old database upgrades");
    store.close().await;
    // A jevjudge of the hand-written migrator reads MAX(version) of jevjudge_schema and
    // refuses anything above 2 as newer than it knows.
    let pool = any_pool(&url).await;
    let versions: Vec<(i64, String)> =
        sqlx::query_as("SELECT version, name FROM jevjudge_schema ORDER BY version")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        versions,
        [
            (1, "reviews".to_owned()),
            (2, "review queue".to_owned()),
            (3, "retire jevjudge_schema".to_owned())
        ]
    );
    let recorded: Vec<(i64, String)> =
        sqlx::query_as("SELECT version, description FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&pool)
            .await
            .unwrap();
    assert_eq!(
        recorded,
        [
            (1, "reviews".to_owned()),
            (2, "review queue".to_owned()),
            (3, "retire jevjudge schema".to_owned()),
            (4, "queue expired".to_owned()),
            (5, "queue team".to_owned()),
            (6, "queue inclusion".to_owned()),
            (7, "routes".to_owned()),
            (8, "route changes and shadows".to_owned())
        ]
    );
    pool.close().await;
}

async fn any_pool(url: &StoreUrl) -> sqlx::AnyPool {
    sqlx::any::install_default_drivers();
    let text = match url {
        StoreUrl::Sqlite(path) => format!("sqlite://{}", path.display()),
        StoreUrl::Postgres(url) => url.clone(),
    };
    sqlx::AnyPool::connect(&text).await.unwrap()
}
