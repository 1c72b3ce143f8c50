//! Group commit on SQLite and on a real PostgreSQL: concurrent writers share transactions,
//! each row and its queue items land together, and a row the database refuses fails alone.

use std::time::Duration;

use jevjudge_store::{
    Enqueue, Filter, GroupCommitConfig, GroupCommitStats, NewReview, QueueReason, Store, StoreUrl,
};
use jevjudge_test_support::on_both_stores;
use tokio::task::JoinSet;

use super::{pg_url, review, sqlite_url};

on_both_stores!(
    concurrent_writers_share_transactions_and_every_row_lands,
    a_batch_holds_at_most_max_rows,
    a_row_the_database_refuses_fails_alone_and_its_neighbours_are_written,
);

/// Hands `reviews` to `commit` all at once (one task each) and returns each one's result, in
/// the order given.
async fn write_all(
    commit: &jevjudge_store::GroupCommit,
    reviews: Vec<(NewReview, Option<Enqueue>)>,
) -> Vec<Result<usize, String>> {
    let mut tasks = JoinSet::new();
    for (index, (review, enqueue)) in reviews.into_iter().enumerate() {
        let commit = commit.clone();
        tasks.spawn(async move {
            let written = commit.insert_queued(review, enqueue).await;
            (
                index,
                written.map(|ids| ids.len()).map_err(|e| e.to_string()),
            )
        });
    }
    let mut results: Vec<_> = tasks.join_all().await;
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, result)| result).collect()
}

fn queued(copies: u8) -> Option<Enqueue> {
    Some(Enqueue {
        reason: QueueReason::Status,
        copies,
    })
}

async fn concurrent_writers_share_transactions_and_every_row_lands(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let commit = store.group_commit(GroupCommitConfig::default());
    const N: usize = 48;
    let reviews: Vec<_> = (0..N)
        .map(|i| {
            let enqueue = match i % 3 {
                0 => None,
                1 => queued(1),
                _ => queued(2),
            };
            (review(Some("group"), "FAIL", "group-v1"), enqueue)
        })
        .collect();
    let results = write_all(&commit, reviews).await;
    let items: Vec<usize> = results
        .into_iter()
        .map(|result| result.expect("every row is written"))
        .collect();
    assert_eq!(items.iter().filter(|n| **n == 0).count(), N / 3);
    let stats = commit.stats();
    assert_eq!(stats.rows, N as u64);
    assert!(
        stats.transactions < N as u64,
        "{N} concurrent rows in {} transactions",
        stats.transactions
    );
    assert_eq!((stats.failed_batches, stats.failed_rows), (0, 0));
    let filter = Filter {
        reference: Some("group".into()),
        ..Filter::default()
    };
    assert_eq!(store.count(&filter).await.unwrap(), N as u64);
    let pending = store.queue_stats().await.unwrap().pending_by_version["group-v1"];
    assert_eq!(
        pending,
        (N / 3 + 2 * (N / 3)) as u64,
        "each row's items with it"
    );
    store.close().await;
}

async fn a_batch_holds_at_most_max_rows(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    // A window far longer than the test: batches close only when full.
    let commit = store.group_commit(GroupCommitConfig {
        max_rows: 12,
        window: Duration::from_secs(600),
        ..GroupCommitConfig::default()
    });
    let reviews = (0..48)
        .map(|_| (review(Some("batches"), "PASS", "batch-v1"), None))
        .collect();
    let results = write_all(&commit, reviews).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(
        commit.stats(),
        GroupCommitStats {
            transactions: 4,
            rows: 48,
            failed_batches: 0,
            failed_rows: 0
        }
    );
    store.close().await;
}

async fn a_row_the_database_refuses_fails_alone_and_its_neighbours_are_written(url: StoreUrl) {
    let store = Store::open(&url).await.expect("the store opens");
    let existing = review(Some("refused"), "PASS", "refused-v1");
    store.insert(&existing).await.unwrap();
    let commit = store.group_commit(GroupCommitConfig {
        max_rows: 8,
        window: Duration::from_secs(600),
        ..GroupCommitConfig::default()
    });
    // Eight rows, one batch; the fourth repeats an id already stored.
    let reviews: Vec<_> = (0..8)
        .map(|i| {
            let row = if i == 3 {
                existing.clone()
            } else {
                review(Some("refused"), "FAIL", "refused-v1")
            };
            (row, queued(1))
        })
        .collect();
    let ids: Vec<_> = reviews.iter().map(|(row, _)| row.id).collect();
    let results = write_all(&commit, reviews).await;
    for (i, result) in results.iter().enumerate() {
        assert_eq!(result.is_err(), i == 3, "row {i}: {result:?}");
    }
    assert!(
        results[3].as_ref().unwrap_err().contains("unavailable"),
        "{results:?}"
    );
    assert_eq!(
        commit.stats(),
        GroupCommitStats {
            transactions: 7,
            rows: 7,
            failed_batches: 1,
            failed_rows: 1
        },
        "the batch failed, then each row alone"
    );
    for (i, id) in ids.iter().enumerate() {
        let stored = store.get(*id).await.unwrap().expect("stored");
        let expected = if i == 3 { "PASS" } else { "FAIL" };
        assert_eq!(stored.status, expected, "row {i}");
    }
    // The refused row's queue item was not written: only the seven written rows are queued.
    let pending = store.queue_stats().await.unwrap().pending_by_version["refused-v1"];
    assert_eq!(pending, 7);
    store.close().await;
}
