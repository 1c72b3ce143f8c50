//! Issue 11 in the service: one shared limiter; after a refused key every review answers the
//! ERROR at once without sending, the service flags itself not ready, and /metrics shows the
//! limit, the 429s and readiness.

use jevjudge_client::{
    ApiKey, Client,
    limit::{LimitConfig, Limiter},
};
use jevjudge_judge::SystemOneBackend;
use jevjudge_serve::Metrics;

use crate::util::{Built, Service, definitions, fake, has_sample};

#[tokio::test]
async fn a_refused_key_answers_every_later_review_without_sending_and_flags_not_ready() {
    let fake = fake(jevjudge_fake::Config {
        key: Some("the-right-key".into()),
        ..jevjudge_fake::Config::default()
    })
    .await;
    let metrics = Metrics::new();
    let limiter = Limiter::new(LimitConfig::new(8));
    let client = Client::builder()
        .base_url(fake.url())
        .api_key(ApiKey::new("a-wrong-key").unwrap())
        .retries(0)
        .on_attempt(metrics.attempt_hook())
        .limiter(limiter.clone())
        .build()
        .unwrap();
    let built = Built::builder(SystemOneBackend::new(client), definitions())
        .metrics(metrics)
        .limiter(limiter)
        .build()
        .await
        .unwrap();
    let state = built.state().clone();
    let service = Service::start_built(built).await;
    assert!(state.ready());
    assert_eq!(service.get("/readyz").await.status, 200);
    assert!(has_sample(&service.metrics_text(), "jevjudge_ready 1"));

    for _ in 0..3 {
        let reply = service.review_refund().await;
        let verdict = reply.json();
        assert_eq!(verdict["status"], "ERROR", "{verdict}");
        assert_eq!(verdict["error"], "BACKEND");
        assert_eq!(verdict["detail"], "http_status_401");
    }
    assert_eq!(fake.request_count(), 1, "only the first review was sent");
    assert!(!state.ready());
    let readyz = service.get("/readyz").await;
    assert_eq!(readyz.status, 503);
    assert_eq!(readyz.json()["backend"], "key_refused");
    assert_eq!(service.get("/healthz").await.status, 200, "liveness stays");
    let text = service.metrics_text();
    assert!(has_sample(&text, "jevjudge_ready 0"), "{text}");
    // The adaptive limit starts at the ceiling; a 401 neither cuts nor grows it.
    assert!(
        has_sample(&text, "jevjudge_backend_concurrency_limit 8"),
        "{text}"
    );
    assert!(
        has_sample(&text, "jevjudge_backend_concurrency_ceiling 8"),
        "{text}"
    );
    assert!(
        has_sample(&text, "jevjudge_backend_overloaded_total 0"),
        "{text}"
    );
    service.stop().await.unwrap();
}
