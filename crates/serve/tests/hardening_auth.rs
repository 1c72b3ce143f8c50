//! Who gets in: the sign-in limit per client address and trusted proxies, reviewer and caller
//! tokens, every method of every protected route, and `Secure` cookies behind a proxy. Over
//! real HTTP on 127.0.0.1 with a SQLite store, except where a paused clock is needed.

use std::{net::SocketAddr, time::Duration};

use axum::{
    body::Body,
    extract::ConnectInfo,
    http::{Request, StatusCode},
};
use jevjudge_judge::{Status, SystemOneBackend};
use jevjudge_serve::{Config, DecisionLogConfig, Metrics, QueuePolicy, ReviewerTokens};
use tower::ServiceExt as _;

use crate::{
    store::sqlite_url,
    util::{
        Built, Reply, Service, browser, client, csrf, definitions, fake_answering, read,
        set_cookies,
    },
};

const ADA: &str = "tok-ada-0123456789abcdef";
const BOB: &str = "tok-bob-0123456789abcdef";

/// A service with a review queue (reviewers `ada` and `bob`) on a fresh SQLite store.
async fn built(config: Config) -> (Built, jevjudge_fake::FakeServer) {
    let fake = fake_answering(&[("supported", 0.5)]).await;
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(&fake, &metrics, "test-key", 0));
    let reviewers = ReviewerTokens::parse(&format!("ada:{ADA},bob:{BOB}")).expect("reviewers");
    let built = Built::builder(backend, definitions())
        .config(config)
        .metrics(metrics)
        .decision_log(
            DecisionLogConfig::url(sqlite_url())
                .keep_state(true)
                .requested_model("jev-latest"),
        )
        .review_queue(QueuePolicy::new([Status::Inconclusive], reviewers))
        .build()
        .await
        .expect("the store opens");
    (built, fake)
}

async fn service(config: Config) -> (Service, jevjudge_fake::FakeServer) {
    let (built, fake) = built(config).await;
    (Service::start_built(built).await, fake)
}

/// A sign-in form: its pre-session cookie (`name=value`) and CSRF token.
async fn form(url: &str, headers: &[(&str, &str)]) -> (String, String) {
    let mut request = browser().get(format!("{url}/ui/sign-in"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let reply = read(request.send().await.expect("a response")).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let pre = set_cookies(&reply, "jevjudge_ui_pre")[0]
        .split(';')
        .next()
        .expect("a pair")
        .to_owned();
    (pre, csrf(&reply.text()))
}

/// Posts the sign-in form with these cookie, fields and extra headers.
async fn post_sign_in(url: &str, cookie: &str, body: String, headers: &[(&str, &str)]) -> Reply {
    let mut request = browser()
        .post(format!("{url}/ui/sign-in"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body);
    if !cookie.is_empty() {
        request = request.header("cookie", cookie);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    read(request.send().await.expect("a response")).await
}

/// Signs in with `token` through a fresh form, sending `headers` with both requests.
async fn sign_in(url: &str, token: &str, headers: &[(&str, &str)]) -> Reply {
    let (pre, csrf) = form(url, headers).await;
    post_sign_in(url, &pre, format!("csrf={csrf}&token={token}"), headers).await
}

fn signed_in(reply: &Reply) -> bool {
    reply.status == 303 && !set_cookies(reply, "jevjudge_ui").is_empty()
}

// 1. Sign-in lock-out.

#[tokio::test]
async fn sign_in_lock_out_a_reviewer_gets_in_within_2_s_while_junk_floods_from_the_same_address() {
    let (service, _fake) = service(Config::default()).await;
    let url = service.url.clone();
    let (sent, mut flooding) = tokio::sync::watch::channel(0u32);
    let flood = tokio::spawn(async move {
        // Junk every 100 ms from the same address: no pre-session cookie, no CSRF field, no
        // token; the attacker sees the same 403 a stale form gets.
        let mut junk = 0u32;
        loop {
            let reply = post_sign_in(&url, "", "junk=1".to_owned(), &[]).await;
            assert_eq!(reply.status, 403, "{}", reply.text());
            junk += 1;
            sent.send_replace(junk);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    // More junk than the ten attempts an address has, before the reviewer comes.
    flooding
        .wait_for(|junk| *junk > 12)
        .await
        .expect("the flood runs");
    let reply = tokio::time::timeout(Duration::from_secs(2), sign_in(&service.url, ADA, &[]))
        .await
        .expect("the reviewer is answered within 2 s");
    assert!(signed_in(&reply), "{} {}", reply.status, reply.text());
    // A form with a CSRF token but no token costs nothing either.
    for _ in 0..12 {
        let (pre, csrf) = form(&service.url, &[]).await;
        let reply = post_sign_in(&service.url, &pre, format!("csrf={csrf}&token="), &[]).await;
        assert_eq!(reply.status, 401, "{}", reply.text());
    }
    assert!(signed_in(&sign_in(&service.url, BOB, &[]).await));
    flood.abort();
    service.stop().await.expect("a clean stop");
}

/// `POST /ui/sign-in` through the router in-process, from `peer`, with a fresh form.
async fn sign_in_from(router: &axum::Router, peer: SocketAddr, token: &str) -> StatusCode {
    let form = router
        .clone()
        .oneshot(
            Request::get("/ui/sign-in")
                .extension(ConnectInfo(peer))
                .body(Body::empty())
                .expect("a request"),
        )
        .await
        .expect("an answer");
    let pre = form
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find(|value| value.starts_with("jevjudge_ui_pre="))
        .and_then(|value| value.split(';').next())
        .expect("a pre-session cookie")
        .to_owned();
    let page = axum::body::to_bytes(form.into_body(), usize::MAX)
        .await
        .expect("a body");
    let csrf = csrf(std::str::from_utf8(&page).expect("UTF-8"));
    router
        .clone()
        .oneshot(
            Request::post("/ui/sign-in")
                .extension(ConnectInfo(peer))
                .header("cookie", pre)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Body::from(format!("csrf={csrf}&token={token}")))
                .expect("a request"),
        )
        .await
        .expect("an answer")
        .status()
}

#[tokio::test]
async fn sign_in_lock_out_ten_wrong_tokens_with_valid_forms_lock_the_address_for_6_s_each() {
    let (built, _fake) = built(Config::default()).await;
    let router = built.router();
    tokio::time::pause();
    let attacker: SocketAddr = "192.0.2.7:40000".parse().expect("an address");
    let neighbour: SocketAddr = "192.0.2.8:40000".parse().expect("an address");
    for n in 0..10 {
        let wrong = format!("wrong-token-0123456789-{n}");
        assert_eq!(
            sign_in_from(&router, attacker, &wrong).await,
            StatusCode::UNAUTHORIZED
        );
    }
    // Locked: not even the right token is checked, on any port of that address.
    assert_eq!(
        sign_in_from(&router, attacker, ADA).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        sign_in_from(&router, "192.0.2.7:40001".parse().expect("an address"), ADA).await,
        StatusCode::TOO_MANY_REQUESTS
    );
    assert_eq!(
        sign_in_from(&router, neighbour, ADA).await,
        StatusCode::SEE_OTHER
    );
    tokio::time::advance(Duration::from_secs(5)).await;
    assert_eq!(
        sign_in_from(&router, attacker, ADA).await,
        StatusCode::TOO_MANY_REQUESTS,
        "still locked after 5 s"
    );
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(
        sign_in_from(&router, attacker, ADA).await,
        StatusCode::SEE_OTHER,
        "one attempt back after 6 s"
    );
}

#[tokio::test]
async fn sign_in_lock_out_x_forwarded_for_counts_only_from_a_trusted_proxy() {
    // The test client (127.0.0.1) is the trusted proxy: each forwarded client has its own
    // attempts.
    let config = Config {
        trusted_proxies: vec!["127.0.0.0/8".parse().expect("a network")],
        ..Config::default()
    };
    let (service, _fake) = service(config).await;
    let guesser = [("x-forwarded-for", "203.0.113.5")];
    for n in 0..10 {
        let reply = sign_in(&service.url, &format!("guess-0123456789-{n}"), &guesser).await;
        assert_eq!(reply.status, 401, "guess {n}");
    }
    assert_eq!(sign_in(&service.url, ADA, &guesser).await.status, 429);
    let reviewer = [("x-forwarded-for", "198.51.100.1, 203.0.113.6")];
    assert!(signed_in(&sign_in(&service.url, ADA, &reviewer).await));
    service.stop().await.expect("a clean stop");

    // Without trusted proxies the header is ignored: the peer's address is spent.
    let (service, _fake) = service_default().await;
    for n in 0..10 {
        let forged = format!("203.0.113.{n}");
        let reply = sign_in(
            &service.url,
            &format!("guess-0123456789-{n}"),
            &[("x-forwarded-for", &forged)],
        )
        .await;
        assert_eq!(reply.status, 401, "guess {n}");
    }
    let reply = sign_in(&service.url, ADA, &[("x-forwarded-for", "198.51.100.1")]).await;
    assert_eq!(reply.status, 429, "{}", reply.text());
    service.stop().await.expect("a clean stop");
}

async fn service_default() -> (Service, jevjudge_fake::FakeServer) {
    service(Config::default()).await
}

// 8. Tokens.

const CALLER: &str = "caller-0123456789abcdef";

#[tokio::test]
async fn tokens_wrong_bearer_tokens_from_one_address_never_lock_out_a_right_one() {
    let config = Config {
        auth_tokens: jevjudge_serve::AuthTokens::parse(CALLER).expect("a token"),
        ..Config::default()
    };
    let (service, _fake) = service(config).await;
    let http = browser();
    let get = |path: &'static str, token: String| {
        let request = http
            .get(format!("{}{path}", service.url))
            .bearer_auth(token);
        async move { read(request.send().await.expect("a response")).await }
    };
    // Past the 100 a minute that are logged, on the callers' and the reviewers' routes alike.
    for n in 0..150 {
        let wrong = format!("wrong-token-0123456789-{n}");
        assert_eq!(get("/v1/definitions", wrong.clone()).await.status, 401);
        assert_eq!(get("/v1/queue/stats", wrong).await.status, 401);
    }
    assert_eq!(get("/v1/definitions", CALLER.to_owned()).await.status, 200);
    assert_eq!(get("/v1/queue/stats", ADA.to_owned()).await.status, 200);
    service.stop().await.expect("a clean stop");
}

// 9. HEAD bypasses the reviewer check.

#[tokio::test]
async fn head_bypass_every_method_of_every_protected_route_needs_its_token() {
    let config = Config {
        auth_tokens: jevjudge_serve::AuthTokens::parse(CALLER).expect("a token"),
        ..Config::default()
    };
    let (service, _fake) = service(config).await;
    let item = "00000000-0000-0000-0000-000000000000";
    let callers = [
        "/v1/reviews/refund-answer-v1".to_owned(),
        "/v1/reviews".to_owned(),
        "/v1/definitions".to_owned(),
        "/metrics".to_owned(),
    ];
    let reviewers = [
        "/v1/queue/claim".to_owned(),
        format!("/v1/queue/{item}/decision"),
        format!("/v1/queue/{item}/release"),
        "/v1/queue/stats".to_owned(),
    ];
    let unlisted = reqwest::Method::from_bytes(b"PURGE").expect("a method");
    let http = browser();
    for path in callers.iter().chain(&reviewers) {
        for method in [
            reqwest::Method::HEAD,
            reqwest::Method::GET,
            reqwest::Method::POST,
            reqwest::Method::PUT,
            reqwest::Method::DELETE,
            reqwest::Method::OPTIONS,
            unlisted.clone(),
        ] {
            for token in [None, Some("wrong-token-0123456789")] {
                let mut request = http.request(method.clone(), format!("{}{path}", service.url));
                if let Some(token) = token {
                    request = request.bearer_auth(token);
                }
                let reply = read(request.send().await.expect("a response")).await;
                let case = format!("{method} {path} with {token:?}");
                assert_eq!(reply.status, 401, "{case}: {}", reply.text());
                assert_eq!(reply.headers["content-type"], "application/json", "{case}");
                if method != reqwest::Method::HEAD {
                    assert_eq!(reply.error_code(), "unauthorized", "{case}");
                }
            }
        }
    }
    // With the right token HEAD runs the GET handler, answering as GET does (no body).
    for (path, token) in [("/v1/queue/stats", ADA), ("/v1/definitions", CALLER)] {
        let reply = read(
            http.head(format!("{}{path}", service.url))
                .bearer_auth(token)
                .send()
                .await
                .expect("a response"),
        )
        .await;
        assert_eq!(reply.status, 200, "HEAD {path}");
    }
    // And a method the route does not take, with the right token, is 405.
    let reply = read(
        http.request(unlisted, format!("{}/v1/queue/stats", service.url))
            .bearer_auth(ADA)
            .send()
            .await
            .expect("a response"),
    )
    .await;
    assert_eq!(reply.status, 405, "{}", reply.text());
    service.stop().await.expect("a clean stop");
}

// 11. `Secure` cookies behind a proxy.

fn is_secure(cookie: &str) -> bool {
    cookie.split("; ").any(|attribute| attribute == "Secure")
}

/// Whether the pre-session cookie of the sign-in form asked for with `headers` is `Secure`.
async fn pre_cookie_secure(url: &str, headers: &[(&str, &str)]) -> bool {
    let mut request = browser().get(format!("{url}/ui/sign-in"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let reply = read(request.send().await.expect("a response")).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    is_secure(set_cookies(&reply, "jevjudge_ui_pre")[0])
}

#[tokio::test]
async fn secure_cookies_behind_a_proxy_a_header_only_adds_secure() {
    // A plain-HTTP service asked for on its loopback address: the only case without Secure.
    let (plain, _fake) = service_default().await;
    let url = plain.url.clone();
    assert!(!pre_cookie_secure(&url, &[]).await);
    assert!(!pre_cookie_secure(&url, &[("x-forwarded-proto", "http")]).await);
    // A TLS proxy forwarding `Host: 127.0.0.1` says https: Secure, session cookie included.
    let proxied = [("host", "127.0.0.1"), ("x-forwarded-proto", "https")];
    assert!(pre_cookie_secure(&url, &proxied).await);
    assert!(pre_cookie_secure(&url, &[("x-forwarded-proto", "http, HTTPS")]).await);
    let reply = sign_in(&url, ADA, &proxied).await;
    assert!(signed_in(&reply), "{}", reply.text());
    assert!(is_secure(set_cookies(&reply, "jevjudge_ui")[0]));
    // A header never takes Secure away from a non-loopback host.
    assert!(
        pre_cookie_secure(
            &url,
            &[("host", "review.example"), ("x-forwarded-proto", "http")]
        )
        .await
    );
    plain.stop().await.expect("a clean stop");

    // An https --public-url: Secure on every answer, whatever Host and X-Forwarded-Proto say.
    let config = Config {
        public_url: Some("https://review.example".parse().expect("a URL")),
        ..Config::default()
    };
    let (public, _fake) = service(config).await;
    let url = public.url.clone();
    assert!(pre_cookie_secure(&url, &[]).await);
    assert!(pre_cookie_secure(&url, &[("x-forwarded-proto", "http")]).await);
    let reply = sign_in(&url, ADA, &[]).await;
    assert!(signed_in(&reply), "{}", reply.text());
    assert!(is_secure(set_cookies(&reply, "jevjudge_ui")[0]));
    // A form posted from the public URL's origin (the proxy forwards Host: 127.0.0.1) is this
    // site's.
    let (pre, csrf) = form(&url, &[]).await;
    let reply = post_sign_in(
        &url,
        &pre,
        format!("csrf={csrf}&token={BOB}"),
        &[("origin", "https://review.example")],
    )
    .await;
    assert!(signed_in(&reply), "{}", reply.text());
    public.stop().await.expect("a clean stop");

    // An http --public-url on loopback turns nothing on.
    let config = Config {
        public_url: Some("http://127.0.0.1:8080".parse().expect("a URL")),
        ..Config::default()
    };
    let (local, _fake) = service(config).await;
    assert!(!pre_cookie_secure(&local.url, &[]).await);
    local.stop().await.expect("a clean stop");
}
