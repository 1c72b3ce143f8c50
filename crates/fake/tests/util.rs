//! Shared helpers: a fake on 127.0.0.1:0 and a plain reqwest client.

use std::net::SocketAddr;
use std::time::Duration;

use jevjudge_fake::{Config, FakeServer};
pub use jevjudge_test_support::{Reply, mixed_request, read};
use serde_json::{Value, json};

/// A fake on a free local port.
pub async fn server(config: Config) -> FakeServer {
    let addr: SocketAddr = "127.0.0.1:0".parse().expect("a socket address");
    FakeServer::start(config, addr)
        .await
        .expect("the fake starts")
}

/// A fake that requires `key`.
pub async fn keyed(key: &str) -> FakeServer {
    server(Config {
        key: Some(key.into()),
        ..Config::default()
    })
    .await
}

/// A plain client: no proxy, no pooling surprises, a generous timeout.
pub fn client() -> reqwest::Client {
    client_with_timeout(Duration::from_secs(10))
}

/// A plain client with the given total timeout.
pub fn client_with_timeout(timeout: Duration) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .timeout(timeout)
        .build()
        .expect("a client")
}

/// `POST /v1/systemone` with a JSON body and no key.
pub async fn post(server: &FakeServer, body: &Value) -> Reply {
    post_raw(
        server,
        serde_json::to_vec(body).expect("serialisable"),
        None,
    )
    .await
}

/// `POST /v1/systemone` with these bytes and optionally an `Authorization` value.
pub async fn post_raw(server: &FakeServer, body: Vec<u8>, authorization: Option<&str>) -> Reply {
    let mut request = client()
        .post(format!("{}/v1/systemone", server.url()))
        .header("content-type", "application/json")
        .body(body);
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    read(request.send().await.expect("a response")).await
}

/// Any method on any path.
pub async fn call(server: &FakeServer, method: reqwest::Method, path: &str) -> Reply {
    let response = client()
        .request(method, format!("{}{path}", server.url()))
        .send()
        .await
        .expect("a response");
    read(response).await
}

/// One noul question.
pub fn noul_request() -> Value {
    json!({"model": "jev-latest", "state": "I was charged twice; please refund the duplicate.",
           "questions": {"refund": {"type": "noul", "instructions": "Is the customer asking for a refund?"}}})
}

/// Whether `id` looks like `req_` plus 32 lowercase hex digits.
pub fn is_request_id(id: &str) -> bool {
    id.strip_prefix("req_").is_some_and(|hex| {
        hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}
