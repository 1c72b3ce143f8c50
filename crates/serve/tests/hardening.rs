//! Hostile input on the decision log and the review queue, on SQLite and on a real PostgreSQL
//! (`JEVJUDGE_TEST_PG_URL`): control characters are the caller's mistake (400/422 naming the
//! field) on both stores alike, never a store outage.

use jevjudge_judge::{Status, SystemOneBackend};
use jevjudge_serve::{Config, DecisionLogConfig, Metrics, QueuePolicy, ReviewerTokens};
use jevjudge_store::{Store, StoreUrl};
use reqwest::Method;
use serde_json::{Value, json};

use crate::{
    store::{pg_url, sqlite_url},
    util::{
        Built, Reply, Service, browser, caller, client, definitions, encode, fake_answering, read,
        refund_state,
    },
};

pub const ANA: &str = "tok-ana-hardening-0123";
pub const BOB: &str = "tok-bob-hardening-4567";

/// A service queueing INCONCLUSIVE reviews (the fake answers 0.5) for `ana` and `bob`, with
/// `policy` changed by `adjust`; and its store.
pub async fn queued(
    url: &StoreUrl,
    adjust: impl FnOnce(&mut QueuePolicy),
) -> (Service, Store, jevjudge_fake::FakeServer) {
    queued_with(url, adjust, Config::default()).await
}

/// A caller's token (`--auth-token-env`): while a queue is on, the decision log needs one.
pub const CALLER: &str = "tok-caller-0123456789";

/// [`queued`] with these settings.
pub async fn queued_with(
    url: &StoreUrl,
    adjust: impl FnOnce(&mut QueuePolicy),
    config: Config,
) -> (Service, Store, jevjudge_fake::FakeServer) {
    let fake = fake_answering(&[("supported", 0.5), ("no_promises", 0.05)]).await;
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(&fake, &metrics, "test-key", 0));
    let store = Store::open(url).await.expect("the store opens");
    let reviewers = ReviewerTokens::parse(&format!("ana:{ANA},bob:{BOB}")).expect("reviewers");
    let mut policy = QueuePolicy::new([Status::Inconclusive], reviewers);
    adjust(&mut policy);
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
        .expect("the service builds");
    (Service::start_built(built).await, store, fake)
}

/// `method path` as the reviewer of `token`, with a JSON body.
pub async fn as_reviewer(
    service: &Service,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> Reply {
    let mut request = caller()
        .request(method, format!("{}{path}", service.url))
        .header("authorization", format!("Bearer {token}"));
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_string());
    }
    read(request.send().await.expect("a response")).await
}

/// A service like [`queued`] whose callers need [`CALLER`] (so its decision log can be read).
async fn queued_for_callers(url: &StoreUrl) -> (Service, Store, jevjudge_fake::FakeServer) {
    let config = Config {
        auth_tokens: jevjudge_serve::AuthTokens::new([CALLER]).expect("a caller token"),
        ..Config::default()
    };
    queued_with(url, |_| {}, config).await
}

/// `GET path` as the caller of [`CALLER`].
async fn as_caller(service: &Service, path: &str) -> Reply {
    let bearer = format!("Bearer {CALLER}");
    service
        .call(Method::GET, path, &[("authorization", bearer.as_str())])
        .await
}

/// Queues `n` reviews (each an INCONCLUSIVE refund review).
pub async fn queue_reviews(service: &Service, n: usize) {
    let bearer = format!("Bearer {CALLER}");
    for _ in 0..n {
        let body = json!({"state": refund_state()}).to_string().into_bytes();
        // The caller's token is ignored by a service that needs none.
        let reply = service
            .post(
                "refund-answer-v1",
                body,
                &[("authorization", bearer.as_str())],
            )
            .await;
        assert_eq!(reply.json()["status"], "INCONCLUSIVE", "{}", reply.text());
    }
}

pub async fn page(url: &str, cookie: &str, form: Option<&[(&str, &str)]>) -> Reply {
    let request = match form {
        None => browser().get(url),
        Some(form) => browser()
            .post(url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(
                form.iter()
                    .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
                    .collect::<Vec<_>>()
                    .join("&"),
            ),
    };
    read(
        request
            .header("cookie", cookie)
            .send()
            .await
            .expect("a response"),
    )
    .await
}

/// The value of the first hidden `csrf` field of a page.
fn csrf(html: &str) -> String {
    let marker = r#"name="csrf" value=""#;
    let start = html.find(marker).expect("a csrf field") + marker.len();
    html[start..][..html[start..].find('"').expect("a closing quote")].to_owned()
}

/// The first `name=value` of the `Set-Cookie` header named `name`.
fn cookie(reply: &Reply, name: &str) -> String {
    reply
        .headers
        .get_all("set-cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .find(|value| value.starts_with(&format!("{name}=")))
        .and_then(|value| value.split(';').next())
        .expect("the cookie is set")
        .to_owned()
}

/// Signs in on the reviewer pages with `token`: the session cookie and a CSRF token.
pub async fn sign_in(service: &Service, token: &str) -> (String, String) {
    let form = page(&format!("{}/ui/sign-in", service.url), "", None).await;
    let pre = cookie(&form, "jevjudge_ui_pre");
    let field = csrf(&form.text());
    let reply = page(
        &format!("{}/ui/sign-in", service.url),
        &pre,
        Some(&[("csrf", &field), ("token", token)]),
    )
    .await;
    assert_eq!(reply.status, 303, "{}", reply.text());
    let session = cookie(&reply, "jevjudge_ui");
    let queue = page(&format!("{}/ui/", service.url), &session, None).await;
    assert_eq!(queue.status, 200, "{}", queue.text());
    let token = csrf(&queue.text());
    (session, token)
}

jevjudge_test_support::on_both_stores!(defect_4_control_characters_are_refused_naming_the_field);

/// Refused as the caller's mistake: `status` and `code` (or an HTML page for `/ui`), the
/// field named, no `Retry-After` (nothing to retry).
fn assert_refused(reply: &Reply, status: u16, code: Option<&str>, field: &str, what: &str) {
    assert_eq!(reply.status, status, "{what}: {}", reply.text());
    assert!(
        reply.headers.get("retry-after").is_none(),
        "{what}: no Retry-After"
    );
    if let Some(code) = code {
        assert_eq!(reply.error_code(), code, "{what}");
    }
    assert!(reply.text().contains(field), "{what}: {}", reply.text());
    assert!(
        reply.text().contains("control characters"),
        "{what}: {}",
        reply.text()
    );
}

async fn defect_4_control_characters_are_refused_naming_the_field(url: StoreUrl) {
    let (service, _store, _fake) = queued_for_callers(&url).await;
    queue_reviews(&service, 1).await;
    for control in ["%00", "%07", "%1B", "%7F", "%C2%85"] {
        // 1. GET /v1/reviews?version=
        let reply = as_caller(&service, &format!("/v1/reviews?version=v1{control}")).await;
        assert_refused(&reply, 400, Some("invalid_query"), "`version`", "list");
    }
    let ok = as_caller(&service, "/v1/reviews?version=refund-answer-v1").await;
    assert_eq!(ok.status, 200, "{}", ok.text());
    for control in ["\u{0}", "\u{7}", "\n", "\u{7f}", "\u{85}"] {
        // 2. POST /v1/queue/claim {"version": …}
        let reply = as_reviewer(
            &service,
            Method::POST,
            "/v1/queue/claim",
            ANA,
            Some(json!({"version": format!("refund-answer-v1{control}")})),
        )
        .await;
        assert_refused(&reply, 422, Some("invalid_body"), "`version`", "claim");
    }
    let claimed = as_reviewer(&service, Method::POST, "/v1/queue/claim", ANA, None).await;
    assert_eq!(claimed.status, 200, "{}", claimed.text());
    let item = claimed.json()["item"].as_str().expect("an item").to_owned();
    // 3. POST /v1/queue/{item}/decision with a note holding a control character.
    let decision = format!("/v1/queue/{item}/decision");
    for control in ["\u{0}", "\u{1b}", "\u{7f}"] {
        let body = json!({"findings": {"supported": true}, "note": format!("a{control}b")});
        let reply = as_reviewer(&service, Method::POST, &decision, ANA, Some(body)).await;
        assert_refused(&reply, 422, Some("invalid_body"), "`note`", "decision");
    }

    // The reviewer pages: 4. the queue page's version, 5. the claim form's version, 6. the
    // decision form's note.
    let (session, token) = sign_in(&service, ANA).await;
    let reply = page(
        &format!("{}/ui/?version=v1%00", service.url),
        &session,
        None,
    )
    .await;
    assert_refused(&reply, 400, None, "version", "queue page");
    let reply = page(
        &format!("{}/ui/claim", service.url),
        &session,
        Some(&[("csrf", &token), ("version", "refund-answer-v1\u{0}")]),
    )
    .await;
    assert_refused(&reply, 422, None, "version", "claim form");
    let reply = page(
        &format!("{}/ui/items/{item}/decision", service.url),
        &session,
        Some(&[
            ("csrf", &token),
            ("c.supported", "holds"),
            ("note", "a\u{0}b"),
        ]),
    )
    .await;
    assert_refused(&reply, 422, None, "note", "decision form");

    // Line breaks and tabs are a note's own: the decision is saved.
    let body = json!({"findings": {"supported": true}, "note": "line one\r\nline two\tend"});
    let saved = as_reviewer(&service, Method::POST, &decision, ANA, Some(body)).await;
    assert_eq!(saved.status, 200, "{}", saved.text());
}

/// `time` as RFC 3339 at a UTC offset of `hours` (`…T14:00:00+02:00`), its letters in the
/// case given.
fn at_offset(time: std::time::SystemTime, hours: i64, lower: bool) -> String {
    let shift = std::time::Duration::from_secs(hours.unsigned_abs() * 3600);
    let local = if hours >= 0 {
        time + shift
    } else {
        time - shift
    };
    let text = humantime::format_rfc3339_seconds(local).to_string();
    let text = format!(
        "{}{}{:02}:00",
        text.trim_end_matches('Z'),
        if hours >= 0 { '+' } else { '-' },
        hours.abs()
    );
    if lower { text.to_lowercase() } else { text }
}

#[tokio::test]
async fn defect_10_since_takes_rfc3339_offsets_and_lower_case_letters() {
    let url = sqlite_url();
    let (service, _store, _fake) = queued_for_callers(&url).await;
    queue_reviews(&service, 1).await;
    let now = std::time::SystemTime::now();
    let hour = std::time::Duration::from_secs(3600);
    let count = |reply: &Reply| reply.json()["reviews"].as_array().map(Vec::len);
    for (hours, lower) in [(2, false), (-5, false), (2, true), (0, true)] {
        let before = at_offset(now - hour, hours, lower);
        let after = at_offset(now + hour, hours, lower);
        let reply = as_caller(&service, &format!("/v1/reviews?since={}", encode(&before))).await;
        assert_eq!(reply.status, 200, "{before}: {}", reply.text());
        assert_eq!(count(&reply), Some(1), "{before}");
        let reply = as_caller(&service, &format!("/v1/reviews?since={}", encode(&after))).await;
        assert_eq!(reply.status, 200, "{after}: {}", reply.text());
        assert_eq!(count(&reply), Some(0), "{after}");
    }
}

jevjudge_test_support::on_both_stores!(defect_6_one_reviewer_holds_at_most_five_items);

async fn defect_6_one_reviewer_holds_at_most_five_items(url: StoreUrl) {
    let (service, _store, _fake) = queued(&url, |_| {}).await;
    queue_reviews(&service, 30).await;
    let mut held = Vec::new();
    let mut refusals = 0;
    // `new`: a plain claim would hand back a held item.
    let new = || Some(json!({"new": true}));
    for _ in 0..30 {
        let reply = as_reviewer(&service, Method::POST, "/v1/queue/claim", ANA, new()).await;
        match reply.status {
            200 => held.push(reply.json()["item"].as_str().expect("an item").to_owned()),
            409 => {
                refusals += 1;
                assert_eq!(reply.error_code(), "too_many_leases", "{}", reply.text());
                assert!(reply.headers.get("retry-after").is_none());
                let json = reply.json();
                assert!(json["error"]["message"].as_str().is_some());
                let mut listed: Vec<String> = json["held"]
                    .as_array()
                    .expect("held")
                    .iter()
                    .map(|id| id.as_str().expect("an id").to_owned())
                    .collect();
                listed.sort();
                let mut expected = held.clone();
                expected.sort();
                assert_eq!(listed, expected);
            }
            other => panic!("{other}: {}", reply.text()),
        }
    }
    assert_eq!((held.len(), refusals), (5, 25));
    // Another reviewer still gets items.
    let reply = as_reviewer(&service, Method::POST, "/v1/queue/claim", BOB, None).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    // The reviewer pages refuse the same way.
    let (session, token) = sign_in(&service, ANA).await;
    let reply = page(
        &format!("{}/ui/claim", service.url),
        &session,
        Some(&[("csrf", &token), ("version", ""), ("new", "1")]),
    )
    .await;
    assert_eq!(reply.status, 409, "{}", reply.text());
    assert!(reply.text().contains(&held[0]), "{}", reply.text());
    // Releasing one makes room for one more.
    let release = format!("/v1/queue/{}/release", held[0]);
    let reply = as_reviewer(&service, Method::POST, &release, ANA, None).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    let reply = as_reviewer(&service, Method::POST, "/v1/queue/claim", ANA, new()).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
}

#[tokio::test]
async fn defect_6_the_cap_is_the_policys() {
    let url = sqlite_url();
    let (service, _store, _fake) = queued(&url, |policy| policy.max_leases_per_reviewer = 2).await;
    queue_reviews(&service, 3).await;
    for expected in [200, 200, 409] {
        let new = Some(json!({"new": true}));
        let reply = as_reviewer(&service, Method::POST, "/v1/queue/claim", ANA, new).await;
        assert_eq!(reply.status, expected, "{}", reply.text());
    }
}

jevjudge_test_support::on_both_stores!(defect_5_items_whose_state_was_erased_expire);

async fn defect_5_items_whose_state_was_erased_expire(url: StoreUrl) {
    let (service, store, _fake) = queued(&url, |_| {}).await;
    queue_reviews(&service, 3).await;
    let held = as_reviewer(&service, Method::POST, "/v1/queue/claim", ANA, None).await;
    assert_eq!(held.status, 200, "{}", held.text());
    let item = held.json()["item"].as_str().expect("an item").to_owned();
    // The retention sweep, as `serve --retain-state` runs it, past every review.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(60);
    let erased = store.erase_state_before_counting(later).await.unwrap();
    assert_eq!((erased.reviews, erased.expired_items), (3, 3));
    // Nothing is handed out with "state": null.
    let reply = as_reviewer(&service, Method::POST, "/v1/queue/claim", BOB, None).await;
    assert_eq!(reply.status, 204, "{}", reply.text());
    let stats = as_reviewer(&service, Method::GET, "/v1/queue/stats", BOB, None).await;
    assert_eq!(stats.status, 200, "{}", stats.text());
    assert_eq!(stats.json()["expired"], 3);
    assert_eq!(stats.json()["claimed"], 0);
    assert_eq!(stats.json()["pending_by_version"], json!({}));
    let decision = format!("/v1/queue/{item}/decision");
    let body = json!({"findings": {"supported": true}});
    let reply = as_reviewer(&service, Method::POST, &decision, ANA, Some(body)).await;
    assert_eq!(reply.status, 409, "{}", reply.text());
    assert_eq!(reply.error_code(), "item_expired");
}
