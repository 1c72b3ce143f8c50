//! The store: one code path over SQLite and PostgreSQL (sqlx's `Any` driver, runtime queries).

use std::{
    path::Path,
    sync::Once,
    time::{Duration, SystemTime},
};

use jevjudge_wire::{Usage, record::Record};
use serde_json::{Map, Value};
use sqlx::{
    AnyPool, Executor as _, Row as _,
    any::{AnyPoolOptions, AnyRow},
    migrate::Migrate as _,
};

use crate::{
    Cursor, Filter, NewReview, Page, Review, ReviewId, StoreError, StoreKind, StoreUrl,
    review::{rfc3339_millis, unix_millis},
    schema::{self, SCHEMA_VERSION},
};

/// How long a write or read waits for a connection before the store counts as unavailable.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);
/// Connections to PostgreSQL per process.
const PG_CONNECTIONS: u32 = 16;
/// Connections to an SQLite file (writes are serialised by SQLite itself).
const SQLITE_CONNECTIONS: u32 = 4;
/// The most reviews one page holds.
pub const MAX_PAGE: u32 = 500;
/// Rows fetched per batch when exporting.
const EXPORT_BATCH: i64 = 200;

/// A connection pool to the decision log; cheap to clone (clones share the pool).
#[derive(Debug, Clone)]
pub struct Store {
    pub(crate) pool: AnyPool,
    pub(crate) kind: StoreKind,
}

/// What a retention sweep ([`Store::erase_state_before_counting`]) did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Erased {
    /// Reviews whose state text was erased.
    pub reviews: u64,
    /// Open queue items closed as expired (their review's state is gone).
    pub expired_items: u64,
}

/// What [`Store::migrate`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrated {
    /// The schema version before (0 for an empty database).
    pub from: i64,
    /// The schema version after.
    pub to: i64,
}

impl std::fmt::Display for Migrated {
    /// `schema version 8 is current; nothing to do`, or `migrated schema version 7 → 8`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.from == self.to {
            write!(f, "schema version {} is current; nothing to do", self.to)
        } else {
            write!(f, "migrated schema version {} → {}", self.from, self.to)
        }
    }
}

impl Store {
    /// Connects without touching the schema (the SQLite file is created, mode 0600, when
    /// missing). Nothing is checked until the first statement.
    pub async fn connect(url: &StoreUrl) -> Result<Store, StoreError> {
        static DRIVERS: Once = Once::new();
        DRIVERS.call_once(sqlx::any::install_default_drivers);
        let (connection, kind) = match url {
            StoreUrl::Sqlite(path) => (sqlite_url(path)?, StoreKind::Sqlite),
            StoreUrl::Postgres(url) => (url.clone(), StoreKind::Postgres),
        };
        let options = AnyPoolOptions::new()
            .acquire_timeout(ACQUIRE_TIMEOUT)
            .min_connections(0);
        let options =
            match kind {
                StoreKind::Postgres => options.max_connections(PG_CONNECTIONS),
                StoreKind::Sqlite => options.max_connections(SQLITE_CONNECTIONS).after_connect(
                    |connection, _meta| {
                        Box::pin(async move {
                            connection
                                .execute(
                                    "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 5000; \
                                 PRAGMA synchronous = NORMAL; PRAGMA secure_delete = ON;",
                                )
                                .await?;
                            Ok(())
                        })
                    },
                ),
            };
        let pool = options.connect_lazy(&connection)?;
        Ok(Store { pool, kind })
    }

    /// Connects and brings the schema up to date ([`Store::migrate`]); a database migrated
    /// by a newer jevjudge is refused.
    pub async fn open(url: &StoreUrl) -> Result<Store, StoreError> {
        let store = Store::connect(url).await?;
        store.migrate().await?;
        Ok(store)
    }

    /// Connects to a database for reading: it must exist (a missing SQLite file is not
    /// created) and hold exactly this binary's schema (nothing is migrated).
    pub async fn open_existing(url: &StoreUrl) -> Result<Store, StoreError> {
        if let StoreUrl::Sqlite(path) = url {
            if !path.is_file() {
                return Err(StoreError::NoSuchFile);
            }
        }
        let store = Store::connect(url).await?;
        store.check_schema().await?;
        Ok(store)
    }

    /// Which database this is.
    pub fn kind(&self) -> StoreKind {
        self.kind
    }

    /// The schema version of the database (0 when it has none yet), read without changing
    /// anything: the newest migration recorded in `_sqlx_migrations`, or, in a database not
    /// yet carried over from the hand-written migrator, in `jevjudge_schema`.
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        let mut connection = self.pool.acquire().await?;
        if schema::table_exists(&mut connection, self.kind, "_sqlx_migrations").await? {
            schema::migrated_version(&mut connection).await
        } else if schema::table_exists(&mut connection, self.kind, "jevjudge_schema").await? {
            schema::legacy_version(&mut connection).await
        } else {
            Ok(0)
        }
    }

    /// Refuses a schema that is not exactly the one this binary knows.
    pub async fn check_schema(&self) -> Result<(), StoreError> {
        let found = self.schema_version().await?;
        match found.cmp(&SCHEMA_VERSION) {
            std::cmp::Ordering::Equal => Ok(()),
            std::cmp::Ordering::Greater => Err(StoreError::SchemaTooNew {
                found,
                known: SCHEMA_VERSION,
            }),
            std::cmp::Ordering::Less => Err(StoreError::SchemaOutdated {
                found,
                known: SCHEMA_VERSION,
            }),
        }
    }

    /// Applies every migration the database lacks with sqlx's migrator, each in its own
    /// transaction (a failed one leaves the ones before it applied and itself undone).
    /// PostgreSQL: under sqlx's advisory lock, so replicas starting together migrate once;
    /// SQLite: a migration another connection applied first is skipped on a second pass. A
    /// database of the hand-written migrator is first carried over: its versions in
    /// `jevjudge_schema` are recorded in `_sqlx_migrations`, once. A database with a
    /// migration this binary does not know (made by a newer jevjudge) is refused untouched.
    pub async fn migrate(&self) -> Result<Migrated, StoreError> {
        let mut connection = self.pool.acquire().await?;
        connection.lock().await.map_err(schema::migrate_error)?;
        let result = self.migrate_locked(&mut connection).await;
        let unlocked = connection.unlock().await.map_err(schema::migrate_error);
        if result.is_err() || unlocked.is_err() {
            // Never hand a connection that may still hold the lock back to the pool.
            connection.close_on_drop();
        }
        let migrated = result?;
        unlocked?;
        Ok(migrated)
    }

    async fn migrate_locked(
        &self,
        connection: &mut sqlx::AnyConnection,
    ) -> Result<Migrated, StoreError> {
        let migrator = schema::migrator();
        let bridged = schema::bridge(connection, self.kind, &migrator).await?;
        connection
            .ensure_migrations_table()
            .await
            .map_err(schema::migrate_error)?;
        let applied = connection
            .list_applied_migrations()
            .await
            .map_err(schema::migrate_error)?;
        let newest = applied.iter().map(|m| m.version).max().unwrap_or(0);
        if applied.iter().any(|m| !migrator.version_exists(m.version)) {
            return Err(StoreError::SchemaTooNew {
                found: newest,
                known: SCHEMA_VERSION,
            });
        }
        let from = bridged.unwrap_or(newest);
        let mut run = migrator.run_direct(&mut *connection).await;
        // SQLite has no lock held across migrations: another connection may apply one
        // between this one's listing and its turn at the write lock, which fails this one's
        // statements. Run again, which skips what is recorded now; each failure is a
        // migration someone else applied, so this ends within as many tries as migrations.
        for _ in 0..SCHEMA_VERSION {
            match run {
                Err(sqlx::migrate::MigrateError::ExecuteMigration(..))
                    if self.kind == StoreKind::Sqlite =>
                {
                    run = migrator.run_direct(&mut *connection).await;
                }
                _ => break,
            }
        }
        run.map_err(schema::migrate_error)?;
        Ok(Migrated {
            from,
            to: SCHEMA_VERSION,
        })
    }

    /// `SELECT 1`: whether the store can take statements now.
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.pool.execute("SELECT 1").await?;
        Ok(())
    }

    /// Keeps a definition's questions under its digest (once), so exported records can be
    /// rebuilt; definitions hold no state and no secret.
    pub async fn put_definition(
        &self,
        digest: &str,
        version: &str,
        questions: &Value,
    ) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO definitions (digest, version, questions, first_seen_at) \
             VALUES ($1, $2, $3, $4) ON CONFLICT (digest) DO NOTHING",
        )
        .bind(digest)
        .bind(version)
        .bind(questions.to_string())
        .bind(unix_millis(SystemTime::now()))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Writes one review; when this returns `Ok` the row is committed.
    pub async fn insert(&self, review: &NewReview) -> Result<(), StoreError> {
        let mut connection = self.pool.acquire().await?;
        Ok(write_review(&mut connection, review).await?)
    }

    /// The review with this id.
    pub async fn get(&self, id: ReviewId) -> Result<Option<Review>, StoreError> {
        let row = sqlx::query(&format!("SELECT {COLUMNS} FROM reviews WHERE id = $1"))
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?;
        row.map(|row| review_of(&row)).transpose()
    }

    /// Up to `limit` reviews (1 to [`MAX_PAGE`]) matching `filter`, newest first, after
    /// `cursor` (the previous page's `next_cursor`).
    pub async fn list(
        &self,
        filter: &Filter,
        limit: u32,
        cursor: Option<Cursor>,
    ) -> Result<Page, StoreError> {
        let limit = limit.clamp(1, MAX_PAGE);
        check_filter(filter)?;
        let (clause, binds) = where_clause(filter, cursor);
        let sql = format!(
            "SELECT {COLUMNS} FROM reviews{clause} ORDER BY id DESC LIMIT ${}",
            binds.len() + 1
        );
        let query = query_with(&sql, binds);
        let rows = query
            .bind(i64::from(limit) + 1)
            .fetch_all(&self.pool)
            .await?;
        let mut reviews = rows.iter().map(review_of).collect::<Result<Vec<_>, _>>()?;
        let next_cursor = if reviews.len() > limit as usize {
            reviews.truncate(limit as usize);
            reviews
                .last()
                .map(|review| Cursor::after(review.review_id).to_string())
        } else {
            None
        };
        Ok(Page {
            reviews,
            next_cursor,
        })
    }

    /// How many reviews match `filter`.
    pub async fn count(&self, filter: &Filter) -> Result<u64, StoreError> {
        check_filter(filter)?;
        let (clause, binds) = where_clause(filter, None);
        let sql = format!("SELECT COUNT(*) AS n FROM reviews{clause}");
        count_rows(&self.pool, &sql, binds).await
    }

    /// Erases the state text (and kept answers) of reviews received before `cutoff`;
    /// verdicts stay. Returns how many reviews lost their state. In the same transaction,
    /// queue items of those reviews still open are closed as expired (nobody could decide
    /// them without the state; [`Store::erase_state_before_counting`] says how many). On
    /// SQLite the write-ahead log is then checkpointed and truncated, so the erased text
    /// survives neither in it nor (with `secure_delete`, on for every connection) in the
    /// database file's free space.
    pub async fn erase_state_before(&self, cutoff: SystemTime) -> Result<u64, StoreError> {
        Ok(self.erase_state_before_counting(cutoff).await?.reviews)
    }

    /// [`Store::erase_state_before`], with how many queue items it closed as expired.
    pub async fn erase_state_before_counting(
        &self,
        cutoff: SystemTime,
    ) -> Result<Erased, StoreError> {
        let now = unix_millis(SystemTime::now());
        let mut transaction = self.begin_write().await?;
        let erased = sqlx::query(
            "UPDATE reviews SET state = NULL, answers = NULL, state_erased_at = $1 \
             WHERE received_at < $2 AND state IS NOT NULL",
        )
        .bind(now)
        .bind(unix_millis(cutoff))
        .execute(&mut *transaction)
        .await?;
        // Open items only (through the open-items index), whatever sweep erased their state.
        let expired = sqlx::query(
            "UPDATE queue_items SET decided_at = $1, expired_at = $1, lease_expires = NULL \
             WHERE decided_at IS NULL AND EXISTS (SELECT 1 FROM reviews r \
             WHERE r.id = queue_items.review_id AND r.state IS NULL \
             AND r.state_erased_at IS NOT NULL)",
        )
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await?;
        if self.kind == StoreKind::Sqlite {
            // Copies every page into the database file and empties the log. A reader holding
            // an old snapshot can keep frames from being copied: the next sweep tries again.
            self.pool.execute("PRAGMA wal_checkpoint(TRUNCATE)").await?;
        }
        Ok(Erased {
            reviews: erased.rows_affected(),
            expired_items: expired.rows_affected(),
        })
    }

    /// Replayable `.jevl` records of the reviews whose state and answers are kept, oldest
    /// first, in batches: `each` gets every record; returns how many there were. Records of
    /// answers that did not come from a model carry `meta.fake = true` (backend `fake`) or
    /// `meta.fixture = true` (`fixture`, `injected`), so their replays say so.
    pub async fn export_records(
        &self,
        mut each: impl FnMut(Record) -> Result<(), StoreError>,
    ) -> Result<u64, StoreError> {
        let sql = format!(
            "SELECT {RECORD_COLUMNS} FROM reviews r JOIN definitions d \
             ON d.digest = r.definition_digest \
             WHERE r.state IS NOT NULL AND r.answers IS NOT NULL AND r.model IS NOT NULL \
             AND r.shadow_of IS NULL AND r.id > $1 ORDER BY r.id LIMIT $2"
        );
        let mut batches = Batches::new(&self.pool, &sql, "id", EXPORT_BATCH);
        let mut count = 0;
        while let Some(rows) = batches.next().await? {
            for row in &rows {
                each(record_of(row)?)?;
                count += 1;
            }
        }
        Ok(count)
    }

    /// Closes every connection.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// Writes one review row.
pub(crate) async fn write_review(
    connection: &mut sqlx::AnyConnection,
    review: &NewReview,
) -> Result<(), sqlx::Error> {
    write_reviews(connection, &[review]).await
}

/// Writes review rows in ONE statement (`INSERT … VALUES (…), (…)`): in autocommit it is one
/// transaction and one round trip, all rows or none.
pub(crate) async fn write_reviews(
    connection: &mut sqlx::AnyConnection,
    reviews: &[&NewReview],
) -> Result<(), sqlx::Error> {
    const COLUMNS: usize = 21;
    // `$n` placeholders, which both PostgreSQL and SQLite read (sqlx's Any driver passes the
    // text through as it is).
    let mut sql = String::from(
        "INSERT INTO reviews (id, received_at, definition_version, definition_digest, \
         state_digest, reference, status, error, detail, findings, model, input_tokens, \
         output_tokens, elapsed_micros, request_id, backend, state, answers, requested_model, \
         shadow_of, route) VALUES ",
    );
    for row in 0..reviews.len() {
        sql.push_str(if row == 0 { "(" } else { ", (" });
        for column in 0..COLUMNS {
            if column > 0 {
                sql.push_str(", ");
            }
            sql.push('$');
            sql.push_str(&(row * COLUMNS + column + 1).to_string());
        }
        sql.push(')');
    }
    let mut insert = sqlx::query(&sql);
    for review in reviews {
        let (state, answers, requested_model) = match &review.kept {
            Some(kept) => (
                Some(kept.state.to_string()),
                kept.answers
                    .as_ref()
                    .map(|a| Value::Object(a.clone()).to_string()),
                Some(kept.requested_model.clone()),
            ),
            None => (None, None, None),
        };
        let elapsed = i64::try_from(review.elapsed.as_micros()).unwrap_or(i64::MAX);
        insert = insert
            .bind(review.id.to_string())
            .bind(unix_millis(review.id.received_at()))
            .bind(review.definition_version.as_str())
            .bind(review.definition_digest.as_str())
            .bind(review.state_digest.as_str())
            .bind(review.reference.as_deref())
            .bind(review.status.as_str())
            .bind(review.error.as_str())
            .bind(review.detail.as_deref())
            .bind(review.findings.to_string())
            .bind(review.model.as_deref())
            .bind(review.usage.map(|u| clamp(u.input_tokens)))
            .bind(review.usage.map(|u| clamp(u.output_tokens)))
            .bind(elapsed)
            .bind(review.request_id.as_str())
            .bind(review.backend.as_str())
            .bind(state)
            .bind(answers)
            .bind(requested_model)
            .bind(review.shadow_of.map(|id| id.to_string()))
            .bind(review.route.as_deref());
    }
    insert.execute(&mut *connection).await?;
    Ok(())
}

/// Creates the SQLite file (mode 0600) when missing, and returns sqlx's URL for it.
fn sqlite_url(path: &Path) -> Result<String, StoreError> {
    let create_error = |reason: String| StoreError::Create {
        path: path.display().to_string(),
        reason,
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => {}
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(error) => return Err(create_error(error.to_string())),
    }
    let absolute = std::path::absolute(path).map_err(|e| create_error(e.to_string()))?;
    let text = absolute
        .to_str()
        .ok_or_else(|| create_error("the path is not valid UTF-8".to_owned()))?;
    let mut encoded = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '%' | '?' | '#' | ' ' => encoded.push_str(&format!("%{:02X}", c as u32)),
            c => encoded.push(c),
        }
    }
    Ok(format!("sqlite://{encoded}"))
}

pub(crate) fn clamp(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(crate) const COLUMNS: &str = "id, received_at, definition_version, definition_digest, state_digest, \
    reference, status, error, detail, findings, model, input_tokens, output_tokens, \
    elapsed_micros, request_id, backend, state_erased_at, shadow_of, route, \
    CASE WHEN state IS NULL THEN 0 ELSE 1 END AS state_kept";

/// A value for a `$N` placeholder of a statement built at run time.
pub(crate) enum Bind {
    Text(String),
    Int(i64),
}

/// `sql` with `binds` bound to `$1…$n` in order.
pub(crate) fn query_with(
    sql: &str,
    binds: Vec<Bind>,
) -> sqlx::query::Query<'_, sqlx::Any, sqlx::any::AnyArguments<'_>> {
    binds
        .into_iter()
        .fold(sqlx::query(sql), |query, bind| match bind {
            Bind::Text(text) => query.bind(text),
            Bind::Int(int) => query.bind(int),
        })
}

/// The count a `SELECT COUNT(*) AS n …` statement with `binds` gives (0 if negative).
pub(crate) async fn count_rows(
    pool: &AnyPool,
    sql: &str,
    binds: Vec<Bind>,
) -> Result<u64, StoreError> {
    let n: i64 = query_with(sql, binds).fetch_one(pool).await?.try_get("n")?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// The rows of a statement in keyset batches: `sql` takes the last key seen as `$1` (`''` at
/// first) and the batch size as `$2` (`… WHERE key > $1 ORDER BY key LIMIT $2`), the key
/// being the text column `key`.
pub(crate) struct Batches<'a> {
    pool: &'a AnyPool,
    sql: &'a str,
    key: &'static str,
    size: i64,
    after: String,
}

impl<'a> Batches<'a> {
    /// The walk from the start.
    pub(crate) fn new(
        pool: &'a AnyPool,
        sql: &'a str,
        key: &'static str,
        size: i64,
    ) -> Batches<'a> {
        Batches {
            pool,
            sql,
            key,
            size,
            after: String::new(),
        }
    }

    /// The next batch, in key order; `None` once a batch comes back empty.
    pub(crate) async fn next(&mut self) -> Result<Option<Vec<AnyRow>>, StoreError> {
        let rows = sqlx::query(self.sql)
            .bind(&self.after)
            .bind(self.size)
            .fetch_all(self.pool)
            .await?;
        let Some(last) = rows.last() else {
            return Ok(None);
        };
        self.after = last.try_get(self.key)?;
        Ok(Some(rows))
    }
}

/// Refuses a filter text with a control character ([`StoreError::Invalid`] naming it), which
/// PostgreSQL would refuse as an encoding error (and SQLite match as nothing).
fn check_filter(filter: &Filter) -> Result<(), StoreError> {
    for (field, text) in [
        ("reference", &filter.reference),
        ("version", &filter.version),
        ("status", &filter.status),
    ] {
        if let Some(text) = text {
            crate::check_no_controls(field, text).map_err(StoreError::Invalid)?;
        }
    }
    Ok(())
}

/// ` WHERE …` with `$1…$n` for the filters given, and the values to bind in order.
fn where_clause(filter: &Filter, cursor: Option<Cursor>) -> (String, Vec<Bind>) {
    let mut conditions = Vec::new();
    if !filter.shadow {
        conditions.push("shadow_of IS NULL".to_owned());
    }
    let mut binds = Vec::new();
    let mut add = |column: &str, operator: &str, bind: Bind| {
        binds.push(bind);
        conditions.push(format!("{column} {operator} ${}", binds.len()));
    };
    if let Some(reference) = &filter.reference {
        add("reference", "=", Bind::Text(reference.clone()));
    }
    if let Some(version) = &filter.version {
        add("definition_version", "=", Bind::Text(version.clone()));
    }
    if let Some(status) = &filter.status {
        add("status", "=", Bind::Text(status.clone()));
    }
    if let Some(since) = filter.since {
        add("received_at", ">=", Bind::Int(unix_millis(since)));
    }
    if let Some(cursor) = cursor {
        add("id", "<", Bind::Text(cursor.0.to_string()));
    }
    if conditions.is_empty() {
        (String::new(), binds)
    } else {
        (format!(" WHERE {}", conditions.join(" AND ")), binds)
    }
}

pub(crate) fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(what.to_owned())
}

fn usage_of(row: &AnyRow) -> Result<Option<Usage>, StoreError> {
    let input: Option<i64> = row.try_get("input_tokens")?;
    let output: Option<i64> = row.try_get("output_tokens")?;
    Ok(match (input, output) {
        (Some(input), Some(output)) => Some(Usage {
            input_tokens: u64::try_from(input).map_err(|_| corrupt("input_tokens"))?,
            output_tokens: u64::try_from(output).map_err(|_| corrupt("output_tokens"))?,
        }),
        _ => None,
    })
}

pub(crate) fn review_of(row: &AnyRow) -> Result<Review, StoreError> {
    let id: String = row.try_get("id")?;
    let findings: String = row.try_get("findings")?;
    let elapsed: i64 = row.try_get("elapsed_micros")?;
    let state_kept: i32 = row.try_get("state_kept")?;
    let erased: Option<i64> = row.try_get("state_erased_at")?;
    let shadow_of: Option<String> = row.try_get("shadow_of")?;
    Ok(Review {
        review_id: id.parse().map_err(|_| corrupt("id"))?,
        received_at: rfc3339_millis(row.try_get("received_at")?),
        definition_version: row.try_get("definition_version")?,
        definition_digest: row.try_get("definition_digest")?,
        state_digest: row.try_get("state_digest")?,
        reference: row.try_get("reference")?,
        status: row.try_get("status")?,
        error: row.try_get("error")?,
        detail: row.try_get("detail")?,
        findings: serde_json::from_str(&findings).map_err(|_| corrupt("findings"))?,
        model: row.try_get("model")?,
        usage: usage_of(row)?,
        elapsed_millis: elapsed as f64 / 1e3,
        request_id: row.try_get("request_id")?,
        backend: row.try_get("backend")?,
        state_kept: state_kept != 0,
        state_erased_at: erased.map(rfc3339_millis),
        shadow_of: shadow_of
            .map(|id| id.parse().map_err(|_| corrupt("shadow_of")))
            .transpose()?,
        route: row.try_get("route")?,
    })
}

/// The columns [`record_of`] reads, of `reviews r` joined to `definitions d`.
pub(crate) const RECORD_COLUMNS: &str = "r.id AS id, r.received_at AS received_at, \
    r.model AS model, r.requested_model AS requested_model, r.state AS state, \
    r.answers AS answers, r.input_tokens AS input_tokens, r.output_tokens AS output_tokens, \
    r.backend AS backend, d.questions AS questions";

pub(crate) fn record_of(row: &AnyRow) -> Result<Record, StoreError> {
    let json = |column: &str| -> Result<Value, StoreError> {
        let text: String = row.try_get(column)?;
        serde_json::from_str(&text).map_err(|_| corrupt(column))
    };
    let object = |column: &str| -> Result<Map<String, Value>, StoreError> {
        match json(column)? {
            Value::Object(map) => Ok(map),
            _ => Err(corrupt(column)),
        }
    };
    let model: String = row.try_get("model")?;
    let requested: Option<String> = row.try_get("requested_model")?;
    let received: i64 = row.try_get("received_at")?;
    let ts = humantime::format_rfc3339_seconds(
        std::time::UNIX_EPOCH + Duration::from_millis(u64::try_from(received).unwrap_or(0)),
    )
    .to_string();
    let mut record = Record::new(
        &model,
        requested.as_deref().unwrap_or(&model),
        json("state")?,
        object("questions")?,
        object("answers")?,
        usage_of(row)?.map(Usage::to_json),
        ts,
    )
    .map_err(|_| corrupt("state"))?;
    // Answers that did not come from a model never replay as a model's: the fake server's
    // as `fake` (`meta.fake`), fixtures and injected backends as `fixture`.
    let backend: String = row.try_get("backend")?;
    if backend == "fake" {
        record.mark_fake();
    } else if !matches!(backend.as_str(), "systemone" | "replay") {
        if let Some(meta) = record.meta.as_mut() {
            meta.insert("fixture".to_owned(), Value::Bool(true));
        }
    }
    Ok(record)
}
