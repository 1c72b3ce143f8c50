//! Fresh databases for the suites that run on SQLite and on a real PostgreSQL (the store's
//! and the service's): a new SQLite file name, a new database on the test server named by
//! `JEVJUDGE_TEST_PG_URL`, and [`on_both_stores!`](crate::on_both_stores) to run each test
//! on both. Behind the `databases` feature, so only those suites build sqlx here.

use std::{
    path::PathBuf,
    sync::atomic::{AtomicU32, Ordering},
    time::SystemTime,
};

use sqlx::{Connection as _, Executor as _};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A name no other test of any process running now has: `prefix`, the process id, a counter
/// and the clock's nanoseconds.
pub fn unique(prefix: &str) -> String {
    format!(
        "{prefix}_{}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed),
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default()
            .subsec_nanos()
    )
}

/// A new SQLite file in the temporary directory (not created yet).
pub fn sqlite_file(prefix: &str) -> PathBuf {
    std::env::temp_dir().join(format!("{}.db", unique(prefix)))
}

/// A fresh database (named from `prefix`) on the test PostgreSQL server, as a URL; `None`,
/// said on stderr with `runs_it` (the command that does run it), when `JEVJUDGE_TEST_PG_URL`
/// is not set.
pub async fn postgres_database(prefix: &str, runs_it: &str) -> Option<String> {
    let Ok(base) = std::env::var("JEVJUDGE_TEST_PG_URL") else {
        eprintln!(
            "JEVJUDGE_TEST_PG_URL is not set: the PostgreSQL half of this test is skipped \
             ({runs_it} runs it)"
        );
        return None;
    };
    Some(create_database(&base, &unique(prefix)).await)
}

/// Creates the database `name` on the server of the superuser URL `base`; its URL.
pub async fn create_database(base: &str, name: &str) -> String {
    let mut admin = sqlx::postgres::PgConnection::connect(base)
        .await
        .expect("the test PostgreSQL server accepts connections");
    admin
        .execute(format!("CREATE DATABASE {name}").as_str())
        .await
        .expect("a test database");
    admin.close().await.expect("the admin connection closes");
    let (server, _db) = base.rsplit_once('/').expect("a URL with a database");
    format!("{server}/{name}")
}

/// The test PostgreSQL server of a store-down test, which stops and starts it: the superuser
/// URL `JEVJUDGE_TEST_PG_URL` and the shell commands `JEVJUDGE_TEST_PG_STOP` and
/// `JEVJUDGE_TEST_PG_START` (`scripts/pg.sh` sets all three).
#[derive(Debug, Clone)]
pub struct StoppableServer {
    /// The superuser URL (for [`create_database`]).
    pub base: String,
    stop: String,
    start: String,
}

impl StoppableServer {
    /// The server from the environment; `None`, said on stderr with `test` (what is skipped)
    /// and `runs_it` (the command that does run it), when any of the three is not set.
    pub fn from_env(test: &str, runs_it: &str) -> Option<StoppableServer> {
        let vars = [
            "JEVJUDGE_TEST_PG_URL",
            "JEVJUDGE_TEST_PG_STOP",
            "JEVJUDGE_TEST_PG_START",
        ]
        .map(std::env::var);
        let [Ok(base), Ok(stop), Ok(start)] = vars else {
            eprintln!(
                "JEVJUDGE_TEST_PG_URL/_STOP/_START are not set: {test} is skipped ({runs_it} runs it)"
            );
            return None;
        };
        Some(StoppableServer { base, stop, start })
    }

    /// Stops the server (runs the stop command; panics unless it succeeds).
    pub async fn stop(&self) {
        shell(self.stop.clone()).await;
    }

    /// Starts the server again (runs the start command; panics unless it succeeds).
    pub async fn start(&self) {
        shell(self.start.clone()).await;
    }
}

/// Runs `command` with `sh -c` off the runtime's threads, its stdout dropped; panics unless
/// it succeeds.
async fn shell(command: String) {
    let status = tokio::task::spawn_blocking(move || {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(&command)
            .stdout(std::process::Stdio::null())
            .status()
    })
    .await
    .expect("the command's task ends")
    .expect("the command runs");
    assert!(status.success(), "{status}");
}

/// Runs each named `async fn(StoreUrl)` of the calling module twice, as the tests
/// `NAME::sqlite` and `NAME::postgres`, with the URLs from the caller's `sqlite_url()` and
/// `pg_url()` (the PostgreSQL one passes without running when `pg_url()` is `None`).
#[macro_export]
macro_rules! on_both_stores {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[tokio::test]
            async fn sqlite() {
                super::$name(super::sqlite_url()).await;
            }
            #[tokio::test]
            async fn postgres() {
                if let Some(url) = super::pg_url().await {
                    super::$name(url).await;
                }
            }
        }
    )*};
}
