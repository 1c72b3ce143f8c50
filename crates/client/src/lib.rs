//! An async client for TypeSafe's System One API (model family "Jev"), as jevjudge speaks it:
//! strict configuration, the official SDK's retry schedule, a deadline that covers every
//! attempt and wait, and typed errors that never carry the key or private text.
//!
//! # Brief overview
//!
//! - [`Client::builder`] → [`ClientBuilder`]: base URL (joined and validated as in
//!   `systemone-wire.md` §1), [`ApiKey`] (explicit, else `TYPESAFE_API_KEY`, else
//!   `JEV_API_KEY`), model, per-attempt timeout (5 s), retries (2), [`Backoff`], call timeout
//!   (30 s) and an [`AttemptEvent`] hook for metrics.
//! - [`Client::system_one`] checks a [`jevjudge_wire::Request`], sends it, retries what is
//!   retryable and checks the answers; it returns an [`Exchange`] or an [`Error`].
//!   [`CallOptions::deadline`] is a review's budget.
//! - [`Error`] has an [`ErrorKind`], the HTTP status, request id, Retry-After, attempt count
//!   and the safe [`jevjudge_wire::Detail`] code the judge reports.
//! - [`limit::Limiter`] (optional, [`ClientBuilder::limiter`]): adaptive concurrency, pacing,
//!   `Retry-After` floors and the dead-key stop, shared by every review against one backend.
//! - [`Transport`] is the HTTP layer: [`HttpTransport`] (reqwest, rustls, no redirects) in
//!   production, a scripted one in tests.
//!
//! Each policy is a small type with its own tests: the backoff schedule ([`Backoff`]), the
//! server-wait parser ([`parse_retry_after`]), the retry decision and the deadline.
//!
//! # Retries and deadlines
//!
//! 408, 429, every 5xx (529 included), connection failures and per-attempt timeouts are
//! retried, by default twice. A retryable response's `retry-after-ms` or `Retry-After` (up to
//! 60 s) replaces the backoff. Before any wait the client checks that it ends by the deadline;
//! if not, the retry is not started: with an explicit deadline the error is
//! [`ErrorKind::Deadline`] with [`Error::is_retry_skipped_for_deadline`], otherwise the last
//! error is returned. Dropping the future cancels the request and any wait.
//!
//! # Security notes
//!
//! The key is sent only as `Authorization: Bearer`; [`ApiKey`], [`Client`] and [`Error`] never
//! print it. Plain `http` is allowed only for loopback hosts unless opted in, and redirects are
//! never followed. Errors keep only a short message extracted from JSON error bodies.
//!
//! # Example
//!
//! A scripted transport stands in for the network here; in production leave out
//! `.transport(…)` to get [`HttpTransport`].
//!
//! ```
//! use jevjudge_client::{
//!     ApiKey, CallOptions, Client, HttpRequest, HttpResponse, Transport, TransportError,
//! };
//! use jevjudge_wire::{NoulQuestion, Questions, Request};
//! use serde_json::json;
//!
//! /// Answers every request with one canned 200.
//! struct Canned;
//!
//! impl Transport for Canned {
//!     async fn send(&self, request: HttpRequest) -> Result<HttpResponse, TransportError> {
//!         assert_eq!(request.header("Authorization"), Some("Bearer apikey_example"));
//!         let body = r#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":0.05}},
//!                       "usage":{"input_tokens":312,"output_tokens":20}}"#;
//!         Ok(HttpResponse::new(200, body).with_header("x-typesafe-request-id", "req_1"))
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let client = Client::builder()
//!     .base_url("https://api.typesafe.ai")
//!     .api_key(ApiKey::new("apikey_example").unwrap())
//!     .transport(Canned)
//!     .build()
//!     .unwrap();
//!
//! let questions: Questions =
//!     [("supported", NoulQuestion::new("Is `assistant_answer` supported?"))].into_iter().collect();
//! let request = Request::new(json!({"assistant_answer": "The refund is complete."}), questions);
//!
//! let exchange = client.system_one(&request, CallOptions::default()).await.unwrap();
//! assert_eq!(exchange.requested_model, "jev-latest");
//! assert_eq!(exchange.response.model.as_deref(), Some("jev-1.13.0"));
//! assert_eq!(exchange.response.answer("supported").and_then(|a| a.as_noul()), Some(0.05));
//! assert_eq!(exchange.request_id.as_deref(), Some("req_1"));
//! assert_eq!(exchange.attempts, 1);
//! # });
//! ```

mod backoff;
mod client;
mod config;
mod config_error;
mod deadline;
mod error;
mod event;
mod key;
pub mod limit;
mod message;
mod retry;
mod retry_after;
mod settings;
mod transport;
mod url;

pub use backoff::{Backoff, InvalidJitter, Jitter};
pub use client::{
    CallOptions, Client, Exchange, FALLBACK_REQUEST_ID_HEADER, REQUEST_ID_HEADER,
    RETRY_COUNT_HEADER, USER_AGENT,
};
pub use config::{ClientBuilder, DEFAULT_ATTEMPT_TIMEOUT, DEFAULT_CALL_TIMEOUT, DEFAULT_RETRIES};
pub use config_error::ConfigError;
pub use error::{Error, ErrorKind};
pub use event::{AttemptEvent, AttemptOutcome};
pub use key::{ApiKey, JEV_API_KEY, TYPESAFE_API_KEY, is_conventional_var_name};
pub use message::{MAX_MESSAGE_CHARS, extract_message};
pub use retry_after::{parse_retry_after, parse_retry_after_ms};
pub use settings::AttemptHook;
pub use transport::{
    DEFAULT_MAX_BODY_BYTES, HttpRequest, HttpResponse, HttpTransport, Method, Transport,
    TransportError, TransportErrorKind,
};
pub use url::{DEFAULT_BASE_URL, TYPESAFE_BASE_URL};
