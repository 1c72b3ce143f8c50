//! PostgreSQL stopped while a batch of concurrent reviews waits for its group commit: exactly
//! the reviews whose rows were not written get 503 `store_unavailable`, every 200 has its row.
//!
//! Alone in its binary: it stops the shared test server, which no other test may be using.
//! Needs `JEVJUDGE_TEST_PG_URL`, `JEVJUDGE_TEST_PG_STOP` and `JEVJUDGE_TEST_PG_START`
//! (`bash scripts/pg.sh -- cargo test -p jevjudge-serve --test store_down_batch`); without
//! them it says so on standard error and checks nothing.

#[allow(dead_code)]
mod util;

use std::time::Duration;

use jevjudge_judge::SystemOneBackend;
use jevjudge_serve::{DecisionLogConfig, Metrics};
use jevjudge_store::{Filter, Store, StoreUrl};
use jevjudge_test_support::databases::StoppableServer;
use serde_json::json;
use tokio::task::JoinSet;

use util::{Built, Service, caller, client, definitions, fake_with_latency, read, refund_state};

/// Concurrent reviews per wave.
const WAVE: usize = 24;

/// Sends `WAVE` reviews at once, references `{prefix}-{i}`; returns (reference, status, error
/// code) for each.
fn wave(service: &Service, prefix: &str) -> JoinSet<(String, u16, String)> {
    let mut tasks = JoinSet::new();
    for i in 0..WAVE {
        let url = format!("{}/v1/reviews/refund-answer-v1", service.url);
        let reference = format!("{prefix}-{i}");
        tasks.spawn(async move {
            let body = json!({"state": refund_state(), "reference": reference});
            let reply = read(
                caller()
                    .post(url)
                    .header("content-type", "application/json")
                    .body(body.to_string())
                    .send()
                    .await
                    .expect("a response"),
            )
            .await;
            let code = if reply.status == 200 {
                String::new()
            } else {
                reply.error_code()
            };
            (reference, reply.status, code)
        });
    }
    tasks
}

async fn rows_with_reference(store: &Store, reference: &str) -> u64 {
    let filter = Filter {
        reference: Some(reference.to_owned()),
        ..Filter::default()
    };
    store.count(&filter).await.expect("counted")
}

#[tokio::test]
async fn a_batch_cut_off_by_a_stopped_postgres_is_503_for_exactly_its_unwritten_rows() {
    let Some((server, url)) = StoppableServer::with_database("store_down_batch").await else {
        return;
    };
    let url = StoreUrl::Postgres(url);
    // Long enough a review that the server is down before any of the wave's rows is written.
    let fake = fake_with_latency(Duration::from_secs(2)).await;
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(&fake, &metrics, "test-key", 0));
    let store = Store::open(&url).await.unwrap();
    let built = Built::builder(backend, definitions())
        .metrics(metrics)
        .decision_log(DecisionLogConfig::store(store.clone()))
        .build()
        .await
        .unwrap();
    let service = Service::start_built(built).await;

    let cut_off = wave(&service, "cut");
    // Every review of the wave is with the backend; then the database goes away.
    let waiting = tokio::time::Instant::now();
    while fake.request_count() < WAVE {
        assert!(
            waiting.elapsed() < Duration::from_secs(10),
            "the wave reaches the backend"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.stop().await;
    let cut_off = cut_off.join_all().await;
    server.start().await;
    service
        .wait_ready("ready again once PostgreSQL is back")
        .await;

    let mut refused = 0;
    for (reference, status, code) in &cut_off {
        let rows = rows_with_reference(&store, reference).await;
        match status {
            200 => assert_eq!(rows, 1, "{reference}: a 200 has its row"),
            503 => {
                assert_eq!(code, "store_unavailable", "{reference}");
                assert_eq!(rows, 0, "{reference}: a 503 has no row");
                refused += 1;
            }
            other => panic!("{reference}: status {other}"),
        }
    }
    assert!(refused > 0, "the stopped database refused the wave's rows");

    let after = wave(&service, "after").join_all().await;
    for (reference, status, _) in &after {
        assert_eq!(*status, 200, "{reference}");
        assert_eq!(
            rows_with_reference(&store, reference).await,
            1,
            "{reference}"
        );
    }
    service.stop().await.unwrap();
    store.close().await;
}
