//! What every handler shares: the judge (one backend, one connection pool), the definitions,
//! the settings, admission control and the metrics.

use std::{
    fmt,
    sync::{Arc, OnceLock},
};

use jevjudge_client::limit::Limiter;
use jevjudge_judge::{Backend, BackendKind, Judge};

use crate::{
    Config, ConfigError, Definitions, Metrics,
    admission::Admission,
    decision_log::{Capturing, DecisionLog},
    metrics::Gauges,
};

/// The state of a review service; cheap to clone (clones share everything).
#[derive(Clone)]
pub struct ServeState {
    inner: Arc<Inner>,
}

struct Inner {
    judge: Judge<Arc<dyn Backend>>,
    definitions: Definitions,
    config: Config,
    metrics: Metrics,
    admission: Arc<Admission>,
    /// The OpenAPI document, written on first request (see [`ServeState::openapi_json`]).
    openapi: OnceLock<String>,
    decision_log: OnceLock<Arc<DecisionLog>>,
    limiter: Option<Arc<Limiter>>,
}

impl ServeState {
    /// A service reviewing `definitions` with `backend` under `config`, counting into
    /// `metrics` (pass the [`Metrics`] whose [`Metrics::attempt_hook`] the backend's client
    /// reports to, or a fresh one).
    pub fn new<B: Backend + 'static>(
        backend: B,
        definitions: Definitions,
        config: Config,
        metrics: Metrics,
    ) -> Result<ServeState, ConfigError> {
        ServeState::with_limiter(backend, definitions, config, metrics, None)
    }

    /// Like [`ServeState::new`], with every review admitted through a shared [`Limiter`]
    /// (issue 11): adaptive concurrency against the backend, `Retry-After` floors, and a
    /// refused key answering every later review with its ERROR at once and flagging the
    /// service not ready ([`ServeState::ready`]). Give the same limiter to the backend's client.
    pub fn with_limiter<B: Backend + 'static>(
        backend: B,
        definitions: Definitions,
        config: Config,
        metrics: Metrics,
        limiter: Option<Arc<Limiter>>,
    ) -> Result<ServeState, ConfigError> {
        config.validate()?;
        let backend: Arc<dyn Backend> = Arc::new(Capturing(backend));
        let mut judge =
            Judge::new(backend, config.default_budget).map_err(|_| ConfigError::ZeroBudget {
                setting: "default_budget",
            })?;
        if let Some(limiter) = &limiter {
            judge = judge.with_limiter(limiter.clone());
            metrics.watch_limiter(limiter.clone());
        }
        Ok(ServeState {
            inner: Arc::new(Inner {
                judge,
                definitions,
                admission: Admission::new(config.max_concurrent, config.queue),
                config,
                metrics,
                openapi: OnceLock::new(),
                decision_log: OnceLock::new(),
                limiter,
            }),
        })
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The definitions.
    pub fn definitions(&self) -> &Definitions {
        &self.inner.definitions
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    /// Where answers come from.
    pub fn backend_kind(&self) -> BackendKind {
        self.inner.judge.backend().kind()
    }

    /// False once the backend refused the key (401/403): every review would fail, so a load
    /// balancer should stop sending traffic. True without a limiter.
    pub fn ready(&self) -> bool {
        self.inner
            .limiter
            .as_ref()
            .is_none_or(|limiter| limiter.stop().is_none())
    }

    /// The shared limiter, when there is one.
    pub fn limiter(&self) -> Option<&Arc<Limiter>> {
        self.inner.limiter.as_ref()
    }

    /// The Prometheus text exposition of the metrics, with live gauges.
    pub fn render_metrics(&self) -> String {
        let admission = &self.inner.admission;
        self.inner.metrics.render(Gauges {
            in_flight: admission.running(),
            waiting: admission.waiting(),
            max_concurrent: self.inner.config.max_concurrent,
            queue: self.inner.config.queue,
        })
    }

    /// Writes every review to `log` before answering it (`--store`); set once, before
    /// serving. Returns the log back when one was set already.
    pub fn with_decision_log(self, log: Arc<DecisionLog>) -> Result<ServeState, Arc<DecisionLog>> {
        self.inner.decision_log.set(log)?;
        Ok(self)
    }

    /// The decision log, when the service keeps one.
    pub fn decision_log(&self) -> Option<&Arc<DecisionLog>> {
        self.inner.decision_log.get()
    }

    pub(crate) fn judge(&self) -> &Judge<Arc<dyn Backend>> {
        &self.inner.judge
    }

    pub(crate) fn admission(&self) -> &Arc<Admission> {
        &self.inner.admission
    }

    /// The OpenAPI document, written once by `write` from the settings (the router passes
    /// [`crate::openapi`]: the state does not depend on the document's modules).
    pub(crate) fn openapi_json(&self, write: impl FnOnce(&Config) -> String) -> &str {
        self.inner.openapi.get_or_init(|| write(&self.inner.config))
    }
}

impl fmt::Debug for ServeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServeState")
            .field("definitions", &self.inner.definitions.len())
            .field("backend", &self.backend_kind())
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}
