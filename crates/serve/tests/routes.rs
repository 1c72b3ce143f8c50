//! Routes over real HTTP: a review under a route's name is judged by its live version; a
//! routes file seeds only the routes the store does not hold; a route named like a version is
//! refused; a change made in the store reaches a running service; `GET /v1/routes` and
//! `GET /v1/routes/{route}` read the store, behind the caller token.

use jevjudge_judge::SystemOneBackend;
use jevjudge_serve::{AuthTokens, BuildError, Config, DecisionLogConfig, Metrics, parse_routes};
use jevjudge_store::{NewRoute, Store, StoreUrl};
use jevjudge_test_support::on_both_stores;
use serde_json::json;

use crate::{
    store::{pg_url, sqlite_url},
    util::{Built, Service, client, definitions, fake_answering, refund_state},
};

on_both_stores!(
    a_review_under_a_route_is_judged_by_its_live_version,
    a_restart_seeds_only_missing_routes_and_keeps_a_changed_live_version,
    a_live_version_changed_in_the_store_reaches_a_running_replica,
);

const ROUTES: &str = r#"
[[route]]
name = "refund-answer"
live = "refund-answer-v1"
shadows = ["support-draft-v1"]
shadow_sample = 0.5

[[route]]
name = "drafts"
live = "support-draft-v1"
"#;

async fn start(
    fake: &jevjudge_fake::FakeServer,
    store: &Store,
    routes: Vec<NewRoute>,
) -> Result<Service, BuildError> {
    start_with(fake, store, routes, Config::default()).await
}

async fn start_with(
    fake: &jevjudge_fake::FakeServer,
    store: &Store,
    routes: Vec<NewRoute>,
    config: Config,
) -> Result<Service, BuildError> {
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(fake, &metrics, "test-key", 0));
    let built = Built::builder(backend, definitions())
        .config(config)
        .metrics(metrics)
        .decision_log(DecisionLogConfig::store(store.clone()))
        .routes(routes)
        .build()
        .await?;
    Ok(Service::start_built(built).await)
}

async fn a_review_under_a_route_is_judged_by_its_live_version(url: StoreUrl) {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let store = Store::open(&url).await.expect("the store opens");
    let service = start(&fake, &store, parse_routes(ROUTES).unwrap())
        .await
        .expect("the service builds");
    let body = json!({"state": refund_state()});

    let reply = service.review("refund-answer", &body).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.json()["definition_version"], "refund-answer-v1");
    // Exact versions keep working.
    let reply = service.review("refund-answer-v1", &body).await;
    assert_eq!(reply.json()["definition_version"], "refund-answer-v1");
    // Neither a version nor a route.
    let reply = service.review("no-such-route", &body).await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["error"]["code"], "unknown_version");

    let reply = service.get("/v1/routes").await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let listed = reply.json();
    let names: Vec<&str> = listed["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|route| route["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["drafts", "refund-answer"]);
    let reply = service.get("/v1/routes/refund-answer").await;
    let route = reply.json();
    assert_eq!(route["live"], "refund-answer-v1");
    assert_eq!(route["shadows"], json!(["support-draft-v1"]));
    assert_eq!(route["shadow_sample"], 0.5);
    let reply = service.get("/v1/routes/no-such-route").await;
    assert_eq!(reply.status, 404);
    assert_eq!(reply.json()["error"]["code"], "not_found");
}

async fn a_restart_seeds_only_missing_routes_and_keeps_a_changed_live_version(url: StoreUrl) {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let store = Store::open(&url).await.expect("the store opens");
    let first = parse_routes(
        r#"
        [[route]]
        name = "refund-answer"
        live = "refund-answer-v1"
        "#,
    )
    .unwrap();
    start(&fake, &store, first)
        .await
        .expect("builds")
        .stop()
        .await
        .expect("stops");
    // A change made since the start (as a promote would make it).
    assert!(
        store
            .set_route_live("refund-answer", "support-draft-v1")
            .await
            .unwrap()
    );

    // The restart's file names the old live version and one new route.
    let service = start(&fake, &store, parse_routes(ROUTES).unwrap())
        .await
        .expect("builds");
    let reply = service.get("/v1/routes/refund-answer").await;
    assert_eq!(reply.json()["live"], "support-draft-v1");
    assert_eq!(reply.json()["shadows"], json!([]));
    let reply = service.get("/v1/routes/drafts").await;
    assert_eq!(reply.status, 200, "the missing route was created");
    let reply = service
        .review("refund-answer", &json!({"state": refund_state()}))
        .await;
    assert_eq!(reply.json()["definition_version"], "support-draft-v1");
}

/// The live version is changed through a second connection to the store, as another replica
/// would change it; the running service reads the route again once its copy is 2 s old
/// (polled here for at most 10 s, no timing asserted).
async fn a_live_version_changed_in_the_store_reaches_a_running_replica(url: StoreUrl) {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let store = Store::open(&url).await.expect("the store opens");
    let service = start(&fake, &store, parse_routes(ROUTES).unwrap())
        .await
        .expect("builds");
    let body = json!({"state": refund_state()});
    let reply = service.review("refund-answer", &body).await;
    assert_eq!(reply.json()["definition_version"], "refund-answer-v1");

    let other = Store::open(&url).await.expect("a second connection opens");
    assert!(
        other
            .set_route_live("refund-answer", "support-draft-v1")
            .await
            .unwrap()
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let reply = service.review("refund-answer", &body).await;
        assert_eq!(reply.status, 200, "{}", reply.text());
        if reply.json()["definition_version"] == "support-draft-v1" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the change did not reach the running service"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn reading_routes_needs_a_caller_token_when_tokens_are_set() {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let store = Store::open(&sqlite_url()).await.expect("the store opens");
    let config = Config {
        auth_tokens: AuthTokens::parse("tok-alpha-0123456789").unwrap(),
        ..Config::default()
    };
    let service = start_with(&fake, &store, parse_routes(ROUTES).unwrap(), config)
        .await
        .expect("builds");
    for path in ["/v1/routes", "/v1/routes/refund-answer"] {
        let reply = service.get(path).await;
        assert_eq!(reply.status, 401, "{path}");
        let reply = service
            .call(
                reqwest::Method::GET,
                path,
                &[("authorization", "Bearer tok-alpha-0123456789")],
            )
            .await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.text());
    }
}

#[tokio::test]
async fn a_route_named_like_a_version_or_with_an_unloaded_live_version_is_refused() {
    let fake = fake_answering(&[("supported", 0.95)]).await;
    let store = Store::open(&sqlite_url()).await.expect("the store opens");
    let named_like_version =
        parse_routes("[[route]]\nname = \"support-draft-v1\"\nlive = \"refund-answer-v1\"\n")
            .unwrap();
    let refused = start(&fake, &store, named_like_version).await.err();
    assert!(
        matches!(&refused, Some(BuildError::RouteNamesVersion { route }) if route == "support-draft-v1"),
        "{refused:?}"
    );
    let unloaded = parse_routes("[[route]]\nname = \"r\"\nlive = \"refund-answer-v9\"\n").unwrap();
    let refused = start(&fake, &store, unloaded).await.err();
    assert!(
        matches!(&refused, Some(BuildError::RouteLiveNotLoaded { route, live })
            if route == "r" && live == "refund-answer-v9"),
        "{refused:?}"
    );
    assert_eq!(store.routes().await.unwrap(), [], "nothing was seeded");
}
