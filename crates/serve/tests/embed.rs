//! The service composed and run in-process through its public builder, as an embedding
//! program would: build → listen on 127.0.0.1:0 → review over HTTP → shut down → stopped; and
//! the builder's refusals of combinations that cannot work.

use std::time::Duration;

use jevjudge_judge::{Status, SystemOneBackend};
use jevjudge_serve::{
    BuildError, Config, ConfigError, DecisionLogConfig, Metrics, QueuePolicy, QueuePolicyError,
    ReviewerTokens, RunOptions, Service, StopCause,
};
use jevjudge_store::StoreUrl;
use serde_json::json;
use tokio::net::TcpListener;

use crate::{
    store::sqlite_url,
    util::{caller, client, definitions, fake_answering, read, refund_state},
};

#[tokio::test]
async fn an_embedded_service_answers_a_review_and_stops_on_its_shutdown_future() {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(&fake, &metrics, "test-key", 0));
    let service = Service::builder(backend, definitions())
        .metrics(metrics)
        .decision_log(DecisionLogConfig::url(sqlite_url()))
        .build()
        .await
        .expect("the service builds");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
    let listening = service
        .listen(listener, RunOptions::new())
        .expect("it listens");
    let url = format!("http://{}", listening.local_addr());
    let (stop, stopping) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(listening.run(async move {
        let _ = stopping.await;
    }));

    let reply = read(
        caller()
            .post(format!("{url}/v1/reviews/refund-answer-v1"))
            .header("content-type", "application/json")
            .body(json!({"state": refund_state(), "reference": "embedded"}).to_string())
            .send()
            .await
            .expect("a response"),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["status"], "PASS");
    let id = reply.json()["review_id"]
        .as_str()
        .expect("the decision log gave the review an id")
        .to_owned();
    let kept = read(
        caller()
            .get(format!("{url}/v1/reviews/{id}"))
            .send()
            .await
            .expect("a response"),
    )
    .await;
    assert_eq!(kept.status, 200, "{}", kept.text());
    assert_eq!(kept.json()["reference"], "embedded");

    stop.send(()).expect("the service still runs");
    let stopped = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the service stops within 10 s")
        .expect("the run task does not panic")
        .expect("the run ends cleanly");
    assert_eq!(stopped.cause, StopCause::Shutdown);
    assert!(stopped.drained);
    assert!(
        caller().get(format!("{url}/healthz")).send().await.is_err(),
        "nothing listens after the stop"
    );
}

#[tokio::test]
async fn run_binds_serves_and_reports_a_drain_cut_short_by_its_limit() {
    // A backend slower than the drain limit: the review in flight at the shutdown is cut.
    let backend = jevjudge_judge::backend_fn(|_request| async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        Ok(pass())
    });
    let service = Service::builder(backend, definitions())
        .config(Config {
            max_budget: Duration::from_secs(60),
            default_budget: Duration::from_secs(60),
            ..Config::default()
        })
        .build()
        .await
        .expect("the service builds");
    let listening = service
        .bind(
            "127.0.0.1:0".parse().expect("an address"),
            RunOptions::new().drain_limit(Duration::from_millis(200)),
        )
        .await
        .expect("it binds");
    let url = format!("http://{}", listening.local_addr());
    let (stop, stopping) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(listening.run(async move {
        let _ = stopping.await;
    }));
    let in_flight = tokio::spawn(
        caller()
            .post(format!("{url}/v1/reviews/refund-answer-v1"))
            .header("content-type", "application/json")
            .body(json!({"state": refund_state()}).to_string())
            .send(),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.send(()).expect("the service still runs");
    let stopped = tokio::time::timeout(Duration::from_secs(10), running)
        .await
        .expect("the drain limit holds")
        .expect("no panic")
        .expect("a clean end");
    assert_eq!(stopped.cause, StopCause::Shutdown);
    assert!(!stopped.drained, "the slow review was still in flight");
    assert!(
        in_flight.await.expect("no panic").is_err(),
        "its connection was closed"
    );
}

/// A System One answer that passes refund-answer-v1.
fn pass() -> jevjudge_wire::Response {
    jevjudge_wire::Response::from_slice(
        br#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":0.95}}}"#,
    )
    .expect("a valid response")
}

fn reviewers() -> ReviewerTokens {
    ReviewerTokens::parse("ana:tok-ana-0123456789").expect("reviewers")
}

async fn refusal(builder: jevjudge_serve::ServiceBuilder) -> BuildError {
    builder.build().await.expect_err("the builder refuses")
}

fn builder() -> jevjudge_serve::ServiceBuilder {
    let backend = jevjudge_judge::backend_fn(|_request| async { Ok(pass()) });
    Service::builder(backend, definitions())
}

#[tokio::test]
async fn build_refuses_a_queue_without_a_decision_log() {
    let error =
        refusal(builder().review_queue(QueuePolicy::new([Status::Inconclusive], reviewers())))
            .await;
    assert!(matches!(error, BuildError::QueueWithoutStore), "{error:?}");
}

#[tokio::test]
async fn build_refuses_a_queue_on_a_log_that_keeps_no_state() {
    let error = refusal(
        builder()
            .decision_log(DecisionLogConfig::url(sqlite_url()))
            .review_queue(QueuePolicy::new([Status::Inconclusive], reviewers())),
    )
    .await;
    assert!(matches!(error, BuildError::QueueWithoutState), "{error:?}");
}

#[tokio::test]
async fn build_refuses_a_queue_that_queues_nothing_or_that_nobody_can_claim_from() {
    let stateful = || DecisionLogConfig::url(sqlite_url()).keep_state(true);
    let error = refusal(
        builder()
            .decision_log(stateful())
            .review_queue(QueuePolicy::new([], reviewers())),
    )
    .await;
    assert!(
        matches!(error, BuildError::QueuePolicy(QueuePolicyError::Nothing)),
        "{error:?}"
    );
    let error = refusal(
        builder()
            .decision_log(stateful())
            .review_queue(QueuePolicy::new([Status::Fail], ReviewerTokens::default())),
    )
    .await;
    assert!(matches!(error, BuildError::NoReviewers), "{error:?}");
}

#[tokio::test]
async fn build_refuses_a_retention_of_state_that_is_not_kept_or_is_zero() {
    let error =
        refusal(builder().decision_log(
            DecisionLogConfig::url(sqlite_url()).retain_state(Duration::from_secs(60)),
        ))
        .await;
    assert!(
        matches!(error, BuildError::RetentionWithoutState),
        "{error:?}"
    );
    let error = refusal(
        builder().decision_log(
            DecisionLogConfig::url(sqlite_url())
                .keep_state(true)
                .retain_state(Duration::ZERO),
        ),
    )
    .await;
    assert!(matches!(error, BuildError::ZeroRetention), "{error:?}");
}

#[tokio::test]
async fn build_refuses_bad_settings_and_a_store_that_cannot_open() {
    let error = refusal(builder().config(Config {
        default_budget: Duration::from_secs(20),
        max_budget: Duration::from_secs(10),
        ..Config::default()
    }))
    .await;
    assert!(
        matches!(error, BuildError::Config(ConfigError::DefaultAboveMax)),
        "{error:?}"
    );
    let missing = std::env::temp_dir().join("jevjudge-no-such-dir/sub/reviews.db");
    let error =
        refusal(builder().decision_log(DecisionLogConfig::url(StoreUrl::Sqlite(missing)))).await;
    assert!(matches!(error, BuildError::Store(_)), "{error:?}");
}

#[test]
fn build_errors_name_no_command_line_flag() {
    for error in [
        BuildError::QueueWithoutStore,
        BuildError::QueueWithoutState,
        BuildError::QueuePolicy(QueuePolicyError::Nothing),
        BuildError::QueuePolicy(QueuePolicyError::Status),
        BuildError::NoReviewers,
        BuildError::RetentionWithoutState,
        BuildError::ZeroRetention,
    ] {
        let message = error.to_string();
        assert!(!message.contains("--"), "{message}");
    }
}
