//! The error of a failed call: a kind plus what callers ask for (status, request id,
//! Retry-After, attempts, the safe detail code).
//!
//! An [`Error`] never holds the API key, the request body or raw response text; the only text
//! from a response is the short extracted message of systemone-wire.md §8 and the
//! `error_type`. The judge maps errors by [`Error::detail`] (judge-contract rule 28).

use std::{fmt, time::Duration};

use jevjudge_wire::{AnswerError, Detail, RequestError, Usage};

use crate::transport::TransportErrorKind;

/// What went wrong, at the level a caller branches on.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// 401 or 403: the key is missing, wrong or not allowed. Not retried.
    Auth,
    /// 400 with `error_type` `max_tokens_exceeded`, or 413: split the request. Not retried.
    TokenLimit,
    /// 400 or 422: the server refused the request. Not retried.
    InvalidRequest,
    /// 429, after the retries ran out.
    RateLimited,
    /// 529, after the retries ran out.
    Overloaded,
    /// Any other 5xx, after the retries ran out.
    Server,
    /// Any other status: 3xx (redirects are never followed), 404, 405, 408 after retries, …
    Status,
    /// The connection failed, was reset, or closed before a complete response, after the
    /// retries ran out.
    Transport,
    /// The last attempt hit the per-attempt timeout and no retry was left (or, in a plain
    /// call, none fitted the deadline). Detail `attempts_exhausted`.
    AttemptTimeout,
    /// The deadline ran out: during an attempt or a wait (`budget_elapsed`), or the next
    /// retry's wait would have ended after it (`retry_wait_exceeds_budget`; see
    /// [`Error::is_retry_skipped_for_deadline`]).
    Deadline,
    /// A success body that could not be decoded (the models list), or one over the size limit.
    UnreadableBody,
    /// A 200 whose answers fail the checks of systemone-wire.md §7. Never retried.
    InvalidAnswers(AnswerError),
    /// The request failed the checks of systemone-wire.md §5; nothing was sent.
    RequestRefused(RequestError),
}

/// A failed call. Cheap to move (one pointer).
///
/// ```
/// # use jevjudge_client::{Error, ErrorKind};
/// fn explain(error: &Error) -> String {
///     match error.kind() {
///         ErrorKind::RateLimited => format!("busy; server asked for {:?}", error.retry_after()),
///         ErrorKind::Deadline if error.is_retry_skipped_for_deadline() => "no time to retry".into(),
///         _ => error.detail().to_string(),
///     }
/// }
/// ```
pub struct Error {
    inner: Box<Inner>,
}

#[derive(Clone)]
struct Inner {
    kind: ErrorKind,
    status: Option<u16>,
    request_id: Option<String>,
    retry_after: Option<Duration>,
    attempts: u32,
    error_type: Option<String>,
    message: Option<String>,
    model: Option<String>,
    usage: Option<Usage>,
    retry_skipped: bool,
    transport: Option<TransportErrorKind>,
}

/// What a failed HTTP response left behind, safe to keep.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ResponseFacts {
    pub(crate) status: Option<u16>,
    pub(crate) request_id: Option<String>,
    pub(crate) retry_after: Option<Duration>,
    pub(crate) error_type: Option<String>,
    pub(crate) message: Option<String>,
}

impl ErrorKind {
    /// The kind of a non-success status (`error_type` distinguishes the token limit).
    pub(crate) fn for_status(status: u16, error_type: Option<&str>) -> ErrorKind {
        match status {
            401 | 403 => ErrorKind::Auth,
            413 => ErrorKind::TokenLimit,
            400 if error_type == Some("max_tokens_exceeded") => ErrorKind::TokenLimit,
            400 | 422 => ErrorKind::InvalidRequest,
            429 => ErrorKind::RateLimited,
            529 => ErrorKind::Overloaded,
            500..=599 => ErrorKind::Server,
            _ => ErrorKind::Status,
        }
    }
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, attempts: u32) -> Error {
        Error {
            inner: Box::new(Inner {
                kind,
                status: None,
                request_id: None,
                retry_after: None,
                attempts,
                error_type: None,
                message: None,
                model: None,
                usage: None,
                retry_skipped: false,
                transport: None,
            }),
        }
    }

    /// An error status (after retries, if it was retryable).
    pub(crate) fn from_status(facts: ResponseFacts, attempts: u32) -> Error {
        let status = facts.status.unwrap_or_default();
        let kind = ErrorKind::for_status(status, facts.error_type.as_deref());
        Error::new(kind, attempts).with_facts(facts)
    }

    /// The deadline ran out during an attempt or wait (`skipped` false) or before a retry whose
    /// wait would end after it (`skipped` true). `last` is the last response seen, if any.
    pub(crate) fn deadline(skipped: bool, last: Option<ResponseFacts>, attempts: u32) -> Error {
        let mut error = Error::new(ErrorKind::Deadline, attempts);
        error.inner.retry_skipped = skipped;
        match last {
            Some(facts) => error.with_facts(facts),
            None => error,
        }
    }

    pub(crate) fn transport(kind: TransportErrorKind, attempts: u32) -> Error {
        let error_kind = match kind {
            TransportErrorKind::BodyTooLarge => ErrorKind::UnreadableBody,
            _ => ErrorKind::Transport,
        };
        let mut error = Error::new(error_kind, attempts);
        error.inner.transport = Some(kind);
        error
    }

    pub(crate) fn with_facts(mut self, facts: ResponseFacts) -> Error {
        let inner = &mut self.inner;
        inner.status = facts.status;
        inner.request_id = facts.request_id;
        inner.retry_after = facts.retry_after;
        inner.error_type = facts.error_type;
        inner.message = facts.message;
        self
    }

    pub(crate) fn with_received(mut self, model: Option<String>, usage: Option<Usage>) -> Error {
        self.inner.model = model;
        self.inner.usage = usage;
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.inner.kind
    }

    /// The HTTP status of the last response, if one was received. For a
    /// [`ErrorKind::Deadline`] error it is the status of the last failed attempt, if any;
    /// for [`ErrorKind::InvalidAnswers`] it is the 200.
    pub fn status(&self) -> Option<u16> {
        self.inner.status
    }

    /// The server's request id of the last response (`x-typesafe-request-id`, else
    /// `x-request-id`). It holds no private text and may be logged.
    pub fn request_id(&self) -> Option<&str> {
        self.inner.request_id.as_deref()
    }

    /// The wait the last response asked for (`retry-after-ms` or `Retry-After`), as reported,
    /// even when it was too long to honour.
    pub fn retry_after(&self) -> Option<Duration> {
        self.inner.retry_after
    }

    /// How many attempts were sent (0 when nothing was sent).
    pub fn attempts(&self) -> u32 {
        self.inner.attempts
    }

    /// The safe detail code of judge-contract rule 28.
    pub fn detail(&self) -> Detail {
        match &self.inner.kind {
            ErrorKind::Auth
            | ErrorKind::InvalidRequest
            | ErrorKind::RateLimited
            | ErrorKind::Overloaded
            | ErrorKind::Server
            | ErrorKind::Status => Detail::HttpStatus(self.inner.status.unwrap_or_default()),
            ErrorKind::TokenLimit => Detail::TokenLimit,
            ErrorKind::Transport => Detail::Transport,
            ErrorKind::AttemptTimeout => Detail::AttemptsExhausted,
            ErrorKind::Deadline if self.inner.retry_skipped => Detail::RetryWaitExceedsBudget,
            ErrorKind::Deadline => Detail::BudgetElapsed,
            ErrorKind::UnreadableBody => Detail::BodyUnreadable,
            ErrorKind::InvalidAnswers(error) => error.detail(),
            ErrorKind::RequestRefused(_) => Detail::RequestInvalid,
        }
    }

    /// Whether the deadline ended the call (judge TIMEOUT).
    pub fn is_deadline(&self) -> bool {
        self.inner.kind == ErrorKind::Deadline
    }

    /// Whether the call ended because the next retry's wait would have ended after the
    /// caller's deadline (`retry_wait_exceeds_budget`); the retry was not started.
    pub fn is_retry_skipped_for_deadline(&self) -> bool {
        self.is_deadline() && self.inner.retry_skipped
    }

    /// Whether a timeout ended the call: the deadline, or the per-attempt timeout.
    pub fn is_timeout(&self) -> bool {
        matches!(
            self.inner.kind,
            ErrorKind::Deadline | ErrorKind::AttemptTimeout
        )
    }

    /// The short message extracted from a JSON error body (≤ 200 characters), never from a
    /// non-JSON body and never a 422's `input` or `ctx`.
    pub fn message(&self) -> Option<&str> {
        self.inner.message.as_deref()
    }

    /// The `error_type` of a JSON error body, for example `max_tokens_exceeded`.
    pub fn error_type(&self) -> Option<&str> {
        self.inner.error_type.as_deref()
    }

    /// The answering model, when a 200 was received and named it (kept for
    /// [`ErrorKind::InvalidAnswers`], judge-contract D3).
    pub fn model(&self) -> Option<&str> {
        self.inner.model.as_deref()
    }

    /// The usage of a received 200, when it was known (judge-contract D3).
    pub fn usage(&self) -> Option<Usage> {
        self.inner.usage
    }

    /// The transport failure behind [`ErrorKind::Transport`] or an over-long body.
    pub fn transport_kind(&self) -> Option<TransportErrorKind> {
        self.inner.transport
    }

    fn phrase(&self) -> String {
        let status = self.inner.status.unwrap_or_default();
        match &self.inner.kind {
            ErrorKind::Auth => format!("authentication failed (http status {status})"),
            ErrorKind::TokenLimit => format!("request over the token limit (http status {status})"),
            ErrorKind::InvalidRequest => format!("request rejected (http status {status})"),
            ErrorKind::RateLimited => format!("rate limited (http status {status})"),
            ErrorKind::Overloaded => format!("server overloaded (http status {status})"),
            ErrorKind::Server => format!("server error (http status {status})"),
            ErrorKind::Status => format!("unexpected http status {status}"),
            ErrorKind::Transport => match self.inner.transport {
                Some(kind) => format!("transport failure: {kind}"),
                None => "transport failure".to_owned(),
            },
            ErrorKind::AttemptTimeout => "every attempt timed out".to_owned(),
            ErrorKind::Deadline if self.inner.retry_skipped => {
                "deadline too close for the next retry".to_owned()
            }
            ErrorKind::Deadline => "deadline passed".to_owned(),
            ErrorKind::UnreadableBody => "response body could not be read".to_owned(),
            ErrorKind::InvalidAnswers(error) => format!("invalid response: {error}"),
            ErrorKind::RequestRefused(error) => format!("request not sent: {error}"),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.phrase())?;
        if self.inner.attempts > 1 {
            write!(f, " after {} attempts", self.inner.attempts)?;
        }
        if let Some(message) = &self.inner.message {
            write!(f, ": {message}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        let mut debug = f.debug_struct("Error");
        debug.field("kind", &inner.kind);
        debug.field("detail", &self.detail().to_string());
        debug.field("attempts", &inner.attempts);
        if let Some(status) = inner.status {
            debug.field("status", &status);
        }
        if let Some(id) = &inner.request_id {
            debug.field("request_id", id);
        }
        if let Some(wait) = inner.retry_after {
            debug.field("retry_after", &wait);
        }
        if let Some(error_type) = &inner.error_type {
            debug.field("error_type", error_type);
        }
        if let Some(message) = &inner.message {
            debug.field("message", message);
        }
        if let Some(model) = &inner.model {
            debug.field("model", model);
        }
        if let Some(usage) = &inner.usage {
            debug.field("usage", usage);
        }
        if let Some(transport) = &inner.transport {
            debug.field("transport", transport);
        }
        debug.finish()
    }
}

impl Clone for Error {
    fn clone(&self) -> Error {
        Error {
            inner: self.inner.clone(),
        }
    }
}

/// No `source()`: the Display text already ends with the cause (`invalid response: …`,
/// `request not sent: …`), and an error that also returned it would show it twice in a
/// report that walks the chain (anyhow's `{:#}`). The cause stays reachable through
/// [`Error::kind`] ([`ErrorKind::InvalidAnswers`], [`ErrorKind::RequestRefused`]).
impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ErrorBody;

    fn facts(status: u16, body: &[u8]) -> ResponseFacts {
        let read = ErrorBody::read(body);
        ResponseFacts {
            status: Some(status),
            request_id: Some("req_1".into()),
            retry_after: None,
            error_type: read.error_type,
            message: read.message,
        }
    }

    #[test]
    fn an_error_is_one_pointer() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn statuses_map_to_kinds_and_details() {
        let cases: &[(u16, &[u8], ErrorKind, &str)] = &[
            (
                401,
                br#"{"message":"invalid key"}"#,
                ErrorKind::Auth,
                "http_status_401",
            ),
            (403, b"{}", ErrorKind::Auth, "http_status_403"),
            (
                400,
                br#"{"detail":{"error_type":"max_tokens_exceeded"}}"#,
                ErrorKind::TokenLimit,
                "token_limit",
            ),
            (413, b"", ErrorKind::TokenLimit, "token_limit"),
            (
                400,
                br#"{"detail":"Too many choices."}"#,
                ErrorKind::InvalidRequest,
                "http_status_400",
            ),
            (422, b"{}", ErrorKind::InvalidRequest, "http_status_422"),
            (429, b"{}", ErrorKind::RateLimited, "http_status_429"),
            (529, b"{}", ErrorKind::Overloaded, "http_status_529"),
            (500, b"<html>", ErrorKind::Server, "http_status_500"),
            (503, b"", ErrorKind::Server, "http_status_503"),
            (302, b"", ErrorKind::Status, "http_status_302"),
            (
                404,
                br#"{"detail":"Not Found"}"#,
                ErrorKind::Status,
                "http_status_404",
            ),
            (405, b"", ErrorKind::Status, "http_status_405"),
            (408, b"", ErrorKind::Status, "http_status_408"),
            (409, b"", ErrorKind::Status, "http_status_409"),
        ];
        for (status, body, kind, detail) in cases {
            let error = Error::from_status(facts(*status, body), 1);
            assert_eq!(error.kind(), kind, "{status}");
            assert_eq!(error.detail().to_string(), *detail, "{status}");
            assert_eq!(error.status(), Some(*status));
            assert_eq!(error.request_id(), Some("req_1"));
        }
    }

    #[test]
    fn other_kinds_map_to_their_details() {
        let detail = |error: Error| error.detail().to_string();
        assert_eq!(
            detail(Error::transport(TransportErrorKind::Closed, 3)),
            "transport"
        );
        assert_eq!(
            detail(Error::transport(TransportErrorKind::BodyTooLarge, 1)),
            "body_unreadable"
        );
        assert_eq!(
            detail(Error::new(ErrorKind::AttemptTimeout, 3)),
            "attempts_exhausted"
        );
        assert_eq!(detail(Error::deadline(false, None, 1)), "budget_elapsed");
        let skipped = Error::deadline(true, Some(facts(429, b"{}")), 1);
        assert!(skipped.is_retry_skipped_for_deadline() && skipped.is_timeout());
        assert_eq!(skipped.status(), Some(429));
        assert_eq!(detail(skipped), "retry_wait_exceeds_budget");
        assert_eq!(
            detail(Error::new(
                ErrorKind::InvalidAnswers(AnswerError::BodyUnreadable),
                1
            )),
            "body_unreadable"
        );
        assert_eq!(
            detail(Error::new(
                ErrorKind::RequestRefused(RequestError::QuestionsEmpty),
                0
            )),
            "request_invalid"
        );
    }

    #[test]
    fn a_422_echo_never_reaches_any_rendering() {
        let body = br#"{"detail":[{"loc":["body","state"],"msg":"Input should be a valid string",
            "type":"string_type","input":{"ticket":"RAW-EVIDENCE-91c2"},"ctx":{"x":"RAW-Q-7f3a"}}]}"#;
        let error = Error::from_status(facts(422, body), 1);
        assert_eq!(
            error.message(),
            Some("state: Input should be a valid string")
        );
        for shown in [
            format!("{error}"),
            format!("{error:?}"),
            format!("{error:#?}"),
        ] {
            assert!(!shown.contains("RAW-EVIDENCE-91c2"), "{shown}");
            assert!(!shown.contains("RAW-Q-7f3a"), "{shown}");
        }
    }

    #[test]
    fn non_json_bodies_leave_no_text() {
        let error = Error::from_status(facts(502, b"<html>RAW-HTML-secret</html>"), 3);
        assert_eq!(error.message(), None);
        let shown = format!("{error} {error:?}");
        assert!(!shown.contains("RAW-HTML"), "{shown}");
        assert_eq!(
            error.to_string(),
            "server error (http status 502) after 3 attempts"
        );
    }

    #[test]
    fn display_is_a_short_phrase_with_the_message() {
        let error = Error::from_status(facts(401, br#"{"message":"invalid key"}"#), 1);
        assert_eq!(
            error.to_string(),
            "authentication failed (http status 401): invalid key"
        );
    }

    /// Every message of an error and its sources, joined as anyhow's `{:#}` joins them.
    fn chain(error: &(dyn std::error::Error + 'static)) -> String {
        let mut parts = vec![error.to_string()];
        let mut next = error.source();
        while let Some(source) = next {
            parts.push(source.to_string());
            next = source.source();
        }
        parts.join(": ")
    }

    #[test]
    fn the_cause_is_shown_once_when_the_chain_is_walked() {
        let refused = Error::new(ErrorKind::RequestRefused(RequestError::QuestionsEmpty), 0);
        assert_eq!(
            chain(&refused),
            "request not sent: questions must not be empty"
        );
        let invalid = Error::new(ErrorKind::InvalidAnswers(AnswerError::BodyUnreadable), 1);
        let cause = AnswerError::BodyUnreadable.to_string();
        assert_eq!(chain(&invalid), format!("invalid response: {cause}"));
        assert_eq!(chain(&invalid).matches(&cause).count(), 1);
    }
}
