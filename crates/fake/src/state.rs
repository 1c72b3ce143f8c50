//! The state shared by every request of one fake: settings, fault plan, journal, counters.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::config::Config;
use crate::fault::Fault;
use crate::journal::{Journal, JournalEntry};
use crate::limit::Limiter;
use crate::noise::NoiseSource;
use crate::plan::FaultPlan;

/// The state behind [`crate::app`]: cheap to clone, shared by every request.
///
/// Build one with [`FakeState::new`] to drive the router in-process (for example with tower's
/// `oneshot`); [`crate::FakeServer`] builds its own.
#[derive(Clone)]
pub struct FakeState {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    limiter: Option<Limiter>,
    noise: Option<NoiseSource>,
    plan: Mutex<Cursor>,
    journal: Journal,
    posts: AtomicUsize,
    shutdown: watch::Sender<bool>,
}

/// The installed plan and how many requests it has seen.
#[derive(Default)]
struct Cursor {
    plan: FaultPlan,
    seen: usize,
}

impl FakeState {
    /// A fresh state: no faults scripted, an empty journal.
    pub fn new(config: Config) -> Self {
        let (shutdown, _) = watch::channel(false);
        Self {
            inner: Arc::new(Inner {
                limiter: Limiter::from_config(&config),
                noise: NoiseSource::new(config.noise, config.seed),
                config,
                plan: Mutex::new(Cursor::default()),
                journal: Journal::default(),
                posts: AtomicUsize::new(0),
                shutdown,
            }),
        }
    }

    /// Replaces the fault plan; its request numbers count from this call.
    pub fn script(&self, plan: FaultPlan) {
        let mut cursor = self
            .inner
            .plan
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *cursor = Cursor { plan, seen: 0 };
    }

    /// Every request received so far (the most recent 10 000, at most 64 MiB of bodies),
    /// credentials redacted.
    pub fn journal(&self) -> Vec<JournalEntry> {
        self.inner.journal.entries()
    }

    /// How many `POST /v1/systemone` requests were received, faulted or not.
    pub fn request_count(&self) -> usize {
        self.inner.posts.load(Ordering::Relaxed)
    }

    pub(crate) fn config(&self) -> &Config {
        &self.inner.config
    }

    pub(crate) fn limiter(&self) -> Option<&Limiter> {
        self.inner.limiter.as_ref()
    }

    pub(crate) fn noise(&self) -> Option<&NoiseSource> {
        self.inner.noise.as_ref()
    }

    pub(crate) fn record(&self, entry: JournalEntry) {
        self.inner.journal.push(entry);
    }

    /// Counts one `POST /v1/systemone` and returns the fault the plan holds for it.
    pub(crate) fn next_fault(&self) -> Option<Fault> {
        self.inner.posts.fetch_add(1, Ordering::Relaxed);
        let mut cursor = self
            .inner
            .plan
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        cursor.seen += 1;
        cursor.plan.fault_for(cursor.seen).cloned()
    }

    /// Tells stalled handlers and open connections to finish.
    pub(crate) fn begin_shutdown(&self) {
        self.inner.shutdown.send_replace(true);
    }

    /// Resolves once shutdown has begun.
    pub(crate) async fn shutting_down(&self) {
        let mut receiver = self.inner.shutdown.subscribe();
        let _ = receiver.wait_for(|stopping| *stopping).await;
    }
}

impl fmt::Debug for FakeState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FakeState")
            .field("config", &self.inner.config)
            .field("request_count", &self.request_count())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_counts_from_when_it_is_scripted() {
        let state = FakeState::new(Config::default());
        assert_eq!(state.next_fault(), None);
        state.script(FaultPlan::new().then(Fault::Overloaded));
        assert_eq!(state.next_fault(), Some(Fault::Overloaded));
        assert_eq!(state.next_fault(), None);
        assert_eq!(state.request_count(), 3);
    }
}
