//! The composition root: one builder assembles the backend, the definitions, the settings,
//! the limiter, the decision log and the review queue into a [`Service`], refusing
//! combinations that cannot work; the service then listens and runs (see [`crate::RunOptions`]).

use std::{fmt, net::SocketAddr, path::PathBuf, sync::Arc, time::Duration};

use jevjudge_client::limit::Limiter;
use jevjudge_judge::Backend;
use jevjudge_store::{NewRoute, Store, StoreError, StoreUrl};
use jevjudge_wire::setting::{Explain, Namer, Setting};

use crate::{
    Config, ConfigError, Definitions, Metrics, QueuePolicy, QueuePolicyError, ServeState,
    decision_log::DecisionLog,
    run::{Listening, RunError, RunOptions, Stopped},
    state::Parts,
};

/// The review service, assembled and checked, not yet listening.
///
/// Made by [`Service::builder`]; [`Service::bind`] or [`Service::listen`] give a
/// [`Listening`] service whose [`Listening::run`] serves until a shutdown (or, with
/// [`RunOptions::handle_os_signals`], SIGTERM/SIGINT) and drains; [`Service::run`] does both.
/// [`Service::router`] gives the bare router for a server of one's own.
#[derive(Clone)]
pub struct Service {
    state: ServeState,
    retain_state: Option<Duration>,
    definitions_dir: Option<PathBuf>,
}

impl Service {
    /// A builder for a service reviewing `definitions` with `backend`.
    pub fn builder<B: Backend + 'static>(backend: B, definitions: Definitions) -> ServiceBuilder {
        ServiceBuilder {
            backend: Arc::new(backend),
            definitions,
            config: Config::default(),
            metrics: None,
            limiter: None,
            definitions_dir: None,
            decision_log: None,
            review_queue: None,
            routes: Vec::new(),
        }
    }

    /// The state every handler shares.
    pub fn state(&self) -> &ServeState {
        &self.state
    }

    /// The axum router over this service's state, for serving it some other way (no
    /// connection limits, no retention sweep, no reload: those belong to [`Listening::run`]).
    pub fn router(&self) -> axum::Router {
        crate::app(self.state.clone())
    }

    /// The directory SIGHUP reloads the definitions from, when one was given.
    pub fn definitions_dir(&self) -> Option<&std::path::Path> {
        self.definitions_dir.as_deref()
    }

    /// How old kept state text may get before the retention sweep erases it, when set.
    pub fn retain_state(&self) -> Option<Duration> {
        self.retain_state
    }

    fn into_parts(self) -> (ServeState, Option<Duration>, Option<PathBuf>) {
        (self.state, self.retain_state, self.definitions_dir)
    }

    /// Installs the OS signal handlers the options ask for, then binds `addr`.
    pub async fn bind(self, addr: SocketAddr, options: RunOptions) -> Result<Listening, RunError> {
        let options = options.installed()?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| RunError::Bind { addr, source })?;
        Listening::new(self.into_parts(), listener, options)
    }

    /// Installs the OS signal handlers the options ask for and takes a bound `listener`.
    pub fn listen(
        self,
        listener: tokio::net::TcpListener,
        options: RunOptions,
    ) -> Result<Listening, RunError> {
        let options = options.installed()?;
        Listening::new(self.into_parts(), listener, options)
    }

    /// [`Service::bind`], then [`Listening::run`] until `shutdown` resolves (or a signal).
    pub async fn run<F>(
        self,
        addr: SocketAddr,
        options: RunOptions,
        shutdown: F,
    ) -> Result<Stopped, RunError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        self.bind(addr, options).await?.run(shutdown).await
    }
}

impl fmt::Debug for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Service")
            .field("state", &self.state)
            .field("retain_state", &self.retain_state)
            .field("definitions_dir", &self.definitions_dir)
            .finish()
    }
}

/// Where and how the service keeps its decision log.
#[derive(Clone)]
pub struct DecisionLogConfig {
    source: StoreSource,
    keep_state: bool,
    retain_state: Option<Duration>,
    requested_model: String,
}

#[derive(Clone)]
enum StoreSource {
    Url(StoreUrl),
    Store(Store),
}

impl DecisionLogConfig {
    /// A decision log in the store at `url`, opened (and migrated) by
    /// [`ServiceBuilder::build`].
    pub fn url(url: StoreUrl) -> DecisionLogConfig {
        DecisionLogConfig::with_source(StoreSource::Url(url))
    }

    /// A decision log in a store already open and migrated.
    pub fn store(store: Store) -> DecisionLogConfig {
        DecisionLogConfig::with_source(StoreSource::Store(store))
    }

    fn with_source(source: StoreSource) -> DecisionLogConfig {
        DecisionLogConfig {
            source,
            keep_state: false,
            retain_state: None,
            requested_model: jevjudge_wire::DEFAULT_MODEL.to_owned(),
        }
    }

    /// Also keep each review's state text and answers (off by default: no state text reaches
    /// the database). A review queue needs it.
    pub fn keep_state(mut self, keep: bool) -> DecisionLogConfig {
        self.keep_state = keep;
        self
    }

    /// Erase kept state text older than this (verdicts stay), at start and every
    /// [`crate::RETENTION_SWEEP`] while the service runs. Needs [`DecisionLogConfig::keep_state`].
    pub fn retain_state(mut self, retain: Duration) -> DecisionLogConfig {
        self.retain_state = Some(retain);
        self
    }

    /// The model the backend asks for, kept in exported records (default
    /// [`jevjudge_wire::DEFAULT_MODEL`]).
    pub fn requested_model(mut self, model: impl Into<String>) -> DecisionLogConfig {
        self.requested_model = model.into();
        self
    }
}

impl fmt::Debug for DecisionLogConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // A store URL shows with any password replaced.
        let source = match &self.source {
            StoreSource::Url(url) => url.to_string(),
            StoreSource::Store(store) => format!("open {:?} store", store.kind()),
        };
        f.debug_struct("DecisionLogConfig")
            .field("source", &source)
            .field("keep_state", &self.keep_state)
            .field("retain_state", &self.retain_state)
            .field("requested_model", &self.requested_model)
            .finish()
    }
}

/// Assembles a [`Service`]; see [`Service::builder`].
#[must_use]
pub struct ServiceBuilder {
    backend: Arc<dyn Backend>,
    definitions: Definitions,
    config: Config,
    metrics: Option<Metrics>,
    limiter: Option<Arc<Limiter>>,
    definitions_dir: Option<PathBuf>,
    decision_log: Option<DecisionLogConfig>,
    review_queue: Option<QueuePolicy>,
    routes: Vec<NewRoute>,
}

impl fmt::Debug for ServiceBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceBuilder")
            .field("definitions", &self.definitions.len())
            .field("config", &self.config)
            .field("limiter", &self.limiter.is_some())
            .field("definitions_dir", &self.definitions_dir)
            .field("decision_log", &self.decision_log)
            .field("review_queue", &self.review_queue)
            .field("routes", &self.routes.len())
            .finish_non_exhaustive()
    }
}

impl ServiceBuilder {
    /// The settings (default [`Config::default`]).
    pub fn config(mut self, config: Config) -> ServiceBuilder {
        self.config = config;
        self
    }

    /// The metrics to count into: pass the one whose [`Metrics::attempt_hook`] the backend's
    /// client reports to (default: a fresh one).
    pub fn metrics(mut self, metrics: Metrics) -> ServiceBuilder {
        self.metrics = Some(metrics);
        self
    }

    /// Admit every review through this shared limiter: adaptive concurrency against the
    /// backend, `Retry-After` floors, and a refused key answering every later review with its
    /// ERROR at once and flagging the service not ready. Give the same limiter to the
    /// backend's client.
    pub fn limiter(mut self, limiter: Arc<Limiter>) -> ServiceBuilder {
        self.limiter = Some(limiter);
        self
    }

    /// The directory the definitions came from: SIGHUP reloads it while the service runs with
    /// [`RunOptions::handle_os_signals`] (a bad set is refused and the old one kept).
    pub fn definitions_dir(mut self, dir: impl Into<PathBuf>) -> ServiceBuilder {
        self.definitions_dir = Some(dir.into());
        self
    }

    /// Write every review to a decision log before answering it.
    pub fn decision_log(mut self, log: DecisionLogConfig) -> ServiceBuilder {
        self.decision_log = Some(log);
        self
    }

    /// Queue reviews for people under `policy`; needs a decision log that keeps state text.
    pub fn review_queue(mut self, policy: QueuePolicy) -> ServiceBuilder {
        self.review_queue = Some(policy);
        self
    }

    /// Seed the store with these routes: [`ServiceBuilder::build`] creates each the store does
    /// not hold yet and leaves the others as they are (a restart never undoes a change made
    /// since). Needs a decision log; a route named like a loaded definition version, or whose
    /// live version is not loaded, is refused.
    pub fn routes(mut self, routes: Vec<NewRoute>) -> ServiceBuilder {
        self.routes = routes;
        self
    }

    /// Checks every combination, opens the store (migrating it) and keeps the definitions'
    /// questions in it, and assembles the service. Nothing listens yet.
    pub async fn build(self) -> Result<Service, BuildError> {
        self.config.validate().map_err(BuildError::Config)?;
        let log_config = self.decision_log;
        if let Some(log) = &log_config {
            if let Some(retain) = log.retain_state {
                if !log.keep_state {
                    return Err(BuildError::RetentionWithoutState);
                }
                if retain.is_zero() {
                    return Err(BuildError::ZeroRetention);
                }
            }
        }
        if let Some(policy) = &self.review_queue {
            match &log_config {
                None => return Err(BuildError::QueueWithoutStore),
                Some(log) if !log.keep_state => return Err(BuildError::QueueWithoutState),
                Some(_) => {}
            }
            policy.validate().map_err(BuildError::QueuePolicy)?;
            if policy.reviewers.is_empty() {
                return Err(BuildError::NoReviewers);
            }
        }
        if !self.routes.is_empty() && log_config.is_none() {
            return Err(BuildError::RoutesWithoutStore);
        }
        for route in &self.routes {
            if self.definitions.get(&route.name).is_some() {
                return Err(BuildError::RouteNamesVersion {
                    route: route.name.clone(),
                });
            }
            if self.definitions.get(&route.live).is_none() {
                return Err(BuildError::RouteLiveNotLoaded {
                    route: route.name.clone(),
                    live: route.live.clone(),
                });
            }
        }
        let retain_state = log_config.as_ref().and_then(|log| log.retain_state);
        let decision_log = match log_config {
            None => None,
            Some(log) => {
                let (store, shown) = match log.source {
                    StoreSource::Url(url) => (
                        Store::open(&url).await.map_err(BuildError::Store)?,
                        url.to_string(),
                    ),
                    StoreSource::Store(store) => {
                        let shown = format!("{:?}", store.kind()).to_lowercase();
                        (store, shown)
                    }
                };
                let opened = DecisionLog::open(
                    store,
                    &self.definitions,
                    log.keep_state,
                    log.requested_model,
                )
                .await
                .map_err(BuildError::Store)?;
                tracing::info!(
                    store = %shown,
                    state = log.keep_state,
                    retain_state_secs = log.retain_state.map(|d| d.as_secs()),
                    "decision log open"
                );
                Some(Arc::new(opened))
            }
        };
        if let Some(log) = &decision_log {
            for route in &self.routes {
                let created = log
                    .store()
                    .create_route_if_absent(route)
                    .await
                    .map_err(BuildError::Store)?;
                tracing::info!(route = %route.name, live = %route.live, created, "route seeded");
            }
        }
        if let Some(policy) = &self.review_queue {
            let statuses: Vec<&str> = policy.statuses.iter().map(|s| s.as_str()).collect();
            let names: Vec<&str> = policy.reviewers.names().collect();
            tracing::info!(
                statuses = ?statuses,
                sample_pass = policy.sample_pass,
                second_review = policy.second_review,
                seed = policy.seed,
                lease_secs = policy.lease.as_secs(),
                reviewers = ?names,
                "review queue on"
            );
            if !self.config.auth_tokens.is_enabled() {
                tracing::warn!(
                    "the decision log reads (GET /v1/reviews, GET /v1/reviews/{{id}}) answer 401: \
                     while the review queue is on they would show reviewers Jev's verdict on the \
                     items they hold, so they need a caller token (--auth-token-env), and none \
                     is configured"
                );
            }
        }
        let state = ServeState::from_parts(Parts {
            backend: self.backend,
            definitions: self.definitions,
            config: self.config,
            metrics: self.metrics.unwrap_or_default(),
            limiter: self.limiter,
            decision_log,
            review_queue: self.review_queue.map(Arc::new),
        })
        .map_err(BuildError::Config)?;
        Ok(Service {
            state,
            retain_state,
            definitions_dir: self.definitions_dir,
        })
    }
}

/// Why [`ServiceBuilder::build`] refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The settings cannot work.
    #[error(transparent)]
    Config(ConfigError),
    /// A review queue without a decision log: reviews are queued in the store.
    #[error("a review queue needs a decision log: reviews are queued in the store")]
    QueueWithoutStore,
    /// A review queue on a decision log that keeps no state text: reviewers read the state.
    #[error("a review queue needs the decision log to keep state text: reviewers read it")]
    QueueWithoutState,
    /// The queue's policy cannot work.
    #[error("review queue: {0}")]
    QueuePolicy(QueuePolicyError),
    /// A review queue with no reviewer: nobody could claim an item.
    #[error("a review queue needs at least one reviewer: nobody could claim an item")]
    NoReviewers,
    /// A retention for state text that is not kept.
    #[error("a state retention needs the decision log to keep state text")]
    RetentionWithoutState,
    /// A zero retention.
    #[error("the state retention must be positive")]
    ZeroRetention,
    /// Routes without a decision log: routes live in the store.
    #[error("routes need a decision log: routes live in the store")]
    RoutesWithoutStore,
    /// A route named like a loaded definition version: the name would be ambiguous.
    #[error("route {route}: the name is a definition version; a route needs a name of its own")]
    RouteNamesVersion {
        /// The route.
        route: String,
    },
    /// A route whose live version is not loaded.
    #[error("route {route}: its live version {live} is not loaded")]
    RouteLiveNotLoaded {
        /// The route.
        route: String,
        /// Its live version.
        live: String,
    },
    /// The store could not be opened, migrated, or take the definitions.
    #[error(transparent)]
    Store(StoreError),
}

impl Explain for BuildError {
    /// The refusal with the settings that fix it.
    fn explain(&self, name: Namer<'_>) -> String {
        let queue = || {
            format!(
                "the review queue ({})",
                [
                    Setting::QueueStatuses,
                    Setting::SamplePass,
                    Setting::SecondReview,
                    Setting::ReviewerTokensEnv,
                    Setting::ReviewerTokensFile,
                    Setting::SessionSecretEnv,
                    Setting::Lease,
                    Setting::MaxLeasesPerReviewer,
                ]
                .map(name)
                .join(", ")
            )
        };
        const WHY: &str = "reviews and their state text are queued in the store";
        let (store, state) = (name(Setting::Store), name(Setting::StoreState));
        match self {
            BuildError::QueueWithoutStore => {
                format!("{} needs {store} URL and {state}: {WHY}", queue())
            }
            BuildError::QueueWithoutState => format!("{} needs {state}: {WHY}", queue()),
            BuildError::QueuePolicy(QueuePolicyError::Nothing) => format!(
                "the review queue needs {} INCONCLUSIVE[,FAIL] or a positive {} RATE: nothing \
                 would be queued",
                name(Setting::QueueStatuses),
                name(Setting::SamplePass)
            ),
            BuildError::NoReviewers => format!(
                "the review queue needs {} VAR or {} PATH (name:token pairs): nobody could \
                 claim an item",
                name(Setting::ReviewerTokensEnv),
                name(Setting::ReviewerTokensFile)
            ),
            BuildError::RouteNamesVersion { .. } | BuildError::RouteLiveNotLoaded { .. } => {
                format!("{}: {self}", name(Setting::Routes))
            }
            BuildError::Config(ConfigError::DefaultAboveMax) => format!(
                "{} must not exceed {}",
                name(Setting::Budget),
                name(Setting::MaxBudget)
            ),
            other => other.to_string(),
        }
    }
}
