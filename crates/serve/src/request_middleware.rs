//! The per-request middleware every request goes through (matched or not): its request id, a
//! tracing span carrying the id and the route template, one log line per request, the HTTP
//! counters and the `x-request-id` response header.

use std::fmt;

use axum::{
    extract::{MatchedPath, Request, State},
    http::{HeaderValue, Method},
    middleware::Next,
    response::Response,
};
use tokio::time::Instant;
use tracing::Instrument as _;

use crate::{ServeState, error::ErrorCode};

/// The header carrying the request id, in both directions.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// The longest caller-supplied id honoured, in bytes.
const MAX_REQUEST_ID_BYTES: usize = 128;

/// The id of one request: the caller's when it is safe, else a fresh random one.
///
/// A caller's id is *safe* when it is 1 to 128 characters of `A–Z a–z 0–9 - _ . :`; anything
/// else (spaces, quotes, control characters, non-ASCII) is replaced, so ids are safe to log
/// and to echo in a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestId(String);

impl RequestId {
    /// The caller's id if it is safe, else a generated one.
    pub fn from_header(value: Option<&[u8]>) -> RequestId {
        match value {
            Some(value) if is_safe(value) => RequestId(String::from_utf8_lossy(value).into_owned()),
            _ => RequestId::generate(),
        }
    }

    /// A fresh id: `req_` and the 32 hex digits of a UUIDv7 (its time first, so ids sort by
    /// when they were made; 74 random bits, so they are unpredictable and unique).
    pub fn generate() -> RequestId {
        RequestId(format!("req_{}", uuid::Uuid::now_v7().simple()))
    }

    /// The id.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn is_safe(value: &[u8]) -> bool {
    !value.is_empty()
        && value.len() <= MAX_REQUEST_ID_BYTES
        && value
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// The method as a static label (anything unusual is `OTHER`).
fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::HEAD => "HEAD",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
}

/// The route template the router matched (`unmatched` for none): axum's [`MatchedPath`],
/// which is always one of the router's templates (never the raw path), so labels stay a
/// closed set.
fn route_template(matched: Option<&MatchedPath>) -> String {
    matched.map_or("unmatched", MatchedPath::as_str).to_owned()
}

/// Middleware around every request (matched or not).
pub(crate) async fn request_context(
    State(state): State<ServeState>,
    mut request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let id = RequestId::from_header(
        request
            .headers()
            .get(REQUEST_ID_HEADER)
            .map(HeaderValue::as_bytes),
    );
    let method = method_label(request.method());
    // The route template, never the raw path (which may hold anything a caller typed).
    let route = route_template(request.extensions().get::<MatchedPath>());
    request.extensions_mut().insert(id.clone());
    // The review handler fills in the verdict fields, so one line per request says it all.
    let span = tracing::info_span!(
        "request",
        request_id = %id,
        method,
        route = route.as_str(),
        definition = tracing::field::Empty,
        verdict = tracing::field::Empty,
        verdict_error = tracing::field::Empty,
        verdict_detail = tracing::field::Empty,
        budget_millis = tracing::field::Empty,
        queue_millis = tracing::field::Empty,
        elapsed_millis = tracing::field::Empty,
    );
    let mut response = next.run(request).instrument(span.clone()).await;
    let status = response.status().as_u16();
    state.metrics().record_http(&route, method, status);
    let error = response.extensions().get::<ErrorCode>().map(|code| code.0);
    span.in_scope(|| {
        tracing::info!(
            status,
            error,
            millis = started.elapsed().as_secs_f64() * 1e3,
            "request finished"
        );
    });
    if let Ok(value) = HeaderValue::from_str(id.as_str()) {
        response.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_caller_ids_are_kept() {
        for id in ["abc", "req_1.2:3-x", &"a".repeat(128)] {
            assert_eq!(
                RequestId::from_header(Some(id.as_bytes())).as_str(),
                id,
                "{id}"
            );
        }
    }

    #[test]
    fn unsafe_or_missing_ids_are_replaced() {
        let long = "a".repeat(129);
        for id in [
            "",
            "a b",
            "x\"y",
            "line\nbreak",
            "é",
            "{json}",
            long.as_str(),
        ] {
            let replaced = RequestId::from_header(Some(id.as_bytes()));
            assert_ne!(replaced.as_str(), id);
            assert!(replaced.as_str().starts_with("req_"), "{replaced}");
        }
        let generated = RequestId::from_header(None);
        assert_eq!(generated.as_str().len(), 4 + 32);
    }

    #[tokio::test]
    async fn route_labels_are_the_templates_the_router_matched() {
        use axum::body::Body;
        use tower::ServiceExt as _;

        let definition = jevjudge_judge::Definition::new(
            "refund-v1",
            vec![
                jevjudge_judge::Criterion::new(
                    "supported",
                    jevjudge_wire::NoulQuestion::new("Is it supported?"),
                    true,
                    0.2,
                    0.8,
                )
                .unwrap(),
            ],
        )
        .unwrap();
        let backend = jevjudge_judge::backend_fn(|_request| async {
            Ok(jevjudge_wire::Response::from_slice(
                br#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":0.9}}}"#,
            )
            .unwrap())
        });
        let state = ServeState::for_tests(
            backend,
            crate::Definitions::new([definition]).unwrap(),
            crate::Config::default(),
            crate::Metrics::new(),
        )
        .unwrap();
        for (method, path) in [
            ("POST", "/v1/reviews/refund-v1"),
            ("POST", "/v1/reviews/unknown"),
            ("POST", "/v1/reviews/"),
            ("POST", "/v1/reviews/a/b"),
            ("GET", "/SECRET"),
            ("DELETE", "/metrics"),
            ("GET", "/healthz"),
        ] {
            let request = axum::http::Request::builder()
                .method(method)
                .uri(path)
                .body(Body::from(r#"{"state": "x"}"#))
                .unwrap();
            crate::app(state.clone()).oneshot(request).await.unwrap();
        }
        let text = state.render_metrics();
        for sample in [
            r#"jevjudge_http_requests_total{route="/v1/reviews/{version}",method="POST",status="200"} 1"#,
            r#"jevjudge_http_requests_total{route="/v1/reviews/{version}",method="POST",status="404"} 1"#,
            r#"jevjudge_http_requests_total{route="unmatched",method="POST",status="404"} 2"#,
            r#"jevjudge_http_requests_total{route="unmatched",method="GET",status="404"} 1"#,
            r#"jevjudge_http_requests_total{route="/metrics",method="DELETE",status="405"} 1"#,
            r#"jevjudge_http_requests_total{route="/healthz",method="GET",status="200"} 1"#,
        ] {
            assert!(text.lines().any(|line| line == sample), "{sample}\n{text}");
        }
        assert!(!text.contains("SECRET"));
    }

    #[test]
    fn generated_ids_differ() {
        let ids: std::collections::HashSet<String> = (0..1000)
            .map(|_| RequestId::generate().as_str().to_owned())
            .collect();
        assert_eq!(ids.len(), 1000);
    }
}
