//! Counters, gauges and histograms, kept and rendered by `prometheus-client` in the OpenMetrics
//! text format (`GET /metrics`).
//!
//! Labels come from a closed set: definition versions loaded at start, statuses and error
//! codes, route templates, HTTP status numbers. Nothing a caller sends (state, paths, headers)
//! becomes a label, so the exposition holds no private text and its size stays bounded.

use std::{
    fmt,
    sync::{Arc, Mutex, OnceLock},
    time::Duration,
};

use jevjudge_client::{
    AttemptEvent, AttemptHook, AttemptOutcome, TransportErrorKind, limit::Limiter,
};
use jevjudge_judge::Verdict;
use jevjudge_store::{PendingVersion, QueueGauges};
use prometheus_client::{
    collector::Collector,
    encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric, text::encode},
    metrics::{
        MetricType,
        counter::{ConstCounter, Counter},
        family::Family,
        gauge::{ConstGauge, Gauge},
        histogram::Histogram,
    },
    registry::Registry,
};

mod shadow;

pub(crate) use shadow::{ShadowFigures, ShadowOutcome};

/// Histogram bucket upper bounds, in seconds.
const BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// Bucket upper bounds of the service's added time, in seconds: fine below a millisecond,
/// where the service's own share of a review lies.
const ADDED_BUCKETS: [f64; 18] = [
    0.00005, 0.0001, 0.00015, 0.0002, 0.0003, 0.0004, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003,
    0.005, 0.01, 0.025, 0.1, 0.25, 1.0,
];

/// Attempt failures that are not a response, by reason (always shown, zero or not).
const FAILURE_REASONS: [&str; 6] = [
    "connect",
    "closed",
    "body_too_large",
    "other",
    "attempt_timeout",
    "deadline",
];

/// Why the server closed a connection itself (always shown, zero or not).
const CLOSE_REASONS: [&str; 4] = ["header_timeout", "idle_timeout", "evicted", "refused"];

/// Why a request was refused by admission control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rejection {
    /// `max_concurrent + queue` requests were already admitted.
    Full,
    /// It waited its whole budget without getting a slot.
    Timeout,
}

/// The service's metrics. Cheap to clone: clones share the same counters.
///
/// Create one before the backend so that [`Metrics::attempt_hook`] can count the client's
/// attempts, then hand it to [`crate::ServiceBuilder::metrics`].
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

/// A review's labels. `definition` holds the version with `\`, `"` and newlines escaped
/// (prometheus-client writes label values as they are).
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ReviewLabels {
    definition: String,
    status: &'static str,
    error: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DefinitionLabel {
    definition: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ReasonLabel {
    reason: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct StatusLabel {
    status: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct HttpLabels {
    route: String,
    method: &'static str,
    status: u16,
}

type HistogramFamily<L> = Family<L, Histogram, fn() -> Histogram>;

fn histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

struct Inner {
    registry: Registry,
    reviews: Family<ReviewLabels, Counter>,
    review_seconds: HistogramFamily<DefinitionLabel>,
    in_flight: Gauge,
    waiting: Gauge,
    backend_slots: Gauge,
    queue_capacity: Gauge,
    rejections: Family<ReasonLabel, Counter>,
    connections_closed: Family<ReasonLabel, Counter>,
    attempts: Counter,
    retries: Counter,
    responses: Family<StatusLabel, Counter>,
    failures: Family<ReasonLabel, Counter>,
    attempt_seconds: Histogram,
    added_seconds: Histogram,
    http: Family<HttpLabels, Counter>,
    store: Arc<StoreFigures>,
    limiter: Arc<LimiterFigures>,
    shadows: Arc<ShadowFigures>,
}

/// The adaptive limiter's gauges and counters, read from its snapshot at every
/// scrape, after every other family. Nothing is shown until a limiter is watched
/// ([`Metrics::watch_limiter`]): a service without one has no such figures.
#[derive(Debug, Default)]
struct LimiterFigures {
    limiter: OnceLock<Arc<Limiter>>,
}

impl Collector for LimiterFigures {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let Some(limiter) = self.limiter.get() else {
            return Ok(());
        };
        let snapshot = limiter.snapshot();
        let ready = limiter.stop().is_none();
        // Help texts are written as given here (the registry adds the full stop only to
        // registered families).
        for (name, help, value) in [
            (
                "jevjudge_backend_concurrency_limit",
                "Reviews the adaptive limiter lets run against the backend now.",
                snapshot.limit,
            ),
            (
                "jevjudge_backend_concurrency_ceiling",
                "The most the adaptive limit may reach.",
                snapshot.ceiling,
            ),
        ] {
            let metric = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            ConstGauge::new(gauge(value)).encode(metric)?;
        }
        // A counter's family is named without its `_total` sample suffix.
        for (name, help, value) in [
            (
                "jevjudge_backend_overloaded",
                "Backend attempts answered 429 or 529.",
                snapshot.attempts.overloaded(),
            ),
            (
                "jevjudge_backend_limit_cuts",
                "Times the adaptive limit was cut.",
                snapshot.cuts,
            ),
        ] {
            let metric = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
            ConstCounter::new(value).encode(metric)?;
        }
        let metric = encoder.encode_descriptor(
            "jevjudge_ready",
            "1 while the service can review; 0 once the backend refused the key (401/403).",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(i64::from(ready)).encode(metric)
    }
}

/// The review queue's figures and the store's health, read at each scrape
/// ([`Metrics::set_store_figures`]) and shown after the registered families, before the
/// limiter's. Nothing is shown for a service without a store; the queue's families only for a
/// service with a queue, and only when the scrape could read them.
#[derive(Debug, Default)]
struct StoreFigures {
    latest: Mutex<Option<StoreScrape>>,
}

/// What one scrape read from the store.
#[derive(Debug, Clone, Default)]
pub(crate) struct StoreScrape {
    /// Whether the store answers (the decision log's last write or check, and this scrape's
    /// read).
    pub(crate) ready: bool,
    /// The queue's figures, for a service with a queue whose store answered.
    pub(crate) queue: Option<QueueScrape>,
}

/// The queue's figures at one scrape.
#[derive(Debug, Clone, Default)]
pub(crate) struct QueueScrape {
    /// The store's figures.
    pub(crate) gauges: QueueGauges,
    /// The scrape's time, Unix milliseconds (for the oldest item's age).
    pub(crate) now_millis: i64,
    /// Items waiting for a lead's adjudication.
    pub(crate) adjudications_pending: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct VersionLabel {
    version: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct OutcomeLabel {
    outcome: &'static str,
}

impl Collector for StoreFigures {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let latest = match self.latest.lock() {
            Ok(latest) => latest.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        let Some(scrape) = latest else {
            return Ok(());
        };
        let metric = encoder.encode_descriptor(
            "jevjudge_store_ready",
            "1 while the store takes writes and reads; 0 after a failed write or read until a \
             check succeeds.",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(i64::from(scrape.ready)).encode(metric)?;
        let Some(queue) = scrape.queue else {
            return Ok(());
        };
        let pending: Vec<(VersionLabel, &PendingVersion)> = queue
            .gauges
            .pending
            .iter()
            .map(|(version, pending)| {
                let label = VersionLabel {
                    version: escaped(version),
                };
                (label, pending)
            })
            .collect();
        let mut family = encoder.encode_descriptor(
            "jevjudge_queue_pending",
            "Queue items neither decided nor under a live lease, by definition version.",
            None,
            MetricType::Gauge,
        )?;
        for (label, pending) in &pending {
            ConstGauge::new(i64::try_from(pending.items).unwrap_or(i64::MAX))
                .encode(family.encode_family(label)?)?;
        }
        let mut family = encoder.encode_descriptor(
            "jevjudge_queue_oldest_pending_seconds",
            "Age of the oldest pending queue item, by definition version.",
            None,
            MetricType::Gauge,
        )?;
        for (label, pending) in &pending {
            let age = queue
                .now_millis
                .saturating_sub(pending.oldest_queued_at_millis);
            ConstGauge::new(age.max(0) as f64 / 1000.0).encode(family.encode_family(label)?)?;
        }
        let metric = encoder.encode_descriptor(
            "jevjudge_queue_adjudications_pending",
            "Items whose reviewers disagreed, waiting for a lead's decision.",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(i64::try_from(queue.adjudications_pending).unwrap_or(i64::MAX))
            .encode(metric)?;
        let mut family = encoder.encode_descriptor(
            "jevjudge_queue_decisions",
            "Reviewers' decisions: answered on every criterion, or can't tell on one at least.",
            None,
            MetricType::Counter,
        )?;
        for (outcome, value) in [
            ("answered", queue.gauges.decisions_answered),
            ("cant_tell", queue.gauges.decisions_cant_tell),
        ] {
            ConstCounter::new(value).encode(family.encode_family(&OutcomeLabel { outcome })?)?;
        }
        let metric = encoder.encode_descriptor(
            "jevjudge_queue_leases_expired",
            "Leases that ran out before their holder decided or released the item.",
            None,
            MetricType::Counter,
        )?;
        ConstCounter::new(queue.gauges.leases_expired).encode(metric)
    }
}

/// The live gauges read from admission control when rendering.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gauges {
    pub(crate) in_flight: usize,
    pub(crate) waiting: usize,
    pub(crate) max_concurrent: usize,
    pub(crate) queue: usize,
}

impl Metrics {
    /// Fresh metrics, all zero.
    pub fn new() -> Metrics {
        let inner = Inner {
            registry: Registry::default(),
            reviews: Family::default(),
            review_seconds: Family::new_with_constructor(histogram as fn() -> Histogram),
            in_flight: Gauge::default(),
            waiting: Gauge::default(),
            backend_slots: Gauge::default(),
            queue_capacity: Gauge::default(),
            rejections: Family::default(),
            connections_closed: Family::default(),
            attempts: Counter::default(),
            retries: Counter::default(),
            responses: Family::default(),
            failures: Family::default(),
            attempt_seconds: histogram(),
            added_seconds: Histogram::new(ADDED_BUCKETS),
            http: Family::default(),
            store: Arc::default(),
            limiter: Arc::default(),
            shadows: Arc::default(),
        };
        // Label sets shown even at zero, as before.
        for reason in ["full", "timeout"] {
            let _ = inner.rejections.get_or_create(&ReasonLabel { reason });
        }
        for reason in FAILURE_REASONS {
            let _ = inner.failures.get_or_create(&ReasonLabel { reason });
        }
        for reason in CLOSE_REASONS {
            let _ = inner
                .connections_closed
                .get_or_create(&ReasonLabel { reason });
        }
        let mut inner = inner;
        inner.register();
        Metrics {
            inner: Arc::new(inner),
        }
    }

    /// A hook for [`jevjudge_client::ClientBuilder::on_attempt`]: counts every backend attempt,
    /// retry, HTTP status and failure, and times attempts.
    pub fn attempt_hook(&self) -> AttemptHook {
        let metrics = self.clone();
        Arc::new(move |event: &AttemptEvent| metrics.record_attempt(event))
    }

    /// Counts one backend attempt (what [`Metrics::attempt_hook`] calls).
    pub fn record_attempt(&self, event: &AttemptEvent) {
        let inner = &self.inner;
        inner.attempts.inc();
        if event.retry_count > 0 {
            inner.retries.inc();
        }
        let reason = match event.outcome {
            AttemptOutcome::Status(status) => {
                if (100..=599).contains(&status) {
                    inner.responses.get_or_create(&StatusLabel { status }).inc();
                }
                None
            }
            AttemptOutcome::Transport(kind) => Some(match kind {
                TransportErrorKind::Connect => "connect",
                TransportErrorKind::Closed => "closed",
                TransportErrorKind::BodyTooLarge => "body_too_large",
                _ => "other",
            }),
            AttemptOutcome::TimedOut => Some("attempt_timeout"),
            _ => Some("deadline"),
        };
        if let Some(reason) = reason {
            inner.failures.get_or_create(&ReasonLabel { reason }).inc();
        }
        inner.attempt_seconds.observe(seconds(event.elapsed));
    }

    /// Counts one finished review of a loaded definition, by status and error code, and its
    /// review time.
    pub(crate) fn record_review(&self, verdict: &Verdict) {
        let definition = escaped(&verdict.definition_version);
        self.inner
            .review_seconds
            .get_or_create(&DefinitionLabel {
                definition: definition.clone(),
            })
            .observe(seconds(verdict.elapsed));
        self.inner
            .reviews
            .get_or_create(&ReviewLabels {
                definition,
                status: verdict.status.as_str(),
                error: verdict.error.as_str(),
            })
            .inc();
    }

    /// Observes the time the service added to one answered review: from its complete request
    /// head until its response was written, less its wait for a backend slot and its review
    /// time.
    pub(crate) fn record_added(&self, added: Duration) {
        self.inner.added_seconds.observe(seconds(added));
    }

    /// Shows what this scrape read from the store (until the next call).
    pub(crate) fn set_store_figures(&self, scrape: StoreScrape) {
        let mut latest = match self.inner.store.latest.lock() {
            Ok(latest) => latest,
            Err(poisoned) => poisoned.into_inner(),
        };
        *latest = Some(scrape);
    }

    /// Shows the adaptive limiter's figures from now on (the first limiter watched stays).
    pub(crate) fn watch_limiter(&self, limiter: Arc<Limiter>) {
        let _ = self.inner.limiter.limiter.set(limiter);
    }

    /// Counts one answered HTTP request by route template, method and status.
    pub(crate) fn record_http(&self, route: &str, method: &'static str, status: u16) {
        self.inner
            .http
            .get_or_create(&HttpLabels {
                route: route.to_owned(),
                method,
                status,
            })
            .inc();
    }

    /// The shadow reviews' counts.
    pub(crate) fn shadows(&self) -> &ShadowFigures {
        &self.inner.shadows
    }

    /// Counts one request refused by admission control.
    pub(crate) fn record_rejection(&self, rejection: Rejection) {
        let reason = match rejection {
            Rejection::Full => "full",
            Rejection::Timeout => "timeout",
        };
        self.inner
            .rejections
            .get_or_create(&ReasonLabel { reason })
            .inc();
    }

    /// Counts one connection the server closed (or refused) by itself, by reason.
    pub(crate) fn record_connection_closed(&self, reason: &str) {
        if let Some(reason) = CLOSE_REASONS.iter().find(|known| **known == reason) {
            self.inner
                .connections_closed
                .get_or_create(&ReasonLabel { reason })
                .inc();
        }
    }

    /// The text exposition (OpenMetrics 1.0, ending in `# EOF`).
    pub(crate) fn render(&self, gauges: Gauges) -> String {
        let inner = &self.inner;
        inner.in_flight.set(gauge(gauges.in_flight));
        inner.waiting.set(gauge(gauges.waiting));
        inner.backend_slots.set(gauge(gauges.max_concurrent));
        inner.queue_capacity.set(gauge(gauges.queue));
        let mut out = String::with_capacity(8192);
        // Writing to a String cannot fail.
        let _ = encode(&mut out, &inner.registry);
        out
    }
}

impl Inner {
    /// Registers every family, in the order the exposition shows them. Help texts end without
    /// a full stop: prometheus-client adds one.
    fn register(&mut self) {
        let registry = &mut self.registry;
        registry.register(
            "jevjudge_reviews",
            "Finished reviews by definition version, status and error code",
            self.reviews.clone(),
        );
        registry.register(
            "jevjudge_review_duration_seconds",
            "Review time (the Result's elapsed_millis), by definition version",
            self.review_seconds.clone(),
        );
        registry.register(
            "jevjudge_reviews_in_flight",
            "Reviews holding a backend slot",
            self.in_flight.clone(),
        );
        registry.register(
            "jevjudge_reviews_waiting",
            "Admitted reviews not yet holding a backend slot (reading their body or queued)",
            self.waiting.clone(),
        );
        registry.register(
            "jevjudge_backend_slots",
            "The bound on concurrent backend requests (--max-concurrent)",
            self.backend_slots.clone(),
        );
        registry.register(
            "jevjudge_queue_capacity",
            "How many admitted reviews may wait for a slot (--queue)",
            self.queue_capacity.clone(),
        );
        registry.register(
            "jevjudge_queue_rejections",
            "Requests answered 503: the queue was full, or no slot freed within the budget",
            self.rejections.clone(),
        );
        registry.register(
            "jevjudge_connections_closed",
            "Connections the server closed by itself: a request head too slow, idle too long, \
             closed to make room at the connection cap, or refused at the cap",
            self.connections_closed.clone(),
        );
        registry.register(
            "jevjudge_backend_attempts",
            "System One attempts made by the client, retries included",
            self.attempts.clone(),
        );
        registry.register(
            "jevjudge_backend_retries",
            "System One attempts that were retries",
            self.retries.clone(),
        );
        registry.register(
            "jevjudge_backend_responses",
            "System One attempts that got an HTTP response, by status",
            self.responses.clone(),
        );
        registry.register(
            "jevjudge_backend_attempt_failures",
            "System One attempts that got no response, by reason",
            self.failures.clone(),
        );
        registry.register(
            "jevjudge_backend_attempt_duration_seconds",
            "Time of each System One attempt",
            self.attempt_seconds.clone(),
        );
        registry.register(
            "jevjudge_review_added_seconds",
            "Time the service added to each answered review: from its complete request head \
             until its response was written, less the wait for a backend slot and the review \
             time",
            self.added_seconds.clone(),
        );
        registry.register(
            "jevjudge_http_requests",
            "Answered HTTP requests by route template, method and status",
            self.http.clone(),
        );
        registry.register_collector(Box::new(self.store.clone()));
        registry.register_collector(Box::new(self.shadows.clone()));
        registry.register_collector(Box::new(self.limiter.clone()));
    }
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics")
            .field("attempts", &self.inner.attempts.get())
            .finish_non_exhaustive()
    }
}

fn seconds(value: Duration) -> f64 {
    value.as_secs_f64()
}

fn gauge(value: usize) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// A label value with `\`, `"` and newlines escaped, as the exposition format asks.
fn escaped(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
