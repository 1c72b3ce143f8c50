//! The decision log hook of the service (`jevjudge serve --store URL`): every review is written
//! to a [`Store`] before its response is sent, and `/readyz` follows the store's health.
//! Concurrent reviews' rows are committed together ([`GroupCommit`]): an idle committer
//! writes what waits at once (up to 64 rows), rows arriving meanwhile form the next batch, and
//! each review is answered once its own row is committed.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex, RwLock,
        atomic::{AtomicBool, Ordering},
    },
    time::{Duration, SystemTime},
};

use jevjudge_judge::{Backend, BackendFuture, BackendKind, Definition, Verdict};
use jevjudge_store::{
    Enqueue, GroupCommit, GroupCommitConfig, GroupCommitStats, Inclusion, KeptState, NewReview,
    QueueItemId, ReviewId, Store, StoreError,
};
use jevjudge_wire::{Request, canonical};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::Definitions;

/// How long a readiness check waits for the store.
const PING_TIMEOUT: Duration = Duration::from_secs(1);
/// How often kept state text older than the retention is erased.
pub const RETENTION_SWEEP: Duration = Duration::from_secs(60);

/// Where the service writes its reviews, and what it keeps.
///
/// Without `keep_state` no state text reaches the database: a review row holds the verdict,
/// the definition's version and digest, the state's digest, the caller's reference, the
/// model, usage, timing, request id and backend.
#[derive(Debug)]
pub struct DecisionLog {
    store: Store,
    writer: GroupCommit,
    keep_state: bool,
    requested_model: String,
    digests: RwLock<HashMap<String, String>>,
    ready: AtomicBool,
}

impl DecisionLog {
    /// A decision log on `store` (already migrated) for these definitions: each definition's
    /// questions are kept once under its digest, so exported records can be rebuilt.
    /// `keep_state` keeps each review's state text and answers (`--store-state`);
    /// `requested_model` is the model the backend asks for (kept in exported records).
    pub async fn open(
        store: Store,
        definitions: &Definitions,
        keep_state: bool,
        requested_model: impl Into<String>,
    ) -> Result<DecisionLog, StoreError> {
        let log = DecisionLog {
            writer: store.group_commit(GroupCommitConfig::default()),
            store,
            keep_state,
            requested_model: requested_model.into(),
            digests: RwLock::new(HashMap::new()),
            ready: AtomicBool::new(true),
        };
        log.add_definitions(definitions).await?;
        Ok(log)
    }

    /// Keeps these definitions' questions in the store (once per digest), so reviews of them
    /// can be exported and reviewers can read their questions; a reload calls it with the new
    /// set before swapping it in.
    pub async fn add_definitions(&self, definitions: &Definitions) -> Result<(), StoreError> {
        let mut added = Vec::new();
        for definition in definitions.iter() {
            let questions = definition.questions().to_json();
            let digest = definition_digest(definition, &questions);
            self.store
                .put_definition(&digest, definition.version(), &questions)
                .await?;
            let expected: std::collections::BTreeMap<String, bool> = definition
                .criteria()
                .iter()
                .map(|criterion| (criterion.id().to_owned(), criterion.expected()))
                .collect();
            self.store
                .put_definition_expected(&digest, &expected)
                .await?;
            added.push((definition.version().to_owned(), digest));
        }
        let mut digests = match self.digests.write() {
            Ok(digests) => digests,
            Err(poisoned) => poisoned.into_inner(),
        };
        digests.extend(added);
        Ok(())
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// What the group committer has written so far (transactions, rows, failures).
    pub fn commit_stats(&self) -> GroupCommitStats {
        self.writer.stats()
    }

    /// Whether state text is kept.
    pub fn keeps_state(&self) -> bool {
        self.keep_state
    }

    /// Whether the last write or check succeeded.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    /// Pings the store (at most 1 s) and remembers the answer.
    pub async fn check(&self) -> bool {
        let ok = matches!(
            tokio::time::timeout(PING_TIMEOUT, self.store.ping()).await,
            Ok(Ok(()))
        );
        self.ready.store(ok, Ordering::Relaxed);
        ok
    }

    /// Writes one review and, when `enqueue` says so, its queue item(s) with the review's
    /// inclusion probability, in one transaction (shared with concurrent reviews' rows);
    /// returns once that transaction is committed. On failure the service is not ready until
    /// a check succeeds.
    pub(crate) async fn write_queued(
        &self,
        review: &NewReview,
        enqueue: Option<&(Enqueue, Inclusion)>,
    ) -> Result<Vec<QueueItemId>, StoreError> {
        let written = match enqueue {
            Some((enqueue, inclusion)) => {
                self.writer
                    .insert_queued_with(review.clone(), Some(*enqueue), *inclusion)
                    .await
            }
            None => self.writer.insert_queued(review.clone(), None).await,
        };
        match written {
            Ok(items) => {
                self.ready.store(true, Ordering::Relaxed);
                Ok(items)
            }
            Err(error) => {
                self.ready.store(false, Ordering::Relaxed);
                Err(error)
            }
        }
    }

    /// Writes one shadow review (never queued). A failure is the shadow's alone: it leaves
    /// the service's readiness as it is.
    pub(crate) async fn write_shadow(&self, review: &NewReview) -> Result<(), StoreError> {
        self.store.insert(review).await
    }

    /// The row of one review.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn row(
        &self,
        id: ReviewId,
        definition: &Definition,
        state_digest: String,
        reference: Option<String>,
        verdict: &Verdict,
        request_id: &str,
        backend: BackendKind,
        kept_state: Option<Value>,
        answers: Option<Map<String, Value>>,
    ) -> NewReview {
        NewReview {
            id,
            definition_version: definition.version().to_owned(),
            definition_digest: match self.digests.read() {
                Ok(digests) => digests.get(definition.version()).cloned(),
                Err(poisoned) => poisoned.into_inner().get(definition.version()).cloned(),
            }
            .unwrap_or_else(|| definition_digest(definition, &definition.questions().to_json())),
            state_digest,
            reference,
            status: verdict.status.as_str().to_owned(),
            error: verdict.error.as_str().to_owned(),
            detail: verdict.detail.map(|d| d.to_string()),
            findings: serde_json::to_value(&verdict.findings).unwrap_or_else(|_| json!({})),
            model: verdict.model.clone(),
            usage: verdict.usage,
            elapsed: verdict.elapsed,
            request_id: request_id.to_owned(),
            backend: backend.as_str().to_owned(),
            kept: kept_state.map(|state| KeptState {
                state,
                answers,
                requested_model: self.requested_model.clone(),
            }),
            shadow_of: None,
            route: None,
        }
    }

    /// Erases kept state text older than `retain`, now and every [`RETENTION_SWEEP`], for
    /// ever (spawn it; errors are logged and retried at the next sweep). Queue items still
    /// open on an erased review are closed as expired in the same transaction.
    pub async fn run_retention(self: Arc<Self>, retain: Duration) {
        let mut ticks = tokio::time::interval(RETENTION_SWEEP);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let cutoff = SystemTime::now()
                .checked_sub(retain)
                .unwrap_or(SystemTime::UNIX_EPOCH);
            match self.store.erase_state_before_counting(cutoff).await {
                Ok(jevjudge_store::Erased {
                    reviews: 0,
                    expired_items: 0,
                }) => {}
                Ok(erased) => tracing::info!(
                    erased = erased.reviews,
                    expired_items = erased.expired_items,
                    "state text past its retention erased; open queue items of it expired"
                ),
                Err(error) => tracing::warn!(%error, "the retention sweep failed; retrying later"),
            }
        }
    }
}

/// `sha256:…` of a definition's content: its version, questions and each criterion's
/// expectation and thresholds.
pub(crate) fn definition_digest(definition: &Definition, questions: &Value) -> String {
    let criteria: Vec<Value> = definition
        .criteria()
        .iter()
        .map(|c| {
            json!([
                c.id(),
                c.expected(),
                c.fail_at_or_below(),
                c.pass_at_or_above()
            ])
        })
        .collect();
    canonical::digest(&json!({
        "version": definition.version(),
        "questions": questions,
        "criteria": criteria,
    }))
    .unwrap_or_default()
}

/// `sha256:…` of the state's canonical JSON.
pub(crate) fn state_digest(state: &Value) -> String {
    canonical::digest(state).unwrap_or_default()
}

tokio::task_local! {
    /// Where [`Capturing`] puts the raw answers of the review running in this task.
    static CAPTURED: Arc<Mutex<Option<Map<String, Value>>>>;
}

/// Runs `review` and returns its output with the raw answers the backend returned during it.
pub(crate) async fn capturing_answers<F: Future>(
    review: F,
) -> (F::Output, Option<Map<String, Value>>) {
    let slot = Arc::new(Mutex::new(None));
    let output = CAPTURED.scope(slot.clone(), review).await;
    let answers = slot.lock().ok().and_then(|mut answers| answers.take());
    (output, answers)
}

/// A backend that hands the raw answers of each response to [`capturing_answers`] when a
/// review runs inside it (and does nothing otherwise).
pub(crate) struct Capturing<B>(pub(crate) B);

impl<B: Backend> Backend for Capturing<B> {
    fn answer<'a>(&'a self, request: &'a Request, deadline: Instant) -> BackendFuture<'a> {
        Box::pin(async move {
            let response = self.0.answer(request, deadline).await?;
            let _ = CAPTURED.try_with(|slot| {
                if let Ok(mut answers) = slot.lock() {
                    *answers = response
                        .raw_answers
                        .as_ref()
                        .map(jevjudge_wire::RawAnswers::to_map);
                }
            });
            Ok(response)
        })
    }

    fn kind(&self) -> BackendKind {
        self.0.kind()
    }
}
