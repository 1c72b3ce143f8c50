//! The bound on concurrent backend requests and the bounded queue: a full queue is a fast 503
//! with `Retry-After`, a queued review waits at most its budget, and the backend never sees
//! more than `max_concurrent` requests at once.

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use jevjudge_judge::backend_fn;
use jevjudge_serve::{Config, Metrics};
use jevjudge_wire::Response;
use serde_json::json;
use tokio::time::Instant;

use crate::util::{Service, eventually, fake_with_latency, has_sample, refund_state};

/// Small bounds, and a budget well above the slow fakes' latency.
fn small(max_concurrent: usize, queue: usize) -> Config {
    Config {
        max_concurrent,
        queue,
        default_budget: Duration::from_secs(5),
        ..Config::default()
    }
}

#[tokio::test]
async fn a_full_queue_is_a_fast_503_with_retry_after() {
    let fake = fake_with_latency(Duration::from_millis(1500)).await;
    let service = Arc::new(Service::in_front_of(&fake, small(1, 1)).await);
    let body = json!({"state": refund_state()});

    let running = tokio::spawn({
        let (service, body) = (service.clone(), body.clone());
        async move { service.review("refund-answer-v1", &body).await }
    });
    eventually(|| has_sample(&service.metrics_text(), "jevjudge_reviews_in_flight 1")).await;
    let queued = tokio::spawn({
        let (service, body) = (service.clone(), body.clone());
        async move { service.review("refund-answer-v1", &body).await }
    });
    eventually(|| has_sample(&service.metrics_text(), "jevjudge_reviews_waiting 1")).await;

    let started = Instant::now();
    for _ in 0..5 {
        let reply = service.review("refund-answer-v1", &body).await;
        assert_eq!(reply.status, 503);
        assert_eq!(reply.error_code(), "overloaded");
        assert_eq!(reply.header("retry-after"), Some("1"));
    }
    // Far faster than the review they queue behind.
    assert!(
        started.elapsed() < Duration::from_millis(750),
        "refusals are fast: {:?}",
        started.elapsed()
    );

    assert_eq!(running.await.unwrap().status, 200);
    assert_eq!(queued.await.unwrap().status, 200);
    assert_eq!(fake.request_count(), 2);
    let text = service.metrics_text();
    assert!(has_sample(
        &text,
        r#"jevjudge_queue_rejections_total{reason="full"} 5"#
    ));
    assert!(has_sample(&text, "jevjudge_reviews_in_flight 0"));
    assert!(has_sample(&text, "jevjudge_reviews_waiting 0"));
}

#[tokio::test]
async fn a_queued_review_waits_at_most_its_budget() {
    let fake = fake_with_latency(Duration::from_millis(1500)).await;
    let service = Arc::new(Service::in_front_of(&fake, small(1, 4)).await);
    let running = tokio::spawn({
        let service = service.clone();
        async move { service.review_refund().await }
    });
    eventually(|| has_sample(&service.metrics_text(), "jevjudge_reviews_in_flight 1")).await;

    let started = Instant::now();
    let reply = service.review_refund_within(100).await;
    let waited = started.elapsed();
    assert_eq!(reply.status, 503);
    assert_eq!(reply.error_code(), "queue_timeout");
    assert_eq!(reply.header("retry-after"), Some("1"));
    assert!(
        waited >= Duration::from_millis(100) && waited < Duration::from_millis(1000),
        "{waited:?}"
    );
    assert_eq!(running.await.unwrap().status, 200);
    assert!(has_sample(
        &service.metrics_text(),
        r#"jevjudge_queue_rejections_total{reason="timeout"} 1"#
    ));
}

#[tokio::test]
async fn the_backend_never_sees_more_than_max_concurrent_requests() {
    let current = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let backend = backend_fn({
        let (current, peak) = (current.clone(), peak.clone());
        move |_request| {
            let (current, peak) = (current.clone(), peak.clone());
            async move {
                let now = current.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(30)).await;
                current.fetch_sub(1, Ordering::SeqCst);
                Ok(Response::from_slice(
                    br#"{"model":"m","answers":{"supported":{"type":"noul","noul":0.9}}}"#,
                )
                .expect("a response"))
            }
        }
    });
    let service = Arc::new(Service::start(backend, small(3, 100), Metrics::new()).await);
    let calls: Vec<_> = (0..24)
        .map(|_| {
            let service = service.clone();
            tokio::spawn(async move { service.review_refund().await.status })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap(), 200);
    }
    assert_eq!(peak.load(Ordering::SeqCst), 3);
    assert!(has_sample(
        &service.metrics_text(),
        r#"jevjudge_reviews_total{definition="refund-answer-v1",status="PASS",error="NONE"} 24"#
    ));
}

#[tokio::test]
async fn a_zero_queue_refuses_whenever_every_slot_is_busy() {
    let fake = fake_with_latency(Duration::from_millis(500)).await;
    let service = Arc::new(Service::in_front_of(&fake, small(2, 0)).await);
    let body = json!({"state": refund_state()});
    let running: Vec<_> = (0..2)
        .map(|_| {
            let (service, body) = (service.clone(), body.clone());
            tokio::spawn(async move { service.review("refund-answer-v1", &body).await.status })
        })
        .collect();
    eventually(|| has_sample(&service.metrics_text(), "jevjudge_reviews_in_flight 2")).await;
    assert_eq!(service.review("refund-answer-v1", &body).await.status, 503);
    for call in running {
        assert_eq!(call.await.unwrap(), 200);
    }
}
