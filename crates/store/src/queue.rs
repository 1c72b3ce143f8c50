//! The review queue (issue 13): reviews whose verdicts people should settle, leased to one
//! reviewer at a time, their decisions kept, agreement measured and labels exported.
//!
//! One code path over SQLite and PostgreSQL, like the rest of the store. A claim is ONE
//! statement: `UPDATE queue_items SET claimed_by, lease_expires WHERE id = (the oldest pending
//! item this reviewer may take) RETURNING …`; on PostgreSQL the inner `SELECT` takes its row
//! `FOR UPDATE SKIP LOCKED`, on SQLite the statement holds the database's write lock from its
//! first read. The unique index `(review_id, claimed_by)` is the last line: a reviewer never
//! holds two slots of one review, even when one reviewer's claims race (the loser retries).
//!
//! Every operation that depends on the clock has an `*_at` form taking `now` explicitly, so
//! tests and benchmarks need no sleeps; the plain forms use the system clock.

use std::{
    collections::BTreeMap,
    fmt,
    str::FromStr,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use jevjudge_stats::AgreementTable;
use jevjudge_wire::record::Record;
use serde::{Serialize, Serializer};
use serde_json::Value;
use sqlx::{Connection as _, Row as _, any::AnyRow};
use uuid::Uuid;

use crate::{
    MAX_PAGE, NewReview, Review, ReviewId, Store, StoreError, StoreKind,
    review::{rfc3339_millis, unix_millis},
    store::{COLUMNS, corrupt, record_of, review_of, write_review},
};

/// The longest note a decision may carry, in characters.
pub const MAX_NOTE_CHARS: usize = 4000;
/// How often a claim that lost a race on one review's two slots (same reviewer, two claims at
/// once) is retried.
const CLAIM_RETRIES: usize = 8;
/// Reviews per batch of a labelled export, and decision pairs per batch of agreement.
const BATCH: i64 = 500;
/// The stored reason of a second review's item (slot 2).
pub const SECOND_REVIEW: &str = "second_review";

/// A reviewer's findings: criterion id → whether its condition holds (`None`: can't tell).
pub type Findings = BTreeMap<String, Option<bool>>;

/// A queue item's id: a UUIDv7 (hyphenated), so ids sort by the time the item was queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueItemId(Uuid);

impl QueueItemId {
    /// A fresh id.
    #[allow(clippy::new_without_default)]
    pub fn new() -> QueueItemId {
        QueueItemId(Uuid::now_v7())
    }
}

impl fmt::Display for QueueItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0.hyphenated(), f)
    }
}

/// A string that is not a queue item id (a UUIDv7 in its hyphenated form).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a queue item id (a UUIDv7 like 019abc12-3456-7def-8123-456789abcdef)")]
pub struct QueueItemIdError;

impl FromStr for QueueItemId {
    type Err = QueueItemIdError;

    fn from_str(text: &str) -> Result<QueueItemId, QueueItemIdError> {
        let id: ReviewId = text.parse().map_err(|_| QueueItemIdError)?;
        Ok(QueueItemId(
            Uuid::try_parse(&id.to_string()).map_err(|_| QueueItemIdError)?,
        ))
    }
}

impl Serialize for QueueItemId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Why a review was queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueReason {
    /// Its status is one the service queues (`--queue-statuses`).
    Status,
    /// A PASS drawn by `--sample-pass`, so PASS precision is measured too.
    SampledPass,
}

impl QueueReason {
    /// The stored text: `status` or `sampled_pass`.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueReason::Status => "status",
            QueueReason::SampledPass => "sampled_pass",
        }
    }
}

/// How to queue a review.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Enqueue {
    /// Why.
    pub reason: QueueReason,
    /// 1, or 2 for a second review (two items, slots 1 and 2, for two different reviewers).
    pub copies: u8,
}

/// A leased item, with what its reviewer needs to decide. `Debug` never shows the state text.
#[derive(Clone, PartialEq, Serialize)]
pub struct Claimed {
    /// The item.
    pub item: QueueItemId,
    /// The review (its findings are Jev's: keep them from the reviewer until the decision).
    pub review: Review,
    /// The kept state text, if the service kept it.
    pub state: Option<Value>,
    /// The definition's questions JSON as stored by [`Store::put_definition`] (`null` if the
    /// definition was never stored).
    pub questions: Value,
    /// The definition's expected flags, when stored ([`Store::put_definition_expected`]).
    pub expected: Option<BTreeMap<String, bool>>,
    /// Why the review was queued: `status`, `sampled_pass` or `second_review`.
    pub reason: String,
    /// 1, or 2 for the second review's copy.
    pub slot: u8,
    /// When the lease ends (the item returns to the queue unless decided or renewed).
    #[serde(serialize_with = "serialize_time")]
    pub lease_expires: SystemTime,
}

/// A reviewer's decision: whether each criterion's condition really holds (`None`: can't tell).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Decision {
    /// Every criterion id of the definition, each `true`, `false` or `null`.
    pub findings: BTreeMap<String, Option<bool>>,
    /// A free-text note (at most [`MAX_NOTE_CHARS`] characters).
    pub note: Option<String>,
}

/// A saved decision, with what was hidden from the reviewer until now.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decided {
    /// The item.
    pub item: QueueItemId,
    /// The review.
    pub review: Review,
    /// Jev's findings (the review's findings object), revealed after deciding.
    pub findings_by_jev: Value,
}

/// Why a decision or release was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueueError {
    /// No such item.
    #[error("no such queue item")]
    NotFound,
    /// The item is not leased to this reviewer, or the lease has expired (HTTP 409).
    #[error("the item is not leased to you, or its lease has expired: claim it again")]
    LeaseNotHeld,
    /// The item was decided already (HTTP 409).
    #[error("the item has been decided already")]
    AlreadyDecided,
    /// The decision is not valid for this item (HTTP 422), with the reason.
    #[error("{0}")]
    Invalid(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<sqlx::Error> for QueueError {
    fn from(error: sqlx::Error) -> QueueError {
        QueueError::Store(error.into())
    }
}

/// Agreement of the two reviewers on one criterion, over the items decided twice.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Agreement {
    /// Items decided twice with a non-null answer from both reviewers.
    pub items: u64,
    /// The share of those where both agree; `None` without items.
    pub observed: Option<f64>,
    /// Cohen's kappa (first slot against second); `None` when undefined.
    pub kappa: Option<f64>,
}

/// The queue in numbers.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct QueueStats {
    /// Pending items (not decided, not under a live lease) by definition version.
    pub pending_by_version: BTreeMap<String, u64>,
    /// Items under a live lease.
    pub claimed: u64,
    /// Decided items.
    pub decided: u64,
    /// Agreement per criterion id where two reviewers decided the same review.
    pub agreement: BTreeMap<String, Agreement>,
}

/// A cursor of [`Store::queue_page`]: opaque to callers; it is `q1.`, the last item's
/// queued time (Unix milliseconds), `.` and its id (pages are in (queued time, id) order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueCursor {
    queued_at: i64,
    item: QueueItemId,
}

impl QueueCursor {
    /// The cursor after this entry.
    pub fn after(entry: &QueueEntry) -> QueueCursor {
        QueueCursor {
            queued_at: entry.queued_at_millis,
            item: entry.item,
        }
    }
}

impl fmt::Display for QueueCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "q1.{}.{}", self.queued_at, self.item)
    }
}

impl FromStr for QueueCursor {
    type Err = crate::CursorError;

    fn from_str(text: &str) -> Result<QueueCursor, crate::CursorError> {
        let rest = text.strip_prefix("q1.").ok_or(crate::CursorError)?;
        let (queued_at, item) = rest.split_once('.').ok_or(crate::CursorError)?;
        if queued_at.is_empty() || !queued_at.bytes().all(|b| b.is_ascii_digit()) {
            return Err(crate::CursorError);
        }
        Ok(QueueCursor {
            queued_at: queued_at.parse().map_err(|_| crate::CursorError)?,
            item: item.parse().map_err(|_| crate::CursorError)?,
        })
    }
}

/// One open item in a queue page.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueEntry {
    /// The item.
    pub item: QueueItemId,
    /// Its review.
    pub review_id: ReviewId,
    /// The review's definition version.
    pub definition_version: String,
    /// The review's status (PASS, FAIL, INCONCLUSIVE).
    pub status: String,
    /// `status`, `sampled_pass` or `second_review`.
    pub reason: String,
    /// 1, or 2 for a second review.
    pub slot: u8,
    /// When it was queued, RFC 3339 UTC with milliseconds.
    pub queued_at: String,
    /// The same time in Unix milliseconds (for ages).
    pub queued_at_millis: i64,
    /// Who holds it, while a lease is live.
    pub claimed_by: Option<String>,
    /// When that lease ends, RFC 3339.
    pub lease_expires: Option<String>,
}

/// A page of open items, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueuePage {
    /// The items.
    pub items: Vec<QueueEntry>,
    /// Pass as `cursor` for the next page; absent on the last page.
    pub next_cursor: Option<String>,
}

/// A saved decision as read back.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionView {
    /// Who decided.
    pub reviewer: String,
    /// The findings as decided.
    pub findings: BTreeMap<String, Option<bool>>,
    /// The note.
    pub note: Option<String>,
    /// When, RFC 3339.
    pub decided_at: String,
}

/// One item with its review, the definition's questions and its decision if decided.
/// `Debug` never shows the state text.
#[derive(Clone, PartialEq, Serialize)]
pub struct QueueItemView {
    /// The item's queue facts (its lease as of now).
    pub entry: QueueEntry,
    /// The review.
    pub review: Review,
    /// The kept state text, if any.
    pub state: Option<Value>,
    /// The definition's questions JSON (`null` if never stored).
    pub questions: Value,
    /// The definition's expected flags, when stored.
    pub expected: Option<BTreeMap<String, bool>>,
    /// The decision, once decided.
    pub decision: Option<DecisionView>,
}

/// A queued review as a labelled export reads it. `Debug` never shows the state text.
#[derive(Clone)]
pub struct Labelled {
    /// The review.
    pub review_id: ReviewId,
    /// Its definition version.
    pub definition_version: String,
    /// The definition's expected flags, when stored.
    pub expected: Option<BTreeMap<String, bool>>,
    /// The definition's criterion ids (the stored questions' keys), when stored.
    pub criteria: Option<Vec<String>>,
    /// The kept state text.
    pub state: Option<Value>,
    /// The replayable record, when state, answers and model are kept.
    pub record: Option<Record>,
    /// Each queued copy in slot order: its decided findings, or `None` while undecided.
    pub decisions: Vec<Option<BTreeMap<String, Option<bool>>>>,
}

impl Claimed {
    /// When the lease ends, RFC 3339 UTC with milliseconds (as serialised).
    pub fn lease_expires_rfc3339(&self) -> String {
        humantime::format_rfc3339_millis(self.lease_expires).to_string()
    }
}

impl fmt::Debug for Claimed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Claimed")
            .field("item", &self.item)
            .field("review", &self.review)
            .field("state", &self.state.as_ref().map(|_| "<private>"))
            .field("reason", &self.reason)
            .field("slot", &self.slot)
            .field("lease_expires", &self.lease_expires)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for QueueItemView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueItemView")
            .field("entry", &self.entry)
            .field("review", &self.review)
            .field("state", &self.state.as_ref().map(|_| "<private>"))
            .field("decision", &self.decision)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for Labelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Labelled")
            .field("review_id", &self.review_id)
            .field("definition_version", &self.definition_version)
            .field("state", &self.state.as_ref().map(|_| "<private>"))
            .field("record", &self.record.as_ref().map(|_| "<private>"))
            .field("decisions", &self.decisions)
            .finish_non_exhaustive()
    }
}

fn serialize_time<S: Serializer>(time: &SystemTime, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&humantime::format_rfc3339_millis(*time))
}

fn millis_of(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

fn time_of(millis: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0))
}

fn json_of(text: Option<String>, what: &str) -> Result<Option<Value>, StoreError> {
    text.map(|t| serde_json::from_str(&t).map_err(|_| corrupt(what)))
        .transpose()
}

fn expected_of(text: Option<String>) -> Result<Option<BTreeMap<String, bool>>, StoreError> {
    text.map(|t| serde_json::from_str(&t).map_err(|_| corrupt("expected")))
        .transpose()
}

fn findings_of(text: &str) -> Result<BTreeMap<String, Option<bool>>, StoreError> {
    serde_json::from_str(text).map_err(|_| corrupt("queue_decisions.findings"))
}

fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(e) if e.is_unique_violation())
}

/// The criterion ids of a stored questions object, in its order.
fn criterion_ids(questions: &Value) -> Option<Vec<String>> {
    questions
        .as_object()
        .map(|map| map.keys().cloned().collect())
}

/// Checks a decision against the definition's criterion ids: every id answered, no other.
fn check_decision(decision: &Decision, criteria: &[String]) -> Result<(), QueueError> {
    if let Some(unknown) = decision
        .findings
        .keys()
        .find(|id| !criteria.iter().any(|c| c == *id))
    {
        return Err(QueueError::Invalid(format!(
            "`findings.{unknown}` is not a criterion of this review's definition (criteria: {})",
            criteria.join(", ")
        )));
    }
    if let Some(missing) = criteria
        .iter()
        .find(|c| !decision.findings.contains_key(*c))
    {
        return Err(QueueError::Invalid(format!(
            "`findings.{missing}` is missing: answer every criterion with true, false or null \
             (can't tell)"
        )));
    }
    if let Some(note) = &decision.note {
        if note.chars().count() > MAX_NOTE_CHARS {
            return Err(QueueError::Invalid(format!(
                "`note` must be at most {MAX_NOTE_CHARS} characters"
            )));
        }
    }
    Ok(())
}

impl Store {
    /// Keeps a definition's expected flags (`{"criterion id": true|false}`) beside its
    /// questions ([`Store::put_definition`] first), so labelled exports can derive
    /// `expected_pass` and claims can show them.
    pub async fn put_definition_expected(
        &self,
        digest: &str,
        expected: &BTreeMap<String, bool>,
    ) -> Result<(), StoreError> {
        let text =
            serde_json::to_string(expected).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let done = sqlx::query("UPDATE definitions SET expected = $1 WHERE digest = $2")
            .bind(text)
            .bind(digest)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::Invalid(format!(
                "no definition with digest {digest}: put_definition first"
            )));
        }
        Ok(())
    }

    /// Writes the review and (if `Some`) its queue item(s) in ONE transaction: the review is
    /// never queued without being logged, nor logged as queued without its items.
    pub async fn insert_queued(
        &self,
        review: &NewReview,
        enqueue: Option<&Enqueue>,
    ) -> Result<Vec<QueueItemId>, StoreError> {
        let Some(enqueue) = enqueue else {
            self.insert(review).await?;
            return Ok(Vec::new());
        };
        if !(1..=2).contains(&enqueue.copies) {
            return Err(StoreError::Invalid(format!(
                "a review is queued once or twice (second review), not {} times",
                enqueue.copies
            )));
        }
        let now = unix_millis(SystemTime::now());
        let ids: Vec<QueueItemId> = (0..enqueue.copies).map(|_| QueueItemId::new()).collect();
        let mut transaction = self.begin_write().await?;
        write_review(&mut transaction, review).await?;
        for (index, id) in ids.iter().enumerate() {
            let reason = if index == 0 {
                enqueue.reason.as_str()
            } else {
                SECOND_REVIEW
            };
            sqlx::query(
                "INSERT INTO queue_items (id, review_id, definition_version, reason, slot, \
                 queued_at, copies) VALUES ($1, $2, $3, $4, $5, $6, $7)",
            )
            .bind(id.to_string())
            .bind(review.id.to_string())
            .bind(&review.definition_version)
            .bind(reason)
            .bind(index as i64 + 1)
            .bind(now)
            .bind(i64::from(enqueue.copies))
            .execute(&mut *transaction)
            .await?;
        }
        transaction.commit().await?;
        Ok(ids)
    }

    /// A write transaction: SQLite takes its write lock at once (`BEGIN IMMEDIATE`, so a read
    /// never has to be upgraded under contention), PostgreSQL a plain one.
    pub(crate) async fn begin_write(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, StoreError> {
        Ok(match self.kind {
            StoreKind::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            StoreKind::Postgres => self.pool.begin().await?,
        })
    }

    /// Leases the oldest pending item (optionally of one definition version) to `reviewer`
    /// until now + `lease`. Pending = not decided and (not claimed or lease expired). A
    /// reviewer is never given two items of the same review. `None` when nothing is pending.
    pub async fn claim(
        &self,
        reviewer: &str,
        version: Option<&str>,
        lease: Duration,
    ) -> Result<Option<Claimed>, StoreError> {
        self.claim_at(reviewer, version, lease, SystemTime::now())
            .await
    }

    /// [`Store::claim`] at an explicit time (tests, benchmarks).
    pub async fn claim_at(
        &self,
        reviewer: &str,
        version: Option<&str>,
        lease: Duration,
        now: SystemTime,
    ) -> Result<Option<Claimed>, StoreError> {
        if reviewer.is_empty() {
            return Err(StoreError::Invalid(
                "a reviewer name is required".to_owned(),
            ));
        }
        let now = unix_millis(now);
        let expires = now.saturating_add(millis_of(lease));
        // PostgreSQL: the lease and the read of the review and its definition are ONE
        // statement (a round trip and a pool checkout fewer per claim); SQLite cannot put an
        // UPDATE in a WITH, and its statements are calls within the process.
        let sql = match self.kind {
            StoreKind::Postgres => claim_with_review_sql(version.is_some()),
            StoreKind::Sqlite => claim_sql(self.kind, version.is_some()),
        };
        let mut attempt = 0;
        let row = loop {
            let mut query = sqlx::query(&sql).bind(reviewer).bind(expires).bind(now);
            if let Some(version) = version {
                query = query.bind(version);
            }
            match query.fetch_optional(&self.pool).await {
                Ok(row) => break row,
                // The same reviewer's other claim took the review's other slot meanwhile.
                Err(error) if is_unique_violation(&error) && attempt < CLAIM_RETRIES => {
                    attempt += 1;
                }
                Err(error) => return Err(error.into()),
            }
        };
        let Some(row) = row else {
            return Ok(None);
        };
        let item: String = row.try_get("item_id")?;
        let item: QueueItemId = item.parse().map_err(|_| corrupt("queue_items.id"))?;
        let reason: String = row.try_get("item_reason")?;
        let slot: i64 = row.try_get("item_slot")?;
        let (review, state, questions, expected) = match self.kind {
            StoreKind::Postgres => {
                // A LEFT JOIN: an item whose review is missing is an error, not "nothing
                // pending".
                if row.try_get::<Option<String>, _>("id")?.is_none() {
                    return Err(corrupt("a queued review is missing"));
                }
                review_parts(&row)?
            }
            StoreKind::Sqlite => {
                let review_id: String = row.try_get("item_review")?;
                self.review_with_definition(&review_id).await?
            }
        };
        Ok(Some(Claimed {
            item,
            review,
            state,
            questions,
            expected,
            reason,
            slot: u8::try_from(slot).map_err(|_| corrupt("queue_items.slot"))?,
            lease_expires: time_of(expires),
        }))
    }

    /// A review with its kept state, its definition's questions and expected flags.
    async fn review_with_definition(&self, review_id: &str) -> Result<ReviewParts, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {} FROM reviews WHERE id = $1",
            review_with_definition_columns()
        ))
        .bind(review_id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| corrupt("a queued review is missing"))?;
        review_parts(&row)
    }

    /// Saves `reviewer`'s decision on `item`, which they must hold under a live lease; the
    /// findings must answer exactly the definition's criteria.
    pub async fn decide(
        &self,
        item: QueueItemId,
        reviewer: &str,
        decision: &Decision,
    ) -> Result<Decided, QueueError> {
        self.decide_at(item, reviewer, decision, SystemTime::now())
            .await
    }

    /// [`Store::decide`] at an explicit time (tests, benchmarks).
    pub async fn decide_at(
        &self,
        item: QueueItemId,
        reviewer: &str,
        decision: &Decision,
        now: SystemTime,
    ) -> Result<Decided, QueueError> {
        let now = unix_millis(now);
        // One pool checkout for the check and the transaction (each checkout costs the pool's
        // liveness round trip).
        let mut connection = self.pool.acquire().await?;
        let facts = item_facts(&mut *connection, item).await?;
        facts.check_lease(reviewer, now)?;
        let criteria = criterion_ids(&facts.questions).ok_or_else(|| {
            QueueError::Invalid("the review's definition is not in the store".to_owned())
        })?;
        check_decision(decision, &criteria)?;
        let findings = serde_json::to_string(&decision.findings)
            .map_err(|e| QueueError::Invalid(e.to_string()))?;

        let mut transaction = match self.kind {
            StoreKind::Sqlite => connection.begin_with("BEGIN IMMEDIATE").await?,
            StoreKind::Postgres => connection.begin().await?,
        };
        let done = sqlx::query(
            "UPDATE queue_items SET decided_at = $1, lease_expires = NULL WHERE id = $2 \
             AND claimed_by = $3 AND decided_at IS NULL AND lease_expires > $1",
        )
        .bind(now)
        .bind(item.to_string())
        .bind(reviewer)
        .execute(&mut *transaction)
        .await?;
        if done.rows_affected() == 0 {
            transaction.rollback().await?;
            // Lost a race since the check above: say what happened.
            let facts = item_facts(&mut *connection, item).await?;
            facts.check_lease(reviewer, now)?;
            return Err(QueueError::LeaseNotHeld);
        }
        sqlx::query(
            "INSERT INTO queue_decisions (item_id, review_id, slot, reviewer, findings, note, \
             decided_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(item.to_string())
        .bind(facts.review.review_id.to_string())
        .bind(facts.slot)
        .bind(reviewer)
        .bind(findings)
        .bind(&decision.note)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        transaction.commit().await?;
        Ok(Decided {
            item,
            findings_by_jev: facts.review.findings.clone(),
            review: facts.review,
        })
    }

    /// Gives a leased item back to the queue (only its holder, while the lease is live).
    pub async fn release(&self, item: QueueItemId, reviewer: &str) -> Result<(), QueueError> {
        self.release_at(item, reviewer, SystemTime::now()).await
    }

    /// [`Store::release`] at an explicit time (tests, benchmarks).
    pub async fn release_at(
        &self,
        item: QueueItemId,
        reviewer: &str,
        now: SystemTime,
    ) -> Result<(), QueueError> {
        let now = unix_millis(now);
        let done = sqlx::query(
            "UPDATE queue_items SET claimed_by = NULL, lease_expires = NULL WHERE id = $1 \
             AND claimed_by = $2 AND decided_at IS NULL AND lease_expires > $3",
        )
        .bind(item.to_string())
        .bind(reviewer)
        .bind(now)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 1 {
            return Ok(());
        }
        let facts = item_facts(&self.pool, item).await?;
        facts.check_lease(reviewer, now)?;
        Err(QueueError::LeaseNotHeld)
    }

    /// Pending counts by version, live leases, decisions and agreement.
    pub async fn queue_stats(&self) -> Result<QueueStats, StoreError> {
        self.queue_stats_at(SystemTime::now()).await
    }

    /// [`Store::queue_stats`] at an explicit time (tests, benchmarks).
    pub async fn queue_stats_at(&self, now: SystemTime) -> Result<QueueStats, StoreError> {
        let mut stats = self.queue_counts_at(now).await?;
        stats.agreement = self.agreement().await?;
        Ok(stats)
    }

    /// The counts of [`Store::queue_stats`] without the agreement (`agreement` is empty):
    /// what the queue page shows, without reading every pair of decisions.
    pub async fn queue_counts(&self) -> Result<QueueStats, StoreError> {
        self.queue_counts_at(SystemTime::now()).await
    }

    /// [`Store::queue_counts`] at an explicit time (tests, benchmarks).
    pub async fn queue_counts_at(&self, now: SystemTime) -> Result<QueueStats, StoreError> {
        let now = unix_millis(now);
        let mut stats = QueueStats::default();
        let rows = sqlx::query(PENDING_COUNTS_SQL)
            .bind(now)
            .fetch_all(&self.pool)
            .await?;
        for row in rows {
            let n: i64 = row.try_get("n")?;
            stats.pending_by_version.insert(
                row.try_get("definition_version")?,
                u64::try_from(n).unwrap_or(0),
            );
        }
        stats.claimed = self.live_leases(now).await?;
        let decided: i64 = sqlx::query("SELECT COUNT(*) AS n FROM queue_decisions")
            .fetch_one(&self.pool)
            .await?
            .try_get("n")?;
        stats.decided = u64::try_from(decided).unwrap_or(0);
        Ok(stats)
    }

    /// The counts of [`Store::queue_counts`] for a page shown often, each reading at most
    /// `cap` rows of an index, so the page costs the same at 100,000 pending items as at
    /// 10,000 (an exact count reads every open item):
    /// - pending by version counts the oldest `cap` pending items: exact while fewer than `cap`
    ///   are pending; when the figures add up to `cap`, each is a lower bound ("or more");
    /// - claimed is exact (live leases: as many as people reviewing, through their index);
    /// - decided stops at `cap` (a figure equal to `cap` means "`cap` or more").
    pub async fn queue_counts_capped(&self, cap: u64) -> Result<QueueStats, StoreError> {
        let now = unix_millis(SystemTime::now());
        let cap = i64::try_from(cap).unwrap_or(i64::MAX);
        let mut stats = QueueStats::default();
        let rows = sqlx::query(
            "SELECT definition_version, COUNT(*) AS n FROM (SELECT definition_version \
             FROM queue_items WHERE decided_at IS NULL \
             AND (lease_expires IS NULL OR lease_expires <= $1) \
             ORDER BY queued_at, id LIMIT $2) oldest GROUP BY definition_version",
        )
        .bind(now)
        .bind(cap)
        .fetch_all(&self.pool)
        .await?;
        for row in rows {
            let n: i64 = row.try_get("n")?;
            stats.pending_by_version.insert(
                row.try_get("definition_version")?,
                u64::try_from(n).unwrap_or(0),
            );
        }
        stats.claimed = self.live_leases(now).await?;
        let decided: i64 = sqlx::query(
            "SELECT COUNT(*) AS n FROM (SELECT 1 FROM queue_decisions LIMIT $1) capped",
        )
        .bind(cap)
        .fetch_one(&self.pool)
        .await?
        .try_get("n")?;
        stats.decided = u64::try_from(decided).unwrap_or(0);
        Ok(stats)
    }

    /// Items under a live lease (through `queue_items_leased`).
    async fn live_leases(&self, now: i64) -> Result<u64, StoreError> {
        let claimed: i64 = sqlx::query(
            "SELECT COUNT(*) AS n FROM queue_items WHERE decided_at IS NULL AND lease_expires > $1",
        )
        .bind(now)
        .fetch_one(&self.pool)
        .await?
        .try_get("n")?;
        Ok(u64::try_from(claimed).unwrap_or(0))
    }

    /// Agreement per criterion over the reviews decided twice, in batches.
    async fn agreement(&self) -> Result<BTreeMap<String, Agreement>, StoreError> {
        let mut tables: BTreeMap<String, AgreementTable> = BTreeMap::new();
        let mut after = String::new();
        loop {
            let rows = sqlx::query(
                "SELECT b.review_id AS review_id, a.findings AS first, b.findings AS second \
                 FROM queue_decisions b JOIN queue_decisions a \
                 ON a.review_id = b.review_id AND a.slot = 1 \
                 WHERE b.slot = 2 AND b.review_id > $1 ORDER BY b.review_id LIMIT $2",
            )
            .bind(&after)
            .bind(BATCH)
            .fetch_all(&self.pool)
            .await?;
            let Some(last) = rows.last() else { break };
            after = last.try_get("review_id")?;
            for row in &rows {
                let first = findings_of(&row.try_get::<String, _>("first")?)?;
                let second = findings_of(&row.try_get::<String, _>("second")?)?;
                for (id, answer) in &first {
                    let table = tables.entry(id.clone()).or_default();
                    if let (Some(a), Some(Some(b))) = (answer, second.get(id)) {
                        table.add(*a, *b);
                    }
                }
            }
        }
        Ok(tables
            .into_iter()
            .map(|(id, table)| {
                (
                    id,
                    Agreement {
                        items: table.total(),
                        observed: table.observed(),
                        kappa: table.kappa(),
                    },
                )
            })
            .collect())
    }

    /// Open (pending and leased) items, oldest first, keyset-paged (`limit` 1 to
    /// [`MAX_PAGE`]), optionally of one definition version.
    pub async fn queue_page(
        &self,
        version: Option<&str>,
        limit: u32,
        cursor: Option<&QueueCursor>,
    ) -> Result<QueuePage, StoreError> {
        self.queue_page_at(version, limit, cursor, SystemTime::now())
            .await
    }

    /// [`Store::queue_page`] at an explicit time (which leases count as live).
    pub async fn queue_page_at(
        &self,
        version: Option<&str>,
        limit: u32,
        cursor: Option<&QueueCursor>,
        now: SystemTime,
    ) -> Result<QueuePage, StoreError> {
        let limit = limit.clamp(1, MAX_PAGE);
        let mut conditions = vec!["q.decided_at IS NULL".to_owned()];
        let mut binds: Vec<Bind> = Vec::new();
        if let Some(version) = version {
            binds.push(Bind::Text(version.to_owned()));
            conditions.push(format!("q.definition_version = ${}", binds.len()));
        }
        if let Some(cursor) = cursor {
            binds.push(Bind::Int(cursor.queued_at));
            binds.push(Bind::Text(cursor.item.to_string()));
            conditions.push(format!(
                "(q.queued_at, q.id) > (${}, ${})",
                binds.len() - 1,
                binds.len()
            ));
        }
        let sql = page_sql(&conditions.join(" AND "), binds.len() + 1);
        let mut query = sqlx::query(&sql);
        for bind in binds {
            query = match bind {
                Bind::Text(text) => query.bind(text),
                Bind::Int(int) => query.bind(int),
            };
        }
        let rows = query
            .bind(i64::from(limit) + 1)
            .fetch_all(&self.pool)
            .await?;
        let now = unix_millis(now);
        let mut items = rows
            .iter()
            .map(|row| entry_of(row, now))
            .collect::<Result<Vec<_>, _>>()?;
        let next_cursor = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items
                .last()
                .map(|entry| QueueCursor::after(entry).to_string())
        } else {
            None
        };
        Ok(QueuePage { items, next_cursor })
    }

    /// One item with its review, the definition's questions, and its decision if decided.
    pub async fn queue_item(&self, item: QueueItemId) -> Result<Option<QueueItemView>, StoreError> {
        let Some(row) = sqlx::query(&format!(
            "SELECT {ENTRY_COLUMNS}, q.decided_at AS item_decided_at, d.reviewer AS reviewer, \
             d.findings AS decided_findings, d.note AS note, d.decided_at AS decided_at \
             FROM queue_items q JOIN reviews r ON r.id = q.review_id \
             LEFT JOIN queue_decisions d ON d.item_id = q.id WHERE q.id = $1"
        ))
        .bind(item.to_string())
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let entry = entry_of(&row, unix_millis(SystemTime::now()))?;
        let decision = match row.try_get::<Option<String>, _>("decided_findings")? {
            Some(findings) => Some(DecisionView {
                reviewer: row.try_get("reviewer")?,
                findings: findings_of(&findings)?,
                note: row.try_get("note")?,
                decided_at: rfc3339_millis(row.try_get("decided_at")?),
            }),
            None => None,
        };
        let (review, state, questions, expected) = self
            .review_with_definition(&entry.review_id.to_string())
            .await?;
        Ok(Some(QueueItemView {
            entry,
            review,
            state,
            questions,
            expected,
            decision,
        }))
    }

    /// Every queued review, in review id order, with its decisions, kept state, replayable
    /// record and definition facts, in batches: `each` gets one [`Labelled`] per review;
    /// returns how many there were. The caller applies the export rules.
    pub async fn export_labelled(
        &self,
        mut each: impl FnMut(Labelled) -> Result<(), StoreError>,
    ) -> Result<u64, StoreError> {
        let mut after = String::new();
        let mut count = 0;
        loop {
            let ids = sqlx::query(
                "SELECT DISTINCT review_id FROM queue_items WHERE review_id > $1 \
                 ORDER BY review_id LIMIT $2",
            )
            .bind(&after)
            .bind(BATCH)
            .fetch_all(&self.pool)
            .await?;
            let (Some(first), Some(last)) = (ids.first(), ids.last()) else {
                return Ok(count);
            };
            let first: String = first.try_get("review_id")?;
            let last: String = last.try_get("review_id")?;
            let copies = sqlx::query(
                "SELECT q.review_id AS review_id, q.slot AS slot, d.findings AS findings \
                 FROM queue_items q LEFT JOIN queue_decisions d ON d.item_id = q.id \
                 WHERE q.review_id >= $1 AND q.review_id <= $2 ORDER BY q.review_id, q.slot",
            )
            .bind(&first)
            .bind(&last)
            .fetch_all(&self.pool)
            .await?;
            let reviews = sqlx::query(
                "SELECT r.id AS id, r.received_at AS received_at, r.model AS model, \
                 r.requested_model AS requested_model, r.state AS state, r.answers AS answers, \
                 r.input_tokens AS input_tokens, r.output_tokens AS output_tokens, \
                 r.backend AS backend, r.definition_version AS definition_version, \
                 d.questions AS questions, d.expected AS expected FROM reviews r \
                 LEFT JOIN definitions d ON d.digest = r.definition_digest \
                 WHERE r.id >= $1 AND r.id <= $2 AND r.id IN \
                 (SELECT review_id FROM queue_items WHERE review_id >= $1 AND review_id <= $2) \
                 ORDER BY r.id",
            )
            .bind(&first)
            .bind(&last)
            .fetch_all(&self.pool)
            .await?;
            let mut decisions: BTreeMap<String, Vec<Option<Findings>>> = BTreeMap::new();
            for row in &copies {
                let findings: Option<String> = row.try_get("findings")?;
                decisions
                    .entry(row.try_get("review_id")?)
                    .or_default()
                    .push(findings.as_deref().map(findings_of).transpose()?);
            }
            for row in &reviews {
                let id: String = row.try_get("id")?;
                let questions = json_of(row.try_get("questions")?, "questions")?;
                let state = json_of(row.try_get("state")?, "state")?;
                let answers: Option<String> = row.try_get("answers")?;
                let model: Option<String> = row.try_get("model")?;
                let record = if state.is_some()
                    && answers.is_some()
                    && model.is_some()
                    && questions.is_some()
                {
                    Some(record_of(row)?)
                } else {
                    None
                };
                each(Labelled {
                    review_id: id.parse().map_err(|_| corrupt("id"))?,
                    definition_version: row.try_get("definition_version")?,
                    expected: expected_of(row.try_get("expected")?)?,
                    criteria: questions.as_ref().and_then(criterion_ids),
                    state,
                    record,
                    decisions: decisions.remove(&id).unwrap_or_default(),
                })?;
                count += 1;
            }
            after = last;
        }
    }
}

/// The item's lease facts, its review and the definition's questions: one statement.
async fn item_facts<'c>(
    executor: impl sqlx::Executor<'c, Database = sqlx::Any>,
    item: QueueItemId,
) -> Result<ItemFacts, QueueError> {
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS}, q.q_slot AS q_slot, q.q_claimed_by AS q_claimed_by, \
         q.q_lease_expires AS q_lease_expires, q.q_decided_at AS q_decided_at, \
         (SELECT d.questions FROM definitions d WHERE d.digest = reviews.definition_digest) \
         AS questions FROM reviews JOIN (SELECT review_id AS q_review_id, slot AS q_slot, \
         claimed_by AS q_claimed_by, lease_expires AS q_lease_expires, \
         decided_at AS q_decided_at FROM queue_items WHERE id = $1) q \
         ON reviews.id = q.q_review_id"
    ))
    .bind(item.to_string())
    .fetch_optional(executor)
    .await?
    .ok_or(QueueError::NotFound)?;
    Ok(ItemFacts {
        review: review_of(&row)?,
        slot: row.try_get("q_slot")?,
        claimed_by: row.try_get("q_claimed_by")?,
        lease_expires: row.try_get("q_lease_expires")?,
        decided: row.try_get::<Option<i64>, _>("q_decided_at")?.is_some(),
        questions: json_of(row.try_get("questions")?, "questions")?.unwrap_or(Value::Null),
    })
}

/// The claim: one statement that picks and leases the oldest pending item this reviewer may
/// take. `$1` reviewer, `$2` lease end, `$3` now, `$4` version (when filtered).
fn claim_sql(kind: StoreKind, by_version: bool) -> String {
    let version = if by_version {
        " AND q.definition_version = $4"
    } else {
        ""
    };
    let lock = match kind {
        StoreKind::Postgres => " FOR UPDATE SKIP LOCKED",
        StoreKind::Sqlite => "",
    };
    format!(
        "UPDATE queue_items SET claimed_by = $1, lease_expires = $2 WHERE id = (\
         SELECT q.id FROM queue_items q WHERE q.decided_at IS NULL \
         AND (q.lease_expires IS NULL OR q.lease_expires <= $3){version} \
         AND (q.copies = 1 OR NOT EXISTS (SELECT 1 FROM queue_items o \
         WHERE o.claimed_by = $1 AND o.review_id = q.review_id AND o.id <> q.id)) \
         ORDER BY q.queued_at, q.id LIMIT 1{lock}) \
         RETURNING id AS item_id, review_id AS item_review, reason AS item_reason, \
         slot AS item_slot"
    )
}

/// The columns of a review with its kept state, its definition's questions and expected
/// flags, selected from `reviews` ([`review_parts`] reads them).
fn review_with_definition_columns() -> String {
    format!(
        "{COLUMNS}, state AS state_text, \
         (SELECT d.questions FROM definitions d WHERE d.digest = reviews.definition_digest) \
         AS questions, \
         (SELECT d.expected FROM definitions d WHERE d.digest = reviews.definition_digest) \
         AS expected"
    )
}

/// A review, its kept state, its definition's questions (`null` when not stored) and
/// expected flags.
type ReviewParts = (Review, Option<Value>, Value, Option<BTreeMap<String, bool>>);

fn review_parts(row: &AnyRow) -> Result<ReviewParts, StoreError> {
    let review = review_of(row)?;
    let state = json_of(row.try_get("state_text")?, "state")?;
    let questions = json_of(row.try_get("questions")?, "questions")?.unwrap_or(Value::Null);
    let expected = expected_of(row.try_get("expected")?)?;
    Ok((review, state, questions, expected))
}

/// PostgreSQL's claim: [`claim_sql`] in a `WITH`, joined to its review and definition, so
/// one statement leases the item and reads what the reviewer needs.
fn claim_with_review_sql(by_version: bool) -> String {
    format!(
        "WITH claimed AS ({}) SELECT claimed.item_id AS item_id, \
         claimed.item_review AS item_review, claimed.item_reason AS item_reason, \
         claimed.item_slot AS item_slot, {} \
         FROM claimed LEFT JOIN reviews ON reviews.id = claimed.item_review",
        claim_sql(StoreKind::Postgres, by_version),
        review_with_definition_columns()
    )
}

/// Pending items by version; `$1` now.
const PENDING_COUNTS_SQL: &str = "SELECT definition_version, COUNT(*) AS n FROM queue_items \
    WHERE decided_at IS NULL AND (lease_expires IS NULL OR lease_expires <= $1) \
    GROUP BY definition_version";

/// A queue page: `conditions` over `q`, the limit in `$limit`.
fn page_sql(conditions: &str, limit: usize) -> String {
    format!(
        "SELECT {ENTRY_COLUMNS} FROM queue_items q JOIN reviews r ON r.id = q.review_id \
         WHERE {conditions} ORDER BY q.queued_at, q.id LIMIT ${limit}"
    )
}

/// The queue's hot statements exactly as run, for `EXPLAIN` in benchmarks and docs.
pub mod statements {
    use crate::StoreKind;

    /// The claim: `$1` reviewer, `$2` lease end, `$3` now, `$4` version (when `by_version`).
    pub fn claim(kind: StoreKind, by_version: bool) -> String {
        match kind {
            StoreKind::Postgres => super::claim_with_review_sql(by_version),
            StoreKind::Sqlite => super::claim_sql(kind, by_version),
        }
    }

    /// Pending counts by version: `$1` now.
    pub fn pending_counts() -> &'static str {
        super::PENDING_COUNTS_SQL
    }

    /// The first page of one version: `$1` version, `$2` limit.
    pub fn first_page_of_version() -> String {
        super::page_sql("q.decided_at IS NULL AND q.definition_version = $1", 2)
    }

    /// A later page of all versions: `$1` cursor's queued time, `$2` its item id, `$3` limit.
    pub fn next_page() -> String {
        super::page_sql("q.decided_at IS NULL AND (q.queued_at, q.id) > ($1, $2)", 3)
    }
}

const ENTRY_COLUMNS: &str = "q.id AS id, q.review_id AS review_id, \
    q.definition_version AS definition_version, r.status AS status, q.reason AS reason, \
    q.slot AS slot, q.queued_at AS queued_at, q.claimed_by AS claimed_by, \
    q.lease_expires AS lease_expires";

fn entry_of(row: &AnyRow, now: i64) -> Result<QueueEntry, StoreError> {
    let id: String = row.try_get("id")?;
    let review_id: String = row.try_get("review_id")?;
    let slot: i64 = row.try_get("slot")?;
    let queued_at: i64 = row.try_get("queued_at")?;
    let lease: Option<i64> = row.try_get("lease_expires")?;
    let live = lease.filter(|expires| *expires > now);
    Ok(QueueEntry {
        item: id.parse().map_err(|_| corrupt("queue_items.id"))?,
        review_id: review_id
            .parse()
            .map_err(|_| corrupt("queue_items.review_id"))?,
        definition_version: row.try_get("definition_version")?,
        status: row.try_get("status")?,
        reason: row.try_get("reason")?,
        slot: u8::try_from(slot).map_err(|_| corrupt("queue_items.slot"))?,
        queued_at: rfc3339_millis(queued_at),
        queued_at_millis: queued_at,
        claimed_by: if live.is_some() {
            row.try_get("claimed_by")?
        } else {
            None
        },
        lease_expires: live.map(rfc3339_millis),
    })
}

enum Bind {
    Text(String),
    Int(i64),
}

/// What decide and release check before writing.
struct ItemFacts {
    review: Review,
    slot: i64,
    claimed_by: Option<String>,
    lease_expires: Option<i64>,
    decided: bool,
    questions: Value,
}

impl ItemFacts {
    fn check_lease(&self, reviewer: &str, now: i64) -> Result<(), QueueError> {
        if self.decided {
            return Err(QueueError::AlreadyDecided);
        }
        let live = self.lease_expires.is_some_and(|expires| expires > now);
        if !live || self.claimed_by.as_deref() != Some(reviewer) {
            return Err(QueueError::LeaseNotHeld);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_ids_and_cursors_round_trip() {
        let id = QueueItemId::new();
        assert_eq!(id.to_string().parse::<QueueItemId>(), Ok(id));
        assert!("nope".parse::<QueueItemId>().is_err());
        let cursor = QueueCursor {
            queued_at: 1_795_996_800_000,
            item: id,
        };
        assert_eq!(cursor.to_string(), format!("q1.1795996800000.{id}"));
        assert_eq!(cursor.to_string().parse::<QueueCursor>(), Ok(cursor));
        assert!(format!("r1.{id}").parse::<QueueCursor>().is_err());
        assert!(format!("q1.{id}").parse::<QueueCursor>().is_err());
        assert!(format!("q1.-5.{id}").parse::<QueueCursor>().is_err());
    }

    #[test]
    fn a_decision_answers_exactly_the_criteria() {
        let criteria = vec!["a".to_owned(), "b".to_owned()];
        let decision = |pairs: &[(&str, Option<bool>)]| Decision {
            findings: pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect(),
            note: None,
        };
        assert!(check_decision(&decision(&[("a", Some(true)), ("b", None)]), &criteria).is_ok());
        let unknown = check_decision(
            &decision(&[("a", Some(true)), ("b", None), ("c", Some(false))]),
            &criteria,
        )
        .unwrap_err();
        assert!(
            unknown
                .to_string()
                .contains("`findings.c` is not a criterion")
        );
        let missing = check_decision(&decision(&[("a", Some(true))]), &criteria).unwrap_err();
        assert!(missing.to_string().contains("`findings.b` is missing"));
        let long = Decision {
            note: Some("x".repeat(MAX_NOTE_CHARS + 1)),
            ..decision(&[("a", None), ("b", None)])
        };
        assert!(matches!(
            check_decision(&long, &criteria),
            Err(QueueError::Invalid(_))
        ));
    }

    #[test]
    fn decisions_refuse_unknown_fields() {
        let ok: Decision =
            serde_json::from_str(r#"{"findings": {"a": true, "b": null}, "note": "n"}"#).unwrap();
        assert_eq!(ok.findings["b"], None);
        assert!(serde_json::from_str::<Decision>(r#"{"findings": {}, "extra": 1}"#).is_err());
        assert!(serde_json::from_str::<Decision>(r#"{"findings": {"a": "yes"}}"#).is_err());
    }

    #[tokio::test]
    async fn a_version_1_store_upgrades_to_the_queue_and_keeps_its_reviews() {
        use sqlx::Executor as _;
        let path = std::env::temp_dir().join(format!(
            "jevjudge_queue_upgrade_{}_{}.db",
            std::process::id(),
            QueueItemId::new()
        ));
        let url = crate::StoreUrl::Sqlite(path.clone());
        let store = Store::connect(&url).await.unwrap();
        // Version 1 exactly as a jevjudge before the queue left it, with a review in it.
        let mut transaction = store.locked_for_tests().await.unwrap();
        for statement in crate::schema::MIGRATIONS[0].1 {
            transaction.execute(*statement).await.unwrap();
        }
        transaction
            .execute(
                "INSERT INTO jevjudge_schema (version, name, applied_at) VALUES (1, 'reviews', 0)",
            )
            .await
            .unwrap();
        transaction.commit().await.unwrap();
        assert_eq!(store.schema_version().await.unwrap(), 1);
        let questions = serde_json::json!({"ok": {"type": "noul", "instructions": "OK?"}});
        store
            .put_definition("sha256:old", "old", &questions)
            .await
            .unwrap();

        let migrated = store.migrate().await.unwrap();
        assert_eq!((migrated.from, migrated.to), (1, 2));
        store
            .put_definition_expected("sha256:old", &BTreeMap::from([("ok".to_owned(), true)]))
            .await
            .expect("a definition kept by version 1 takes its expected flags");
        assert!(matches!(
            store
                .put_definition_expected("sha256:none", &BTreeMap::new())
                .await,
            Err(StoreError::Invalid(_))
        ));
        store.close().await;
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn claims_lock_on_postgres_only() {
        assert!(claim_sql(StoreKind::Postgres, false).contains("FOR UPDATE SKIP LOCKED"));
        assert!(!claim_sql(StoreKind::Sqlite, true).contains("FOR UPDATE"));
        assert!(claim_sql(StoreKind::Sqlite, true).contains("$4"));
    }
}
