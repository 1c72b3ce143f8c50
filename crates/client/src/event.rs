//! Per-attempt events for metrics ([`crate::ClientBuilder::on_attempt`]).

use std::time::Duration;

use crate::{Method, TransportErrorKind};

/// How one attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptOutcome {
    /// A response with this HTTP status arrived.
    Status(u16),
    /// The transport failed before a complete response.
    Transport(TransportErrorKind),
    /// The per-attempt timeout fired.
    TimedOut,
    /// The call's deadline passed during the attempt.
    DeadlineElapsed,
}

/// One finished attempt, reported to the `on_attempt` hook as soon as it ends.
///
/// It holds no request or response text, so it is safe to log.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct AttemptEvent {
    /// `GET` (models) or `POST` (System One).
    pub method: Method,
    /// The attempt number, from 1.
    pub attempt: u32,
    /// How many retries preceded it (`attempt − 1`; the `X-TypeSafe-Retry-Count` sent, if
    /// any).
    pub retry_count: u32,
    /// How it ended.
    pub outcome: AttemptOutcome,
    /// How long it took.
    pub elapsed: Duration,
    /// The server's request id, when a response carried one.
    pub request_id: Option<String>,
}
