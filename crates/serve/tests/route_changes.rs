//! Changing routes over real HTTP: `PUT`, promote behind the gate, rollback and the history,
//! with an administrator's token (callers' and reviewers' tokens are refused); a promote on
//! one replica reaches another replica of the same store within the route cache.

use std::time::{Duration, Instant};

use jevjudge_judge::{Status, SystemOneBackend};
use jevjudge_serve::{
    AuthTokens, Config, DecisionLogConfig, Metrics, QueuePolicy, ReviewerTokens, parse_routes,
};
use jevjudge_store::{Store, StoreUrl};
use jevjudge_test_support::on_both_stores;
use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    store::{pg_url, sqlite_url},
    util::{Built, Service, caller, client, definitions, fake_answering, refund_state},
};

on_both_stores!(
    put_promote_rollback_and_history_over_http,
    a_promote_on_one_replica_is_in_force_on_another_within_the_route_cache,
);

const ADMIN: &str = "admin-token-0123456789";
const CALLER: &str = "caller-token-0123456789";
const REVIEWER: &str = "reviewer-token-0123456789";

fn config() -> Config {
    Config {
        auth_tokens: AuthTokens::parse(CALLER).unwrap(),
        admin_tokens: AuthTokens::parse(ADMIN).unwrap(),
        ..Config::default()
    }
}

async fn start(fake: &jevjudge_fake::FakeServer, store: &Store, config: Config) -> Service {
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(fake, &metrics, "test-key", 0));
    let reviewers = ReviewerTokens::parse(&format!("ana:{REVIEWER}")).unwrap();
    let built = Built::builder(backend, definitions())
        .config(config)
        .metrics(metrics)
        .decision_log(
            DecisionLogConfig::store(store.clone())
                .keep_state(true)
                .requested_model("jev-latest"),
        )
        .review_queue(QueuePolicy::new([Status::Fail], reviewers))
        .routes(
            parse_routes("[[route]]\nname = \"refund\"\nlive = \"refund-answer-v1\"\n").unwrap(),
        )
        .build()
        .await
        .expect("the service builds");
    Service::start_built(built).await
}

/// `method path` with `token` and a JSON body: the status and the JSON answered.
async fn send(
    service: &Service,
    method: reqwest::Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut request = caller()
        .request(method, format!("{}{path}", service.url))
        .bearer_auth(token);
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    let reply = request.send().await.expect("a response");
    let status = reply.status().as_u16();
    let text = reply.text().await.expect("a body");
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// The version a review under `route` is judged by.
async fn judged_by(service: &Service, route: &str) -> String {
    let (status, reply) = send(
        service,
        reqwest::Method::POST,
        &format!("/v1/reviews/{route}"),
        CALLER,
        Some(json!({"state": refund_state()})),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    reply["definition_version"].as_str().unwrap().to_owned()
}

async fn put_promote_rollback_and_history_over_http(url: StoreUrl) {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let store = Store::open(&url).await.expect("the store opens");
    let service = start(&fake, &store, config()).await;
    let put = json!({"live": "refund-answer-v1", "shadows": ["support-draft-v1"]});

    // Writes: an administrator's token only; reads take a caller's too.
    for token in [CALLER, REVIEWER] {
        let (status, reply) = send(
            &service,
            Method::PUT,
            "/v1/routes/new",
            token,
            Some(put.clone()),
        )
        .await;
        assert_eq!(
            (status, reply["error"]["code"].as_str()),
            (403, Some("forbidden")),
            "{reply}"
        );
        let (status, _) = send(
            &service,
            Method::POST,
            "/v1/routes/refund/rollback",
            token,
            None,
        )
        .await;
        assert_eq!(status, 403);
    }
    let (status, _) = send(
        &service,
        Method::PUT,
        "/v1/routes/new",
        "wrong-token-0123456789",
        Some(put.clone()),
    )
    .await;
    assert_eq!(status, 401);
    let (status, reply) = send(
        &service,
        Method::PUT,
        "/v1/routes/new",
        ADMIN,
        Some(put.clone()),
    )
    .await;
    assert_eq!(status, 201, "{reply}");
    assert_eq!(reply["shadows"], json!(["support-draft-v1"]));
    for token in [ADMIN, CALLER] {
        let (status, reply) = send(&service, Method::GET, "/v1/routes/new", token, None).await;
        assert_eq!(
            (status, reply["live"].as_str()),
            (200, Some("refund-answer-v1"))
        );
    }
    let (status, reply) = send(&service, Method::GET, "/v1/routes/new", REVIEWER, None).await;
    assert_eq!(status, 403, "{reply}");

    // PUT never moves the live version; a route may not be named as a version; bodies are
    // strict.
    let moved = json!({"live": "support-draft-v1"});
    let (status, reply) = send(&service, Method::PUT, "/v1/routes/new", ADMIN, Some(moved)).await;
    assert_eq!(status, 409, "{reply}");
    assert_eq!(reply["error"]["code"], "route_conflict");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("only through promote"),
        "{reply}"
    );
    let (status, reply) = send(
        &service,
        Method::PUT,
        "/v1/routes/support-draft-v1",
        ADMIN,
        Some(put.clone()),
    )
    .await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (409, Some("route_conflict")),
        "{reply}"
    );
    let unknown = json!({"live": "refund-answer-v1", "colour": "red"});
    let (status, reply) = send(
        &service,
        Method::PUT,
        "/v1/routes/new",
        ADMIN,
        Some(unknown),
    )
    .await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (422, Some("invalid_body")),
        "{reply}"
    );
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("colour"),
        "{reply}"
    );
    let unloaded = json!({"live": "refund-answer-v1", "shadows": ["refund-answer-v9"]});
    let (status, reply) = send(
        &service,
        Method::PUT,
        "/v1/routes/new",
        ADMIN,
        Some(unloaded),
    )
    .await;
    assert_eq!(status, 422, "{reply}");
    let (status, reply) = send(
        &service,
        Method::POST,
        "/v1/routes/new/promote",
        ADMIN,
        Some(json!({"reason": "x"})),
    )
    .await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (422, Some("invalid_body")),
        "{reply}"
    );

    // The gate: no shadowed review yet.
    let promote = json!({"version": "support-draft-v1", "reason": "calibrated"});
    let (status, reply) = send(
        &service,
        Method::POST,
        "/v1/routes/new/promote",
        ADMIN,
        Some(promote),
    )
    .await;
    assert_eq!(status, 409, "{reply}");
    assert_eq!(reply["error"]["code"], "promote_refused");
    assert_eq!(
        reply["error"]["message"],
        "support-draft-v1 has 0 shadowed reviews, fewer than 100"
    );
    assert_eq!(reply["figures"]["shadowed_reviews"], 0);
    let (status, reply) = send(
        &service,
        Method::POST,
        "/v1/routes/new/promote",
        ADMIN,
        Some(json!({"version": "refund-answer-v9"})),
    )
    .await;
    assert_eq!(
        reply["error"]["message"], "refund-answer-v9 is not loaded",
        "{status} {reply}"
    );
    assert_eq!(judged_by(&service, "new").await, "refund-answer-v1");

    let forced = json!({"version": "support-draft-v1", "reason": "calibrated", "force": true});
    let (status, reply) = send(
        &service,
        Method::POST,
        "/v1/routes/new/promote",
        ADMIN,
        Some(forced),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["forced"], true);
    assert_eq!(reply["route"]["live"], "support-draft-v1");
    assert_eq!(reply["route"]["shadows"], json!(["refund-answer-v1"]));
    // This replica follows its own change at once; the review names the version that judged it.
    assert_eq!(judged_by(&service, "new").await, "support-draft-v1");

    let (status, reply) = send(
        &service,
        Method::POST,
        "/v1/routes/new/rollback",
        ADMIN,
        Some(json!({"reason": "regression"})),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["live"], "refund-answer-v1");
    assert_eq!(judged_by(&service, "new").await, "refund-answer-v1");
    let (status, reply) = send(
        &service,
        Method::POST,
        "/v1/routes/new/rollback",
        ADMIN,
        None,
    )
    .await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (409, Some("route_conflict")),
        "{reply}"
    );

    let (status, reply) = send(
        &service,
        Method::GET,
        "/v1/routes/new/history",
        CALLER,
        None,
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    let changes = reply["changes"].as_array().unwrap();
    let rows: Vec<(&str, &str, bool, Option<&str>)> = changes
        .iter()
        .map(|c| {
            (
                c["action"].as_str().unwrap(),
                c["to_live"].as_str().unwrap(),
                c["forced"].as_bool().unwrap(),
                c["reason"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("create", "refund-answer-v1", false, None),
            ("promote", "support-draft-v1", true, Some("calibrated")),
            ("rollback", "refund-answer-v1", false, Some("regression")),
        ]
    );
    assert!(changes.iter().all(|c| c["actor"] == "admin"));
    let (status, reply) = send(
        &service,
        Method::GET,
        "/v1/routes/seeded-nowhere/history",
        CALLER,
        None,
    )
    .await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (404, Some("not_found"))
    );
    let (status, reply) = send(
        &service,
        Method::GET,
        "/v1/routes/refund/history",
        CALLER,
        None,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(reply["changes"][0]["actor"], "routes-file");
}

/// Two services on one store: a promote through one is in force on the other once its copy
/// of the route is [`jevjudge_serve::ROUTE_CACHE`] old (polled for at most 10 s, no timing
/// asserted); a rollback likewise.
async fn a_promote_on_one_replica_is_in_force_on_another_within_the_route_cache(url: StoreUrl) {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let first = start(&fake, &Store::open(&url).await.unwrap(), config()).await;
    let second = start(&fake, &Store::open(&url).await.unwrap(), config()).await;
    assert_eq!(judged_by(&second, "refund").await, "refund-answer-v1");

    let forced = json!({"version": "support-draft-v1", "force": true});
    let (status, reply) = send(
        &first,
        Method::POST,
        "/v1/routes/refund/promote",
        ADMIN,
        Some(forced),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    until_judged_by(&second, "support-draft-v1").await;
    let (status, reply) = send(
        &first,
        Method::POST,
        "/v1/routes/refund/rollback",
        ADMIN,
        None,
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    until_judged_by(&second, "refund-answer-v1").await;
    let (_, reply) = send(
        &second,
        Method::GET,
        "/v1/routes/refund/history",
        ADMIN,
        None,
    )
    .await;
    let actions: Vec<&str> = reply["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["create", "promote", "rollback"]);
}

async fn until_judged_by(service: &Service, version: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while judged_by(service, "refund").await != version {
        assert!(
            Instant::now() < deadline,
            "{version} did not reach the replica"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
