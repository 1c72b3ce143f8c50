//! PostgreSQL stopped under a running service, then started again: 503 `store_unavailable`
//! and not ready while it is down, no verdict without its row, full recovery after.
//!
//! Alone in its binary: it stops the shared test server, which no other test may be using.
//! Needs `JEVJUDGE_TEST_PG_URL`, `JEVJUDGE_TEST_PG_STOP` and `JEVJUDGE_TEST_PG_START`
//! (`bash scripts/pg.sh -- cargo test -p jevjudge-serve --test store_down`); without them it
//! says so on standard error and checks nothing.

#[allow(dead_code)]
mod util;

use jevjudge_judge::SystemOneBackend;
use jevjudge_serve::{DecisionLogConfig, Metrics};
use jevjudge_store::{Filter, Store, StoreUrl};
use jevjudge_test_support::databases::StoppableServer;
use serde_json::json;

use util::{Built, Service, client, definitions, fake_answering, refund_state};

#[tokio::test]
async fn a_stopped_postgres_is_503_and_not_ready_then_recovers() {
    let Some((server, url)) = StoppableServer::with_database("store_down").await else {
        return;
    };
    let url = StoreUrl::Postgres(url);

    let fake = fake_answering(&[("supported", 0.95)]).await;
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(&fake, &metrics, "test-key", 0));
    let store = Store::open(&url).await.unwrap();
    let built = Built::builder(backend, definitions())
        .metrics(metrics)
        .decision_log(DecisionLogConfig::store(store.clone()).requested_model("jev-latest"))
        .build()
        .await
        .unwrap();
    let service = Service::start_built(built).await;
    let body = json!({"state": refund_state(), "reference": "down-test"});

    let mut answered = Vec::new();
    let reply = service.review("refund-answer-v1", &body).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    answered.push(reply.json()["review_id"].as_str().unwrap().to_owned());
    let requests_before = fake.request_count();

    server.stop().await;
    for _ in 0..3 {
        let reply = service.review("refund-answer-v1", &body).await;
        assert_eq!(reply.status, 503, "{}", reply.text());
        assert_eq!(reply.error_code(), "store_unavailable");
        assert_eq!(reply.headers["retry-after"], "1");
        assert!(
            reply.json().get("status").is_none(),
            "no verdict without its row"
        );
    }
    assert!(
        fake.request_count() <= requests_before + 1,
        "while the store is known down no backend call is spent"
    );
    let reply = service.get("/readyz").await;
    assert_eq!(reply.status, 503);
    assert_eq!(reply.json()["status"], "not_ready");
    assert_eq!(service.get("/healthz").await.status, 200, "still alive");
    let reply = service.get("/v1/reviews").await;
    assert_eq!(reply.status, 503);

    server.start().await;
    service
        .wait_ready("ready again once PostgreSQL is back")
        .await;
    for _ in 0..3 {
        let reply = service.review("refund-answer-v1", &body).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        answered.push(reply.json()["review_id"].as_str().unwrap().to_owned());
    }
    // Exactly the answered reviews are in the store.
    let filter = Filter {
        reference: Some("down-test".into()),
        ..Filter::default()
    };
    assert_eq!(store.count(&filter).await.unwrap(), answered.len() as u64);
    for id in &answered {
        assert!(
            store.get(id.parse().unwrap()).await.unwrap().is_some(),
            "{id}"
        );
    }
    service.stop().await.unwrap();
    store.close().await;
}
