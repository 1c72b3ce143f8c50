//! The review queue's routes when the store cannot answer: 503 `store_unavailable` with
//! `Retry-After` on claim, decision, release and stats, nothing leased or decided meanwhile,
//! and the same item claimable and decidable once the store is back.
//!
//! - PostgreSQL stopped under the running service, then started again. Alone in its binary
//!   with the SQLite case: it stops the shared test server, which no other test may be using.
//!   Needs `JEVJUDGE_TEST_PG_URL`, `JEVJUDGE_TEST_PG_STOP` and `JEVJUDGE_TEST_PG_START`
//!   (`bash scripts/pg.sh -- cargo test -p jevjudge-serve --test store_down_queue`); without
//!   them it says so on standard error and checks nothing.
//! - SQLite whose write lock another connection holds (`BEGIN IMMEDIATE`, as a backup or a
//!   stuck writer would): the writes wait out `busy_timeout` (5 s) and answer 503; reads
//!   (stats) still answer in WAL mode; after the lock is let go everything works.

#[allow(dead_code)]
mod util;

use jevjudge_judge::{Status, SystemOneBackend};
use jevjudge_serve::{DecisionLogConfig, Metrics, QueuePolicy, ReviewerTokens};
use jevjudge_store::{Store, StoreUrl};
use jevjudge_test_support::databases::StoppableServer;
use reqwest::Method;
use serde_json::{Value, json};
use sqlx::{Connection as _, Executor as _};

use util::{
    Built, Reply, Service, caller, client, definitions, fake_answering, read, refund_state,
};

const ANA: &str = "tok-ana-down-0123456789";

/// A service queueing INCONCLUSIVE reviews on `url`, with one queued review claimed by ana
/// (its item id) and one more pending.
async fn service_with_a_claim(
    url: &StoreUrl,
) -> (Service, Store, jevjudge_fake::FakeServer, String) {
    let fake = fake_answering(&[("supported", 0.5), ("no_promises", 0.05)]).await;
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(&fake, &metrics, "test-key", 0));
    let store = Store::open(url).await.unwrap();
    let reviewers = ReviewerTokens::parse(&format!("ana:{ANA}")).unwrap();
    let built = Built::builder(backend, definitions())
        .metrics(metrics)
        .decision_log(
            DecisionLogConfig::store(store.clone())
                .keep_state(true)
                .requested_model("jev-latest"),
        )
        .review_queue(QueuePolicy::new([Status::Inconclusive], reviewers))
        .build()
        .await
        .unwrap();
    let service = Service::start_built(built).await;
    for reference in ["down-1", "down-2"] {
        let reply = service
            .review(
                "refund-answer-v1",
                &json!({"state": refund_state(), "reference": reference}),
            )
            .await;
        assert_eq!(reply.json()["status"], "INCONCLUSIVE", "{}", reply.text());
    }
    let claimed = queue(&service, Method::POST, "/v1/queue/claim", None).await;
    assert_eq!(claimed.status, 200, "{}", claimed.text());
    let item = claimed.json()["item"].as_str().unwrap().to_owned();
    (service, store, fake, item)
}

async fn queue(service: &Service, method: Method, path: &str, body: Option<Value>) -> Reply {
    let mut request = caller()
        .request(method, format!("{}{path}", service.url))
        .header("authorization", format!("Bearer {ANA}"));
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    read(request.send().await.expect("a response")).await
}

fn decision() -> Value {
    json!({"findings": {"supported": true}})
}

fn assert_unavailable(reply: &Reply, route: &str) {
    assert_eq!(reply.status, 503, "{route}: {}", reply.text());
    assert_eq!(reply.error_code(), "store_unavailable", "{route}");
    assert_eq!(reply.headers["retry-after"], "1", "{route}");
}

/// Claim, decision and release at once (each may wait out a lock): each is 503
/// `store_unavailable` with `Retry-After`.
async fn writes_are_unavailable(service: &Service, item: &str) {
    let decision_path = format!("/v1/queue/{item}/decision");
    let release_path = format!("/v1/queue/{item}/release");
    // `new`: a claim that leases another item (a plain one hands back the held item: a read).
    let (claim, decided, released) = tokio::join!(
        queue(
            service,
            Method::POST,
            "/v1/queue/claim",
            Some(json!({"new": true}))
        ),
        queue(service, Method::POST, &decision_path, Some(decision())),
        queue(service, Method::POST, &release_path, None),
    );
    for (reply, route) in [claim, decided, released]
        .iter()
        .zip(["claim", "decision", "release"])
    {
        assert_unavailable(reply, route);
    }
}

/// After the store is back: the held item is still ana's and is decided, the other one is
/// claimed, and the counts say so.
async fn recovered(service: &Service, item: &str) {
    let decided = queue(
        service,
        Method::POST,
        &format!("/v1/queue/{item}/decision"),
        Some(decision()),
    )
    .await;
    assert_eq!(decided.status, 200, "{}", decided.text());
    let next = queue(service, Method::POST, "/v1/queue/claim", None).await;
    assert_eq!(next.status, 200, "{}", next.text());
    assert_ne!(next.json()["item"].as_str(), Some(item));
    let stats = queue(service, Method::GET, "/v1/queue/stats", None).await;
    assert_eq!(stats.status, 200, "{}", stats.text());
    assert_eq!(stats.json()["decided"], 1);
    assert_eq!(stats.json()["claimed"], 1);
}

#[tokio::test]
async fn a_stopped_postgres_is_503_on_every_queue_route_then_recovers() {
    let Some((server, url)) = StoppableServer::with_database("store_down_queue").await else {
        return;
    };
    let url = StoreUrl::Postgres(url);
    let (service, store, _fake, item) = service_with_a_claim(&url).await;

    server.stop().await;
    writes_are_unavailable(&service, &item).await;
    let stats = queue(&service, Method::GET, "/v1/queue/stats", None).await;
    assert_unavailable(&stats, "stats");

    server.start().await;
    service
        .wait_ready("ready again once PostgreSQL is back")
        .await;
    recovered(&service, &item).await;
    service.stop().await.unwrap();
    store.close().await;
}

#[tokio::test]
async fn a_locked_sqlite_store_is_503_on_the_queue_writes_then_recovers() {
    let temp = tempfile::TempDir::new().expect("a temp dir");
    let path = temp.path().join("queue_down.db");
    let url = StoreUrl::Sqlite(path.clone());
    let (service, store, _fake, item) = service_with_a_claim(&url).await;

    // Another connection takes the database's write lock and keeps it.
    let mut holder =
        sqlx::sqlite::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
    holder.execute("BEGIN IMMEDIATE").await.unwrap();
    writes_are_unavailable(&service, &item).await;
    // Reads go on in WAL mode: nothing was leased or decided by the refused writes.
    let stats = queue(&service, Method::GET, "/v1/queue/stats", None).await;
    assert_eq!(stats.status, 200, "{}", stats.text());
    assert_eq!(stats.json()["claimed"], 1);
    assert_eq!(stats.json()["decided"], 0);

    holder.execute("ROLLBACK").await.unwrap();
    holder.close().await.unwrap();
    recovered(&service, &item).await;
    service.stop().await.unwrap();
    store.close().await;
}
