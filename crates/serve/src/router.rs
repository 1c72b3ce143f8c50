//! The routes: `fn app(state) -> Router`, so tests can call it with `oneshot` and `main` only
//! binds and serves.

use axum::{
    Json, Router,
    extract::State,
    http::{HeaderValue, header::CONTENT_TYPE},
    middleware,
    response::{IntoResponse, Response},
    routing::{get, post},
};

use crate::{
    ServeError, ServeState,
    auth::{require_reviewer, require_routes_access, require_token},
    queue_api,
    request_middleware::request_context,
    review, reviews_api, route_changes_api, routes_api,
};

/// Every route of the JSON API as (method, path template), as the OpenAPI document lists them
/// (the router below writes each literally; a test checks the two agree).
///
/// `GET /v1/reviews/{version}` reads a review by id: the segment is a review id there (one
/// template per path, as the router and OpenAPI require).
pub const ROUTES: [(&str, &str); 20] = [
    ("POST", "/v1/reviews/{version}"),
    ("GET", "/v1/definitions"),
    ("GET", "/healthz"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
    ("GET", "/v1/reviews"),
    ("GET", "/v1/reviews/{version}"),
    ("GET", "/readyz"),
    ("POST", "/v1/queue/claim"),
    ("POST", "/v1/queue/{item}/decision"),
    ("POST", "/v1/queue/{item}/release"),
    ("GET", "/v1/queue/stats"),
    ("GET", "/v1/queue/mine"),
    ("GET", "/v1/queue/decisions"),
    ("GET", "/v1/routes"),
    ("GET", "/v1/routes/{route}"),
    ("PUT", "/v1/routes/{route}"),
    ("POST", "/v1/routes/{route}/promote"),
    ("POST", "/v1/routes/{route}/rollback"),
    ("GET", "/v1/routes/{route}/history"),
];

/// The service's router.
///
/// `/v1/*` and `/metrics` require a bearer token when [`crate::Config::auth_tokens`] has any
/// (changes to routes an administrator's, [`crate::Config::admin_tokens`]);
/// `/healthz`, `/readyz` and `/openapi.json` never do. Every response (errors included) carries
/// `x-request-id`, and every error is JSON ([`ServeError`]).
pub fn app(state: ServeState) -> Router {
    let protected = Router::new()
        .route(
            "/v1/reviews/{version}",
            post(review::review).get(reviews_api::get_review),
        )
        .route("/v1/reviews", get(reviews_api::list_reviews))
        .route("/v1/definitions", get(definitions))
        .route("/metrics", get(metrics))
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token));
    // Routes: reads take a caller's or an administrator's token, changes an administrator's.
    let routes = Router::new()
        .route("/v1/routes", get(routes_api::list_routes))
        .route(
            "/v1/routes/{route}",
            get(routes_api::get_route).put(route_changes_api::put_route),
        )
        .route(
            "/v1/routes/{route}/promote",
            post(route_changes_api::promote),
        )
        .route(
            "/v1/routes/{route}/rollback",
            post(route_changes_api::rollback),
        )
        .route(
            "/v1/routes/{route}/history",
            get(route_changes_api::history),
        )
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            require_routes_access,
        ));
    // Reviewers' routes: their own tokens (`--reviewer-tokens-env`), not the callers'.
    let queue = Router::new()
        .route("/v1/queue/claim", post(queue_api::claim))
        .route("/v1/queue/{item}/decision", post(queue_api::decide))
        .route("/v1/queue/{item}/release", post(queue_api::release))
        .route("/v1/queue/stats", get(queue_api::stats))
        .route("/v1/queue/mine", get(queue_api::mine))
        .route("/v1/queue/decisions", get(queue_api::decisions))
        .method_not_allowed_fallback(method_not_allowed)
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            require_reviewer,
        ));
    let open = Router::new()
        .route("/healthz", get(healthz))
        .route("/openapi.json", get(openapi))
        .route("/readyz", get(reviews_api::readyz))
        .method_not_allowed_fallback(method_not_allowed);
    Router::new()
        .merge(protected)
        .merge(routes)
        .merge(queue)
        .merge(open)
        .merge(crate::ui::router(state.clone()))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(
            state.clone(),
            request_context,
        ))
        .with_state(state)
}

async fn definitions(State(state): State<ServeState>) -> Response {
    Json(state.definitions().summary()).into_response()
}

async fn healthz(State(state): State<ServeState>) -> Response {
    Json(serde_json::json!({"status": "ok", "definitions": state.definitions().len()}))
        .into_response()
}

async fn metrics(State(state): State<ServeState>) -> Response {
    (
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
        )],
        state.render_metrics_with_store().await,
    )
        .into_response()
}

async fn openapi(State(state): State<ServeState>) -> Response {
    (
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        state
            .openapi_json(|config| crate::openapi(config).to_string())
            .to_owned(),
    )
        .into_response()
}

async fn not_found() -> ServeError {
    ServeError::NotFound
}

async fn method_not_allowed() -> ServeError {
    ServeError::MethodNotAllowed
}
