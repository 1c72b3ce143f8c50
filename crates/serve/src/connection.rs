//! What the server knows about each open connection: whether a request is in flight, when the
//! connection went idle, when the first byte of a next request head arrived — and the registry
//! of open connections that enforces the cap.
//!
//! hyper sees only bytes and requests; the idle and header timeouts need both, so the socket is
//! wrapped ([`Watched`] notes every read) and every response body is wrapped ([`Guarded`] marks
//! the request finished when hyper drops the body, that is once it was written).
//!
//! The same guard times what the service adds to a review: from the complete head until hyper
//! took the whole response, minus the wait for a backend slot and the review time, which the
//! review handler reports on the request's [`ReviewClock`].

use std::{
    collections::BTreeMap,
    pin::Pin,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::Duration,
};

use axum::body::{Body, Bytes, HttpBody};
use tokio::{
    io::{AsyncRead, AsyncWrite, ReadBuf},
    sync::Notify,
    time::Instant,
};

use crate::Metrics;

/// No head has started.
const NONE: u64 = u64::MAX;

/// One open connection's state, shared by its task, its socket wrapper and its requests.
#[derive(Debug)]
pub(crate) struct Activity {
    id: u64,
    origin: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds from `origin` to the moment the connection last became idle.
    idle_since: AtomicU64,
    /// Milliseconds from `origin` to the first byte of the head being received, or [`NONE`].
    head_started: AtomicU64,
    evict: Notify,
}

impl Activity {
    fn new(id: u64) -> Activity {
        Activity {
            id,
            origin: Instant::now(),
            in_flight: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            head_started: AtomicU64::new(NONE),
            evict: Notify::new(),
        }
    }

    fn now_millis(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(NONE - 1)
    }

    fn at(&self, millis: u64) -> Instant {
        self.origin + Duration::from_millis(millis)
    }

    /// Bytes arrived: when no request is in flight, they start the next head.
    fn on_read(&self) {
        if self.in_flight.load(Ordering::Acquire) == 0 {
            let now = self.now_millis();
            let _ =
                self.head_started
                    .compare_exchange(NONE, now, Ordering::AcqRel, Ordering::Acquire);
        }
    }

    /// A request head is complete and the request goes to the router.
    pub(crate) fn begin_request(self: &Arc<Self>) -> RequestGuard {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.head_started.store(NONE, Ordering::Release);
        RequestGuard {
            activity: Arc::clone(self),
            timed: None,
        }
    }

    /// Whether a request is in flight (from its complete head until its response is written).
    pub(crate) fn is_busy(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 0
    }

    /// When to look again: the end of the header or idle timeout that runs now (while busy,
    /// one idle timeout from now).
    pub(crate) fn deadline(&self, header_timeout: Duration, idle_timeout: Duration) -> Instant {
        if self.is_busy() {
            return Instant::now() + idle_timeout;
        }
        match self.head_started.load(Ordering::Acquire) {
            NONE => self.at(self.idle_since.load(Ordering::Acquire)) + idle_timeout,
            started => self.at(started) + header_timeout,
        }
    }

    /// Which timeout ran out, if any.
    pub(crate) fn expired(
        &self,
        header_timeout: Duration,
        idle_timeout: Duration,
    ) -> Option<&'static str> {
        if self.is_busy() || Instant::now() < self.deadline(header_timeout, idle_timeout) {
            return None;
        }
        Some(if self.head_started.load(Ordering::Acquire) == NONE {
            "idle_timeout"
        } else {
            "header_timeout"
        })
    }

    /// Resolves when the registry picked this connection to make room for a new one.
    pub(crate) async fn evicted(&self) {
        self.evict.notified().await;
    }
}

/// A request in flight; dropping it makes the connection idle again.
#[derive(Debug)]
pub(crate) struct RequestGuard {
    activity: Arc<Activity>,
    timed: Option<Timed>,
}

/// What a timed request's guard needs to observe the service's added time.
#[derive(Debug)]
struct Timed {
    head: Instant,
    clock: ReviewClock,
    metrics: Metrics,
}

impl RequestGuard {
    /// Observes, when the guard is dropped (the response written), the time the service added
    /// to a review that reported its own times on `clock` (a request that is not an answered
    /// review observes nothing).
    pub(crate) fn timed(mut self, clock: ReviewClock, metrics: Metrics) -> RequestGuard {
        self.timed = Some(Timed {
            head: Instant::now(),
            clock,
            metrics,
        });
        self
    }
}

/// A request's slot for the times that were not the service's own: the wait for a backend
/// slot and the review. Cheap to clone: clones share the slot.
#[derive(Debug, Clone)]
pub(crate) struct ReviewClock {
    /// Nanoseconds of queue wait plus review time, or [`NONE`] while not reported.
    outside_nanos: Arc<AtomicU64>,
}

impl ReviewClock {
    /// A clock nothing was reported on yet.
    pub(crate) fn new() -> ReviewClock {
        ReviewClock {
            outside_nanos: Arc::new(AtomicU64::new(NONE)),
        }
    }

    /// The review answered after `queue_wait` for a slot and `review` in the backend call.
    pub(crate) fn report(&self, queue_wait: Duration, review: Duration) {
        let nanos = u64::try_from(queue_wait.saturating_add(review).as_nanos()).unwrap_or(NONE - 1);
        self.outside_nanos.store(nanos, Ordering::Release);
    }

    /// The time the service added to a request that took `total`, if its review reported.
    pub(crate) fn added(&self, total: Duration) -> Option<Duration> {
        match self.outside_nanos.load(Ordering::Acquire) {
            NONE => None,
            nanos => Some(total.saturating_sub(Duration::from_nanos(nanos))),
        }
    }
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        if let Some(timed) = &self.timed {
            if let Some(added) = timed.clock.added(timed.head.elapsed()) {
                timed.metrics.record_added(added);
            }
        }
        let activity = &self.activity;
        activity
            .idle_since
            .store(activity.now_millis(), Ordering::Release);
        activity.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The open connections, oldest first, under a cap.
#[derive(Debug)]
pub(crate) struct Registry {
    cap: usize,
    open: Mutex<BTreeMap<u64, Arc<Activity>>>,
    next_id: AtomicU64,
}

impl Registry {
    pub(crate) fn new(cap: usize) -> Arc<Registry> {
        Arc::new(Registry {
            cap: cap.max(1),
            open: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(0),
        })
    }

    /// A place for a new connection. At the cap, the oldest connection with no request in
    /// flight is told to close and leaves the count at once; `None` when every one is busy.
    pub(crate) fn admit(&self) -> Option<Arc<Activity>> {
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if open.len() >= self.cap {
            let victim = open
                .iter()
                .find(|(_, activity)| !activity.is_busy())
                .map(|(id, _)| *id)?;
            if let Some(activity) = open.remove(&victim) {
                activity.evict.notify_one();
            }
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity::new(id));
        open.insert(id, Arc::clone(&activity));
        Some(activity)
    }

    /// The connection closed (or is closing).
    pub(crate) fn leave(&self, activity: &Activity) {
        let mut open = self
            .open
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        open.remove(&activity.id);
    }

    /// How many connections count against the cap.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.open.lock().map(|open| open.len()).unwrap_or(0)
    }
}

/// A socket whose reads are noted in its connection's [`Activity`].
#[derive(Debug)]
pub(crate) struct Watched<S> {
    stream: S,
    activity: Arc<Activity>,
}

impl<S> Watched<S> {
    pub(crate) fn new(stream: S, activity: Arc<Activity>) -> Watched<S> {
        Watched { stream, activity }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.on_read();
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// A response body that holds its request's [`RequestGuard`] until hyper drops it.
pub(crate) struct Guarded {
    body: Body,
    _guard: RequestGuard,
}

impl Guarded {
    pub(crate) fn new(body: Body, guard: RequestGuard) -> Guarded {
        Guarded {
            body,
            _guard: guard,
        }
    }
}

impl HttpBody for Guarded {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: Duration = Duration::from_secs(10);
    const IDLE: Duration = Duration::from_secs(60);

    #[tokio::test(start_paused = true)]
    async fn an_idle_connection_expires_after_the_idle_timeout() {
        let registry = Registry::new(4);
        let activity = registry.admit().unwrap();
        assert_eq!(activity.expired(HEADER, IDLE), None);
        tokio::time::advance(IDLE - Duration::from_millis(1)).await;
        assert_eq!(activity.expired(HEADER, IDLE), None);
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(activity.expired(HEADER, IDLE), Some("idle_timeout"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_started_head_must_finish_within_the_header_timeout() {
        let registry = Registry::new(4);
        let activity = registry.admit().unwrap();
        tokio::time::advance(Duration::from_secs(5)).await;
        activity.on_read();
        tokio::time::advance(HEADER).await;
        assert_eq!(activity.expired(HEADER, IDLE), Some("header_timeout"));
        // A complete head stops the clock; a finished request starts the idle one anew.
        let guard = activity.begin_request();
        tokio::time::advance(IDLE * 2).await;
        assert_eq!(activity.expired(HEADER, IDLE), None, "busy");
        drop(guard);
        assert_eq!(activity.expired(HEADER, IDLE), None);
        tokio::time::advance(IDLE).await;
        assert_eq!(activity.expired(HEADER, IDLE), Some("idle_timeout"));
    }

    fn added_buckets(metrics: &Metrics) -> Vec<String> {
        let text = metrics.render(crate::metrics::Gauges {
            in_flight: 0,
            waiting: 0,
            max_concurrent: 1,
            queue: 0,
        });
        text.lines()
            .filter(|line| line.starts_with("jevjudge_review_added_seconds_"))
            .map(str::to_owned)
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn the_added_time_leaves_out_the_slot_wait_and_the_review() {
        let registry = Registry::new(4);
        let activity = registry.admit().unwrap();
        let metrics = Metrics::new();
        let clock = ReviewClock::new();
        let guard = activity
            .begin_request()
            .timed(clock.clone(), metrics.clone());
        // 5 ms for a slot, 20 ms of review, 30 ms in all: the service added 5 ms.
        tokio::time::advance(Duration::from_millis(30)).await;
        clock.report(Duration::from_millis(5), Duration::from_millis(20));
        assert!(
            added_buckets(&metrics).contains(&"jevjudge_review_added_seconds_count 0".to_owned()),
            "nothing is observed before the response is written"
        );
        drop(guard);
        let lines = added_buckets(&metrics);
        for sample in [
            "jevjudge_review_added_seconds_count 1",
            r#"jevjudge_review_added_seconds_bucket{le="0.003"} 0"#,
            r#"jevjudge_review_added_seconds_bucket{le="0.005"} 1"#,
        ] {
            assert!(lines.contains(&sample.to_owned()), "{sample} in {lines:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_that_is_not_an_answered_review_is_not_timed() {
        let registry = Registry::new(4);
        let activity = registry.admit().unwrap();
        let metrics = Metrics::new();
        let guard = activity
            .begin_request()
            .timed(ReviewClock::new(), metrics.clone());
        tokio::time::advance(Duration::from_millis(3)).await;
        drop(guard);
        assert!(
            added_buckets(&metrics).contains(&"jevjudge_review_added_seconds_count 0".to_owned())
        );
        // Queue and review longer than the whole (clocks read at different moments): zero.
        let clock = ReviewClock::new();
        clock.report(Duration::from_millis(2), Duration::from_millis(2));
        assert_eq!(clock.added(Duration::from_millis(3)), Some(Duration::ZERO));
    }

    #[tokio::test(start_paused = true)]
    async fn at_the_cap_the_oldest_idle_connection_makes_room() {
        let registry = Registry::new(2);
        let oldest = registry.admit().unwrap();
        let busy_guard = oldest.begin_request();
        let second = registry.admit().unwrap();
        let third = registry.admit().expect("the idle one makes room");
        assert_eq!(registry.len(), 2);
        // The second (idle) was told to close; the busy oldest was not.
        tokio::time::timeout(Duration::from_millis(1), second.evicted())
            .await
            .expect("evicted");
        assert!(
            tokio::time::timeout(Duration::from_millis(1), oldest.evicted())
                .await
                .is_err()
        );
        // Every open connection busy: refused.
        let _third_guard = third.begin_request();
        assert!(registry.admit().is_none());
        drop(busy_guard);
        assert!(registry.admit().is_some());
        registry.leave(&third);
        assert_eq!(registry.len(), 1);
    }
}
