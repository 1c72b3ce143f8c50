//! Counters, gauges and histograms, rendered in the Prometheus text exposition format
//! (version 0.0.4) by `GET /metrics`.
//!
//! Labels come from a closed set: definition versions loaded at start, statuses and error
//! codes, route templates, HTTP status numbers. Nothing a caller sends (state, paths, headers)
//! becomes a label, so the exposition holds no private text and its size stays bounded.

use std::{
    collections::BTreeMap,
    fmt::{self, Write as _},
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use jevjudge_client::{AttemptEvent, AttemptHook, AttemptOutcome, TransportErrorKind};
use jevjudge_judge::Verdict;

/// Histogram bucket upper bounds, in seconds.
const BUCKETS: [f64; 14] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

/// HTTP statuses are counted in a fixed table (100..=599).
const STATUS_TABLE: usize = 600;

/// Attempt failures that are not a response, by reason.
const FAILURE_REASONS: [&str; 6] = [
    "connect",
    "closed",
    "body_too_large",
    "other",
    "attempt_timeout",
    "deadline",
];

/// Why the server closed a connection itself.
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
/// attempts, then hand it to [`crate::ServeState::new`].
#[derive(Clone, Default)]
pub struct Metrics {
    inner: Arc<Inner>,
}

struct Inner {
    reviews: Mutex<Reviews>,
    http: Mutex<BTreeMap<(&'static str, &'static str, u16), u64>>,
    attempts: AtomicU64,
    retries: AtomicU64,
    statuses: Box<[AtomicU64]>,
    failures: [AtomicU64; FAILURE_REASONS.len()],
    attempt_seconds: Histogram,
    rejected_full: AtomicU64,
    rejected_timeout: AtomicU64,
    closed: [AtomicU64; CLOSE_REASONS.len()],
}

#[derive(Default)]
struct Reviews {
    /// (definition, status, error) → count.
    counts: BTreeMap<(String, &'static str, &'static str), u64>,
    /// definition → review time.
    seconds: BTreeMap<String, Histogram>,
}

impl Default for Inner {
    fn default() -> Inner {
        Inner {
            reviews: Mutex::default(),
            http: Mutex::default(),
            attempts: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            statuses: (0..STATUS_TABLE).map(|_| AtomicU64::new(0)).collect(),
            failures: Default::default(),
            attempt_seconds: Histogram::default(),
            rejected_full: AtomicU64::new(0),
            rejected_timeout: AtomicU64::new(0),
            closed: Default::default(),
        }
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
        Metrics::default()
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
        inner.attempts.fetch_add(1, Ordering::Relaxed);
        if event.retry_count > 0 {
            inner.retries.fetch_add(1, Ordering::Relaxed);
        }
        match event.outcome {
            AttemptOutcome::Status(status) => {
                if let Some(counter) = inner.statuses.get(usize::from(status)) {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            }
            AttemptOutcome::Transport(kind) => {
                let reason = match kind {
                    TransportErrorKind::Connect => 0,
                    TransportErrorKind::Closed => 1,
                    TransportErrorKind::BodyTooLarge => 2,
                    _ => 3,
                };
                inner.failures[reason].fetch_add(1, Ordering::Relaxed);
            }
            AttemptOutcome::TimedOut => {
                inner.failures[4].fetch_add(1, Ordering::Relaxed);
            }
            _ => {
                inner.failures[5].fetch_add(1, Ordering::Relaxed);
            }
        }
        inner.attempt_seconds.observe(event.elapsed);
    }

    /// Counts one finished review of a loaded definition, by status and error code, and its
    /// review time.
    pub(crate) fn record_review(&self, verdict: &Verdict) {
        let Ok(mut reviews) = self.inner.reviews.lock() else {
            return;
        };
        let key = (
            verdict.definition_version.clone(),
            verdict.status.as_str(),
            verdict.error.as_str(),
        );
        *reviews.counts.entry(key).or_insert(0) += 1;
        match reviews.seconds.get(&verdict.definition_version) {
            Some(histogram) => histogram.observe(verdict.elapsed),
            None => {
                let histogram = Histogram::default();
                histogram.observe(verdict.elapsed);
                reviews
                    .seconds
                    .insert(verdict.definition_version.clone(), histogram);
            }
        }
    }

    /// Counts one answered HTTP request by route template, method and status.
    pub(crate) fn record_http(&self, route: &'static str, method: &'static str, status: u16) {
        if let Ok(mut http) = self.inner.http.lock() {
            *http.entry((route, method, status)).or_insert(0) += 1;
        }
    }

    /// Counts one request refused by admission control.
    pub(crate) fn record_rejection(&self, rejection: Rejection) {
        let counter = match rejection {
            Rejection::Full => &self.inner.rejected_full,
            Rejection::Timeout => &self.inner.rejected_timeout,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one connection the server closed (or refused) by itself, by reason.
    pub(crate) fn record_connection_closed(&self, reason: &str) {
        if let Some(index) = CLOSE_REASONS.iter().position(|known| *known == reason) {
            self.inner.closed[index].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The text exposition.
    pub(crate) fn render(&self, gauges: Gauges) -> String {
        let mut out = String::with_capacity(4096);
        // Writing to a String cannot fail.
        let _ = self.write(&mut out, gauges);
        out
    }

    fn write(&self, out: &mut String, gauges: Gauges) -> fmt::Result {
        let inner = &self.inner;

        header(
            out,
            "jevjudge_reviews_total",
            "counter",
            "Finished reviews by definition version, status and error code.",
        )?;
        if let Ok(reviews) = inner.reviews.lock() {
            for ((definition, status, error), count) in &reviews.counts {
                writeln!(
                    out,
                    "jevjudge_reviews_total{{definition=\"{}\",status=\"{status}\",error=\"{error}\"}} {count}",
                    Escaped(definition)
                )?;
            }
            header(
                out,
                "jevjudge_review_duration_seconds",
                "histogram",
                "Review time (the Result's elapsed_millis), by definition version.",
            )?;
            for (definition, histogram) in &reviews.seconds {
                let labels = format!("definition=\"{}\"", Escaped(definition));
                histogram.write(out, "jevjudge_review_duration_seconds", &labels)?;
            }
        }

        header(
            out,
            "jevjudge_reviews_in_flight",
            "gauge",
            "Reviews holding a backend slot.",
        )?;
        writeln!(out, "jevjudge_reviews_in_flight {}", gauges.in_flight)?;
        header(
            out,
            "jevjudge_reviews_waiting",
            "gauge",
            "Admitted reviews not yet holding a backend slot (reading their body or queued).",
        )?;
        writeln!(out, "jevjudge_reviews_waiting {}", gauges.waiting)?;
        header(
            out,
            "jevjudge_backend_slots",
            "gauge",
            "The bound on concurrent backend requests (--max-concurrent).",
        )?;
        writeln!(out, "jevjudge_backend_slots {}", gauges.max_concurrent)?;
        header(
            out,
            "jevjudge_queue_capacity",
            "gauge",
            "How many admitted reviews may wait for a slot (--queue).",
        )?;
        writeln!(out, "jevjudge_queue_capacity {}", gauges.queue)?;
        header(
            out,
            "jevjudge_queue_rejections_total",
            "counter",
            "Requests answered 503: the queue was full, or no slot freed within the budget.",
        )?;
        writeln!(
            out,
            "jevjudge_queue_rejections_total{{reason=\"full\"}} {}",
            inner.rejected_full.load(Ordering::Relaxed)
        )?;
        writeln!(
            out,
            "jevjudge_queue_rejections_total{{reason=\"timeout\"}} {}",
            inner.rejected_timeout.load(Ordering::Relaxed)
        )?;

        header(
            out,
            "jevjudge_connections_closed_total",
            "counter",
            "Connections the server closed by itself: a request head too slow, idle too long, \
             closed to make room at the connection cap, or refused at the cap.",
        )?;
        for (reason, counter) in CLOSE_REASONS.iter().zip(&inner.closed) {
            writeln!(
                out,
                "jevjudge_connections_closed_total{{reason=\"{reason}\"}} {}",
                counter.load(Ordering::Relaxed)
            )?;
        }

        header(
            out,
            "jevjudge_backend_attempts_total",
            "counter",
            "System One attempts made by the client, retries included.",
        )?;
        writeln!(
            out,
            "jevjudge_backend_attempts_total {}",
            inner.attempts.load(Ordering::Relaxed)
        )?;
        header(
            out,
            "jevjudge_backend_retries_total",
            "counter",
            "System One attempts that were retries.",
        )?;
        writeln!(
            out,
            "jevjudge_backend_retries_total {}",
            inner.retries.load(Ordering::Relaxed)
        )?;
        header(
            out,
            "jevjudge_backend_responses_total",
            "counter",
            "System One attempts that got an HTTP response, by status.",
        )?;
        for (status, counter) in inner.statuses.iter().enumerate() {
            let count = counter.load(Ordering::Relaxed);
            if count > 0 {
                writeln!(
                    out,
                    "jevjudge_backend_responses_total{{status=\"{status}\"}} {count}"
                )?;
            }
        }
        header(
            out,
            "jevjudge_backend_attempt_failures_total",
            "counter",
            "System One attempts that got no response, by reason.",
        )?;
        for (reason, counter) in FAILURE_REASONS.iter().zip(&inner.failures) {
            writeln!(
                out,
                "jevjudge_backend_attempt_failures_total{{reason=\"{reason}\"}} {}",
                counter.load(Ordering::Relaxed)
            )?;
        }
        header(
            out,
            "jevjudge_backend_attempt_duration_seconds",
            "histogram",
            "Time of each System One attempt.",
        )?;
        inner
            .attempt_seconds
            .write(out, "jevjudge_backend_attempt_duration_seconds", "")?;

        header(
            out,
            "jevjudge_http_requests_total",
            "counter",
            "Answered HTTP requests by route template, method and status.",
        )?;
        if let Ok(http) = inner.http.lock() {
            for ((route, method, status), count) in http.iter() {
                writeln!(
                    out,
                    "jevjudge_http_requests_total{{route=\"{}\",method=\"{method}\",status=\"{status}\"}} {count}",
                    Escaped(route)
                )?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics")
            .field("attempts", &self.inner.attempts.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

fn header(out: &mut String, name: &str, kind: &str, help: &str) -> fmt::Result {
    writeln!(out, "# HELP {name} {help}")?;
    writeln!(out, "# TYPE {name} {kind}")
}

/// A label value with `\`, `"` and newlines escaped.
struct Escaped<'a>(&'a str);

impl fmt::Display for Escaped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.0.chars() {
            match c {
                '\\' => f.write_str("\\\\")?,
                '"' => f.write_str("\\\"")?,
                '\n' => f.write_str("\\n")?,
                c => f.write_char(c)?,
            }
        }
        Ok(())
    }
}

/// A lock-free histogram over [`BUCKETS`].
struct Histogram {
    buckets: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Histogram {
        Histogram {
            buckets: Default::default(),
            count: AtomicU64::new(0),
            sum_nanos: AtomicU64::new(0),
        }
    }
}

impl Histogram {
    fn observe(&self, value: Duration) {
        let seconds = value.as_secs_f64();
        if let Some(index) = BUCKETS.iter().position(|bound| seconds <= *bound) {
            self.buckets[index].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(value.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    fn write(&self, out: &mut String, name: &str, labels: &str) -> fmt::Result {
        let separator = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (bound, bucket) in BUCKETS.iter().zip(&self.buckets) {
            cumulative += bucket.load(Ordering::Relaxed);
            writeln!(
                out,
                "{name}_bucket{{{labels}{separator}le=\"{bound}\"}} {cumulative}"
            )?;
        }
        let count = self.count.load(Ordering::Relaxed);
        writeln!(
            out,
            "{name}_bucket{{{labels}{separator}le=\"+Inf\"}} {count}"
        )?;
        let sum = self.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let braces = |labels: &str| {
            if labels.is_empty() {
                String::new()
            } else {
                format!("{{{labels}}}")
            }
        };
        writeln!(out, "{name}_sum{} {sum}", braces(labels))?;
        writeln!(out, "{name}_count{} {count}", braces(labels))
    }
}

#[cfg(test)]
mod tests {
    use jevjudge_judge::{ErrorCode, Verdict};
    use jevjudge_wire::Detail;

    use super::*;

    fn gauges() -> Gauges {
        Gauges {
            in_flight: 1,
            waiting: 2,
            max_concurrent: 32,
            queue: 256,
        }
    }

    #[test]
    fn reviews_are_counted_by_definition_status_and_error() {
        let metrics = Metrics::new();
        let verdict = Verdict::error(
            "refund \"v1\"",
            ErrorCode::Timeout,
            Detail::BudgetElapsed,
            Duration::from_millis(30),
        );
        metrics.record_review(&verdict);
        metrics.record_review(&verdict);
        metrics.record_rejection(Rejection::Full);
        let text = metrics.render(gauges());
        assert!(
            text.contains(
                "jevjudge_reviews_total{definition=\"refund \\\"v1\\\"\",status=\"ERROR\",error=\"TIMEOUT\"} 2"
            ),
            "{text}"
        );
        assert!(text.contains(
            "jevjudge_review_duration_seconds_bucket{definition=\"refund \\\"v1\\\"\",le=\"0.025\"} 0"
        ));
        assert!(text.contains(
            "jevjudge_review_duration_seconds_bucket{definition=\"refund \\\"v1\\\"\",le=\"0.05\"} 2"
        ));
        assert!(text.contains(
            "jevjudge_review_duration_seconds_count{definition=\"refund \\\"v1\\\"\"} 2"
        ));
        assert!(text.contains("jevjudge_reviews_in_flight 1\n"));
        assert!(text.contains("jevjudge_reviews_waiting 2\n"));
        assert!(text.contains("jevjudge_queue_rejections_total{reason=\"full\"} 1\n"));
    }

    #[test]
    fn every_sample_line_belongs_to_a_declared_family() {
        let metrics = Metrics::new();
        metrics.record_http("/v1/reviews/{version}", "POST", 200);
        let text = metrics.render(gauges());
        let mut declared = Vec::new();
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                declared.push(rest.split(' ').next().unwrap_or_default().to_owned());
            } else if !line.starts_with('#') {
                let name = line.split(['{', ' ']).next().unwrap_or_default();
                assert!(
                    declared.iter().any(|family| name == family
                        || name
                            .strip_prefix(family.as_str())
                            .is_some_and(|suffix| ["_bucket", "_sum", "_count"].contains(&suffix))),
                    "{line}"
                );
                let value = line.rsplit(' ').next().unwrap_or_default();
                assert!(value.parse::<f64>().is_ok(), "{line}");
            }
        }
    }
}
