//! The jevjudge decision log: every review the service answers, kept on SQLite or
//! PostgreSQL and read back by id or by filters.
//!
//! - [`StoreUrl`]: `sqlite:PATH` (one process; the file is created with mode 0600) or
//!   `postgresql://…` (replicas share one database).
//! - [`Store::open`] connects and applies the versioned migrations (`migrations/*.sql`,
//!   embedded, applied by sqlx's migrator; [`SCHEMA_VERSION`]); a database of the
//!   hand-written migrator before it upgrades in place; a database migrated by a newer
//!   jevjudge is refused with [`StoreError::SchemaTooNew`].
//! - [`Store::insert`] writes a [`NewReview`] (committed when it returns); [`Store::get`] and
//!   [`Store::list`] read [`Review`]s back, newest first, with an opaque [`Cursor`];
//!   [`Store::erase_state_before`] applies a retention to kept state text (closing the open
//!   queue items of erased reviews as expired; on SQLite with `secure_delete` on and the
//!   write-ahead log truncated after it);
//!   [`Store::export_records`] rebuilds replayable `.jevl` records; [`Store::ping`] is the
//!   health check.
//! - [`Store::group_commit`] starts committers that write the rows of concurrent reviews
//!   together: an idle committer commits the rows waiting at once, the rows that arrive
//!   meanwhile form the next batch ([`GroupCommit`], [`GroupCommitConfig`]); each write
//!   returns once its own row is committed.
//!
//! - The review queue: [`Store::insert_queued`] logs a review and queues it in one
//!   transaction; [`Store::claim`] leases the oldest pending item (atomic across replicas),
//!   [`Store::claim_capped`] only while the reviewer holds fewer than a cap of live leases;
//!   [`Store::decide`] and [`Store::release`] check the lease; [`Store::queue_stats`] (with
//!   Cohen's kappa), [`Store::queue_page`], [`Store::queue_item`] and
//!   [`Store::export_labelled`] read it back.
//!
//! - Routes: [`Store::create_route_if_absent`], [`Store::route`], [`Store::routes`] and
//!   [`Store::set_route_live`] ([`Route`]); audited changes [`Store::put_route`],
//!   [`Store::promote_route`] (behind the [`PromoteGate`] on [`Store::promote_figures`]),
//!   [`Store::rollback_route`] and [`Store::route_history`] ([`RouteChange`]);
//!   [`Store::shadow_pairs`] reads a route's live reviews beside one shadow version's reviews
//!   of them ([`ShadowPair`]).
//!
//! One code path serves both databases: sqlx's `Any` driver with runtime queries, `$N`
//! placeholders, and only `TEXT` and `BIGINT` columns. No secret is ever stored; state text
//! only in [`NewReview::kept`], which the caller fills only when asked to.

mod error;
pub mod export;
mod group_commit;
mod promote_figures;
mod queue;
mod review;
mod route_changes;
mod route_labels;
mod routes;
mod schema;
mod shadow;
mod store;
mod url;

pub use error::{StoreError, StoreKind};
pub use group_commit::{
    DEFAULT_PG_COMMITTERS, GroupCommit, GroupCommitConfig, GroupCommitStats, MAX_BATCH_ROWS,
    MAX_COMMITTERS,
};
pub use promote_figures::{
    DEFAULT_MIN_SHADOW_REVIEWS, PromoteFigures, PromoteGate, PromoteRefusal,
};
pub use queue::{
    Adjudication, AdjudicationClaim, AdjudicationStats, AdjudicationSummary, DecisionCursor,
    DecisionFilter, DecisionPage, DecisionRecord, HeldItem, HistoryEntry, ItemKind, ReviewerAnswer,
    ReviewerUpheld, Upheld, needs_adjudication, upheld_side,
};
pub use queue::{
    Agreement, Claim, Claimed, Decided, Decision, DecisionView, Enqueue, Findings, Inclusion,
    InclusionError, Labelled, MAX_NOTE_CHARS, PendingVersion, QueueCursor, QueueEntry, QueueError,
    QueueGauges, QueueItemId, QueueItemIdError, QueueItemView, QueuePage, QueueReason, QueueStats,
    SECOND_REVIEW, Subject, check_note, statements,
};
pub use review::{
    Cursor, CursorError, Filter, KeptState, MAX_REFERENCE_CHARS, NewReview, Page, Review, ReviewId,
    ReviewIdError, STATUSES, check_no_controls, check_reference, parse_time,
};
pub use route_changes::{
    Actor, MAX_REASON_CHARS, PromoteRequest, Promoted, PutOutcome, PutRoute, RouteChange,
    RouteError, check_name as check_route_name,
};
pub use routes::{NewRoute, Route};
pub use schema::SCHEMA_VERSION;
pub use shadow::ShadowPair;
pub use store::{Erased, MAX_PAGE, Migrated, Store};
pub use url::{StoreUrl, StoreUrlError};
