//! What answers a review: any [`Backend`] — the HTTP client, the replay of records, the
//! in-process fake, or a closure in tests.

use std::{future::Future, pin::Pin, sync::Arc};

use jevjudge_wire::{Detail, Request, Response, Usage};
use tokio::time::Instant;

use crate::ErrorCode;

/// The future a backend returns.
pub type BackendFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Response, BackendError>> + Send + 'a>>;

/// Answers System One requests for the Judge.
///
/// A backend gets the whole request and the review's deadline; it should stop by the deadline
/// (the Judge drops it there anyway). The Judge validates whatever comes back (rules 14–17), so
/// a backend may return any answers; errors are returned as a safe [`BackendError`].
pub trait Backend: Send + Sync {
    /// Answers one request.
    fn answer<'a>(&'a self, request: &'a Request, deadline: Instant) -> BackendFuture<'a>;

    /// What kind of backend this is, for reports (`"backend"` in cli-and-formats.md §4.2).
    fn kind(&self) -> BackendKind {
        BackendKind::Injected
    }
}

/// The kinds of backend a report can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// The live System One API (or any server reached over HTTP).
    Systemone,
    /// Recorded exchanges of a real model.
    Replay,
    /// Hand-made fixture records (`"meta": {"fixture": true}`).
    Fixture,
    /// The in-process deterministic fake.
    Fake,
    /// A backend supplied in code (tests, embedding applications).
    Injected,
}

impl BackendKind {
    /// The report name.
    pub fn as_str(self) -> &'static str {
        match self {
            BackendKind::Systemone => "systemone",
            BackendKind::Replay => "replay",
            BackendKind::Fixture => "fixture",
            BackendKind::Fake => "fake",
            BackendKind::Injected => "injected",
        }
    }

    /// True when answers did not come from a real model (fake or fixture).
    pub fn is_synthetic(self) -> bool {
        matches!(self, BackendKind::Fake | BackendKind::Fixture)
    }
}

impl std::fmt::Display for BackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A backend failure, reduced to what a verdict may show: a detail code (which decides the
/// error code), and the model and usage when a response was received (D3). No message: raw
/// exception text never reaches a verdict (rule 29).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackendError {
    detail: Detail,
    model: Option<String>,
    usage: Option<Usage>,
}

impl BackendError {
    /// A failure with this detail.
    pub fn new(detail: Detail) -> BackendError {
        BackendError {
            detail,
            model: None,
            usage: None,
        }
    }

    /// An injected backend's failure: ERROR/BACKEND `backend_error`.
    pub fn failed() -> BackendError {
        BackendError::new(Detail::BackendError)
    }

    /// Converts any error into `backend_error`, dropping its text: an exception message never
    /// reaches a verdict (rule 29).
    pub fn from_error<E: std::error::Error>(_error: E) -> BackendError {
        BackendError::failed()
    }

    /// The backend finished without a response: ERROR/INVALID_RESPONSE `no_response`.
    pub fn no_response() -> BackendError {
        BackendError::new(Detail::NoResponse)
    }

    /// Keeps the model and usage of a response that was received but refused.
    pub fn with_response(mut self, model: Option<String>, usage: Option<Usage>) -> BackendError {
        self.model = model;
        self.usage = usage;
        self
    }

    /// The detail code.
    pub fn detail(&self) -> Detail {
        self.detail
    }

    /// The error code the detail belongs to.
    pub fn code(&self) -> ErrorCode {
        ErrorCode::for_detail(self.detail)
    }

    /// The answering model, when a response was received.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// The usage, when a response was received.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    pub(crate) fn into_parts(self) -> (Detail, Option<String>, Option<Usage>) {
        (self.detail, self.model, self.usage)
    }
}

impl std::fmt::Display for BackendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.code(), self.detail)
    }
}

impl std::error::Error for BackendError {}

/// A backend made from a closure, for tests and embedding: `backend_fn(|request| async { … })`.
pub struct FnBackend<F> {
    answer: F,
}

/// Wraps a closure taking the request (owned) and returning a future of the response.
pub fn backend_fn<F, Fut>(answer: F) -> FnBackend<F>
where
    F: Fn(Request) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Response, BackendError>> + Send + 'static,
{
    FnBackend { answer }
}

impl<F, Fut> Backend for FnBackend<F>
where
    F: Fn(Request) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Response, BackendError>> + Send + 'static,
{
    fn answer<'a>(&'a self, request: &'a Request, _deadline: Instant) -> BackendFuture<'a> {
        Box::pin((self.answer)(request.clone()))
    }
}

impl<B: Backend + ?Sized> Backend for Arc<B> {
    fn answer<'a>(&'a self, request: &'a Request, deadline: Instant) -> BackendFuture<'a> {
        (**self).answer(request, deadline)
    }
    fn kind(&self) -> BackendKind {
        (**self).kind()
    }
}

impl<B: Backend + ?Sized> Backend for Box<B> {
    fn answer<'a>(&'a self, request: &'a Request, deadline: Instant) -> BackendFuture<'a> {
        (**self).answer(request, deadline)
    }
    fn kind(&self) -> BackendKind {
        (**self).kind()
    }
}

impl<B: Backend + ?Sized> Backend for &B {
    fn answer<'a>(&'a self, request: &'a Request, deadline: Instant) -> BackendFuture<'a> {
        (**self).answer(request, deadline)
    }
    fn kind(&self) -> BackendKind {
        (**self).kind()
    }
}
