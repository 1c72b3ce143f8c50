//! The reviewer pages (`/ui/`) over real HTTP on 127.0.0.1, with a real SQLite store: sign-in
//! and its cookie, CSRF refusals, escaping, and the blind rule.

use std::time::Duration;

use jevjudge_judge::{Status, SystemOneBackend};
use jevjudge_serve::{DecisionLogConfig, Metrics, QueuePolicy, ReviewerTokens};
use jevjudge_store::{Enqueue, KeptState, NewReview, QueueReason, ReviewId, Store, StoreUrl};
use jevjudge_test_support::expect::contains;
use serde_json::json;

use crate::{
    store::sqlite_url,
    util::{
        Built, Reply, Service, browser, client, csrf, definitions, encode, fake_answering, read,
        refund_state, set_cookies,
    },
};

const XSS: &str = "<script>window.__xss=1</script> <img src=x onerror=\"window.__xss=2\"> \
                   <a href=\"javascript:window.__xss=3\">javascript:window.__xss=3</a>";

/// A service with a review queue (reviewers `ada` and `bob`) on a fresh SQLite store, holding
/// one queued INCONCLUSIVE refund-answer-v1 review (Jev: 0.5) whose answer is `XSS`. The review
/// is written with the store's `insert_queued`, as the service writes a queued review.
async fn service() -> (Service, jevjudge_fake::FakeServer) {
    let (service, fake, url) = replica(None).await;
    queue_one(&url).await;
    (service, fake)
}

/// A service on the store at `url` (a new SQLite file when None), with the reviewers `ada` and
/// `bob` and a review queue; and the store's URL.
async fn replica(url: Option<StoreUrl>) -> (Service, jevjudge_fake::FakeServer, StoreUrl) {
    let url = url.unwrap_or_else(sqlite_url);
    let fake = fake_answering(&[("supported", 0.5)]).await;
    let metrics = Metrics::new();
    let backend = SystemOneBackend::new(client(&fake, &metrics, "test-key", 0));
    let reviewers = ReviewerTokens::parse("ada:tok-ada-1-0123456789ab,bob:tok-bob-2-0123456789ab")
        .expect("reviewers");
    let built = Built::builder(backend, definitions())
        .metrics(metrics)
        .decision_log(
            DecisionLogConfig::url(url.clone())
                .keep_state(true)
                .requested_model("jev-latest"),
        )
        .review_queue(QueuePolicy::new([Status::Inconclusive], reviewers))
        .build()
        .await
        .expect("the store opens and keeps the definitions");
    (Service::start_built(built).await, fake, url)
}

/// Queues one INCONCLUSIVE refund-answer-v1 review whose answer is `XSS`.
async fn queue_one(url: &StoreUrl) {
    let store = Store::open(url).await.expect("the store opens");
    let definition = definitions();
    let questions = definition
        .get("refund-answer-v1")
        .expect("the refund definition")
        .questions()
        .to_json();
    store
        .put_definition("sha256:ui-test-refund", "refund-answer-v1", &questions)
        .await
        .expect("the definition is kept");
    let mut state_text = refund_state();
    state_text["assistant_answer"] = json!(XSS);
    let review = NewReview {
        id: ReviewId::new(),
        definition_version: "refund-answer-v1".to_owned(),
        definition_digest: "sha256:ui-test-refund".to_owned(),
        state_digest: "sha256:00ff".to_owned(),
        reference: Some("ticket-7".to_owned()),
        status: "INCONCLUSIVE".to_owned(),
        error: "NONE".to_owned(),
        detail: None,
        findings: json!({"supported": {"status": "INCONCLUSIVE", "yes_probability": 0.5,
                                       "expected_probability": 0.5}}),
        model: Some("jev-1.13.0".to_owned()),
        usage: None,
        elapsed: Duration::from_millis(20),
        request_id: "req-ui-1".to_owned(),
        backend: "fake".to_owned(),
        kept: Some(KeptState {
            state: state_text,
            answers: None,
            requested_model: "jev-latest".to_owned(),
        }),
        shadow_of: None,
        route: None,
    };
    let enqueue = Enqueue {
        reason: QueueReason::Status,
        copies: 1,
    };
    let items = store
        .insert_queued(&review, Some(&enqueue))
        .await
        .expect("the review is queued");
    assert_eq!(items.len(), 1);
}

async fn get(url: &str, cookie: &str) -> Reply {
    read(
        browser()
            .get(url)
            .header("cookie", cookie)
            .send()
            .await
            .expect("a response"),
    )
    .await
}

async fn post(url: &str, cookie: &str, form: &[(&str, &str)], extra: &[(&str, &str)]) -> Reply {
    let body: String = form
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&");
    let mut request = browser()
        .post(url)
        .header("cookie", cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body);
    for (name, value) in extra {
        request = request.header(*name, *value);
    }
    read(request.send().await.expect("a response")).await
}

/// Signs in with `token`: the sign-in reply and the session cookie (`name=value`).
async fn sign_in(service: &Service, token: &str) -> (Reply, Option<String>) {
    let form = get(&format!("{}/ui/sign-in", service.url), "").await;
    assert_eq!(form.status, 200);
    let pre = set_cookies(&form, "jevjudge_ui_pre")[0]
        .split(';')
        .next()
        .expect("a pair")
        .to_owned();
    let token_field = csrf(&form.text());
    let reply = post(
        &format!("{}/ui/sign-in", service.url),
        &pre,
        &[("csrf", &token_field), ("token", token)],
        &[],
    )
    .await;
    let session = set_cookies(&reply, "jevjudge_ui")
        .first()
        .map(|cookie| cookie.split(';').next().expect("a pair").to_owned());
    (reply, session)
}

/// Signs in and claims the queued item: (session cookie, the page's CSRF token, item path).
async fn claim(service: &Service, token: &str) -> (String, String, String) {
    claim_across(service, service, token, &[("version", "")]).await
}

/// Signs in on `signed_in_at` and claims the queued item on `claimed_at` with its queue page's
/// form (and the `extra` fields): (session cookie, the page's CSRF token, item path).
async fn claim_across(
    signed_in_at: &Service,
    claimed_at: &Service,
    token: &str,
    extra: &[(&str, &str)],
) -> (String, String, String) {
    let (_, session) = sign_in(signed_in_at, token).await;
    let session = session.expect("signed in");
    let queue = get(&format!("{}/ui/", claimed_at.url), &session).await;
    assert_eq!(queue.status, 200, "{}", queue.text());
    let token = csrf(&queue.text());
    let mut form = vec![("csrf", token.as_str())];
    form.extend_from_slice(extra);
    let reply = post(
        &format!("{}/ui/claim", claimed_at.url),
        &session,
        &form,
        &[],
    )
    .await;
    assert_eq!(reply.status, 303, "{}", reply.text());
    let location = reply.headers["location"]
        .to_str()
        .expect("ASCII")
        .to_owned();
    assert!(location.starts_with("/ui/items/"), "{location}");
    (session, token, location)
}

#[tokio::test]
async fn sign_in_sets_an_http_only_same_site_strict_cookie_on_path_ui() {
    let (service, _fake) = service().await;
    let anonymous = get(&format!("{}/ui/", service.url), "").await;
    assert_eq!(anonymous.status, 303);
    assert_eq!(anonymous.headers["location"], "/ui/sign-in");

    let (refused, session) = sign_in(&service, "tok-nobody").await;
    assert_eq!(refused.status, 401);
    assert_eq!(session, None);
    assert!(refused.text().contains("not a reviewer"));

    let (reply, session) = sign_in(&service, "tok-ada-1-0123456789ab").await;
    assert_eq!(reply.status, 303);
    assert_eq!(reply.headers["location"], "/ui/");
    let cookie = set_cookies(&reply, "jevjudge_ui")[0];
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/ui", "Max-Age=28800"] {
        contains(cookie, &format!("; {attribute}"));
    }
    // On a loopback host the cookie may travel over plain HTTP (docs/how-to/review-queue-team.md).
    assert!(!cookie.contains("Secure"), "{cookie}");
    assert!(
        !cookie.contains("tok-ada-1-0123456789ab"),
        "the token is never in the cookie"
    );

    let queue = get(
        &format!("{}/ui/", service.url),
        &session.expect("a session"),
    )
    .await;
    assert_eq!(queue.status, 200);
    let text = queue.text();
    assert!(text.contains("signed in as <strong>ada</strong>"), "{text}");
    assert!(text.contains("refund-answer-v1 (1 pending)"), "{text}");
    let csp = queue.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.starts_with("default-src 'none'"), "{csp}");
    assert!(csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"));
    assert_eq!(queue.headers["x-content-type-options"], "nosniff");
    assert_eq!(queue.headers["referrer-policy"], "no-referrer");
    assert_eq!(queue.headers["cache-control"], "no-store");

    // A forged or expired cookie is no session.
    let forged = get(
        &format!("{}/ui/", service.url),
        "jevjudge_ui=v1.616461.9999999999.00.00",
    )
    .await;
    assert_eq!(forged.status, 303);
    service.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn a_post_without_or_with_a_wrong_csrf_token_is_refused() {
    let (service, _fake) = service().await;
    let (_, ada) = sign_in(&service, "tok-ada-1-0123456789ab").await;
    let ada = ada.expect("a session");
    let (_, bob) = sign_in(&service, "tok-bob-2-0123456789ab").await;
    let bob = bob.expect("a session");
    let bobs_token = csrf(&get(&format!("{}/ui/", service.url), &bob).await.text());
    let claim = format!("{}/ui/claim", service.url);

    let without = post(&claim, &ada, &[("version", "")], &[]).await;
    assert_eq!(without.status, 403, "{}", without.text());
    let wrong = post(&claim, &ada, &[("csrf", &bobs_token)], &[]).await;
    assert_eq!(wrong.status, 403);
    let garbage = post(&claim, &ada, &[("csrf", "00")], &[]).await;
    assert_eq!(garbage.status, 403);

    let adas_token = csrf(&get(&format!("{}/ui/", service.url), &ada).await.text());
    // With the right token, still refused from another site or origin.
    for header in [
        ("sec-fetch-site", "cross-site"),
        ("origin", "http://evil.example"),
    ] {
        let refused = post(&claim, &ada, &[("csrf", &adas_token)], &[header]).await;
        assert_eq!(refused.status, 403, "{header:?}");
    }
    // The sign-in form needs its pre-session cookie and token too.
    let signin = post(
        &format!("{}/ui/sign-in", service.url),
        "",
        &[("token", "tok-ada-1-0123456789ab")],
        &[],
    )
    .await;
    assert_eq!(signin.status, 403);
    assert!(set_cookies(&signin, "jevjudge_ui").is_empty());
    // None of those claimed anything: the item is still pending.
    let queue = get(&format!("{}/ui/", service.url), &ada).await.text();
    assert!(
        queue.contains(r#"<div class="figure">1</div><div class="label">pending"#),
        "{queue}"
    );

    let right = post(
        &claim,
        &ada,
        &[("csrf", &adas_token)],
        &[("origin", &service.url), ("sec-fetch-site", "same-origin")],
    )
    .await;
    assert_eq!(right.status, 303, "{}", right.text());
    service.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn the_item_page_shows_the_draft_escaped_and_no_probability_until_decided() {
    let (service, _fake) = service().await;
    let (ada, token, item) = claim(&service, "tok-ada-1-0123456789ab").await;
    let page = get(&format!("{}{item}", service.url), &ada).await;
    assert_eq!(page.status, 200);
    let html = page.text();
    assert!(
        html.contains("&lt;script&gt;window.__xss=1&lt;/script&gt;"),
        "{html}"
    );
    assert!(
        html.contains("&lt;img src=x onerror=&quot;window.__xss=2&quot;&gt;"),
        "{html}"
    );
    assert!(!html.contains("<script>window"));
    assert!(!html.contains("<img"));
    assert!(!html.contains("href=\"javascript:"));
    assert_eq!(html.matches("<script").count(), 1, "only keys.js");
    // Blind: no verdict, no status, no probability (the fake answered 0.5).
    for word in ["INCONCLUSIVE", "0.5", "yes_probability", "P(holds)"] {
        assert!(!html.contains(word), "{word} in the blind page: {html}");
    }
    assert!(html.contains(r#"name="c.supported" value="holds""#));

    // Another reviewer sees nothing of it.
    let (_, bob) = sign_in(&service, "tok-bob-2-0123456789ab").await;
    let bobs = get(&format!("{}{item}", service.url), &bob.expect("a session")).await;
    assert_eq!(bobs.status, 409);
    assert!(!bobs.text().contains("xss"));

    // An unanswered criterion sends the form back; the answer saves it.
    let decision = format!("{}{item}/decision", service.url);
    let incomplete = post(&decision, &ada, &[("csrf", &token), ("note", "n")], &[]).await;
    assert_eq!(incomplete.status, 422);
    assert!(incomplete.text().contains("missing: supported"));
    assert!(!incomplete.text().contains("INCONCLUSIVE"));
    let saved = post(
        &decision,
        &ada,
        &[
            ("csrf", &token),
            ("c.supported", "not"),
            ("note", "<b>no refund</b>"),
        ],
        &[],
    )
    .await;
    assert_eq!(saved.status, 303, "{}", saved.text());
    let result = get(&format!("{}{item}", service.url), &ada).await.text();
    assert!(result.contains("Saved"), "{result}");
    assert!(result.contains("does not hold"));
    assert!(
        result.contains("0.500") && result.contains("INCONCLUSIVE"),
        "{result}"
    );
    assert!(result.contains("&lt;b&gt;no refund&lt;/b&gt;"));

    // It left the queue.
    let queue = get(&format!("{}/ui/", service.url), &ada).await.text();
    assert!(queue.contains("Nothing is pending"), "{queue}");
    // Listed only among the reviewer's own decisions, linked to its result.
    let (open, history) = queue
        .split_once("Your latest decisions")
        .expect("the reviewer's history");
    assert!(!open.contains(&item[item.len() - 8..]), "{queue}");
    assert!(history.contains(&format!("href=\"{item}\"")), "{queue}");
    service.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn the_static_files_are_served_with_their_types() {
    let (service, _fake) = service().await;
    for (path, content_type, text) in [
        (
            "/ui/static/style.css",
            "text/css; charset=utf-8",
            "font-family",
        ),
        (
            "/ui/static/keys.js",
            "text/javascript; charset=utf-8",
            "keydown",
        ),
    ] {
        let file = get(&format!("{}{path}", service.url), "").await;
        assert_eq!(file.status, 200, "{path}");
        assert_eq!(file.headers["content-type"], content_type, "{path}");
        assert_eq!(file.headers["x-content-type-options"], "nosniff", "{path}");
        assert!(file.text().contains(text), "{path}");
    }
    service.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn a_session_made_on_one_replica_works_on_another() {
    let (first, _fake_1, url) = replica(None).await;
    queue_one(&url).await;
    let (second, _fake_2, _) = replica(Some(url)).await;
    // A form of the first replica is accepted by the second: one key from one token set.
    let (session, _, item) = claim_across(&first, &second, "tok-ada-1-0123456789ab", &[]).await;
    let page = get(&format!("{}{item}", first.url), &session).await;
    assert_eq!(
        page.status, 200,
        "the first replica shows the item the second leased"
    );
    first.stop().await.expect("a clean stop");
    second.stop().await.expect("a clean stop");
}

#[tokio::test]
async fn the_cookie_is_secure_when_the_host_is_not_loopback() {
    let (service, _fake) = service().await;
    let reply = read(
        browser()
            .get(format!("{}/ui/sign-in", service.url))
            .header("host", "review.example")
            .send()
            .await
            .expect("a response"),
    )
    .await;
    assert_eq!(reply.status, 200);
    let cookie = set_cookies(&reply, "jevjudge_ui_pre")[0];
    assert!(cookie.split("; ").any(|a| a == "Secure"), "{cookie}");
    service.stop().await.expect("a clean stop");
}

// Token guessing through the sign-in form: ten attempts per address, then 429 with
// Retry-After — and from then on not even the right token is checked, so a refusal says
// nothing about the token (docs/how-to/review-queue-team.md, "Security of the pages").
#[tokio::test]
async fn sign_in_attempts_past_ten_per_address_get_429_without_checking_the_token() {
    let (service, _fake) = service().await;
    for n in 0..10 {
        let (refused, session) = sign_in(&service, &format!("guess-{n}")).await;
        assert_eq!(refused.status, 401, "guess {n}");
        assert_eq!(session, None);
    }
    let (limited, session) = sign_in(&service, "tok-ada-1-0123456789ab").await;
    assert_eq!(limited.status, 429, "{}", limited.text());
    assert_eq!(
        session, None,
        "the right token is not checked while limited"
    );
    let wait: u64 = limited.headers["retry-after"]
        .to_str()
        .expect("ASCII")
        .parse()
        .expect("whole seconds");
    assert!((1..=6).contains(&wait), "{wait}");
    contains(
        &limited.text(),
        "Too many sign-in attempts from this address",
    );
    // The page still carries a fresh form, and the API's bearer tokens are not affected.
    assert!(!csrf(&limited.text()).is_empty());
    let stats = read(
        browser()
            .get(format!("{}/v1/queue/stats", service.url))
            .bearer_auth("tok-ada-1-0123456789ab")
            .send()
            .await
            .expect("a response"),
    )
    .await;
    assert_eq!(stats.status, 200);
    service.stop().await.expect("a clean stop");
}
