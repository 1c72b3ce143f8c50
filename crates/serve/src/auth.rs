//! The bearer-token checks: callers' tokens on `/v1/*` (but the queue and routes) and
//! `/metrics` ([`crate::AuthTokens`]), reviewers' tokens on `/v1/queue/*`
//! ([`crate::ReviewerTokens`]), administrators' tokens to change routes (`/v1/routes*`, where
//! reads take a caller's token too).
//!
//! Both run as route layers, so every method of a protected route — `HEAD`, and methods the
//! route does not take — is checked before anything else answers: without an accepted token
//! the answer is 401 JSON.
//!
//! Failed checks are counted per client address (the `failed_checks` module) and logged at WARN once a
//! minute for an address past [`WARN_PAST`] failures in that minute. Nothing is ever refused
//! for the count: behind a shared proxy every caller has one address, and a limit there would
//! lock the right tokens out with the wrong ones.

use std::net::SocketAddr;

use crate::{ServeError, ServeState, client_address::client_address, failed_checks::WARN_PAST};
use axum::{
    extract::{ConnectInfo, Request, State},
    http::{Method, header::AUTHORIZATION},
    middleware::Next,
    response::Response,
};

/// Middleware: 401 unless the request carries a caller's accepted token.
pub(crate) async fn require_token(
    State(state): State<ServeState>,
    request: Request,
    next: Next,
) -> Result<Response, ServeError> {
    let header = request
        .headers()
        .get(AUTHORIZATION)
        .map(|value| value.as_bytes());
    if !state.config().auth_tokens.verify(header) {
        failed(&state, &request);
        return Err(ServeError::Unauthorized);
    }
    Ok(next.run(request).await)
}

/// Middleware of `/v1/queue/*`: 401 without a reviewer's token (or without any token when
/// there is no queue), 404 `no_queue` with a token but no queue; else the
/// [`crate::Reviewer`] is put in the request's extensions.
pub(crate) async fn require_reviewer(
    State(state): State<ServeState>,
    mut request: Request,
    next: Next,
) -> Result<Response, ServeError> {
    let header = request
        .headers()
        .get(AUTHORIZATION)
        .map(|value| value.as_bytes());
    if state.queue_policy().is_none() {
        // A request without any token is refused as such; with one, it learns there is no
        // queue to authenticate against (or, for a method the route does not take, 405).
        return Err(if header.is_none() {
            ServeError::Unauthorized
        } else if queue_route_takes(request.uri().path(), request.method()) {
            ServeError::NoQueue
        } else {
            ServeError::MethodNotAllowed
        });
    }
    let Some(reviewer) = state.reviewer_for_header(header) else {
        failed(&state, &request);
        return Err(ServeError::Unauthorized);
    };
    request.extensions_mut().insert(reviewer);
    Ok(next.run(request).await)
}

/// Middleware of `/v1/routes*`: `GET`/`HEAD` take an administrator's or a caller's token;
/// every other method an administrator's only. A caller's or reviewer's accepted token on a
/// change is 403 `forbidden`; no accepted token at all is 401.
pub(crate) async fn require_routes_access(
    State(state): State<ServeState>,
    request: Request,
    next: Next,
) -> Result<Response, ServeError> {
    let header = request
        .headers()
        .get(AUTHORIZATION)
        .map(|value| value.as_bytes());
    let config = state.config();
    let admin = config.admin_tokens.is_enabled() && config.admin_tokens.verify(header);
    let read = request.method() == Method::GET || request.method() == Method::HEAD;
    let caller = config.auth_tokens.verify(header);
    if admin || (read && caller) {
        return Ok(next.run(request).await);
    }
    let known = header.is_some()
        && ((config.auth_tokens.is_enabled() && caller)
            || state.reviewer_for_header(header).is_some());
    if known {
        return Err(ServeError::Forbidden);
    }
    failed(&state, &request);
    Err(ServeError::Unauthorized)
}

/// Whether a `/v1/queue/*` route takes `method`: `GET`/`HEAD` for the stats, the held items
/// and the decisions, `POST` for the others.
fn queue_route_takes(path: &str, method: &Method) -> bool {
    if ["/v1/queue/stats", "/v1/queue/mine", "/v1/queue/decisions"].contains(&path) {
        method == Method::GET || method == Method::HEAD
    } else {
        method == Method::POST
    }
}

/// Counts a failed check against the request's client address, logging when it passes the
/// limit.
fn failed(state: &ServeState, request: &Request) {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| peer.ip());
    let address = client_address(peer, request.headers(), &state.config().trusted_proxies);
    if let Some(failures) = state.failed_checks().failed(address) {
        let address = address.map_or_else(|| "unknown".to_owned(), |a| a.to_string());
        tracing::warn!(
            target: "jevjudge_serve::auth",
            %address,
            failures,
            "more than {WARN_PAST} failed token checks from one address within a minute \
             (a client with a wrong token, or someone guessing)"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn tokens_past_100_failed_checks_a_minute_one_warn_line_without_the_token() {
        use axum::{body::Body, http::Request};
        use tower::ServiceExt as _;

        let captured = jevjudge_test_support::LogCapture::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .finish();
        let _guard = tracing::subscriber::set_default(subscriber);
        let backend = jevjudge_judge::backend_fn(|_request| async {
            Ok(jevjudge_wire::Response::from_slice(br#"{"model":"m","answers":{}}"#).unwrap())
        });
        let config = crate::Config {
            auth_tokens: crate::AuthTokens::parse("right-token-0123456789").unwrap(),
            ..crate::Config::default()
        };
        let state = ServeState::for_tests(
            backend,
            crate::Definitions::new(Vec::new()).unwrap(),
            config,
            crate::Metrics::new(),
        )
        .unwrap();
        let peer: SocketAddr = "192.0.2.7:4000".parse().unwrap();
        for n in 0..250 {
            let request = Request::get("/metrics")
                .header(
                    "authorization",
                    format!("Bearer SECRET-wrong-0123456789-{n}"),
                )
                .extension(ConnectInfo(peer))
                .body(Body::empty())
                .unwrap();
            let reply = crate::app(state.clone()).oneshot(request).await.unwrap();
            assert_eq!(reply.status(), 401);
        }
        let request = Request::get("/metrics")
            .header("authorization", "Bearer right-token-0123456789")
            .extension(ConnectInfo(peer))
            .body(Body::empty())
            .unwrap();
        let reply = crate::app(state.clone()).oneshot(request).await.unwrap();
        assert_eq!(reply.status(), 200, "a right token is never refused");
        let text = captured.text();
        let lines: Vec<&str> = text
            .lines()
            .filter(|line| line.contains("failed token checks"))
            .collect();
        assert_eq!(lines.len(), 1, "{text}");
        assert!(lines[0].contains("WARN"), "{text}");
        assert!(
            lines[0].contains("192.0.2.7") && lines[0].contains("failures=101"),
            "{text}"
        );
        assert!(
            !text.contains("SECRET") && !text.contains("right-token"),
            "{text}"
        );
    }
}
