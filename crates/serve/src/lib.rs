//! The jevjudge review service: POST a state, get a verdict, over HTTP.
//!
//! Each review is one System One request through one shared backend (one client, one
//! connection pool), under a bound on concurrent backend requests with a bounded queue in
//! front, and answers with the Result JSON of `cli-and-formats.md` §4.1. `jevjudge serve` is
//! the binary around it.
//!
//! # Brief overview
//!
//! - [`Service::builder`] is the one place a service is assembled: a
//!   [`Backend`](jevjudge_judge::Backend) and the [`Definitions`] (loaded with
//!   [`Definitions::load_dir`]), then a [`Config`] (body limit, budgets, `max_concurrent`,
//!   `queue`, [`AuthTokens`]), the [`Metrics`] (whose [`Metrics::attempt_hook`] counts the
//!   client's attempts), a shared limiter, a [`DecisionLogConfig`] and a review queue's
//!   [`QueuePolicy`]. [`ServiceBuilder::build`] refuses combinations that cannot work
//!   ([`BuildError`]: a queue without a decision log keeping state text, a queue nobody can
//!   claim from, a retention of state that is not kept) and opens the store.
//! - [`Service::bind`] / [`Service::listen`] and [`Listening::run`] serve until a shutdown
//!   future or, with [`RunOptions::handle_os_signals`] (or [`OsSignals::install`] at the start
//!   of a program), SIGTERM/SIGINT; SIGHUP reloads the definitions directory
//!   ([`reload_definitions`]: a bad set is refused and the old one kept). The drain finishes
//!   in-flight reviews within a limit ([`Stopped`] says whether they all did).
//!   [`Service::router`] is the bare [`Router`](axum::Router) ([`app`]) for a server of one's
//!   own. The routes ([`ROUTES`]):
//!   - `POST /v1/reviews/{version}` with `{"state": <json>, "budget_millis": <ms>?}` → 200 and
//!     the Result, plus `"backend"` as `jevjudge judge` prints it (an ERROR verdict is still
//!     200: the review ran); 404 for an unknown version;
//!     400 for a body that is not JSON, 422 for JSON of the wrong shape (the message names the
//!     field), 413 over the body limit, 408 for a body that does not arrive within the longest
//!     budget, 503 with `Retry-After` when the queue is full;
//!   - `GET /v1/definitions` → versions, criteria ids, expected flags, thresholds (no text);
//!   - `GET /healthz`, `GET /metrics` (OpenMetrics text, by `prometheus-client`),
//!     `GET /openapi.json` (OpenAPI 3.1);
//!   - `GET /readyz` (readiness), and with a decision log
//!     `GET /v1/reviews/{id}` and `GET /v1/reviews?reference=&version=&status=&since=&limit=&cursor=`.
//!   - with a review queue, for reviewers' tokens ([`ReviewerTokens`]): `POST /v1/queue/claim`,
//!     `POST /v1/queue/{item}/decision`, `POST /v1/queue/{item}/release`,
//!     `GET /v1/queue/stats`.
//! - With a decision log every review is written before its answer (which then carries
//!   `review_id`); when the log cannot take it the caller gets 503 `store_unavailable` and
//!   `/readyz` is not ready until the store answers again. With a review queue, reviews are
//!   queued for people under the [`QueuePolicy`] (statuses, a seeded PASS sample, second
//!   reviews), each written with its queue items in one transaction.
//! - [`ServeError`] is the one error type: a status, a stable code and a message that never
//!   holds internals, state text or secrets.
//!
//! # Protection
//!
//! - **Callers' tokens**: with [`Config::auth_tokens`] set, `/v1/*` and `/metrics` need
//!   `Authorization: Bearer TOKEN` (401 otherwise), compared in constant time and never logged.
//! - **Bounded work and memory**: at most `max_concurrent` reviews call the backend; at most
//!   `queue` more are admitted to wait (each at most its budget); the next request is refused
//!   with a fast 503 before its body is read. Bodies are read up to `max_body_bytes`; a queued
//!   request holds only its body bytes, and a state holds at most [`MAX_STATE_VALUES`] values.
//! - **Connections**: a request head must be complete within [`Config::header_timeout`] of its
//!   first byte, an idle connection closes after [`Config::idle_timeout`], and at most
//!   [`Config::max_connections`] are open (the oldest idle one makes room for a new one).
//!   Shutdown closes idle and half-open connections at once (`docs/how-to/run-the-service.md`).
//! - **Budgets**: a caller's `budget_millis` is capped at [`Config::max_budget`]; the budget
//!   is end to end, from the request's arrival: the body, the wait for a backend slot, every
//!   attempt, backoff and Retry-After wait (judge-contract D11).
//! - **Request ids**: a caller's safe `x-request-id` is kept, else one is made; it is in every
//!   log line of the request and in the response header.
//!
//! # Privacy
//!
//! Logs and metrics hold no state text, no question text, no token and no key (judge-contract
//! rules 29, 61–63): log lines carry route templates, statuses, codes and timings; metric labels
//! come only from loaded definition versions and fixed vocabularies. Exchanges are written to a
//! record file only when the backend is wrapped in a [`Recording`](jevjudge_judge::Recording)
//! (`jevjudge serve --record FILE.jevl`).
//!
//! # Example
//!
//! Run the service in-process on a free port, review once, and stop it:
//!
//! ```
//! use jevjudge_judge::{backend_fn, Criterion, Definition};
//! use jevjudge_serve::{Definitions, RunOptions, Service, StopCause};
//! use jevjudge_wire::{NoulQuestion, Response};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let definition = Definition::new("refund-answer-v1", vec![Criterion::new(
//!     "supported",
//!     NoulQuestion::new("Is assistant_answer supported by supporting_context?"),
//!     true, 0.2, 0.8,
//! )?])?;
//! // A canned backend; `jevjudge serve` uses the System One client (SystemOneBackend).
//! let backend = backend_fn(|_request| async {
//!     Ok(Response::from_slice(
//!         br#"{"model":"jev-1.13.0","answers":{"supported":{"type":"noul","noul":0.95}}}"#,
//!     ).expect("a valid response"))
//! });
//! let service = Service::builder(backend, Definitions::new([definition])?)
//!     .build()
//!     .await?;
//! let listening = service
//!     .bind("127.0.0.1:0".parse()?, RunOptions::new())
//!     .await?;
//! let addr = listening.local_addr();
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! let running = tokio::spawn(listening.run(async move {
//!     let _ = stopped.await;
//! }));
//!
//! // Any HTTP client will do; this one writes the request by hand.
//! use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
//! let body = r#"{"state": {"assistant_answer": "No refund yet."}}"#;
//! let mut socket = tokio::net::TcpStream::connect(addr).await?;
//! socket.write_all(format!(
//!     "POST /v1/reviews/refund-answer-v1 HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\
//!      content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
//!     body.len(),
//! ).as_bytes()).await?;
//! let mut answer = String::new();
//! socket.read_to_string(&mut answer).await?;
//! assert!(answer.starts_with("HTTP/1.1 200"));
//! assert!(answer.contains(r#""status":"PASS""#));
//!
//! let _ = stop.send(());
//! let stopped = running.await??;
//! assert_eq!(stopped.cause, StopCause::Shutdown);
//! assert!(stopped.drained);
//! # Ok(())
//! # }
//! ```

mod admission;
mod auth;
mod auth_tokens;
mod body;
mod client_address;
mod config;
mod connection;
mod decision_log;
mod definitions;
mod episodes;
mod error;
mod failed_checks;
mod log_sink;
mod metrics;
mod openapi;
mod queue_api;
mod queue_openapi;
mod queue_policy;
mod queue_settings;
mod reload;
mod request_middleware;
mod review;
mod reviewers;
mod reviews_api;
mod route_changes_api;
mod route_changes_openapi;
mod router;
mod routes;
mod routes_api;
mod run;
mod server;
mod service;
mod session;
mod shadow_api;
mod shadows;
mod sign_in_throttle;
mod state;
mod ui;

pub use auth_tokens::{AuthTokens, AuthTokensError};
pub use client_address::{TrustedProxy, TrustedProxyError};
pub use config::{
    Config, ConfigError, DEFAULT_BUDGET, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_BUDGET, DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_QUEUE, DEFAULT_RETRY_AFTER, PublicUrl, PublicUrlError, parse_listen_addr, parse_size,
};
pub use decision_log::{DecisionLog, RETENTION_SWEEP};
pub use definitions::{Definitions, DefinitionsError};
pub use error::ServeError;
pub use log_sink::{LOG_BACKLOG_LINES, LogLine, LogLines, LogSinkGuard, log_sink};
pub use metrics::Metrics;
pub use openapi::openapi;
pub use queue_api::{MAX_QUEUE_BODY_BYTES, claim_json};
pub use queue_policy::{
    DEFAULT_LEASE, DEFAULT_MAX_LEASES_PER_REVIEWER, QueuePolicy, QueuePolicyError, Queueing,
    Reason, draw,
};
pub use queue_settings::{QueueSettings, QueueSettingsError, ReviewersSource};
pub use reload::{ReloadOutcome, reload_definitions, reload_reviewers};
pub use request_middleware::{REQUEST_ID_HEADER, RequestId};
pub use review::{MAX_STATE_VALUES, ReviewRequest};
pub use reviewers::{
    MAX_REVIEWER_NAME_CHARS, Reviewer, ReviewerTokens, ReviewerTokensError, valid_reviewer_name,
};
pub use router::{ROUTES, app};
pub use routes::{ROUTE_CACHE, parse_routes};
pub use run::{DRAIN_GRACE, Listening, OsSignals, RunError, RunOptions, StopCause, Stopped};
pub use server::serve;
pub use service::{BuildError, DecisionLogConfig, Service, ServiceBuilder};
pub use session::{MIN_SECRET_BYTES, SessionSecret, SessionSecretError};
pub use state::ServeState;
