//! Concurrent decision-log writes: 32 reviews written at once, one transaction each
//! (`Store::insert`) against group commit (`GroupCommit::insert`, default settings), on
//! SQLite and, when `JEVJUDGE_TEST_PG_URL` is set, on PostgreSQL (run it under
//! `bash scripts/pg.sh --fsync -- …` for durable commits).
//!
//! Run: `cargo bench -p jevjudge-store --bench group_commit` (about a minute; 2 worker threads).

use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use jevjudge_store::{GroupCommit, GroupCommitConfig, NewReview, ReviewId, Store, StoreUrl};
use jevjudge_test_support::databases::{postgres_database, sqlite_file};
use jevjudge_wire::Usage;
use serde_json::json;
use tokio::{runtime::Runtime, task::JoinSet};

/// Reviews written at once per iteration.
const CONCURRENT: usize = 32;

fn review() -> NewReview {
    NewReview {
        id: ReviewId::new(),
        definition_version: "bench-v1".to_owned(),
        definition_digest: "sha256:bench".to_owned(),
        state_digest: "sha256:00ff".to_owned(),
        reference: Some("bench".to_owned()),
        status: "PASS".to_owned(),
        error: "NONE".to_owned(),
        detail: None,
        findings: json!({"supported": {"status": "PASS", "yes_probability": 0.95}}),
        model: Some("jev-1.13.0".to_owned()),
        usage: Some(Usage {
            input_tokens: 120,
            output_tokens: 3,
        }),
        elapsed: Duration::from_micros(20_512),
        request_id: "req-bench".to_owned(),
        backend: "fake".to_owned(),
        kept: None,
        shadow_of: None,
        route: None,
    }
}

fn one_transaction_each(runtime: &Runtime, store: &Store) {
    runtime.block_on(async {
        let mut tasks = JoinSet::new();
        for _ in 0..CONCURRENT {
            let store = store.clone();
            tasks.spawn(async move { store.insert(&review()).await.expect("written") });
        }
        tasks.join_all().await;
    });
}

fn grouped(runtime: &Runtime, commit: &GroupCommit) {
    runtime.block_on(async {
        let mut tasks = JoinSet::new();
        for _ in 0..CONCURRENT {
            let commit = commit.clone();
            tasks.spawn(async move { commit.insert(review()).await.expect("written") });
        }
        tasks.join_all().await;
    });
}

fn writes(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut stores = vec![("sqlite", StoreUrl::Sqlite(sqlite_file("bench_group")))];
    if std::env::var_os("JEVJUDGE_TEST_PG_URL").is_some() {
        let url = runtime.block_on(postgres_database("bench_group", "scripts/pg.sh"));
        stores.extend(url.map(|url| ("postgres", StoreUrl::Postgres(url))));
    }
    let mut group = c.benchmark_group("decision_log_writes");
    group
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1))
        .sample_size(20)
        .throughput(Throughput::Elements(CONCURRENT as u64));
    for (name, url) in &stores {
        let store = runtime.block_on(Store::open(url)).expect("the store opens");
        let commit = runtime.block_on(async { store.group_commit(GroupCommitConfig::default()) });
        group.bench_function(BenchmarkId::new("one_transaction_each", name), |b| {
            b.iter(|| one_transaction_each(&runtime, &store));
        });
        group.bench_function(BenchmarkId::new("group_commit", name), |b| {
            b.iter(|| grouped(&runtime, &commit));
        });
        eprintln!("{name}: group commit {:?}", commit.stats());
    }
    group.finish();
    if let StoreUrl::Sqlite(path) = &stores[0].1 {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
        }
    }
}

criterion_group!(benches, writes);
criterion_main!(benches);
