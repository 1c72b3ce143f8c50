//! Shadow reviews: a route's shadow versions judge each sampled live review after the caller
//! has its answer, and their verdicts go to the decision log beside it (`shadow_of`).
//!
//! - A shadow asking exactly the live version's questions (a calibrated version) is scored on
//!   the live review's probabilities ([`Definition::verdict_from_probabilities`]): no request,
//!   no tokens.
//! - Any other shadow sends its own request, with the server's default budget, holding one of
//!   the shadows' own slots (`--shadow-max-concurrent`, apart from the live reviews' slots and
//!   outside the live limiter); when every slot is taken the shadow is shed, never queued.
//! - Shadow rows are never queued for people. A shadow's failure (an ERROR, a version not
//!   loaded, a row not written) is counted and logged at debug level; it never reaches the
//!   caller.
//! - At shutdown, shadows still running get what is left of the drain time; those still
//!   running after it are dropped and counted as shed.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use jevjudge_judge::{Backend, BackendKind, Definition, Judge, Status, Verdict};
use jevjudge_store::{ReviewId, Route};
use serde_json::Value;
use tokio::{sync::Semaphore, task::JoinSet};

use crate::{Definitions, Metrics, decision_log::DecisionLog, metrics::ShadowOutcome};

/// A live review that came through a route, as its shadows need it.
pub(crate) struct LiveReview {
    pub(crate) id: ReviewId,
    pub(crate) route: Route,
    pub(crate) definition: Definition,
    pub(crate) verdict: Verdict,
    /// The state, kept only when a shadow needs its own request.
    pub(crate) state: Option<Value>,
    pub(crate) state_digest: String,
    pub(crate) reference: Option<String>,
    pub(crate) request_id: String,
}

/// Whether the live review `id` of a route sampling `share` of its reviews is shadowed: a
/// stable draw from the review id.
pub(crate) fn is_sampled(id: ReviewId, share: f64) -> bool {
    share >= 1.0 || crate::draw(0, "shadow-sample", &id.to_string()) < share
}

/// Whether some shadow of `route` needs its own request for a review by `live` (so the state
/// must be kept for it).
pub(crate) fn needs_state(route: &Route, live: &Definition, definitions: &Definitions) -> bool {
    route.shadows.iter().any(|version| {
        definitions
            .get(version)
            .is_some_and(|shadow| !shadow.asks_same_questions(live))
    })
}

/// The shadows' judge, slots and running tasks.
pub(crate) struct Shadows {
    judge: Judge<Arc<dyn Backend>>,
    slots: Arc<Semaphore>,
    tasks: Mutex<JoinSet<()>>,
}

/// Counts a shadow as shed when it is dropped before it ended (the drain ran out).
struct Pending {
    metrics: Metrics,
    route: String,
    version: String,
    ended: bool,
}

impl Pending {
    fn end(mut self, outcome: ShadowOutcome) {
        self.ended = true;
        self.metrics
            .shadows()
            .record(&self.route, &self.version, outcome);
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.ended {
            self.metrics
                .shadows()
                .record(&self.route, &self.version, ShadowOutcome::Shed);
        }
    }
}

impl Shadows {
    /// Shadows sending their own requests with `judge` (give it no limiter: a shadow never
    /// waits for or takes a live review's permit), at most `slots` at once.
    pub(crate) fn new(judge: Judge<Arc<dyn Backend>>, slots: usize) -> Shadows {
        Shadows {
            judge,
            slots: Arc::new(Semaphore::new(slots)),
            tasks: Mutex::new(JoinSet::new()),
        }
    }

    fn tasks(&self) -> std::sync::MutexGuard<'_, JoinSet<()>> {
        match self.tasks.lock() {
            Ok(tasks) => tasks,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Starts every shadow of `live`'s route on it, in the background: returns at once.
    pub(crate) fn start(
        &self,
        log: &Arc<DecisionLog>,
        metrics: &Metrics,
        definitions: &Definitions,
        backend: BackendKind,
        live: LiveReview,
    ) {
        let live = Arc::new(live);
        let mut tasks = self.tasks();
        // Finished tasks leave the set here, so it holds only running ones.
        while tasks.try_join_next().is_some() {}
        for version in &live.route.shadows {
            let pending = Pending {
                metrics: metrics.clone(),
                route: live.route.name.clone(),
                version: version.clone(),
                ended: false,
            };
            let Some(shadow) = definitions.get(version).cloned() else {
                tracing::debug!(%version, "a shadow version is not loaded here");
                pending.end(ShadowOutcome::Error);
                continue;
            };
            let computed = shadow
                .asks_same_questions(&live.definition)
                .then(|| shadow.verdict_from_probabilities(&live.verdict))
                .flatten();
            let (log, live) = (log.clone(), live.clone());
            if let Some(verdict) = computed {
                tasks.spawn(write(log, live, shadow, verdict, backend, pending));
                continue;
            }
            let Some(state) = live.state.clone() else {
                pending.end(ShadowOutcome::Error);
                continue;
            };
            let Ok(slot) = self.slots.clone().try_acquire_owned() else {
                pending.end(ShadowOutcome::Shed);
                continue;
            };
            let judge = self.judge.clone();
            tasks.spawn(async move {
                let verdict = judge.review(state, &shadow).await;
                drop(slot);
                write(log, live, shadow, verdict, backend, pending).await;
            });
        }
    }

    /// Waits at most `limit` for the running shadows, then drops those still running
    /// (counted as shed); returns how many were dropped.
    pub(crate) async fn drain(&self, limit: Duration) -> usize {
        let mut tasks = std::mem::take(&mut *self.tasks());
        let all = async { while tasks.join_next().await.is_some() {} };
        if tokio::time::timeout(limit, all).await.is_ok() {
            return 0;
        }
        let dropped = tasks.len();
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        if dropped > 0 {
            tracing::info!(
                dropped,
                "shadow reviews still running at the drain limit were dropped"
            );
        }
        dropped
    }

    /// Shadows running now.
    #[cfg(test)]
    pub(crate) fn running(&self) -> usize {
        let mut tasks = self.tasks();
        while tasks.try_join_next().is_some() {}
        tasks.len()
    }
}

/// Writes a shadow's verdict beside its live review and counts its outcome.
async fn write(
    log: Arc<DecisionLog>,
    live: Arc<LiveReview>,
    shadow: Definition,
    verdict: Verdict,
    backend: BackendKind,
    pending: Pending,
) {
    let mut row = log.row(
        ReviewId::new(),
        &shadow,
        live.state_digest.clone(),
        live.reference.clone(),
        &verdict,
        &live.request_id,
        backend,
        None,
        None,
    );
    row.shadow_of = Some(live.id);
    row.route = Some(live.route.name.clone());
    if let Err(error) = log.write_shadow(&row).await {
        tracing::debug!(%error, "a shadow review could not be written to the decision log");
        pending.end(ShadowOutcome::Error);
        return;
    }
    pending.end(if verdict.status == Status::Error {
        ShadowOutcome::Error
    } else if verdict.status == live.verdict.status {
        ShadowOutcome::Agree
    } else {
        ShadowOutcome::Flip
    });
}

#[cfg(test)]
mod tests {
    use jevjudge_judge::{Criterion, ErrorCode, backend_fn};
    use jevjudge_store::{Store, StoreUrl};
    use jevjudge_wire::{Detail, NoulQuestion, Response};
    use serde_json::json;

    use super::*;

    fn definition(version: &str, question: &str) -> Definition {
        let criterion = Criterion::new("c", NoulQuestion::new(question), true, 0.2, 0.8).unwrap();
        Definition::new(version, vec![criterion]).unwrap()
    }

    // A shadow with other questions waits on a backend that never answers: the second finds
    // the one slot taken and is shed; the drain drops the first at its limit, counted as shed.
    #[tokio::test]
    async fn a_full_share_sheds_and_the_drain_drops_what_is_still_running_counting_both() {
        let file = jevjudge_test_support::databases::sqlite_file("shadows-drain");
        let url: StoreUrl = format!("sqlite:{}", file.display()).parse().unwrap();
        let store = Store::open(&url).await.unwrap();
        let live = definition("v1", "Is it so?");
        let definitions = Definitions::new([live.clone(), definition("v2", "Is it not?")]).unwrap();
        let log = Arc::new(
            DecisionLog::open(store, &definitions, false, "m")
                .await
                .unwrap(),
        );
        let backend: Arc<dyn Backend> = Arc::new(backend_fn(|_| {
            std::future::pending::<Result<Response, jevjudge_judge::BackendError>>()
        }));
        let shadows = Shadows::new(Judge::new(backend, Duration::from_secs(3600)).unwrap(), 1);
        let metrics = Metrics::new();
        let route = Route {
            name: "r".to_owned(),
            live: "v1".to_owned(),
            shadows: vec!["v2".to_owned()],
            shadow_sample: 1.0,
            created_at: String::new(),
            updated_at: String::new(),
        };
        assert!(needs_state(&route, &live, &definitions));
        tokio::time::pause();
        for _ in 0..2 {
            let review = LiveReview {
                id: ReviewId::new(),
                route: route.clone(),
                definition: live.clone(),
                verdict: Verdict::error(
                    "v1",
                    ErrorCode::Timeout,
                    Detail::BudgetElapsed,
                    Duration::ZERO,
                ),
                state: Some(json!("a state")),
                state_digest: "sha256:s".to_owned(),
                reference: None,
                request_id: "r".to_owned(),
            };
            shadows.start(&log, &metrics, &definitions, BackendKind::Fake, review);
        }
        assert_eq!(shadows.running(), 1);
        assert_eq!(metrics.shadows().counts("r", "v2"), [0, 0, 0, 1]);
        assert_eq!(shadows.drain(Duration::from_secs(30)).await, 1);
        assert_eq!(metrics.shadows().counts("r", "v2"), [0, 0, 0, 2]);
        assert_eq!(shadows.running(), 0);
        let _ = std::fs::remove_file(&file);
    }

    #[test]
    fn a_review_is_sampled_by_a_stable_draw_of_its_id() {
        let id = ReviewId::new();
        assert!(is_sampled(id, 1.0));
        assert!(!is_sampled(id, 0.0));
        assert_eq!(is_sampled(id, 0.5), is_sampled(id, 0.5));
        let sampled = (0..2000)
            .filter(|_| is_sampled(ReviewId::new(), 0.25))
            .count();
        assert!((400..600).contains(&sampled), "{sampled} of 2000 at 0.25");
    }
}
