//! A service with a review queue, watched: sampled PASS reviews are queued with their
//! inclusion probability, and `GET /metrics` shows the store's health and the queue's gauges
//! read at scrape time (and the store as not ready once it stops answering); on SQLite and a
//! real PostgreSQL (`JEVJUDGE_TEST_PG_URL`).

use jevjudge_judge::{Status, SystemOneBackend};
use jevjudge_serve::{DecisionLogConfig, Metrics, QueuePolicy, ReviewerTokens};
use jevjudge_store::{Inclusion, Store, StoreUrl};
use jevjudge_test_support::on_both_stores;

use crate::{
    store::{pg_url, sqlite_url},
    util::{Built, Service, client, definitions, fake_answering, has_sample},
};

on_both_stores!(sampled_passes_are_queued_with_their_rate_and_the_queue_is_on_metrics,);

async fn sampled_passes_are_queued_with_their_rate_and_the_queue_is_on_metrics(url: StoreUrl) {
    // Every review is a PASS; 30 % of them are sampled into the queue.
    let fake = fake_answering(&[("supported", 0.95), ("no_promises", 0.05)]).await;
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(&fake, &metrics, "test-key", 0));
    let store = Store::open(&url).await.expect("the store opens");
    let reviewers = ReviewerTokens::parse("ana:tok-ana-0123456789").unwrap();
    let mut policy = QueuePolicy::new([Status::Inconclusive], reviewers);
    policy.sample_pass = 0.3;
    let built = Built::builder(backend, definitions())
        .metrics(metrics)
        .decision_log(
            DecisionLogConfig::store(store.clone())
                .keep_state(true)
                .requested_model("jev-latest"),
        )
        .review_queue(policy)
        .build()
        .await
        .expect("the definitions are kept");
    let service = Service::start_built(built).await;
    for _ in 0..30 {
        assert_eq!(service.review_refund().await.status, 200);
    }
    let mut inclusions = Vec::new();
    store
        .export_labelled(|labelled| {
            inclusions.push(labelled.inclusion);
            Ok(())
        })
        .await
        .unwrap();
    // 30 draws at 30 %: none at all has a chance of 0.7^30 (2e-5).
    assert!(!inclusions.is_empty());
    assert!(
        inclusions
            .iter()
            .all(|inclusion| *inclusion == Some(Inclusion::new(0.3).unwrap())),
        "{inclusions:?}"
    );

    let reply = service.get("/metrics").await;
    assert_eq!(reply.status, 200);
    let text = reply.text();
    for sample in [
        "jevjudge_store_ready 1".to_owned(),
        format!(
            "jevjudge_queue_pending{{version=\"refund-answer-v1\"}} {}",
            inclusions.len()
        ),
        "jevjudge_queue_adjudications_pending 0".to_owned(),
        "jevjudge_queue_decisions_total{outcome=\"answered\"} 0".to_owned(),
        "jevjudge_queue_decisions_total{outcome=\"cant_tell\"} 0".to_owned(),
        "jevjudge_queue_leases_expired_total 0".to_owned(),
    ] {
        assert!(has_sample(&text, &sample), "{sample}\n{text}");
    }
    let oldest = text
        .lines()
        .find_map(|line| {
            line.strip_prefix(
                "jevjudge_queue_oldest_pending_seconds{version=\"refund-answer-v1\"} ",
            )
        })
        .expect("the oldest pending item's age");
    let age: f64 = oldest.parse().unwrap();
    assert!(age >= 0.0, "{age}");

    // The store stops answering (its pool closed under the service): the scrape still
    // answers, with the store not ready and no stale queue figures.
    store.close().await;
    let reply = service.get("/metrics").await;
    assert_eq!(reply.status, 200);
    let text = reply.text();
    assert!(has_sample(&text, "jevjudge_store_ready 0"), "{text}");
    assert!(!text.contains("jevjudge_queue_pending"), "{text}");
}
