//! Group commit: the rows of concurrent reviews written in one transaction per short window.
//!
//! [`Store::group_commit`] starts one committer task. Each write ([`GroupCommit::insert_queued`]
//! and friends) hands its review (and its queue items) to the committer and waits. The
//! committer takes the first waiting row, then every row that arrives until
//! [`GroupCommitConfig::window`] after that first row was handed over or until
//! [`GroupCommitConfig::max_rows`] are taken, writes them all in ONE transaction and answers
//! each writer only after `COMMIT` returned: a write that returns `Ok` is as durable as a
//! single-row insert. A review and its queue items are always in the same transaction.
//!
//! A failed transaction wrote nothing, so every row of it is answered with an error, except
//! when the database refused a statement (a constraint, a value it cannot store): then one row
//! may be the cause, and each row of the batch is written again in a transaction of its own,
//! so only the rows the database refuses fail. The first error of another kind (the database
//! unreachable) fails the rest of the batch at once.

use std::{
    fmt,
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, SystemTime},
};

use tokio::{
    sync::{
        mpsc::{self, error::TryRecvError},
        oneshot,
    },
    time::Instant,
};

use crate::{
    Enqueue, Inclusion, NewReview, QueueItemId, QueueReason, Store, StoreError, StoreKind,
    queue::{item_ids, write_items},
    review::unix_millis,
    store::write_review,
};

/// Rows waiting for the committer before writers wait to hand theirs over.
const QUEUE_BOUND: usize = 4096;

/// How the committer groups rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupCommitConfig {
    /// The most rows in one transaction (at least 1).
    pub max_rows: usize,
    /// How long after the first row of a batch was handed over the committer waits for more.
    /// Zero: only the rows already waiting join it.
    pub window: Duration,
}

impl Default for GroupCommitConfig {
    /// 64 rows, 2 ms.
    fn default() -> GroupCommitConfig {
        GroupCommitConfig {
            max_rows: 64,
            window: Duration::from_millis(2),
        }
    }
}

/// What the committer has done since it started.
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
    /// Starts a committer on this store's pool (a task on the current tokio runtime; call
    /// inside one) and returns the handle writers share.
    pub fn group_commit(&self, config: GroupCommitConfig) -> GroupCommit {
        let config = GroupCommitConfig {
            max_rows: config.max_rows.max(1),
            ..config
        };
        let (sender, receiver) = mpsc::channel(QUEUE_BOUND);
        let counters = Arc::new(Counters::default());
        tokio::spawn(run(self.clone(), receiver, config, counters.clone()));
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

/// The committer: batches until every writer's handle is dropped.
async fn run(
    store: Store,
    mut receiver: mpsc::Receiver<Pending>,
    config: GroupCommitConfig,
    counters: Arc<Counters>,
) {
    while let Some(batch) = collect(&mut receiver, config, |pending| pending.handed_at).await {
        commit(&store, batch, &counters).await;
    }
}

/// The next batch: waits for a first item, then takes items until `config.max_rows` are taken
/// or `config.window` has passed since the first was handed over (`handed_at`); items already
/// waiting join without waiting. `None` once the channel is closed and empty.
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
}
