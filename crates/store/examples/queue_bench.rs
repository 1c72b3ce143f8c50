//! The review queue at 100,000 pending items: claim, decide, first page and stats latency,
//! and the plans of the hot statements (no full table scan).
//!
//! ```text
//! cargo run --release -p jevjudge-store --example queue_bench -- [--seed-only] URL [PENDING] [OPS] [HISTORY]
//! ```
//!
//! URL is `sqlite:PATH` (a new file) or `postgresql://…` (an empty database). Seeds HISTORY
//! (20000) reviews decided earlier by the 8 bench reviewers, then PENDING (100000) queued
//! reviews — one in ten queued twice (second review), a fifth of them of a second definition
//! version — with multi-row INSERTs, 10,000 rows per transaction; runs
//! `ANALYZE`; prints the `EXPLAIN` of claim, pending counts and pages; then measures OPS (2000)
//! claims (8 reviewers in turn, one at a time) and OPS decisions of those items, 200 first
//! pages (50 items) and 50 stats, and prints p50 / p99 / max in milliseconds (nearest rank,
//! `jevjudge_stats::nearest_rank`). `scripts/bench-queue-store.sh` runs it on SQLite and on a
//! throwaway PostgreSQL.
//!
//! This is the one maker of the 100,000-item queue fixture: with `--seed-only` it seeds (and
//! runs `ANALYZE`), prints the `seeded …` line and stops, for the scripts that measure the same
//! queue through `jevjudge serve` (`scripts/bench-queue.sh`, `scripts/bench-ui.sh`).

use std::{
    collections::BTreeMap,
    time::{Duration, Instant, SystemTime},
};

use jevjudge_store::{Decision, QueueItemId, ReviewId, Store, StoreKind, StoreUrl, statements};
use sqlx::{Executor as _, Row as _};

const ROWS_PER_STATEMENT: usize = 250;
const ROWS_PER_TRANSACTION: usize = 10_000;
const LEASE: Duration = Duration::from_secs(600);
const USAGE: &str = "usage: queue_bench [--seed-only] URL [PENDING] [OPS] [HISTORY]";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (flags, positional): (Vec<String>, Vec<String>) = std::env::args()
        .skip(1)
        .partition(|arg| arg.starts_with("--"));
    let seed_only = match flags.as_slice() {
        [] => false,
        [flag] if flag == "--seed-only" => true,
        _ => return Err(format!("unknown option in {flags:?}; {USAGE}").into()),
    };
    let mut args = positional.into_iter();
    let url: StoreUrl = args.next().ok_or(USAGE)?.parse()?;
    let pending: usize = args
        .next()
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(100_000);
    let ops: usize = args.next().map(|n| n.parse()).transpose()?.unwrap_or(2000);
    let history: usize = args
        .next()
        .map(|n| n.parse())
        .transpose()?
        .unwrap_or(20_000);

    let store = Store::open(&url).await?;
    let kind = store.kind();
    let questions = serde_json::json!({
        "supported": {"type": "noul", "instructions": "Is the draft supported by the evidence?"}
    });
    for version in ["bench-v1", "bench-v2"] {
        store
            .put_definition(&format!("sha256:{version}"), version, &questions)
            .await?;
    }
    let pool = pool(&url).await?;

    let started = Instant::now();
    let items = seed(&pool, history, pending).await?;
    pool.execute("ANALYZE").await?;
    println!(
        "{kind:?}: seeded {history} decided and {pending} pending reviews, {items} queue \
         items in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if seed_only {
        store.close().await;
        pool.close().await;
        return Ok(());
    }
    explain(&pool, kind).await?;

    // Claims: 8 reviewers in turn, one claim at a time.
    let mut claim_ms = Vec::with_capacity(ops);
    let mut claimed: Vec<(QueueItemId, String)> = Vec::with_capacity(ops);
    for i in 0..ops {
        let reviewer = format!("reviewer-{}", i % 8);
        let start = Instant::now();
        let item = store
            .claim(&reviewer, None, LEASE)
            .await?
            .ok_or("the queue ran dry")?;
        claim_ms.push(start.elapsed().as_secs_f64() * 1e3);
        claimed.push((item.item, reviewer));
    }
    let decision = Decision {
        findings: BTreeMap::from([("supported".to_owned(), Some(true))]),
        note: Some("bench".to_owned()),
    };
    let mut decide_ms = Vec::with_capacity(ops);
    for (item, reviewer) in &claimed {
        let start = Instant::now();
        store.decide(*item, reviewer, &decision).await?;
        decide_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let mut page_ms = Vec::new();
    for i in 0..200 {
        let version = (i % 2 == 1).then_some("bench-v2");
        let start = Instant::now();
        let page = store.queue_page(version, 50, None).await?;
        page_ms.push(start.elapsed().as_secs_f64() * 1e3);
        assert_eq!(page.items.len(), 50);
    }
    let mut stats_ms = Vec::new();
    let mut stats = None;
    for _ in 0..50 {
        let start = Instant::now();
        stats = Some(store.queue_stats().await?);
        stats_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let stats = stats.ok_or("no stats")?;
    println!(
        "{kind:?}: after the run: pending {:?}, claimed {}, decided {}",
        stats.pending_by_version, stats.claimed, stats.decided
    );
    for (name, samples) in [
        ("claim", &mut claim_ms),
        ("decide", &mut decide_ms),
        ("first page (50)", &mut page_ms),
        ("stats", &mut stats_ms),
    ] {
        let (p50, p99, max) = percentiles(samples);
        println!(
            "{kind:?}: {name:<16} n={:<5} p50 {p50:>7.2} ms  p99 {p99:>7.2} ms  max {max:>7.2} ms",
            samples.len()
        );
    }
    store.close().await;
    pool.close().await;
    Ok(())
}

/// p50, p99 (nearest rank) and max of `samples`, sorted here; all 0.0 when empty.
fn percentiles(samples: &mut [f64]) -> (f64, f64, f64) {
    samples.sort_by(f64::total_cmp);
    (
        jevjudge_stats::nearest_rank(samples, 50),
        jevjudge_stats::nearest_rank(samples, 99),
        samples.last().copied().unwrap_or(0.0),
    )
}

async fn pool(url: &StoreUrl) -> Result<sqlx::AnyPool, sqlx::Error> {
    sqlx::any::install_default_drivers();
    let text = match url {
        StoreUrl::Sqlite(path) => format!("sqlite://{}", path.display()),
        StoreUrl::Postgres(url) => url.clone(),
    };
    sqlx::any::AnyPoolOptions::new()
        .max_connections(1)
        .connect(&text)
        .await
}

/// Seeds `history` decided reviews, then `pending` queued ones, with multi-row INSERTs;
/// returns how many items.
async fn seed(pool: &sqlx::AnyPool, history: usize, pending: usize) -> Result<usize, sqlx::Error> {
    let now = millis(SystemTime::now());
    let total = history + pending;
    let mut items = 0;
    let mut done = 0;
    while done < total {
        let mut transaction = pool.begin().await?;
        let end = (done + ROWS_PER_TRANSACTION).min(total);
        while done < end {
            let batch = ROWS_PER_STATEMENT.min(end - done);
            let reviews: Vec<(String, &str, bool, Option<String>)> = (done..done + batch)
                .map(|i| {
                    let version = if i % 5 == 4 { "bench-v2" } else { "bench-v1" };
                    let decided_by = (i < history).then(|| format!("reviewer-{}", i % 8));
                    let twice = i % 10 == 0 && decided_by.is_none();
                    (ReviewId::new().to_string(), version, twice, decided_by)
                })
                .collect();
            let mut sql = String::from(
                "INSERT INTO reviews (id, received_at, definition_version, definition_digest, \
                 state_digest, status, error, findings, elapsed_micros, request_id, backend, \
                 state, requested_model) VALUES ",
            );
            for row in 0..batch {
                let b = row * 6;
                if row > 0 {
                    sql.push(',');
                }
                sql.push_str(&format!(
                    "(${}, ${}, ${}, ${}, 'sha256:00', 'INCONCLUSIVE', 'NONE', \
                     '{{\"supported\": {{\"status\": \"INCONCLUSIVE\", \"yes_probability\": 0.5, \
                     \"expected_probability\": 0.5}}}}', 1000, ${}, 'replay', ${}, 'jev-latest')",
                    b + 1,
                    b + 2,
                    b + 3,
                    b + 4,
                    b + 5,
                    b + 6
                ));
            }
            let mut query = sqlx::query(&sql);
            for (id, version, _, _) in &reviews {
                query = query
                    .bind(id.clone())
                    .bind(now)
                    .bind(*version)
                    .bind(format!("sha256:{version}"))
                    .bind(format!("req-{id}"))
                    .bind(format!(
                        "{{\"user_question\": \"Has my refund gone through?\", \
                         \"assistant_answer\": \"Not yet ({id}).\"}}"
                    ));
            }
            query.execute(&mut *transaction).await?;

            let mut rows = Vec::new();
            for (id, version, twice, decided_by) in &reviews {
                let item = QueueItemId::new().to_string();
                let copies = if *twice { 2 } else { 1 };
                rows.push((item, id, *version, "status", 1, decided_by.clone(), copies));
                if *twice {
                    let item = QueueItemId::new().to_string();
                    rows.push((item, id, *version, "second_review", 2, None, copies));
                }
            }
            let mut sql = String::from(
                "INSERT INTO queue_items (id, review_id, definition_version, reason, slot, \
                 queued_at, claimed_by, decided_at, copies) VALUES ",
            );
            for row in 0..rows.len() {
                let b = row * 9;
                if row > 0 {
                    sql.push(',');
                }
                let marks: Vec<String> = (1..=9).map(|k| format!("${}", b + k)).collect();
                sql.push_str(&format!("({})", marks.join(", ")));
            }
            let mut query = sqlx::query(&sql);
            for (id, review, version, reason, slot, decided_by, copies) in &rows {
                query = query
                    .bind(id.clone())
                    .bind((*review).clone())
                    .bind(*version)
                    .bind(*reason)
                    .bind(i64::from(*slot))
                    .bind(now - 60_000)
                    .bind(decided_by.clone())
                    .bind(decided_by.as_ref().map(|_| now - 1))
                    .bind(i64::from(*copies));
            }
            query.execute(&mut *transaction).await?;
            let decided: Vec<_> = rows.iter().filter(|row| row.5.is_some()).collect();
            if !decided.is_empty() {
                let mut sql = String::from(
                    "INSERT INTO queue_decisions (item_id, review_id, slot, reviewer, findings, \
                     decided_at) VALUES ",
                );
                for row in 0..decided.len() {
                    let b = row * 4;
                    if row > 0 {
                        sql.push(',');
                    }
                    sql.push_str(&format!(
                        "(${}, ${}, 1, ${}, '{{\"supported\": true}}', ${})",
                        b + 1,
                        b + 2,
                        b + 3,
                        b + 4
                    ));
                }
                let mut query = sqlx::query(&sql);
                for (id, review, _, _, _, decided_by, _) in decided {
                    query = query
                        .bind(id.clone())
                        .bind((*review).clone())
                        .bind(decided_by.clone())
                        .bind(now - 1);
                }
                query.execute(&mut *transaction).await?;
            }
            items += rows.len();
            done += batch;
        }
        transaction.commit().await?;
    }
    Ok(items)
}

fn millis(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Prints the plan of each hot statement, with the values a real call binds.
async fn explain(pool: &sqlx::AnyPool, kind: StoreKind) -> Result<(), sqlx::Error> {
    let now = millis(SystemTime::now());
    let prefix = match kind {
        StoreKind::Sqlite => "EXPLAIN QUERY PLAN ",
        StoreKind::Postgres => "EXPLAIN ",
    };
    let statements = [
        ("claim (any version)", statements::claim(kind, false)),
        ("claim (one version)", statements::claim(kind, true)),
        ("pending counts", statements::pending_counts().to_owned()),
        (
            "first page of a version",
            statements::first_page_of_version(),
        ),
        ("next page", statements::next_page()),
    ];
    for (name, sql) in statements {
        let sql = format!("{prefix}{sql}");
        let query = sqlx::query(&sql);
        let query = match name {
            "claim (any version)" => query.bind("reviewer-x").bind(now + 600_000).bind(now),
            "claim (one version)" => query
                .bind("reviewer-x")
                .bind(now + 600_000)
                .bind(now)
                .bind("bench-v2"),
            "pending counts" => query.bind(now),
            "first page of a version" => query.bind("bench-v2").bind(51_i64),
            _ => query
                .bind(now - 30_000)
                .bind(QueueItemId::new().to_string())
                .bind(51_i64),
        };
        let rows = query.fetch_all(pool).await?;
        println!("{kind:?}: plan of {name}:");
        for row in rows {
            let line: String = match kind {
                StoreKind::Sqlite => row.try_get("detail")?,
                StoreKind::Postgres => row.try_get(0)?,
            };
            println!("    {line}");
        }
    }
    Ok(())
}
