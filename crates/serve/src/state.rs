//! What every handler shares: the judge (one backend, one connection pool), the definitions,
//! the settings, admission control and the metrics.

use std::{
    fmt,
    sync::{Arc, OnceLock, RwLock},
    time::Duration,
};

use jevjudge_client::limit::Limiter;
use jevjudge_judge::{Backend, BackendKind, Judge};

use crate::{
    Config, ConfigError, Definitions, Metrics,
    admission::Admission,
    decision_log::{Capturing, DecisionLog},
    episodes::Episodes,
    failed_checks::FailedChecks,
    metrics::Gauges,
    queue_policy::QueuePolicy,
    reviewers::{Reviewer, ReviewerTokens},
    session::SessionKeys,
    sign_in_throttle::SignInThrottle,
};

/// The state of a review service; cheap to clone (clones share everything).
#[derive(Clone)]
pub struct ServeState {
    inner: Arc<Inner>,
}

struct Inner {
    judge: Judge<Arc<dyn Backend>>,
    /// Swapped whole by a reload: a request takes the `Arc` once and keeps its set to the end.
    definitions: RwLock<Arc<Definitions>>,
    config: Config,
    metrics: Metrics,
    admission: Arc<Admission>,
    /// The OpenAPI document, written on first request (see [`ServeState::openapi_json`]).
    openapi: OnceLock<String>,
    decision_log: Option<Arc<DecisionLog>>,
    /// The routes, read from the decision log's store (none without one).
    routes: Option<crate::routes::RouteTable>,
    review_queue: Option<Arc<QueuePolicy>>,
    limiter: Option<Arc<Limiter>>,
    /// The reviewers now (a reload swaps the list whole), when reviews are queued.
    reviewers: RwLock<Option<Arc<ReviewerTokens>>>,
    /// The keys of the reviewer pages' sessions for that list.
    session_keys: RwLock<Option<Arc<SessionKeys>>>,
    /// Sign-in attempts per client address (`/ui/sign-in`).
    sign_ins: SignInThrottle,
    /// Failed bearer-token checks per client address.
    failed_checks: FailedChecks,
    /// Outages logged when they begin and end.
    episodes: Episodes,
    /// Shadow reviews of routes' live reviews.
    shadows: crate::shadows::Shadows,
}

/// Everything a [`ServeState`] is made of, checked by [`crate::ServiceBuilder::build`].
pub(crate) struct Parts {
    pub(crate) backend: Arc<dyn Backend>,
    pub(crate) definitions: Definitions,
    pub(crate) config: Config,
    pub(crate) metrics: Metrics,
    pub(crate) limiter: Option<Arc<Limiter>>,
    pub(crate) decision_log: Option<Arc<DecisionLog>>,
    pub(crate) review_queue: Option<Arc<QueuePolicy>>,
}

impl ServeState {
    /// The state made of `parts`: validates the settings; with a limiter every review is
    /// admitted through it (adaptive concurrency, `Retry-After` floors, a refused key answering
    /// every later review with its ERROR at once and flagging the service not ready).
    pub(crate) fn from_parts(parts: Parts) -> Result<ServeState, ConfigError> {
        let Parts {
            backend,
            definitions,
            config,
            metrics,
            limiter,
            decision_log,
            review_queue,
        } = parts;
        config.validate()?;
        let backend: Arc<dyn Backend> = Arc::new(Capturing(backend));
        let zero_budget = |_| ConfigError::ZeroBudget {
            setting: "default_budget",
        };
        // The shadows' judge has no limiter: a shadow never takes a live review's permit.
        let shadows = crate::shadows::Shadows::new(
            Judge::new(backend.clone(), config.default_budget).map_err(zero_budget)?,
            config.shadow_slots(),
        );
        let mut judge = Judge::new(backend, config.default_budget).map_err(zero_budget)?;
        if let Some(limiter) = &limiter {
            judge = judge.with_limiter(limiter.clone());
            metrics.watch_limiter(limiter.clone());
        }
        Ok(ServeState {
            inner: Arc::new(Inner {
                judge,
                definitions: RwLock::new(Arc::new(definitions)),
                admission: Admission::new(config.max_concurrent, config.queue),
                config,
                metrics,
                openapi: OnceLock::new(),
                routes: decision_log
                    .as_ref()
                    .map(|log| crate::routes::RouteTable::new(log.store().clone())),
                decision_log,
                reviewers: RwLock::new(
                    review_queue
                        .as_ref()
                        .map(|policy| Arc::new(policy.reviewers.clone())),
                ),
                session_keys: RwLock::new(review_queue.as_ref().map(|policy| {
                    Arc::new(SessionKeys::new(
                        &policy.reviewers,
                        policy.session_secret.as_ref(),
                    ))
                })),
                review_queue,
                limiter,
                sign_ins: SignInThrottle::new(),
                failed_checks: FailedChecks::new(),
                episodes: Episodes::default(),
                shadows,
            }),
        })
    }

    /// A state with no store and no limiter (unit tests of single layers).
    #[cfg(test)]
    pub(crate) fn for_tests<B: Backend + 'static>(
        backend: B,
        definitions: Definitions,
        config: Config,
        metrics: Metrics,
    ) -> Result<ServeState, ConfigError> {
        ServeState::from_parts(Parts {
            backend: Arc::new(backend),
            definitions,
            config,
            metrics,
            limiter: None,
            decision_log: None,
            review_queue: None,
        })
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The definitions now: a request takes them once and keeps that set to its end, even
    /// when a reload ([`ServeState::replace_definitions`]) swaps in another meanwhile.
    pub fn definitions(&self) -> Arc<Definitions> {
        match self.inner.definitions.read() {
            Ok(definitions) => definitions.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Swaps in a new set of definitions (a reload): requests that already took the old set
    /// finish on it; every later request sees the new one. Returns the old set.
    pub fn replace_definitions(&self, definitions: Definitions) -> Arc<Definitions> {
        let new = Arc::new(definitions);
        let mut slot = match self.inner.definitions.write() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        std::mem::replace(&mut *slot, new)
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

    /// [`ServeState::render_metrics`] after reading the store's figures (at most 1 s): its
    /// health and, with a queue, the queue's gauges. What `GET /metrics` answers.
    pub async fn render_metrics_with_store(&self) -> String {
        if let Some(log) = self.decision_log() {
            let mut scrape = crate::metrics::StoreScrape {
                ready: log.is_ready(),
                queue: None,
            };
            if self.queue_enabled() {
                let now = std::time::SystemTime::now();
                let store = log.store();
                let read = tokio::time::timeout(Duration::from_secs(1), async {
                    Ok::<_, jevjudge_store::StoreError>((
                        store.queue_gauges_at(now).await?,
                        store.adjudications_pending().await?,
                    ))
                })
                .await;
                match read {
                    Ok(Ok((gauges, adjudications_pending))) => {
                        scrape.queue = Some(crate::metrics::QueueScrape {
                            gauges,
                            now_millis: now
                                .duration_since(std::time::UNIX_EPOCH)
                                .map_or(0, |since| {
                                    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
                                }),
                            adjudications_pending,
                        });
                    }
                    _ => scrape.ready = false,
                }
            }
            self.metrics().set_store_figures(scrape);
        }
        self.render_metrics()
    }

    /// The routes (read through a short cache), when the service keeps a decision log.
    pub(crate) fn route_table(&self) -> Option<&crate::routes::RouteTable> {
        self.inner.routes.as_ref()
    }

    /// The decision log, when the service keeps one.
    pub fn decision_log(&self) -> Option<&Arc<DecisionLog>> {
        self.inner.decision_log.as_ref()
    }

    /// The review queue's policy, when reviews are queued.
    pub fn queue_policy(&self) -> Option<&Arc<QueuePolicy>> {
        self.inner.review_queue.as_ref()
    }

    /// Whether reviews are queued for people (`--queue-statuses`/`--sample-pass`).
    pub fn queue_enabled(&self) -> bool {
        self.inner.review_queue.as_ref().is_some()
    }

    /// The store the decision log and the review queue use, when there is one.
    pub fn store(&self) -> Option<&jevjudge_store::Store> {
        self.decision_log().map(|log| log.store())
    }

    /// How long a claim holds its item (`--lease`; the default when no queue is set).
    pub fn lease(&self) -> Duration {
        self.queue_policy()
            .map_or(crate::queue_policy::DEFAULT_LEASE, |policy| policy.lease)
    }

    /// The most items one reviewer may hold under live leases at once.
    pub fn max_leases_per_reviewer(&self) -> u32 {
        self.queue_policy().map_or(
            crate::queue_policy::DEFAULT_MAX_LEASES_PER_REVIEWER,
            |policy| policy.max_leases_per_reviewer,
        )
    }

    /// The keys of the reviewer pages' sessions, when reviews are queued.
    pub(crate) fn session_keys(&self) -> Option<Arc<SessionKeys>> {
        match self.inner.session_keys.read() {
            Ok(keys) => keys.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// The reviewers now, when reviews are queued.
    pub fn reviewers(&self) -> Option<Arc<ReviewerTokens>> {
        match self.inner.reviewers.read() {
            Ok(reviewers) => reviewers.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    /// Swaps in a new reviewer list (a reload) and its session keys: without a session
    /// secret every reviewer is signed out when the list changed; with one, only those whose
    /// token changed or who left. Returns the old list; `None` (nothing changes) without a
    /// queue.
    pub fn replace_reviewers(&self, reviewers: ReviewerTokens) -> Option<Arc<ReviewerTokens>> {
        let policy = self.queue_policy()?;
        let keys = Arc::new(SessionKeys::new(&reviewers, policy.session_secret.as_ref()));
        let mut slot = match self.inner.reviewers.write() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        let old = slot.replace(Arc::new(reviewers));
        let mut key_slot = match self.inner.session_keys.write() {
            Ok(slot) => slot,
            Err(poisoned) => poisoned.into_inner(),
        };
        *key_slot = Some(keys);
        old
    }

    /// The limiter of sign-in attempts per client address.
    pub(crate) fn sign_ins(&self) -> &SignInThrottle {
        &self.inner.sign_ins
    }

    /// Failed bearer-token checks per client address.
    pub(crate) fn episodes(&self) -> &Episodes {
        &self.inner.episodes
    }

    pub(crate) fn failed_checks(&self) -> &FailedChecks {
        &self.inner.failed_checks
    }

    /// The reviewer whose token this is (compared in constant time against every reviewer
    /// token); `None` for an unknown token or when no queue is set.
    pub fn reviewer_for_token(&self, token: &str) -> Option<Reviewer> {
        self.reviewers()?.reviewer_for_token(token.as_bytes())
    }

    /// Whether the reviewer `name` is a lead (`name:token:lead`).
    pub fn is_lead(&self, name: &str) -> bool {
        self.reviewers()
            .is_some_and(|reviewers| reviewers.is_lead(name))
    }

    /// The reviewer of an `Authorization` header value, when it carries a reviewer's token;
    /// `None` when no queue is set.
    pub fn reviewer_for_header(&self, authorization: Option<&[u8]>) -> Option<Reviewer> {
        self.reviewers()?.reviewer_for_header(authorization)
    }

    pub(crate) fn judge(&self) -> &Judge<Arc<dyn Backend>> {
        &self.inner.judge
    }

    /// Waits at most `limit` for the shadow reviews still running, then drops the rest
    /// (counted as shed in the metrics); returns how many were dropped. A stopping service
    /// calls it once its requests are done.
    pub async fn drain_shadows(&self, limit: Duration) -> usize {
        self.inner.shadows.drain(limit).await
    }

    pub(crate) fn shadows(&self) -> &crate::shadows::Shadows {
        &self.inner.shadows
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
            .field("definitions", &self.definitions().len())
            .field("review_queue", &self.queue_policy())
            .field("backend", &self.backend_kind())
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}
