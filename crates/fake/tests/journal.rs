//! systemone-wire.md §13 item 7 (journal): bodies, question order, retry headers, call counts,
//! and the key redacted.

use reqwest::Method;

use crate::util::{call, client, keyed, mixed_request, server};

#[tokio::test]
async fn requests_are_journaled_with_the_key_redacted() {
    let key = "apikey_secret-journal-key";
    let fake = keyed(key).await;
    let body = mixed_request().to_string();
    let response = client()
        .post(format!("{}/v1/systemone", fake.url()))
        .bearer_auth(key)
        .header("content-type", "application/json")
        .header("x-typesafe-retry-count", "1")
        .header("user-agent", "jevjudge/0.1.0")
        .body(body.clone())
        .send()
        .await
        .expect("a response");
    assert_eq!(response.status().as_u16(), 200);

    let journal = fake.journal();
    assert_eq!(journal.len(), 1);
    let entry = &journal[0];
    assert_eq!(entry.method, "POST");
    assert_eq!(entry.path, "/v1/systemone");
    assert_eq!(entry.body, body.as_bytes());
    assert_eq!(entry.retry_count.as_deref(), Some("1"));
    assert_eq!(entry.header("authorization"), Some("Bearer <redacted>"));
    assert_eq!(entry.header("user-agent"), Some("jevjudge/0.1.0"));
    assert!(!format!("{journal:?}").contains(key));

    let order: Vec<String> = entry
        .json()
        .and_then(|body| {
            body["questions"]
                .as_object()
                .map(|q| q.keys().cloned().collect())
        })
        .unwrap_or_default();
    assert_eq!(
        order,
        ["refund_intent", "queue", "frustration"],
        "question order as sent (D1)"
    );
}

/// POSTs `body` (not necessarily JSON) to the fake's /v1/systemone; any answer will do.
async fn post_text(fake: &jevjudge_fake::FakeServer, body: &'static str) {
    let _ = client()
        .post(format!("{}/v1/systemone", fake.url()))
        .body(body)
        .send()
        .await
        .expect("a response");
}

#[tokio::test]
async fn rejected_and_other_requests_are_journaled_too() {
    let fake = keyed("K").await;
    let _ = call(&fake, Method::GET, "/health").await;
    let _ = call(&fake, Method::GET, "/nowhere").await;
    post_text(&fake, "{}").await;
    let journal = fake.journal();
    let paths: Vec<(&str, &str)> = journal
        .iter()
        .map(|e| (e.method.as_str(), e.path.as_str()))
        .collect();
    assert_eq!(
        paths,
        [
            ("GET", "/health"),
            ("GET", "/nowhere"),
            ("POST", "/v1/systemone")
        ]
    );
    assert!(journal.iter().all(|e| e.retry_count.is_none()));
    assert_eq!(
        fake.request_count(),
        1,
        "only POST /v1/systemone is counted"
    );
}

#[tokio::test]
async fn request_count_counts_every_post() {
    let fake = server(Default::default()).await;
    for _ in 0..5 {
        post_text(&fake, "x").await;
    }
    assert_eq!(fake.request_count(), 5);
    assert_eq!(fake.journal().len(), 5);
}
