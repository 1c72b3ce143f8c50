//! Fresh databases for the suites that run on SQLite and on a real PostgreSQL (the store's
//! and the service's): a new SQLite file name, a new database on the test server named by
//! `JEVJUDGE_TEST_PG_URL`, and [`on_both_stores!`](crate::on_both_stores) to run each test
//! on both; [`StoppableServer`] for the store-down tests; [`nothing_pending`] in a queue;
//! [`all_pages`] of a keyset-paged list (the store's lists and queue pages, the service's).
//! Behind the `databases` feature, so only those suites build sqlx and the store here.

use std::{
    fmt::Debug,
    path::PathBuf,
    str::FromStr,
    sync::atomic::{AtomicU32, Ordering},
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
    stop: String,
    start: String,
}

impl StoppableServer {
    /// The server from the environment and a fresh database on it (its URL), for the test
    /// binary `binary`; `None`, said on stderr with the command that runs it, when any of the
    /// three is not set.
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
            eprintln!(
                "JEVJUDGE_TEST_PG_URL/_STOP/_START are not set: {binary} is skipped \
                 (bash scripts/pg.sh -- cargo test -p {package} --test {binary} runs it)"
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
