//! Building HTTP responses: JSON answers and errors, canned fault responses, and the marker that
//! asks the server to drop the connection.

use std::time::{Duration, SystemTime};

use axum::body::{Body, Bytes};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use futures_util::StreamExt as _;
use serde_json::{Value, json};

use crate::corrupt;
use crate::fault::Fault;
use crate::rejection::Rejection;

/// Response extension: the server closes the connection instead of sending this response,
/// with a TCP reset when `reset` is set. Through [`crate::app`] alone (no socket) the response is
/// a plain 500 carrying the marker.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DropConnection {
    pub(crate) reset: bool,
}

const JSON: &str = "application/json";

fn status(code: u16) -> StatusCode {
    StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

fn bytes(code: u16, content_type: &'static str, body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = status(code);
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// A JSON response.
pub(crate) fn json(code: u16, body: &Value) -> Response {
    bytes(code, JSON, serde_json::to_vec(body).unwrap_or_default())
}

/// The response for a rejection.
pub(crate) fn rejection(rejection: &Rejection) -> Response {
    json(rejection.status, &rejection.body)
}

/// A 200 answer, encoded under a body fault if there is one.
pub(crate) fn answer(body: &Value, fault: Option<&Fault>) -> Response {
    let encoded = corrupt::encode(fault, body);
    if matches!(fault, Some(Fault::CloseMidBody)) {
        return close_mid_body(encoded);
    }
    bytes(200, JSON, encoded)
}

/// Headers with the full length, half the body, then a body error: hyper closes the connection.
/// The error comes a moment later, so hyper has flushed the headers and the first half.
fn close_mid_body(full: Vec<u8>) -> Response {
    let length = full.len();
    let half = Bytes::from(full).slice(..length / 2);
    let first = futures_util::stream::iter([Ok::<Bytes, std::io::Error>(half)]);
    let cut = futures_util::stream::once(async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        Err(std::io::Error::other("fault: connection closed mid-body"))
    });
    let mut response = Response::new(Body::from_stream(first.chain(cut)));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(JSON));
    response
        .headers_mut()
        .insert(CONTENT_LENGTH, HeaderValue::from(length));
    response
}

/// The marker response for a connection the server must drop (reset it if `reset`).
pub(crate) fn drop_connection(reset: bool) -> Response {
    let mut response = json(500, &json!({ "detail": "fault: connection dropped" }));
    response.extensions_mut().insert(DropConnection { reset });
    response
}

/// The complete response of a canned fault (status faults and [`Fault::Body`]).
pub(crate) fn canned(fault: &Fault) -> Response {
    match fault {
        Fault::RateLimited => rate_limited(None),
        Fault::RetryAfterSeconds(seconds) => rate_limited(Some((RETRY_AFTER, seconds.to_string()))),
        Fault::RetryAfterDate(when) => rate_limited(Some((RETRY_AFTER, http_date(*when)))),
        Fault::RetryAfterMs(ms) => rate_limited(Some((
            HeaderName::from_static("retry-after-ms"),
            ms.to_string(),
        ))),
        Fault::Overloaded => overloaded(),
        Fault::Html(code) => html(*code),
        Fault::Json { status, body } => json(*status, body),
        Fault::Raw {
            status,
            headers,
            body,
        } => raw(*status, headers, body),
        Fault::Body(body) => json(200, body),
        _ => json(200, &Value::Null),
    }
}

/// The limiter's refusal: 429 `rate_limit_error` or 529 `overloaded_error`, with
/// `Retry-After: <seconds>` when one is configured.
pub(crate) fn limited(code: u16, retry_after: Option<u64>) -> Response {
    let header = retry_after.map(|seconds| (RETRY_AFTER, seconds.to_string()));
    if code == 529 {
        with_header(overloaded(), header)
    } else {
        rate_limited(header)
    }
}

fn overloaded() -> Response {
    json(
        529,
        &json!({"detail": {"error_type": "overloaded_error", "message": "The server is overloaded. Please retry later."}}),
    )
}

fn rate_limited(header: Option<(HeaderName, String)>) -> Response {
    let response = json(
        429,
        &json!({"detail": {"error_type": "rate_limit_error", "message": "Rate limit exceeded. Please slow down."}}),
    );
    with_header(response, header)
}

fn with_header(mut response: Response, header: Option<(HeaderName, String)>) -> Response {
    if let Some((name, value)) = header
        && let Ok(value) = HeaderValue::from_str(&value)
    {
        response.headers_mut().insert(name, value);
    }
    response
}

/// IMF-fixdate, rounded up to the next whole second so the wait is never shorter than asked.
fn http_date(when: SystemTime) -> String {
    let rounded = when
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|since| {
            let seconds = since.as_secs() + u64::from(since.subsec_nanos() > 0);
            SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
        })
        .unwrap_or(when);
    httpdate::fmt_http_date(rounded)
}

fn html(code: u16) -> Response {
    let status = status(code);
    let title = format!(
        "{} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("Error")
    );
    let page = format!(
        "<html>\r\n<head><title>{title}</title></head>\r\n<body>\r\n<center><h1>{title}</h1></center>\r\n\
         <hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    );
    bytes(code, "text/html", page.into_bytes())
}

fn raw(code: u16, headers: &[(String, String)], body: &[u8]) -> Response {
    let mut response = Response::new(Body::from(body.to_vec()));
    *response.status_mut() = status(code);
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::try_from(name.as_str()),
            HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates_round_up_to_a_whole_second() {
        let when = SystemTime::UNIX_EPOCH + Duration::from_millis(1_500);
        assert_eq!(http_date(when), "Thu, 01 Jan 1970 00:00:02 GMT");
    }

    #[test]
    fn an_invalid_status_becomes_500() {
        assert_eq!(
            json(1000, &Value::Null).status(),
            StatusCode::INTERNAL_SERVER_ERROR
        );
    }

    #[test]
    fn canned_faults_have_their_status_and_headers() {
        let response = canned(&Fault::RetryAfterMs(250));
        assert_eq!(response.status().as_u16(), 429);
        assert_eq!(
            response
                .headers()
                .get("retry-after-ms")
                .and_then(|v| v.to_str().ok()),
            Some("250")
        );
        assert_eq!(
            canned(&Fault::RetryAfterSeconds(3))
                .headers()
                .get(RETRY_AFTER)
                .map(|v| v.as_bytes()),
            Some(&b"3"[..])
        );
        assert_eq!(canned(&Fault::Overloaded).status().as_u16(), 529);
        let page = canned(&Fault::Html(502));
        assert_eq!(page.status().as_u16(), 502);
        assert_eq!(
            page.headers().get(CONTENT_TYPE).map(|v| v.as_bytes()),
            Some(&b"text/html"[..])
        );
    }
}
