//! systemone-wire.md §13 item 1: routes, 404/405 bodies, headers on every response.

use std::collections::HashSet;

use reqwest::Method;
use serde_json::json;

use crate::util::{call, is_request_id, noul_request, post, post_raw, server};

#[tokio::test]
async fn health_answers_ok() {
    let fake = server(Default::default()).await;
    let reply = call(&fake, Method::GET, "/health").await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json(), json!({"status": "ok"}));
}

#[tokio::test]
async fn models_lists_the_two_aliases() {
    let fake = server(Default::default()).await;
    let reply = call(&fake, Method::GET, "/v1/models").await;
    assert_eq!(reply.status, 200);
    let body = reply.json();
    let names: Vec<&str> = body["models"]
        .as_array()
        .map(|models| models.iter().filter_map(|m| m["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["jev-latest", "jev-preview"]);
    for model in body["models"].as_array().into_iter().flatten() {
        assert!(model["description"].is_string() && model["release_date"].is_string());
    }
}

#[tokio::test]
async fn systemone_answers_a_valid_request() {
    let fake = server(Default::default()).await;
    let reply = post(&fake, &noul_request()).await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json()["answers"]["refund"]["type"], "noul");
}

#[tokio::test]
async fn unknown_routes_get_404_and_wrong_methods_405() {
    let fake = server(Default::default()).await;
    let not_found = (404, json!({"detail": "Not Found"}));
    let not_allowed = (405, json!({"detail": "Method Not Allowed"}));
    for (method, path, (status, body)) in [
        (Method::GET, "/", &not_found),
        (Method::POST, "/v1/evaluate", &not_found),
        (Method::GET, "/v1/systemone/x", &not_found),
        (Method::GET, "/v1/systemone", &not_allowed),
        (Method::PUT, "/v1/systemone", &not_allowed),
        (Method::POST, "/v1/models", &not_allowed),
        (Method::DELETE, "/health", &not_allowed),
    ] {
        let reply = call(&fake, method.clone(), path).await;
        assert_eq!(reply.status, *status, "{method} {path}");
        assert_eq!(&reply.json(), body, "{method} {path}");
    }
}

#[tokio::test]
async fn every_response_is_json_with_a_fresh_request_id() {
    let fake = server(Default::default()).await;
    let replies = vec![
        post(&fake, &noul_request()).await,
        post(&fake, &noul_request()).await,
        post_raw(&fake, b"not json".to_vec(), None).await,
        post(
            &fake,
            &json!({"model": "jev-typo", "state": "s", "questions": {"q": {"type": "noul"}}}),
        )
        .await,
        call(&fake, Method::GET, "/health").await,
        call(&fake, Method::GET, "/v1/models").await,
        call(&fake, Method::GET, "/nope").await,
        call(&fake, Method::GET, "/v1/systemone").await,
    ];
    let mut ids = HashSet::new();
    for reply in &replies {
        assert_eq!(
            reply.header("content-type"),
            Some("application/json"),
            "{}",
            reply.status
        );
        let id = reply.header("x-typesafe-request-id").unwrap_or_default();
        assert!(is_request_id(id), "{id}");
        assert_eq!(
            reply.header("x-jevjudge-fake"),
            Some("1"),
            "the fake marks every response as its own ({})",
            reply.status
        );
        ids.insert(id.to_owned());
    }
    assert_eq!(ids.len(), replies.len(), "request ids are never reused");
}
