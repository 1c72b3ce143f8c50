//! The review queue over real HTTP: reviews in the queued band are written with
//! their queue items, reviewers claim (blind), decide and release with their own tokens, the
//! errors are JSON with reason codes; on SQLite and a real PostgreSQL (`JEVJUDGE_TEST_PG_URL`).
//! Also: a reload during in-flight reviews drops none of them.

use std::time::Duration;

use jevjudge_judge::{Status, SystemOneBackend};
use jevjudge_serve::{
    Config, DecisionLogConfig, Metrics, QueuePolicy, ReloadOutcome, ReviewerTokens,
    reload_definitions,
};
use jevjudge_store::{Store, StoreUrl};
use jevjudge_test_support::databases::nothing_pending;
use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    store::{pg_url, sqlite_url},
    util::{
        Built, Reply, Service, caller, client, data, definitions, fake_answering,
        fake_with_latency, read, refund_state,
    },
};

pub(crate) const ANA: &str = "tok-ana-0123456789";
pub(crate) const BOB: &str = "tok-bob-9876543210";

/// A service in front of a fake answering `supported` with `p`, queueing INCONCLUSIVE
/// reviews (and a second copy of each with `second_review` 1.0).
pub(crate) async fn queued_service(
    url: &StoreUrl,
    p: f64,
    second_review: f64,
) -> (Service, Store, jevjudge_fake::FakeServer) {
    queued_service_leasing(url, p, second_review, Duration::from_secs(600)).await
}

/// [`queued_service`] with this lease.
async fn queued_service_leasing(
    url: &StoreUrl,
    p: f64,
    second_review: f64,
    lease: Duration,
) -> (Service, Store, jevjudge_fake::FakeServer) {
    let reviewers = ReviewerTokens::parse(&format!("ana:{ANA},bob:{BOB}")).unwrap();
    let mut policy = QueuePolicy::new([Status::Inconclusive], reviewers);
    policy.second_review = second_review;
    policy.lease = lease;
    queued_service_with(url, p, policy, Config::default()).await
}

/// A service in front of a fake answering `supported` with `p`, with this queue policy and
/// these settings.
pub(crate) async fn queued_service_with(
    url: &StoreUrl,
    p: f64,
    policy: QueuePolicy,
    config: Config,
) -> (Service, Store, jevjudge_fake::FakeServer) {
    let fake = fake_answering(&[("supported", p), ("no_promises", 0.05)]).await;
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(&fake, &metrics, "test-key", 0));
    let store = Store::open(url).await.expect("the store opens");
    let built = Built::builder(backend, definitions())
        .config(config)
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
    (Service::start_built(built).await, store, fake)
}

pub(crate) async fn queue(
    service: &Service,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Reply {
    let mut request = caller().request(method, format!("{}{path}", service.url));
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    read(request.send().await.expect("a response")).await
}

pub(crate) async fn claim(service: &Service, token: &str) -> Reply {
    queue(service, Method::POST, "/v1/queue/claim", Some(token), None).await
}

/// A decision that `supported` holds.
pub(crate) fn supported() -> Value {
    json!({"findings": {"supported": true}})
}

/// `POST /v1/queue/{item}/{action}` as the reviewer of `token`.
pub(crate) async fn on_item(
    service: &Service,
    token: &str,
    item: &str,
    action: &str,
    body: Option<Value>,
) -> Reply {
    let path = format!("/v1/queue/{item}/{action}");
    queue(service, Method::POST, &path, Some(token), body).await
}

pub(crate) async fn decide(service: &Service, token: &str, item: &str, body: Value) -> Reply {
    on_item(service, token, item, "decision", Some(body)).await
}

jevjudge_test_support::on_both_stores!(
    an_expired_lease_returns_the_item_to_the_queue,
    an_inconclusive_review_is_queued_claimed_blind_and_decided_once,
    a_second_review_goes_to_another_reviewer_and_counts_in_agreement,
    passes_are_not_queued_and_reviewer_tokens_are_required,
);

async fn an_expired_lease_returns_the_item_to_the_queue(url: StoreUrl) {
    let (service, _store, _fake) =
        queued_service_leasing(&url, 0.5, 0.0, Duration::from_secs(1)).await;
    let reply = service.review_refund().await;
    assert_eq!(reply.json()["status"], "INCONCLUSIVE");
    let held = claim(&service, ANA).await.json();
    assert_eq!(
        claim(&service, BOB).await.status,
        204,
        "held under a live lease"
    );
    // The lease is one second; after it the item is pending again.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let again = claim(&service, BOB).await;
    assert_eq!(again.status, 200, "{}", again.text());
    assert_eq!(again.json()["item"], held["item"]);
    let late = decide(&service, ANA, held["item"].as_str().unwrap(), supported()).await;
    assert_eq!(late.status, 409);
    assert_eq!(late.error_code(), "lease_not_held");
}

async fn an_inconclusive_review_is_queued_claimed_blind_and_decided_once(url: StoreUrl) {
    let (service, store, _fake) = queued_service(&url, 0.5, 0.0).await;
    let reply = service
        .review(
            "refund-answer-v1",
            &json!({"state": refund_state(), "reference": "ticket-1"}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let verdict = reply.json();
    assert_eq!(verdict["status"], "INCONCLUSIVE");
    // Committed with the review, before the answer.
    let stats = store.queue_stats().await.unwrap();
    assert_eq!(stats.pending_by_version.get("refund-answer-v1"), Some(&1));

    let claimed = claim(&service, ANA).await;
    assert_eq!(claimed.status, 200, "{}", claimed.text());
    let item = claimed.json();
    assert_eq!(item["definition_version"], "refund-answer-v1");
    assert_eq!(item["state"], refund_state());
    assert_eq!(item["criteria"][0]["id"], "supported");
    assert_eq!(item["criteria"][0]["expected"], true);
    assert!(item["criteria"][0]["instructions"].as_str().is_some());
    assert!(item["lease_expires"].as_str().is_some());
    // Blind: nothing of Jev's answer.
    let text = claimed.text();
    for hidden in [
        "yes_probability",
        "findings",
        "INCONCLUSIVE",
        "review_id",
        "reason",
        "ticket-1",
    ] {
        assert!(!text.contains(hidden), "{hidden} in {text}");
    }
    let item_id = item["item"].as_str().unwrap().to_owned();

    // Held by ana: bob gets nothing else and cannot decide or release it.
    assert_eq!(claim(&service, BOB).await.status, 204);
    let refused = decide(&service, BOB, &item_id, supported()).await;
    assert_eq!(refused.status, 409, "{}", refused.text());
    assert_eq!(refused.error_code(), "lease_not_held");
    let refused = on_item(&service, BOB, &item_id, "release", None).await;
    assert_eq!(refused.error_code(), "lease_not_held");

    // An unknown criterion is 422; a malformed body 422 naming the field.
    let refused = decide(&service, ANA, &item_id, json!({"findings": {"nope": true}})).await;
    assert_eq!(refused.status, 422, "{}", refused.text());
    assert_eq!(refused.error_code(), "invalid_decision");
    let refused = decide(
        &service,
        ANA,
        &item_id,
        json!({"findings": {"supported": "yes"}}),
    )
    .await;
    assert_eq!(refused.status, 422);
    assert_eq!(refused.error_code(), "invalid_body");

    // Released and claimed again: the same item comes back.
    let released = on_item(&service, ANA, &item_id, "release", None).await;
    assert_eq!(released.status, 200, "{}", released.text());
    assert_eq!(released.json()["released"], true);
    let again = claim(&service, BOB).await;
    assert_eq!(again.json()["item"], item_id.as_str());

    let decided = decide(
        &service,
        BOB,
        &item_id,
        json!({"findings": {"supported": false}, "note": "the refund is not executed"}),
    )
    .await;
    assert_eq!(decided.status, 200, "{}", decided.text());
    let decided = decided.json();
    assert_eq!(decided["reviewer"], "bob");
    assert_eq!(decided["findings"]["supported"], false);
    assert_eq!(decided["status_by_jev"], "INCONCLUSIVE");
    assert_eq!(
        decided["findings_by_jev"]["supported"]["yes_probability"], 0.5,
        "revealed after the decision"
    );
    let twice = decide(&service, BOB, &item_id, supported()).await;
    assert_eq!(twice.status, 409);
    assert_eq!(twice.error_code(), "already_decided");
    let unknown = decide(
        &service,
        BOB,
        "0190b6b4-0000-7000-8000-000000000000",
        supported(),
    )
    .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.error_code(), "queue_item_not_found");
    assert_eq!(
        decide(&service, BOB, "not-an-id", json!({"findings": {}}))
            .await
            .status,
        404
    );

    let stats = queue(&service, Method::GET, "/v1/queue/stats", Some(ANA), None).await;
    assert_eq!(stats.status, 200, "{}", stats.text());
    let stats = stats.json();
    assert_eq!(stats["decided"], 1);
    assert_eq!(stats["claimed"], 0);
    assert_eq!(claim(&service, ANA).await.status, 204);
}

async fn a_second_review_goes_to_another_reviewer_and_counts_in_agreement(url: StoreUrl) {
    let (service, _store, _fake) = queued_service(&url, 0.5, 1.0).await;
    let reply = service.review_refund().await;
    assert_eq!(reply.json()["status"], "INCONCLUSIVE");
    let first = claim(&service, ANA).await.json();
    // ana never gets the second copy of the same review (a plain claim hands back the one she
    // holds).
    let another = queue(
        &service,
        Method::POST,
        "/v1/queue/claim",
        Some(ANA),
        Some(json!({"new": true})),
    )
    .await;
    assert_eq!(another.status, 204);
    assert_eq!(claim(&service, ANA).await.json()["resumed"], true);
    let second = claim(&service, BOB).await.json();
    assert_eq!(first["state"], second["state"]);
    assert_ne!(first["item"], second["item"]);
    assert_eq!(second["slot"], 2);
    for (token, item) in [(ANA, &first), (BOB, &second)] {
        let decided = decide(&service, token, item["item"].as_str().unwrap(), supported()).await;
        assert_eq!(decided.status, 200, "{}", decided.text());
    }
    let stats = queue(&service, Method::GET, "/v1/queue/stats", Some(BOB), None)
        .await
        .json();
    assert_eq!(stats["decided"], 2);
    assert_eq!(stats["agreement"]["supported"]["items"], 1);
    assert_eq!(stats["agreement"]["supported"]["observed"], 1.0);
}

async fn passes_are_not_queued_and_reviewer_tokens_are_required(url: StoreUrl) {
    let (service, store, _fake) = queued_service(&url, 0.95, 0.0).await;
    let reply = service.review_refund().await;
    assert_eq!(reply.json()["status"], "PASS");
    assert!(nothing_pending(&store).await);
    assert_eq!(claim(&service, ANA).await.status, 204);
    for token in [None, Some("tok-ana-012345678"), Some("")] {
        let refused = queue(&service, Method::POST, "/v1/queue/claim", token, None).await;
        assert_eq!(refused.status, 401, "{token:?}");
        assert_eq!(refused.error_code(), "unauthorized");
        assert!(!refused.text().contains("tok-"), "{}", refused.text());
    }
    let refused = queue(&service, Method::GET, "/v1/queue/stats", None, None).await;
    assert_eq!(refused.status, 401);
}

#[tokio::test]
async fn without_a_queue_the_routes_answer_no_queue() {
    let fake = fake_answering(&[("supported", 0.5)]).await;
    let service = Service::in_front_of(&fake, Config::default()).await;
    let reply = queue(&service, Method::POST, "/v1/queue/claim", Some(ANA), None).await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.error_code(), "no_queue");
    let reply = queue(&service, Method::GET, "/v1/queue/stats", None, None).await;
    assert_eq!(reply.status, 401, "no token at all is 401 first");
    for (method, path) in [
        (Method::TRACE, "/v1/queue/stats"),
        (Method::GET, "/v1/queue/claim"),
    ] {
        // The token check comes first for every method; with a token, a method the route does
        // not take is 405, as on a service with a queue.
        let reply = queue(&service, method.clone(), path, None, None).await;
        assert_eq!(reply.status, 401, "{method} {path}");
        let reply = queue(&service, method.clone(), path, Some(ANA), None).await;
        assert_eq!(reply.status, 405, "{method} {path}");
        assert_eq!(reply.error_code(), "method_not_allowed");
    }
    let reply = queue(&service, Method::HEAD, "/v1/queue/stats", Some(ANA), None).await;
    assert_eq!(reply.status, 404, "HEAD is GET's");
    assert!(!service.state.queue_enabled());
    assert!(service.state.reviewer_for_token(ANA).is_none());
}

#[tokio::test]
async fn the_state_exposes_reviewers_store_and_lease() {
    let (service, _store, _fake) = queued_service(&sqlite_url(), 0.5, 0.0).await;
    let state = &service.state;
    assert!(state.queue_enabled());
    assert!(state.store().is_some());
    assert_eq!(state.lease(), Duration::from_secs(600));
    assert_eq!(state.reviewer_for_token(BOB).unwrap().name, "bob");
    assert!(state.reviewer_for_token("tok-bob").is_none());
    assert!(!format!("{state:?}").contains(ANA));
}

/// A reload while reviews are in flight (all 20 hold a backend slot, waiting on a 1.5 s
/// backend): every one of them answers 200 on the set it started with; later requests see the
/// new set.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_drops_no_request_in_flight() {
    let fake = fake_with_latency(Duration::from_millis(1500)).await;
    let service = Service::in_front_of(&fake, Config::default()).await;
    let url = service.url.clone();
    let in_flight: Vec<_> = (0..20)
        .map(|_| {
            let url = url.clone();
            tokio::spawn(async move {
                let response = caller()
                    .post(format!("{url}/v1/reviews/refund-answer-v1"))
                    .header("content-type", "application/json")
                    .body(json!({"state": refund_state()}).to_string())
                    .send()
                    .await
                    .expect("a response");
                read(response).await
            })
        })
        .collect();
    // Wait until all 20 hold a backend slot (each took its definition before): they are
    // waiting on the fake's latency now.
    let mut running = false;
    for _ in 0..800 {
        if service
            .metrics_text()
            .lines()
            .any(|line| line == "jevjudge_reviews_in_flight 20")
        {
            running = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(running, "{}", service.metrics_text());
    let temp = tempfile::TempDir::new().expect("a temp dir");
    let dir = temp.path();
    std::fs::copy(
        data("definitions/support-draft.json"),
        dir.join("support-draft.json"),
    )
    .unwrap();
    let outcome = reload_definitions(&service.state, dir).await;
    assert_eq!(
        outcome,
        ReloadOutcome::Reloaded {
            versions: vec!["support-draft-v1".to_owned()]
        }
    );
    for review in in_flight {
        let reply = review.await.unwrap();
        assert_eq!(reply.status, 200, "{}", reply.text());
        assert_eq!(reply.json()["definition_version"], "refund-answer-v1");
    }
    // New requests see the new set only.
    let gone = service.review_refund().await;
    assert_eq!(gone.status, 404);
    let listed = service.get("/v1/definitions").await.json();
    assert_eq!(listed["definitions"][0]["version"], "support-draft-v1");
    // A bad set is refused and the current one kept.
    std::fs::write(dir.join("bad.toml"), "version = \"\"\n").unwrap();
    let outcome = reload_definitions(&service.state, dir).await;
    assert!(
        matches!(&outcome, ReloadOutcome::Refused { reason } if reason.contains("bad.toml")),
        "{outcome:?}"
    );
    assert_eq!(service.state.definitions().len(), 1);
}

#[tokio::test]
async fn strict_bodies_a_decision_with_a_repeated_key_is_refused_422() {
    let (service, _store, _fake) = queued_service(&sqlite_url(), 0.5, 0.0).await;
    assert_eq!(
        service.review_refund().await.json()["status"],
        "INCONCLUSIVE"
    );
    let item = claim(&service, ANA).await.json()["item"]
        .as_str()
        .expect("an item")
        .to_owned();
    for body in [
        r#"{"findings": {"supported": false}, "findings": {"supported": true}}"#,
        r#"{"findings": {"supported": false, "supported": true}}"#,
        r#"{"findings": {"supported": true}, "note": "a", "note": "b"}"#,
    ] {
        let reply = read(
            caller()
                .post(format!("{}/v1/queue/{item}/decision", service.url))
                .header("authorization", format!("Bearer {ANA}"))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
                .expect("a response"),
        )
        .await;
        assert_eq!(reply.status, 422, "{body}: {}", reply.text());
        assert_eq!(reply.error_code(), "invalid_body");
        assert!(reply.text().contains("appears twice"), "{}", reply.text());
    }
    // Nothing was decided: the same item takes a proper decision.
    let decided = decide(&service, ANA, &item, supported()).await;
    assert_eq!(decided.status, 200, "{}", decided.text());
}
