//! systemone-wire.md §13 item 2: auth first when a key is set, never echoed; off without a key.

use reqwest::Method;
use serde_json::json;

use crate::util::{client, keyed, noul_request, post_raw, read, server};

const KEY: &str = "apikey_test-key_0123456789";

fn body() -> Vec<u8> {
    serde_json::to_vec(&noul_request()).expect("serialisable")
}

#[tokio::test]
async fn a_missing_or_non_bearer_key_gets_403() {
    let fake = keyed(KEY).await;
    for authorization in [None, Some("Basic dXNlcjpwYXNz"), Some(KEY), Some("Bearer ")] {
        let reply = post_raw(&fake, body(), authorization).await;
        assert_eq!(reply.status, 403, "{authorization:?}");
        assert_eq!(
            reply.json(),
            json!({"detail": {"error_type": "authentication_error",
                              "message": "Must supply an API key! Check your request and try again."}})
        );
    }
}

#[tokio::test]
async fn a_wrong_key_gets_401_and_is_never_echoed() {
    let fake = keyed(KEY).await;
    let reply = post_raw(&fake, body(), Some("Bearer apikey_wrong-key_987")).await;
    assert_eq!(reply.status, 401);
    assert_eq!(reply.json()["detail"]["error_type"], "authentication_error");
    let text = format!("{:?} {}", reply.headers, reply.text());
    assert!(!text.contains("apikey_"), "{text}");
}

#[tokio::test]
async fn the_right_key_is_answered() {
    let fake = keyed(KEY).await;
    let reply = post_raw(&fake, body(), Some(&format!("Bearer {KEY}"))).await;
    assert_eq!(reply.status, 200);
    assert!(!reply.text().contains(KEY));
}

#[tokio::test]
async fn auth_comes_before_validation() {
    let fake = keyed(KEY).await;
    let reply = post_raw(&fake, b"not json".to_vec(), None).await;
    assert_eq!(reply.status, 403);
    let reply = post_raw(&fake, b"not json".to_vec(), Some(&format!("Bearer {KEY}"))).await;
    assert_eq!(reply.status, 422);
}

#[tokio::test]
async fn models_needs_the_key_and_health_does_not() {
    let fake = keyed(KEY).await;
    let models = format!("{}/v1/models", fake.url());
    let missing = read(client().get(&models).send().await.expect("a response")).await;
    assert_eq!(missing.status, 403);
    let right = read(
        client()
            .get(&models)
            .bearer_auth(KEY)
            .send()
            .await
            .expect("a response"),
    )
    .await;
    assert_eq!(right.status, 200);
    let health = crate::util::call(&fake, Method::GET, "/health").await;
    assert_eq!(health.status, 200);
}

#[tokio::test]
async fn without_a_key_every_request_is_accepted() {
    let fake = server(Default::default()).await;
    for authorization in [None, Some("Bearer anything"), Some("Basic Zm9v")] {
        let reply = post_raw(&fake, body(), authorization).await;
        assert_eq!(reply.status, 200, "{authorization:?}");
    }
}
