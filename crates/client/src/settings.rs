//! What a built client holds: its resolved configuration, shared by the builder that
//! resolves it ([`crate::ClientBuilder`]) and the client that uses it ([`crate::Client`]).

use std::{sync::Arc, time::Duration};

use crate::{ApiKey, AttemptEvent, Backoff, limit::Limiter, retry::RetryPolicy, url::Endpoints};

/// A hook called after every attempt (metrics).
pub type AttemptHook = Arc<dyn Fn(&AttemptEvent) + Send + Sync>;

/// The resolved configuration of a client.
pub(crate) struct Settings {
    pub(crate) endpoints: Endpoints,
    pub(crate) key: Option<ApiKey>,
    pub(crate) model: String,
    pub(crate) attempt_timeout: Duration,
    pub(crate) call_timeout: Duration,
    pub(crate) retry: RetryPolicy,
    pub(crate) backoff: Backoff,
    pub(crate) on_attempt: Option<AttemptHook>,
    pub(crate) limiter: Option<Arc<Limiter>>,
}
