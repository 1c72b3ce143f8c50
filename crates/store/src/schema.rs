//! Versioned migrations: the files `migrations/NNNN_name.sql` of this crate, embedded at
//! build time and applied by sqlx's migrator, which records each in `_sqlx_migrations`
//! (version, description, SHA-384 checksum of the file). A version, once released, never
//! changes: a later change is a new file. One set of files serves SQLite and PostgreSQL
//! through the `Any` driver: their SQL keeps to the common ground of both (`TEXT` and
//! `BIGINT` columns, partial indexes).
//!
//! Databases made before the migrator recorded versions 1 and 2 in a table of their own,
//! `jevjudge_schema`; [`bridge`] carries them over once.

use sqlx::{
    AnyConnection, Connection as _, Row as _,
    migrate::{Migrate as _, Migrator},
};

use crate::{StoreError, StoreKind};

/// The schema version this binary writes and reads: the newest migration.
pub const SCHEMA_VERSION: i64 = 8;

/// The last version the hand-written migrator recorded in `jevjudge_schema`.
pub(crate) const LEGACY_VERSIONS: i64 = 2;

/// The embedded migrations. Locking is the caller's (it holds the lock across the bridge).
pub(crate) fn migrator() -> Migrator {
    let mut migrator = sqlx::migrate!();
    migrator.set_locking(false);
    migrator
}

/// Whether the table `name` exists in the connection's database (PostgreSQL: in its current
/// schema).
pub(crate) async fn table_exists(
    connection: &mut AnyConnection,
    kind: StoreKind,
    name: &str,
) -> Result<bool, StoreError> {
    let sql = match kind {
        StoreKind::Sqlite => {
            "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = $1"
        }
        StoreKind::Postgres => {
            "SELECT COUNT(*) AS n FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_name = $1"
        }
    };
    let row = sqlx::query(sql).bind(name).fetch_one(connection).await?;
    Ok(row.try_get::<i64, _>("n")? > 0)
}

/// The highest version recorded by the hand-written migrator in `jevjudge_schema`; 0 when
/// none.
pub(crate) async fn legacy_version(connection: &mut AnyConnection) -> Result<i64, StoreError> {
    max_version(connection, "SELECT MAX(version) AS v FROM jevjudge_schema").await
}

/// The highest version applied successfully by sqlx's migrator; 0 when none.
pub(crate) async fn migrated_version(connection: &mut AnyConnection) -> Result<i64, StoreError> {
    max_version(
        connection,
        "SELECT MAX(version) AS v FROM _sqlx_migrations WHERE success",
    )
    .await
}

async fn max_version(connection: &mut AnyConnection, sql: &str) -> Result<i64, StoreError> {
    let row = sqlx::query(sql).fetch_one(connection).await?;
    Ok(row.try_get::<Option<i64>, _>("v")?.unwrap_or(0))
}

/// Carries a database of the hand-written migrator over to sqlx's, once: when
/// `jevjudge_schema` exists and `_sqlx_migrations` does not, creates `_sqlx_migrations` and
/// records there, as applied, the migrations up to the version `jevjudge_schema` holds, with
/// the checksums of this binary's files (which hold exactly the statements those versions
/// ran). Nothing else changes; the migrator then applies the rest. All in one transaction
/// (SQLite: `BEGIN IMMEDIATE`, so two processes never bridge twice; PostgreSQL: under the
/// caller's migration lock). Returns the version carried over, or `None` when there was
/// nothing to bridge.
pub(crate) async fn bridge(
    connection: &mut AnyConnection,
    kind: StoreKind,
    migrator: &Migrator,
) -> Result<Option<i64>, StoreError> {
    let mut transaction = match kind {
        StoreKind::Sqlite => connection.begin_with("BEGIN IMMEDIATE").await?,
        StoreKind::Postgres => connection.begin().await?,
    };
    if table_exists(&mut transaction, kind, "_sqlx_migrations").await?
        || !table_exists(&mut transaction, kind, "jevjudge_schema").await?
    {
        transaction.rollback().await?;
        return Ok(None);
    }
    let legacy = legacy_version(&mut transaction).await?;
    if legacy > LEGACY_VERSIONS {
        transaction.rollback().await?;
        return Err(if legacy > SCHEMA_VERSION {
            StoreError::SchemaTooNew {
                found: legacy,
                known: SCHEMA_VERSION,
            }
        } else {
            StoreError::Migration(format!(
                "jevjudge_schema records version {legacy}, which is recorded only in \
                 _sqlx_migrations, and that table is missing"
            ))
        });
    }
    transaction
        .ensure_migrations_table()
        .await
        .map_err(migrate_error)?;
    for migration in migrator.iter().filter(|m| m.version <= legacy) {
        sqlx::query(
            "INSERT INTO _sqlx_migrations \
             (version, description, success, checksum, execution_time) \
             VALUES ($1, $2, TRUE, $3, 0)",
        )
        .bind(migration.version)
        .bind(migration.description.to_string())
        .bind(migration.checksum.to_vec())
        .execute(&mut *transaction)
        .await?;
    }
    transaction.commit().await?;
    Ok(Some(legacy))
}

/// A migrator error as a [`StoreError`]: an applied migration this binary does not know is a
/// newer schema; one whose file changed or that was left half applied cannot be migrated.
pub(crate) fn migrate_error(error: sqlx::migrate::MigrateError) -> StoreError {
    use sqlx::migrate::MigrateError;
    match error {
        MigrateError::VersionMissing(version) => StoreError::SchemaTooNew {
            found: version,
            known: SCHEMA_VERSION,
        },
        MigrateError::VersionMismatch(version) => StoreError::Migration(format!(
            "migration {version} was applied from different SQL than this jevjudge's \
             (its checksum in _sqlx_migrations differs)"
        )),
        MigrateError::Dirty(version) => StoreError::Migration(format!(
            "migration {version} was left partly applied; repair the database by hand"
        )),
        MigrateError::Execute(error) => StoreError::Unavailable(error.to_string()),
        MigrateError::ExecuteMigration(error, version) => {
            StoreError::Migration(format!("migration {version} failed: {error}"))
        }
        other => StoreError::Migration(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_version_is_the_newest_migration_and_versions_ascend_from_one() {
        // Versions may skip a number (sqlx's migrator applies whichever the database lacks,
        // in order), but never repeat one and never go back.
        let versions: Vec<i64> = migrator().iter().map(|m| m.version).collect();
        assert_eq!(versions.first(), Some(&1));
        assert_eq!(versions.last(), Some(&SCHEMA_VERSION));
        assert!(
            versions.windows(2).all(|pair| pair[0] < pair[1]),
            "{versions:?}"
        );
        const { assert!(LEGACY_VERSIONS < SCHEMA_VERSION) };
    }

    #[test]
    fn migrations_are_plain_sql_without_down_files() {
        for migration in migrator().iter() {
            assert!(
                !migration.migration_type.is_down_migration(),
                "{}",
                migration.description
            );
            assert!(!migration.no_tx, "{}", migration.description);
        }
    }
}
