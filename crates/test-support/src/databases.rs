//! Fresh databases for the suites that run on SQLite and on a real PostgreSQL (the store's
//! and the service's): a new SQLite file name, a new database on the test server named by
//! `JEVJUDGE_TEST_PG_URL`, and [`on_both_stores!`](crate::on_both_stores) to run each test
//! on both; [`StoppableServer`] for the store-down tests; [`nothing_pending`] in a queue;
//! [`all_pages`] of a keyset-paged list (the store's lists and queue pages, the service's).
//! Behind the `databases` feature, so only those suites build sqlx and the store here.
//!
//! Skips are never silent: without the server's variables a PostgreSQL test is skipped with
//! a line on standard error that test output capture does not hide (`SKIPPED (no
//! PostgreSQL): <test>`, after one line per test binary saying which command runs them),
//! and under CI (the `CI` variable set and not empty) it fails instead ([`skip_or_fail`]).

use std::{
    fmt::Debug,
    io::Write as _,
    path::PathBuf,
    str::FromStr,
    sync::{
        Once,
        atomic::{AtomicU32, Ordering},
    },
    time::SystemTime,
};

use jevjudge_store::Store;
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

/// A fresh database (named from `prefix`) on the test PostgreSQL server, as a URL; `None`
/// when `JEVJUDGE_TEST_PG_URL` is not set, after [`skip_or_fail`] with `runs_it` (the
/// command that does run it).
pub async fn postgres_database(prefix: &str, runs_it: &str) -> Option<String> {
    let Ok(base) = std::env::var("JEVJUDGE_TEST_PG_URL") else {
        skip_or_fail("JEVJUDGE_TEST_PG_URL is not set", runs_it);
        return None;
    };
    Some(create_database(&base, &unique(prefix)).await)
}

/// Whether the tests run under CI: the `CI` variable is set and not empty.
pub fn under_ci() -> bool {
    std::env::var_os("CI").is_some_and(|value| !value.is_empty())
}

static SKIP_HEADER: Once = Once::new();

/// A PostgreSQL test that cannot run (`why`): under CI ([`under_ci`]) a panic, which fails
/// the test; elsewhere a line `SKIPPED (no PostgreSQL): <test>` on standard error, after a
/// first line per test binary with `why` and `runs_it`. The lines are written to the
/// process's standard error directly, so the test harness's output capture does not hide
/// them.
pub fn skip_or_fail(why: &str, runs_it: &str) {
    let test = std::thread::current()
        .name()
        .unwrap_or("a PostgreSQL test")
        .to_owned();
    assert!(
        !under_ci(),
        "{test}: {why}, and CI is set, so this PostgreSQL test may not be skipped; \
         run the tests with a server: {runs_it}"
    );
    let mut stderr = std::io::stderr().lock();
    SKIP_HEADER.call_once(|| {
        let _ = writeln!(
            stderr,
            "{why}: the PostgreSQL tests of this binary are SKIPPED ({runs_it} runs them; \
             with CI set they fail instead)"
        );
    });
    let _ = writeln!(stderr, "SKIPPED (no PostgreSQL): {test}");
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
    stop: String,
    start: String,
}

impl StoppableServer {
    /// The server from the environment and a fresh database on it (its URL), for the test
    /// binary `binary`; `None` when any of the three is not set, after [`skip_or_fail`] with
    /// the command that runs it.
    pub async fn with_database(binary: &str) -> Option<(StoppableServer, String)> {
        let vars = [
            "JEVJUDGE_TEST_PG_URL",
            "JEVJUDGE_TEST_PG_STOP",
            "JEVJUDGE_TEST_PG_START",
        ]
        .map(std::env::var);
        let [Ok(base), Ok(stop), Ok(start)] = vars else {
            // Cargo names the package of the running test binary.
            let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
            skip_or_fail(
                "JEVJUDGE_TEST_PG_URL/_STOP/_START are not set",
                &format!("bash scripts/pg.sh -- cargo test -p {package} --test {binary}"),
            );
            return None;
        };
        let url = create_database(&base, &unique(binary)).await;
        Some((StoppableServer { stop, start }, url))
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

/// Whether nothing waits in `store`'s review queue: no definition version has a pending item.
pub async fn nothing_pending(store: &Store) -> bool {
    let stats = store.queue_stats().await.expect("the queue's stats");
    stats.pending_by_version.is_empty()
}

/// Every item of a keyset-paged list, in order, and how many pages it took. `page` gets the
/// cursor (`None` for the first page) and gives that page's items and its `next_cursor`; each
/// next cursor is parsed as `C` (a panic if it does not parse) and the walk stops at the first
/// page without one.
pub async fn all_pages<C, T>(
    mut page: impl AsyncFnMut(Option<C>) -> (Vec<T>, Option<String>),
) -> (Vec<T>, usize)
where
    C: FromStr,
    C::Err: Debug,
{
    let mut items = Vec::new();
    let mut cursor = None;
    let mut pages = 0;
    loop {
        let (on_page, next) = page(cursor.take()).await;
        pages += 1;
        items.extend(on_page);
        match next {
            Some(next) => cursor = Some(next.parse().expect("a cursor")),
            None => return (items, pages),
        }
    }
}

/// Runs each named `async fn(StoreUrl)` of the calling module twice, as the tests
/// `NAME::sqlite` and `NAME::postgres`, with the URLs from the caller's `sqlite_url()` and
/// `pg_url()` (the PostgreSQL one is skipped, and says so, when `pg_url()` is `None`: see
/// [`skip_or_fail`]).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_page_is_read_once_in_order() {
        let numbers: Vec<u32> = (0..7).collect();
        let (seen, pages) = all_pages(async |cursor: Option<usize>| {
            let from = cursor.unwrap_or(0);
            let to = (from + 3).min(numbers.len());
            let next = (to < numbers.len()).then(|| to.to_string());
            (numbers[from..to].to_vec(), next)
        })
        .await;
        assert_eq!(pages, 3);
        assert_eq!(seen, numbers);
    }
}
