//! The review queue: reviews whose verdicts people should settle, leased to one
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

use crate::{
    MAX_PAGE, NewReview, Review, ReviewId, Store, StoreError, StoreKind,
    review::{rfc3339_millis, unix_millis},
    store::{
        Batches, Bind, COLUMNS, RECORD_COLUMNS, corrupt, count_rows, query_with, record_of,
        review_of, write_review,
    },
};

mod decisions;
mod gauges;
mod held;
mod inclusion;
mod labelled;
mod ops;
mod sql;
mod team;
#[cfg(test)]
mod tests;

pub use decisions::{
    AdjudicationSummary, DecisionCursor, DecisionFilter, DecisionPage, DecisionRecord, HistoryEntry,
};
pub use gauges::{PendingVersion, QueueGauges};
pub use held::HeldItem;
pub use inclusion::{Inclusion, InclusionError};
pub(crate) use ops::{item_ids, write_items};
pub use sql::statements;
pub use team::{
    Adjudication, AdjudicationClaim, AdjudicationStats, ItemKind, ReviewerAnswer, ReviewerUpheld,
    Upheld, needs_adjudication, upheld_side,
};

/// The longest note a decision may carry, in characters.
pub const MAX_NOTE_CHARS: usize = 4000;

/// Checks a decision's note: at most [`MAX_NOTE_CHARS`] characters, and no control character
/// but line breaks (`\n`, `\r`) and tabs (PostgreSQL refuses a NUL in text). The message names
/// the field `note`; every way in (the API, the reviewer pages, the store) checks with this.
pub fn check_note(note: &str) -> Result<(), String> {
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(format!(
            "`note` must be at most {MAX_NOTE_CHARS} characters"
        ));
    }
    if note
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
    {
        return Err(
            "`note` must not contain control characters other than line breaks and tabs".to_owned(),
        );
    }
    Ok(())
}
/// How often a claim that lost a race on one review's two slots (same reviewer, two claims at
/// once) is retried.
const CLAIM_RETRIES: usize = 8;
/// Reviews per batch of a labelled export, and decision pairs per batch of agreement.
const BATCH: i64 = 500;
/// The stored reason of a second review's item (slot 2).
pub const SECOND_REVIEW: &str = "second_review";

/// A reviewer's findings: criterion id → whether its condition holds (`None`: can't tell).
pub type Findings = BTreeMap<String, Option<bool>>;

/// A queue item's id: a UUIDv7 (hyphenated), so ids sort by the time the item was queued. It
/// has a [`ReviewId`]'s form, and wraps one for making, parsing and printing it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueItemId(ReviewId);

impl QueueItemId {
    /// A fresh id.
    #[allow(clippy::new_without_default)]
    pub fn new() -> QueueItemId {
        QueueItemId(ReviewId::new())
    }
}

impl fmt::Display for QueueItemId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// A string that is not a queue item id (a UUIDv7 in its hyphenated form).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a queue item id (a UUIDv7 like 019abc12-3456-7def-8123-456789abcdef)")]
pub struct QueueItemIdError;

impl FromStr for QueueItemId {
    type Err = QueueItemIdError;

    fn from_str(text: &str) -> Result<QueueItemId, QueueItemIdError> {
        text.parse().map(QueueItemId).map_err(|_| QueueItemIdError)
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

/// What a reviewer sees of a queued item: its review, the kept state text and the
/// definition's questions and expected flags. Serialised in place, as the fields of the
/// struct that holds it. `Debug` never shows the state text.
#[derive(Clone, PartialEq, Serialize)]
pub struct Subject {
    /// The review (its findings are Jev's: keep them from the reviewer until the decision).
    pub review: Review,
    /// The kept state text, if the service kept it.
    pub state: Option<Value>,
    /// The definition's questions JSON as stored by [`Store::put_definition`] (`null` if the
    /// definition was never stored).
    pub questions: Value,
    /// The definition's expected flags, when stored ([`Store::put_definition_expected`]).
    pub expected: Option<BTreeMap<String, bool>>,
}

/// A leased item, with what its reviewer needs to decide. `Debug` never shows the state text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Claimed {
    /// The item.
    pub item: QueueItemId,
    /// Its review, state text, questions and expected flags.
    #[serde(flatten)]
    pub subject: Subject,
    /// Why the review was queued: `status`, `sampled_pass` or `second_review`.
    pub reason: String,
    /// 1, or 2 for the second review's copy.
    pub slot: u8,
    /// When the lease ends (the item returns to the queue unless decided or renewed).
    #[serde(serialize_with = "serialize_time")]
    pub lease_expires: SystemTime,
}

/// What a claim under a per-reviewer lease cap ([`Store::claim_capped`]) gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// An item, now leased to the reviewer.
    Leased(Box<Claimed>),
    /// Nothing is pending (that this reviewer may take).
    Empty,
    /// The reviewer already holds as many live leases as the cap allows: no item was leased.
    AtCap {
        /// The items the reviewer holds, soonest lease end first.
        held: Vec<QueueItemId>,
    },
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
    /// The item was closed undecided: retention erased its review's state text (HTTP 409).
    #[error("the item has expired: its state text was erased by retention before a decision")]
    Expired,
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
    /// Cohen's kappa (first slot against second); `None` when undefined. Kept for readers of
    /// earlier versions: the slots are not fixed people, so read `scott_pi`.
    pub kappa: Option<f64>,
    /// Scott's π (Fleiss' κ for two ratings an item), which treats the two slots as
    /// exchangeable; `None` when undefined.
    pub scott_pi: Option<f64>,
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
    /// Items closed undecided because retention erased their review's state text.
    pub expired: u64,
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
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueItemView {
    /// The item's queue facts (its lease as of now).
    pub entry: QueueEntry,
    /// Its review, state text, questions and expected flags.
    #[serde(flatten)]
    pub subject: Subject,
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
    /// Whether a copy was closed undecided because retention erased the state text (such a
    /// review is left out of a labelled export and counted as expired).
    pub expired: bool,
    /// The review's inclusion probability π, as recorded when it was queued; `None` for a
    /// review queued before π was recorded (a sampled PASS of an older version).
    pub inclusion: Option<Inclusion>,
}

impl Claimed {
    /// When the lease ends, RFC 3339 UTC with milliseconds (as serialised).
    pub fn lease_expires_rfc3339(&self) -> String {
        humantime::format_rfc3339_millis(self.lease_expires).to_string()
    }
}

impl fmt::Debug for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subject")
            .field("review", &self.review)
            .field("state", &self.state.as_ref().map(|_| "<private>"))
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
            .field("expired", &self.expired)
            .field("inclusion", &self.inclusion)
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

pub(crate) fn expected_of(
    text: Option<String>,
) -> Result<Option<BTreeMap<String, bool>>, StoreError> {
    text.map(|t| serde_json::from_str(&t).map_err(|_| corrupt("expected")))
        .transpose()
}

pub(crate) fn findings_of(text: &str) -> Result<BTreeMap<String, Option<bool>>, StoreError> {
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
        check_note(note).map_err(QueueError::Invalid)?;
    }
    Ok(())
}
