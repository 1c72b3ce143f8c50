//! Group commit: the rows of concurrent reviews written in one transaction each batch.
//!
//! [`Store::group_commit`] starts [`GroupCommitConfig::committers`] committer tasks sharing one
//! queue (on SQLite always one: it has one writer). Each write ([`GroupCommit::insert_queued`]
//! and friends) hands its review (and its queue items) to the queue and waits. An idle
//! committer takes the first waiting row and every row already waiting behind it (at most
//! [`GroupCommitConfig::max_rows`]) and commits them at once, in ONE transaction: there is no
//! fixed wait, so a lone row is written as soon as it arrives. Rows that arrive while every
//! committer is busy wait in the queue and form the next batch: the batch grows with the load,
//! bounded by the time a commit takes (the classic group commit). On PostgreSQL several
//! committers let one batch form and start while another's `COMMIT` waits for its fsync.
//! A batch of reviews alone is one multi-row `INSERT` in autocommit (one statement, one
//! transaction, one round trip); a batch with queue items is `BEGIN`, its statements and
//! `COMMIT`. Each writer is answered only after its own batch's commit returned: a write that returns
//! `Ok` is as durable as a single-row insert. A review and its queue items are always in the
//! same transaction.
//!
//! A failed transaction wrote nothing, so every row of it is answered with an error, except
//! when the database refused a statement (a constraint, a value it cannot store): then one row
//! may be the cause, and each row of the batch is written again in a transaction of its own,
//! so only the rows the database refuses fail. The first error of another kind (the database
//! unreachable) fails the rest of the batch at once.

use std::{
    fmt,
    future::Future,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, SystemTime},
};

use tokio::{
    sync::{
        Mutex,
        mpsc::{self, error::TryRecvError},
        oneshot,
    },
    time::Instant,
};

use crate::{
    Enqueue, Inclusion, NewReview, QueueItemId, QueueReason, Store, StoreError, StoreKind,
    queue::{item_ids, write_items},
    review::unix_millis,
    store::{write_review, write_reviews},
};

/// Rows waiting for the committer before writers wait to hand theirs over.
const QUEUE_BOUND: usize = 4096;

/// Committers on PostgreSQL unless [`GroupCommitConfig::committers`] says otherwise.
pub const DEFAULT_PG_COMMITTERS: usize = 4;

/// The most committers on PostgreSQL (each holds a pool connection while it commits).
pub const MAX_COMMITTERS: usize = 8;

/// The most rows in one batch: a batch of reviews is one `INSERT` of 21 parameters a row,
/// and SQLite takes at most 32,766 parameters in a statement.
pub const MAX_BATCH_ROWS: usize = 1_000;

/// How the committers group rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupCommitConfig {
    /// The most rows in one transaction (1 to [`MAX_BATCH_ROWS`]).
    pub max_rows: usize,
    /// How long after the first row of a batch was handed over a committer waits for more
    /// before it commits. Zero (the default): no wait; only the rows already waiting join, so
    /// a batch holds what arrived while the previous commits were in flight.
    pub window: Duration,
    /// Transactions in flight at once on PostgreSQL (1 to [`MAX_COMMITTERS`]; default
    /// [`DEFAULT_PG_COMMITTERS`]). SQLite has one writer: always one committer there.
    pub committers: usize,
}

impl Default for GroupCommitConfig {
    /// 64 rows, no window, 4 committers on PostgreSQL.
    fn default() -> GroupCommitConfig {
        GroupCommitConfig {
            max_rows: 64,
            window: Duration::ZERO,
            committers: DEFAULT_PG_COMMITTERS,
        }
    }
}

/// What the committers have done since they started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupCommitStats {
    /// Transactions committed.
    pub transactions: u64,
    /// Rows (reviews) committed.
    pub rows: u64,
    /// Batches whose transaction failed (their rows were retried one by one when the database
    /// refused a statement).
    pub failed_batches: u64,
    /// Rows answered with an error.
    pub failed_rows: u64,
}

#[derive(Debug, Default)]
struct Counters {
    transactions: AtomicU64,
    rows: AtomicU64,
    failed_batches: AtomicU64,
    failed_rows: AtomicU64,
}

impl Counters {
    fn committed(&self, rows: usize) {
        self.transactions.fetch_add(1, Ordering::Relaxed);
        self.rows.fetch_add(rows as u64, Ordering::Relaxed);
    }

    fn failed(&self, rows: usize) {
        self.failed_rows.fetch_add(rows as u64, Ordering::Relaxed);
    }
}

/// The writers' side of a group committer; cheap to clone. The committer stops when the last
/// clone is dropped, after answering every row handed to it.
#[derive(Clone)]
pub struct GroupCommit {
    sender: mpsc::Sender<Pending>,
    counters: Arc<Counters>,
}

impl fmt::Debug for GroupCommit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GroupCommit")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

/// One row handed to the committer, and where its answer goes.
struct Pending {
    review: NewReview,
    enqueue: Option<Enqueue>,
    inclusion: Option<Inclusion>,
    ids: Vec<QueueItemId>,
    handed_at: Instant,
    done: oneshot::Sender<Result<Vec<QueueItemId>, StoreError>>,
}

impl Store {
    /// Starts the committers on this store's pool (tasks on the current tokio runtime; call
    /// inside one) and returns the handle writers share.
    pub fn group_commit(&self, config: GroupCommitConfig) -> GroupCommit {
        let config = GroupCommitConfig {
            max_rows: config.max_rows.clamp(1, MAX_BATCH_ROWS),
            committers: match self.kind {
                StoreKind::Sqlite => 1,
                StoreKind::Postgres => config.committers.clamp(1, MAX_COMMITTERS),
            },
            ..config
        };
        let (sender, receiver) = mpsc::channel(QUEUE_BOUND);
        let counters = Arc::new(Counters::default());
        let store = self.clone();
        let shared = counters.clone();
        spawn_committers(
            receiver,
            config,
            |pending: &Pending| pending.handed_at,
            move |batch| {
                let store = store.clone();
                let counters = shared.clone();
                async move { commit(&store, batch, &counters).await }
            },
        );
        GroupCommit { sender, counters }
    }
}

impl GroupCommit {
    /// [`Store::insert`] through the committer: `Ok` once the row is committed.
    pub async fn insert(&self, review: NewReview) -> Result<(), StoreError> {
        self.hand_over(review, None, None).await.map(drop)
    }

    /// [`Store::insert_queued`] through the committer: the review and its queue item(s) in the
    /// same transaction; `Ok` (the items' ids) once committed.
    pub async fn insert_queued(
        &self,
        review: NewReview,
        enqueue: Option<Enqueue>,
    ) -> Result<Vec<QueueItemId>, StoreError> {
        let inclusion = enqueue
            .filter(|enqueue| enqueue.reason == QueueReason::Status)
            .map(|_| Inclusion::FULL);
        self.hand_over(review, enqueue, inclusion).await
    }

    /// [`Store::insert_queued_with`] through the committer.
    pub async fn insert_queued_with(
        &self,
        review: NewReview,
        enqueue: Option<Enqueue>,
        inclusion: Inclusion,
    ) -> Result<Vec<QueueItemId>, StoreError> {
        self.hand_over(review, enqueue, Some(inclusion)).await
    }

    /// What the committer has done so far.
    pub fn stats(&self) -> GroupCommitStats {
        let read = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        GroupCommitStats {
            transactions: read(&self.counters.transactions),
            rows: read(&self.counters.rows),
            failed_batches: read(&self.counters.failed_batches),
            failed_rows: read(&self.counters.failed_rows),
        }
    }

    async fn hand_over(
        &self,
        review: NewReview,
        enqueue: Option<Enqueue>,
        inclusion: Option<Inclusion>,
    ) -> Result<Vec<QueueItemId>, StoreError> {
        let ids = item_ids(enqueue.as_ref())?;
        let (done, answer) = oneshot::channel();
        let pending = Pending {
            review,
            enqueue,
            inclusion,
            ids,
            handed_at: Instant::now(),
            done,
        };
        self.sender.send(pending).await.map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }
}

fn stopped() -> StoreError {
    StoreError::Unavailable("the decision log's committer has stopped".to_owned())
}

/// Starts `config.committers` tasks sharing `receiver`: each takes the next batch
/// ([`collect`]) and hands it to `commit`; while one commits, another takes the rows that
/// arrived meanwhile. Each stops once the channel is closed and empty.
pub(crate) fn spawn_committers<T, C, F>(
    receiver: mpsc::Receiver<T>,
    config: GroupCommitConfig,
    handed_at: fn(&T) -> Instant,
    commit: C,
) where
    T: Send + 'static,
    C: Fn(Vec<T>) -> F + Clone + Send + 'static,
    F: Future<Output = ()> + Send + 'static,
{
    let receiver = Arc::new(Mutex::new(receiver));
    for _ in 0..config.committers.max(1) {
        let receiver = receiver.clone();
        let commit = commit.clone();
        tokio::spawn(async move {
            loop {
                // Only the committer holding the lock collects; the others wait for it.
                let batch = {
                    let mut receiver = receiver.lock().await;
                    collect(&mut receiver, config, handed_at).await
                };
                match batch {
                    Some(batch) => commit(batch).await,
                    None => break,
                }
            }
        });
    }
}

/// The next batch: waits for a first item, then takes items until `config.max_rows` are taken
/// or `config.window` has passed since the first was handed over (`handed_at`); items already
/// waiting join without waiting (with a zero window, only they join). `None` once the channel is closed and empty.
pub(crate) async fn collect<T>(
    receiver: &mut mpsc::Receiver<T>,
    config: GroupCommitConfig,
    handed_at: impl Fn(&T) -> Instant,
) -> Option<Vec<T>> {
    let first = receiver.recv().await?;
    let deadline = handed_at(&first) + config.window;
    let mut batch = Vec::with_capacity(config.max_rows.min(QUEUE_BOUND));
    batch.push(first);
    while batch.len() < config.max_rows {
        match receiver.try_recv() {
            Ok(item) => {
                batch.push(item);
                continue;
            }
            Err(TryRecvError::Disconnected) => break,
            Err(TryRecvError::Empty) if config.window.is_zero() => break,
            Err(TryRecvError::Empty) => {}
        }
        match tokio::time::timeout_at(deadline, receiver.recv()).await {
            Ok(Some(item)) => batch.push(item),
            Ok(None) | Err(_) => break,
        }
    }
    Some(batch)
}

/// Writes one batch and answers each of its writers.
async fn commit(store: &Store, batch: Vec<Pending>, counters: &Counters) {
    let now = unix_millis(SystemTime::now());
    let error = match write_batch(store, &batch, now).await {
        Ok(()) => {
            counters.committed(batch.len());
            for pending in batch {
                let _ = pending.done.send(Ok(pending.ids));
            }
            return;
        }
        Err(error) => error,
    };
    counters.failed_batches.fetch_add(1, Ordering::Relaxed);
    if batch.len() == 1 || !is_refused_statement(&error) {
        counters.failed(batch.len());
        let reason = error.to_string();
        for pending in batch {
            let _ = pending
                .done
                .send(Err(StoreError::Unavailable(reason.clone())));
        }
        return;
    }
    // The database refused a statement: find the row(s) it refuses, one transaction each.
    let mut unreachable: Option<String> = None;
    for pending in batch {
        let written = match &unreachable {
            Some(reason) => Err(StoreError::Unavailable(reason.clone())),
            None => match write_batch(store, std::slice::from_ref(&pending), now).await {
                Ok(()) => Ok(()),
                Err(error) => {
                    if !is_refused_statement(&error) {
                        unreachable = Some(error.to_string());
                    }
                    Err(StoreError::from(error))
                }
            },
        };
        match written {
            Ok(()) => {
                counters.committed(1);
                let _ = pending.done.send(Ok(pending.ids));
            }
            Err(error) => {
                counters.failed(1);
                let _ = pending.done.send(Err(error));
            }
        }
    }
}

/// Whether the database itself refused a statement (as opposed to not being reachable).
fn is_refused_statement(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(_))
}

/// The reviews and queue items of `batch` in one transaction (SQLite: `BEGIN IMMEDIATE`).
async fn write_batch(store: &Store, batch: &[Pending], now: i64) -> Result<(), sqlx::Error> {
    if batch.iter().all(|pending| pending.enqueue.is_none()) {
        // Reviews only: one multi-row INSERT, its own transaction in autocommit, so a batch
        // costs one round trip to the database instead of BEGIN, an INSERT a row and COMMIT.
        let reviews: Vec<&NewReview> = batch.iter().map(|pending| &pending.review).collect();
        let mut connection = store.pool.acquire().await?;
        return write_reviews(&mut connection, &reviews).await;
    }
    let mut transaction = match store.kind {
        StoreKind::Sqlite => store.pool.begin_with("BEGIN IMMEDIATE").await?,
        StoreKind::Postgres => store.pool.begin().await?,
    };
    for pending in batch {
        write_review(&mut transaction, &pending.review).await?;
        if let Some(enqueue) = &pending.enqueue {
            write_items(
                &mut transaction,
                &pending.review,
                enqueue,
                pending.inclusion,
                &pending.ids,
                now,
            )
            .await?;
        }
    }
    transaction.commit().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(max_rows: usize, window_ms: u64) -> GroupCommitConfig {
        GroupCommitConfig {
            max_rows,
            window: Duration::from_millis(window_ms),
            committers: 1,
        }
    }

    /// Sends item `n` at `at` (from the test's start) on a task of its own.
    fn send_at(sender: &mpsc::Sender<(u32, Instant)>, n: u32, at: Duration) {
        let sender = sender.clone();
        tokio::spawn(async move {
            tokio::time::sleep(at).await;
            let _ = sender.send((n, Instant::now())).await;
        });
    }

    fn numbers(batch: &[(u32, Instant)]) -> Vec<u32> {
        batch.iter().map(|(n, _)| *n).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_lone_row_waits_the_window_and_no_longer() {
        let (sender, mut receiver) = mpsc::channel(16);
        let start = Instant::now();
        send_at(&sender, 1, Duration::ZERO);
        let batch = collect(&mut receiver, config(64, 2), |item| item.1)
            .await
            .unwrap();
        assert_eq!(numbers(&batch), [1]);
        assert_eq!(start.elapsed(), Duration::from_millis(2));
    }

    #[tokio::test(start_paused = true)]
    async fn rows_handed_over_within_the_window_join_the_first() {
        let (sender, mut receiver) = mpsc::channel(16);
        let start = Instant::now();
        for (n, at) in [(1, 0), (2, 1), (3, 1), (4, 3)] {
            send_at(&sender, n, Duration::from_millis(at));
        }
        let first = collect(&mut receiver, config(64, 2), |item| item.1)
            .await
            .unwrap();
        assert_eq!(numbers(&first), [1, 2, 3]);
        assert_eq!(start.elapsed(), Duration::from_millis(2));
        let second = collect(&mut receiver, config(64, 2), |item| item.1)
            .await
            .unwrap();
        assert_eq!(numbers(&second), [4]);
        assert_eq!(start.elapsed(), Duration::from_millis(5));
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_batch_goes_at_once() {
        let (sender, mut receiver) = mpsc::channel(256);
        let start = Instant::now();
        for n in 0..100 {
            sender.send((n, Instant::now())).await.unwrap();
        }
        let first = collect(&mut receiver, config(64, 2), |item| item.1)
            .await
            .unwrap();
        assert_eq!(numbers(&first), (0..64).collect::<Vec<_>>());
        assert_eq!(start.elapsed(), Duration::ZERO, "no wait for a full batch");
        let rest = collect(&mut receiver, config(64, 2), |item| item.1)
            .await
            .unwrap();
        assert_eq!(numbers(&rest), (64..100).collect::<Vec<_>>());
        assert_eq!(start.elapsed(), Duration::from_millis(2));
    }

    #[tokio::test(start_paused = true)]
    async fn the_window_counts_from_the_first_rows_hand_over_not_from_the_committer() {
        let (sender, mut receiver) = mpsc::channel(16);
        sender.send((1, Instant::now())).await.unwrap();
        // The committer was busy with the previous batch for 5 ms.
        tokio::time::sleep(Duration::from_millis(5)).await;
        sender.send((2, Instant::now())).await.unwrap();
        let start = Instant::now();
        let batch = collect(&mut receiver, config(64, 2), |item| item.1)
            .await
            .unwrap();
        assert_eq!(numbers(&batch), [1, 2], "what waited joins");
        assert_eq!(start.elapsed(), Duration::ZERO, "no second window");
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_window_takes_only_what_waits() {
        let (sender, mut receiver) = mpsc::channel(16);
        let start = Instant::now();
        sender.send((1, Instant::now())).await.unwrap();
        sender.send((2, Instant::now())).await.unwrap();
        send_at(&sender, 3, Duration::from_millis(1));
        let batch = collect(&mut receiver, config(64, 0), |item| item.1)
            .await
            .unwrap();
        assert_eq!(numbers(&batch), [1, 2]);
        assert_eq!(start.elapsed(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_channel_ends_after_its_last_items() {
        let (sender, mut receiver) = mpsc::channel(16);
        sender.send((1, Instant::now())).await.unwrap();
        drop(sender);
        let batch = collect(&mut receiver, config(64, 2), |item| item.1)
            .await
            .unwrap();
        assert_eq!(numbers(&batch), [1]);
        assert!(
            collect(&mut receiver, config(64, 2), |item| item.1)
                .await
                .is_none()
        );
    }

    /// Runs `committers` committers whose commit takes 5 ms (the fsync) on rows `(n, at_ms)`
    /// sent at their time; returns each batch as (ms from the start when its commit began,
    /// its rows), in the order the commits began.
    async fn committed_batches(committers: usize, rows: &[(u32, u64)]) -> Vec<(u64, Vec<u32>)> {
        let (sender, receiver) = mpsc::channel(64);
        let (done, mut batches) = mpsc::unbounded_channel();
        let start = Instant::now();
        let config = GroupCommitConfig {
            committers,
            ..GroupCommitConfig::default()
        };
        spawn_committers(
            receiver,
            config,
            |item: &(u32, Instant)| item.1,
            move |batch: Vec<(u32, Instant)>| {
                let done = done.clone();
                async move {
                    let began = start.elapsed().as_millis() as u64;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    let _ = done.send((began, numbers(&batch)));
                }
            },
        );
        for (n, at) in rows {
            send_at(&sender, *n, Duration::from_millis(*at));
        }
        drop(sender);
        let mut all = Vec::new();
        while let Some(batch) = batches.recv().await {
            all.push(batch);
        }
        all.sort_by_key(|(began, rows)| (*began, rows.clone()));
        all
    }

    #[tokio::test(start_paused = true)]
    async fn an_idle_committer_commits_a_lone_row_at_once() {
        let batches = committed_batches(1, &[(1, 0), (2, 20)]).await;
        assert_eq!(batches, [(0, vec![1]), (20, vec![2])]);
    }

    #[tokio::test(start_paused = true)]
    async fn rows_that_arrive_during_a_commit_form_the_next_batch() {
        let batches = committed_batches(1, &[(1, 0), (2, 1), (3, 2), (4, 4), (5, 6)]).await;
        assert_eq!(
            batches,
            [(0, vec![1]), (5, vec![2, 3, 4]), (10, vec![5])],
            "one committer: a batch holds what waited for the commit in flight"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_second_committer_starts_a_batch_while_the_first_one_commits() {
        let batches = committed_batches(2, &[(1, 0), (2, 1), (3, 2), (4, 4), (5, 6)]).await;
        assert_eq!(
            batches,
            [(0, vec![1]), (1, vec![2]), (5, vec![3, 4]), (6, vec![5])],
            "two committers: two transactions in flight, no row waits for both"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_default_config_has_no_window() {
        assert_eq!(GroupCommitConfig::default().window, Duration::ZERO);
        let batches = committed_batches(4, &[(1, 0)]).await;
        assert_eq!(batches, [(0, vec![1])]);
    }
}
