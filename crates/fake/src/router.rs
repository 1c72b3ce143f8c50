//! Routes and middleware (systemone-wire.md §13 item 1): `POST /v1/systemone`,
//! `GET /v1/models`, `GET /health`; 404 and 405 in FastAPI's shape; a JSON content type, a
//! fresh `x-typesafe-request-id` and the fake's mark `x-jevjudge-fake: 1` on every response;
//! every request journaled.

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use jevjudge_wire::Secret;
use serde_json::json;

use crate::answers::answer_with;
use crate::auth;
use crate::corrupt;
use crate::fault::Fault;
use crate::journal::JournalEntry;
use crate::limit::Admission;
use crate::rejection::Rejection;
use crate::reply;
use crate::state::FakeState;
use crate::validation;

/// The largest request body the fake buffers, in bytes (the token limit rejects far less).
const MAX_BODY: usize = 64 * 1024 * 1024;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-typesafe-request-id");

/// Marks every response as the fake's ([`jevjudge_wire::FAKE_MARK_HEADER`]), so clients, reports
/// and records made against it say `fake` and never pass for the model it names.
const FAKE_MARK: HeaderName = HeaderName::from_static(jevjudge_wire::FAKE_MARK_HEADER);

/// The fake System One API as an axum router.
///
/// Tests can drive it in-process with tower's `oneshot`; [`crate::FakeServer`] serves it on a
/// socket (which is needed for connection faults such as [`Fault::Close`]).
pub fn app(state: FakeState) -> Router {
    Router::new()
        .route(
            "/v1/systemone",
            post(systemone).fallback(method_not_allowed),
        )
        .route("/v1/models", get(models).fallback(method_not_allowed))
        .route("/health", get(health).fallback(method_not_allowed))
        .fallback(not_found)
        .layer(DefaultBodyLimit::disable())
        .layer(middleware::from_fn_with_state(state.clone(), journal))
        .layer(middleware::map_response(stamp))
        .with_state(state)
}

async fn systemone(State(state): State<FakeState>, headers: HeaderMap, body: Bytes) -> Response {
    let fault = state.next_fault();
    let config = state.config();
    let authorized = auth::check(&headers, config.key.as_ref().map(Secret::expose_secret));
    // The limiter stands in front, like a gateway: it answers at once, before any latency, and
    // only for requests a scripted status fault does not replace and the key check lets in.
    if let Some(limiter) = state.limiter()
        && authorized.is_ok()
        && !fault.as_ref().is_some_and(Fault::is_canned)
    {
        let key = auth::caller_key(&headers);
        match limiter.admit(key, body.len(), tokio::time::Instant::now()) {
            Admission::Pass => {}
            Admission::RateLimited => return reply::limited(429, config.retry_after),
            Admission::Overloaded => return reply::limited(529, config.retry_after),
        }
    }
    if !config.latency.is_zero() {
        tokio::time::sleep(latency_sleep(config.latency)).await;
    }
    match &fault {
        Some(fault) if fault.is_canned() => return reply::canned(fault),
        Some(Fault::Close) => return reply::drop_connection(false),
        Some(Fault::Reset) => return reply::drop_connection(true),
        Some(Fault::Stall) => {
            state.shutting_down().await;
            return reply::drop_connection(false);
        }
        Some(Fault::Delay(wait)) => tokio::time::sleep(*wait).await,
        _ => {}
    }
    let outcome = authorized
        .and_then(|()| validation::parse(&body))
        .and_then(|request| answer_with(&request, state.noise(), config.replay.as_ref()));
    match outcome {
        Err(rejection) => reply::rejection(&rejection),
        Ok(mut answer) => {
            if let Some(fault) = &fault {
                corrupt::apply(fault, &mut answer);
            }
            reply::answer(&answer, fault.as_ref())
        }
    }
}

/// How long to sleep for an answer `latency` late. tokio's timer rounds a deadline up to the
/// next millisecond and then wakes a little later still, so a plain `sleep(20 ms)` answers after
/// about 21.5 ms; sleeping 1 ms less makes the delivered latency about what was asked for (for
/// latencies of 2 ms and more).
fn latency_sleep(latency: std::time::Duration) -> std::time::Duration {
    const TIMER_SLACK: std::time::Duration = std::time::Duration::from_millis(1);
    if latency >= 2 * TIMER_SLACK {
        latency - TIMER_SLACK
    } else {
        latency
    }
}

async fn models(State(state): State<FakeState>, headers: HeaderMap) -> Response {
    if let Err(rejection) = auth::check(
        &headers,
        state.config().key.as_ref().map(Secret::expose_secret),
    ) {
        return reply::rejection(&rejection);
    }
    reply::json(
        200,
        &json!({"models": [
            {"name": "jev-latest", "description": "The latest iteration of TypeSafe's System One Model: Jev",
             "release_date": "2026-09-10T18:38:01.391457+00:00"},
            {"name": "jev-preview", "description": "A preview version of `jev-latest`: should be better in most ways",
             "release_date": "2026-09-10T18:39:06.057655+00:00"}]}),
    )
}

async fn health() -> Response {
    reply::json(200, &json!({"status": "ok"}))
}

async fn not_found() -> Response {
    reply::rejection(&Rejection::not_found())
}

async fn method_not_allowed() -> Response {
    reply::rejection(&Rejection::method_not_allowed())
}

/// Buffers the body, journals the request, then passes it on.
async fn journal(State(state): State<FakeState>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    let read = if declared.is_some_and(|length| length > MAX_BODY as u64) {
        Err(Rejection::too_large())
    } else {
        axum::body::to_bytes(body, MAX_BODY)
            .await
            .map_err(|_| Rejection::unreadable())
    };
    let bytes = read.clone().unwrap_or_default();
    state.record(JournalEntry::new(
        parts.method.as_str(),
        parts.uri.path(),
        &parts.headers,
        bytes.to_vec(),
    ));
    match read {
        Ok(bytes) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Err(rejection) => reply::rejection(&rejection),
    }
}

/// Adds a fresh request id and the fake's mark to every response, and a JSON content type where
/// none is set.
async fn stamp(mut response: Response) -> Response {
    let id = format!("req_{:032x}", rand::random::<u128>());
    let headers = response.headers_mut();
    headers.insert(FAKE_MARK, HeaderValue::from_static("1"));
    if let Ok(value) = HeaderValue::from_str(&id) {
        headers.insert(REQUEST_ID, value);
    }
    if !headers.contains_key(CONTENT_TYPE) {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    response
}
