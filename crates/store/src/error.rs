//! What can go wrong in the store, and which database it is.

/// Why the store could not do something. Messages hold no password and no state text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The database cannot be reached or refused the statement.
    #[error("the store is unavailable: {0}")]
    Unavailable(String),
    /// The database was migrated by a newer jevjudge.
    #[error(
        "the store's schema is version {found}, newer than this jevjudge knows ({known}); \
         run a jevjudge at least as new as the one that migrated it"
    )]
    SchemaTooNew {
        /// The database's schema version.
        found: i64,
        /// The newest version this binary knows.
        known: i64,
    },
    /// A migration could not be applied, or the applied ones differ from this binary's.
    #[error("the store's schema cannot be migrated: {0}")]
    Migration(String),
    /// The database's schema is older than this binary needs (run `jevjudge store migrate`).
    #[error(
        "the store's schema is version {found}, older than this jevjudge needs ({known}); \
         migrate it first"
    )]
    SchemaOutdated {
        /// The database's schema version.
        found: i64,
        /// The version this binary needs.
        known: i64,
    },
    /// The SQLite file could not be created.
    #[error("cannot create the SQLite file {path}: {reason}")]
    Create {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// A database opened for reading does not exist (reading never creates one).
    #[error("no such file")]
    NoSuchFile,
    /// A stored row could not be read back (a column of the wrong type or bad JSON).
    #[error("a stored review could not be read: {0}")]
    Corrupt(String),
    /// The caller asked for something the store cannot do (for example a queue item with
    /// more than two copies).
    #[error("invalid: {0}")]
    Invalid(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> StoreError {
        StoreError::Unavailable(error.to_string())
    }
}

/// Which database a [`Store`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreKind {
    /// An SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}
