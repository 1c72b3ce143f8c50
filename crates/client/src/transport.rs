//! The HTTP layer under the client: one request in, one complete response out.
//!
//! [`Transport`] is deliberately small so tests can script it (status, headers, body, delays,
//! stalls, failures) and run the whole retry machinery on tokio's paused clock. Timeouts,
//! retries and deadlines live in the client, which drops the transport's future to cancel it,
//! so a transport needs no timer of its own.
//!
//! [`HttpTransport`] is the real one: reqwest with rustls, **no redirects followed** (a 3xx
//! comes back as a response, so the key never goes to another host), no proxy, and a cap on
//! the response body size.

use std::{
    borrow::Cow,
    fmt,
    future::Future,
    sync::{Arc, Mutex},
};

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::ConfigError;

/// The default cap on a response body, in bytes (4 MiB). A System One answer is a few
/// kilobytes; the cap bounds what one attempt can hold (a service runs many at once).
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The most a declared `Content-Length` reserves up front; a larger body grows as it arrives,
/// so a length that lies costs nothing.
const MAX_RESERVE_BYTES: usize = 64 * 1024;

/// An HTTP method the client uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET` (the models list).
    Get,
    /// `POST` (System One calls).
    Post,
}

impl Method {
    /// The method's name, `GET` or `POST`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// One request as the client hands it to a transport.
///
/// `Debug` shows the header names, but the `Authorization` value as `<redacted>` and the body
/// only by size.
#[derive(Clone, PartialEq, Eq)]
pub struct HttpRequest {
    /// `GET` or `POST`.
    pub method: Method,
    /// The absolute URL.
    pub url: String,
    /// Header names (as the client spells them) and values, in sending order.
    pub headers: Vec<(&'static str, Cow<'static, str>)>,
    /// The body (empty for `GET`), shared by every attempt of a call.
    pub body: Bytes,
}

impl HttpRequest {
    /// The value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

/// The first value of the header `name` (case-insensitive) among `headers`.
fn find_header<'a>(
    headers: &'a [(&'static str, Cow<'static, str>)],
    name: &str,
) -> Option<&'a str> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_ref())
}

impl fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Headers<'a>(&'a [(&'static str, Cow<'static, str>)]);
        impl fmt::Debug for Headers<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut map = f.debug_map();
                for (name, value) in self.0 {
                    if name.eq_ignore_ascii_case("authorization") {
                        map.entry(name, &"<redacted>");
                    } else {
                        map.entry(name, value);
                    }
                }
                map.finish()
            }
        }
        f.debug_struct("HttpRequest")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("headers", &Headers(&self.headers))
            .field("body_bytes", &self.body.len())
            .finish()
    }
}

/// One complete response: status, headers and the whole body.
///
/// `Debug` shows the body only by size.
#[derive(Clone)]
pub struct HttpResponse {
    /// The HTTP status code.
    pub status: u16,
    /// The headers as they arrived (taken over from the HTTP stack, not copied).
    headers: HeaderMap,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// A response with no headers.
    pub fn new(status: u16, body: impl Into<Vec<u8>>) -> HttpResponse {
        HttpResponse {
            status,
            headers: HeaderMap::new(),
            body: body.into(),
        }
    }

    /// Adds a header. A name or value HTTP does not allow in a header is left out, as a
    /// transport would never have received it.
    pub fn with_header(mut self, name: &str, value: impl Into<String>) -> HttpResponse {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value.into()),
        ) {
            self.headers.append(name, value);
        }
        self
    }

    /// The first value of a header, by case-insensitive name (a `&str`, or a [`HeaderName`],
    /// which is not parsed again); a value that is not visible ASCII counts as absent.
    pub fn header(&self, name: impl reqwest::header::AsHeaderName) -> Option<&str> {
        self.headers.get(name)?.to_str().ok()
    }

    /// Every header whose value is visible ASCII, names lower-case: each name in the order it
    /// first arrived, with its values in arrival order.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers
            .iter()
            .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
    }
}

impl PartialEq for HttpResponse {
    fn eq(&self, other: &HttpResponse) -> bool {
        self.status == other.status && self.body == other.body && self.headers().eq(other.headers())
    }
}

impl Eq for HttpResponse {}

impl fmt::Debug for HttpResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Headers<'a>(&'a HttpResponse);
        impl fmt::Debug for Headers<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_list().entries(self.0.headers()).finish()
            }
        }
        f.debug_struct("HttpResponse")
            .field("status", &self.status)
            .field("headers", &Headers(self))
            .field("body_bytes", &self.body.len())
            .finish()
    }
}

/// How a request failed below HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportErrorKind {
    /// No connection: refused, unreachable, DNS or TLS failure. Retried.
    Connect,
    /// The connection was reset or closed before a complete response. Retried.
    Closed,
    /// The response body was larger than the transport's cap. Not retried.
    BodyTooLarge,
    /// The request could not be made at all (for example an unusable URL). Not retried.
    Other,
}

impl TransportErrorKind {
    /// Whether another attempt could succeed.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            TransportErrorKind::Connect | TransportErrorKind::Closed
        )
    }
}

impl fmt::Display for TransportErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TransportErrorKind::Connect => "connection failed",
            TransportErrorKind::Closed => "connection closed before a complete response",
            TransportErrorKind::BodyTooLarge => "response body too large",
            TransportErrorKind::Other => "request could not be sent",
        })
    }
}

/// A transport failure. It carries only its kind: no URL, header or body text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub struct TransportError {
    kind: TransportErrorKind,
}

impl TransportError {
    /// A failure of this kind.
    pub fn new(kind: TransportErrorKind) -> TransportError {
        TransportError { kind }
    }

    /// How it failed.
    pub fn kind(&self) -> TransportErrorKind {
        self.kind
    }
}

impl From<TransportErrorKind> for TransportError {
    fn from(kind: TransportErrorKind) -> TransportError {
        TransportError::new(kind)
    }
}

/// Sends one HTTP request and reads the whole response.
///
/// Dropping the returned future must abort the request: the client relies on that for
/// per-attempt timeouts, deadlines and cancellation.
pub trait Transport: Send + Sync + 'static {
    /// Sends `request` and returns the complete response, whatever its status.
    fn send(
        &self,
        request: HttpRequest,
    ) -> impl Future<Output = Result<HttpResponse, TransportError>> + Send;
}

impl<T: Transport> Transport for Arc<T> {
    fn send(
        &self,
        request: HttpRequest,
    ) -> impl Future<Output = Result<HttpResponse, TransportError>> + Send {
        (**self).send(request)
    }
}

/// The real transport: reqwest over rustls, redirects never followed, no proxy.
#[derive(Debug, Clone)]
pub struct HttpTransport {
    client: reqwest::Client,
    max_body_bytes: usize,
    /// URLs already parsed, by their text: a client sends to one or two endpoints, and
    /// parsing one costs more than the rest of building the request.
    parsed_urls: Arc<Mutex<Vec<(String, reqwest::Url)>>>,
}

/// How many distinct URLs a transport keeps parsed; others are parsed on every request.
const MAX_PARSED_URLS: usize = 8;

impl HttpTransport {
    /// A transport with its own connection pool and a [`DEFAULT_MAX_BODY_BYTES`] body cap.
    pub fn new() -> Result<HttpTransport, ConfigError> {
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .map_err(|_| ConfigError::TransportSetup)?;
        Ok(HttpTransport {
            client,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            parsed_urls: Arc::default(),
        })
    }

    /// Caps the response body at `bytes`; a longer body fails with
    /// [`TransportErrorKind::BodyTooLarge`].
    pub fn with_max_body_bytes(mut self, bytes: usize) -> HttpTransport {
        self.max_body_bytes = bytes;
        self
    }

    /// `text` parsed as a URL, from the transport's parsed URLs when it is among them.
    fn parsed_url(&self, text: &str) -> Option<reqwest::Url> {
        let mut parsed = self.parsed_urls.lock().ok()?;
        if let Some((_, url)) = parsed.iter().find(|(known, _)| known == text) {
            return Some(url.clone());
        }
        let url = reqwest::Url::parse(text).ok()?;
        if parsed.len() < MAX_PARSED_URLS {
            parsed.push((text.to_owned(), url.clone()));
        }
        Some(url)
    }

    async fn exchange(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
        let method = match request.method {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
        };
        let mut builder = match self.parsed_url(&request.url) {
            Some(url) => self.client.request(method, url),
            // Not a URL: reqwest reports it as it would have.
            None => self.client.request(method, &request.url),
        };
        for (name, value) in &request.headers {
            builder = builder.header(*name, value.as_ref());
        }
        if request.method == Method::Post {
            builder = builder.body(request.body);
        }
        let mut response = builder.send().await.map_err(classify)?;
        let status = response.status().as_u16();
        let headers = std::mem::take(response.headers_mut());
        let mut body = Vec::new();
        if let Some(length) = response.content_length() {
            if length > self.max_body_bytes as u64 {
                return Err(TransportErrorKind::BodyTooLarge.into());
            }
            body.reserve((length as usize).min(MAX_RESERVE_BYTES));
        }
        // Read chunk by chunk and stop at the cap: a body that never ends (chunked, or a
        // lying length) costs at most the cap.
        while let Some(chunk) = response.chunk().await.map_err(classify)? {
            if body.len() + chunk.len() > self.max_body_bytes {
                return Err(TransportErrorKind::BodyTooLarge.into());
            }
            body.extend_from_slice(&chunk);
        }
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

impl Transport for HttpTransport {
    /// Runs the exchange as its own task once first polled, so building the request, the
    /// connection's work and reading the body spread over the runtime's workers instead of
    /// running on the thread of whoever awaits it (one thread for every review of a run).
    /// Nothing is sent before the first poll; dropping the future aborts the task, which
    /// cancels the request as before.
    fn send(
        &self,
        request: HttpRequest,
    ) -> impl Future<Output = Result<HttpResponse, TransportError>> + Send {
        Exchange::NotStarted(Some((self.clone(), request)))
    }
}

/// An exchange: not started until polled, then running as a task; dropped, it aborts the task.
enum Exchange {
    NotStarted(Option<(HttpTransport, HttpRequest)>),
    Running(tokio::task::JoinHandle<Result<HttpResponse, TransportError>>),
}

impl Future for Exchange {
    type Output = Result<HttpResponse, TransportError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let this = &mut *self;
        if let Exchange::NotStarted(start) = this {
            let Some((transport, request)) = start.take() else {
                return std::task::Poll::Ready(Err(TransportErrorKind::Other.into()));
            };
            *this = Exchange::Running(tokio::spawn(
                async move { transport.exchange(request).await },
            ));
        }
        let Exchange::Running(task) = this else {
            return std::task::Poll::Ready(Err(TransportErrorKind::Other.into()));
        };
        std::pin::Pin::new(task).poll(cx).map(|joined| {
            joined.unwrap_or_else(|error| match error.try_into_panic() {
                // A panic inside reqwest stays a panic, as when it ran in the caller's task.
                Ok(panic) => std::panic::resume_unwind(panic),
                // Only aborted by dropping this future, so never seen here.
                Err(_) => Err(TransportErrorKind::Other.into()),
            })
        })
    }
}

impl Drop for Exchange {
    fn drop(&mut self) {
        if let Exchange::Running(task) = self {
            task.abort();
        }
    }
}

/// Sorts a reqwest failure into a kind; its text (which names the URL) is dropped.
fn classify(error: reqwest::Error) -> TransportError {
    let kind = if error.is_builder() {
        TransportErrorKind::Other
    } else if error.is_connect() {
        TransportErrorKind::Connect
    } else {
        TransportErrorKind::Closed
    };
    TransportError::new(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_debug_redacts_the_key_and_the_body() {
        let request = HttpRequest {
            method: Method::Post,
            url: "https://api.typesafe.ai/v1/systemone".into(),
            headers: vec![
                ("Authorization", "Bearer apikey_SENTINEL".into()),
                ("Accept", "application/json".into()),
            ],
            body: Bytes::from_static(br#"{"state":"RAW-EVIDENCE-91c2"}"#),
        };
        let shown = format!("{request:?}");
        assert!(!shown.contains("SENTINEL"), "{shown}");
        assert!(!shown.contains("RAW-EVIDENCE"), "{shown}");
        assert!(shown.contains("<redacted>") && shown.contains("application/json"));
        assert_eq!(
            request.header("authorization"),
            Some("Bearer apikey_SENTINEL")
        );
    }

    #[test]
    fn response_debug_shows_the_body_size_only() {
        let response = HttpResponse::new(500, "RAW-HTML").with_header("X-Request-Id", "req_9");
        let shown = format!("{response:?}");
        assert!(
            !shown.contains("RAW-HTML") && shown.contains("body_bytes: 8"),
            "{shown}"
        );
        assert_eq!(response.header("x-request-id"), Some("req_9"));
    }

    #[test]
    fn response_headers_keep_their_order_and_leave_out_what_http_refuses() {
        let response = HttpResponse::new(429, "")
            .with_header("Retry-After", "3")
            .with_header("x-note", "first")
            .with_header("X-Note", "second")
            .with_header("bad name", "x")
            .with_header("x-bad-value", "line\nbreak");
        assert_eq!(
            response.headers().collect::<Vec<_>>(),
            [
                ("retry-after", "3"),
                ("x-note", "first"),
                ("x-note", "second")
            ]
        );
        assert_eq!(response.header("RETRY-AFTER"), Some("3"));
        assert_eq!(response.header("x-note"), Some("first"));
        assert_eq!(response.header("x-bad-value"), None);
        assert_eq!(response, response.clone());
        assert_ne!(response, HttpResponse::new(429, ""));
    }

    /// A server on 127.0.0.1 that answers every request with its path as the body.
    async fn path_echo_server() -> std::net::SocketAddr {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0_u8; 1024];
                    loop {
                        let Ok(n) = socket.read(&mut buf).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        head.extend_from_slice(&buf[..n]);
                        while let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                            let text = String::from_utf8_lossy(&head[..end]).into_owned();
                            head.drain(..end + 4);
                            let path = text.split(' ').nth(1).unwrap_or_default().to_owned();
                            let reply = format!(
                                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{path}",
                                path.len()
                            );
                            if socket.write_all(reply.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        addr
    }

    #[tokio::test]
    async fn every_request_goes_to_its_own_url_past_the_parsed_ones() {
        let addr = path_echo_server().await;
        let transport = HttpTransport::new().unwrap();
        let get = |url: String| HttpRequest {
            method: Method::Get,
            url,
            headers: Vec::new(),
            body: Bytes::new(),
        };
        // More distinct URLs than the transport keeps parsed, each sent twice, interleaved.
        for round in 0..2 {
            for i in 0..MAX_PARSED_URLS + 3 {
                let response = transport
                    .send(get(format!("http://{addr}/p{i}?round={round}")))
                    .await
                    .unwrap();
                assert_eq!(response.body, format!("/p{i}?round={round}").as_bytes());
            }
        }
        for i in 0..MAX_PARSED_URLS + 3 {
            let response = transport
                .send(get(format!("http://{addr}/p{i}?round=0")))
                .await
                .unwrap();
            assert_eq!(response.body, format!("/p{i}?round=0").as_bytes());
        }
        for not_a_url in ["not a url", "/v1/systemone", "mailto:someone@example.com"] {
            let error = transport.send(get(not_a_url.into())).await.unwrap_err();
            assert_eq!(error.kind(), TransportErrorKind::Other, "{not_a_url}");
        }
    }

    /// A server on 127.0.0.1 that takes one request and never answers.
    async fn silent_server() -> (tokio::net::TcpListener, HttpRequest) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let request = HttpRequest {
            method: Method::Post,
            url: format!("http://{}/v1/systemone", listener.local_addr().unwrap()),
            headers: vec![("Content-Type", "application/json".into())],
            body: Bytes::from_static(b"{}"),
        };
        (listener, request)
    }

    #[tokio::test]
    async fn dropping_a_send_in_flight_closes_its_connection() {
        use tokio::io::AsyncReadExt as _;
        let (listener, request) = silent_server().await;
        let transport = HttpTransport::new().unwrap();
        let mut send = Box::pin(transport.send(request));
        let mut socket = tokio::select! {
            accepted = listener.accept() => accepted.unwrap().0,
            _ = &mut send => panic!("the silent server never answers"),
        };
        let mut head = Vec::new();
        let mut buffer = [0_u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            tokio::select! {
                read = socket.read(&mut buffer) => {
                    let n = read.unwrap();
                    assert!(n > 0, "closed before the request head");
                    head.extend_from_slice(&buffer[..n]);
                }
                _ = &mut send => panic!("the silent server never answers"),
            }
        }
        assert!(head.starts_with(b"POST /v1/systemone HTTP/1.1\r\n"));
        drop(send);
        // The aborted task drops the connection: the server reads the end of the stream
        // (after the 2-byte body, which may still be unread). A hang here fails by timeout.
        let ended = tokio::time::timeout(std::time::Duration::from_secs(30), async {
            loop {
                if socket.read(&mut buffer).await.unwrap_or(0) == 0 {
                    break;
                }
            }
        })
        .await;
        assert!(ended.is_ok(), "the connection stayed open after the drop");
    }

    #[test]
    fn only_connection_failures_are_retryable() {
        assert!(TransportErrorKind::Connect.is_retryable());
        assert!(TransportErrorKind::Closed.is_retryable());
        assert!(!TransportErrorKind::BodyTooLarge.is_retryable());
        assert!(!TransportErrorKind::Other.is_retryable());
    }
}
