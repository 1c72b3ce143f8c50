//! The queue's SQL text and row readers, shared by its operations.

use super::*;

/// The item's lease facts, its review and the definition's questions: one statement.
pub(super) async fn item_facts<'c>(
    executor: impl sqlx::Executor<'c, Database = sqlx::Any>,
    item: QueueItemId,
) -> Result<ItemFacts, QueueError> {
    let row = sqlx::query(&format!(
        "SELECT {COLUMNS}, q.q_slot AS q_slot, q.q_claimed_by AS q_claimed_by, \
         q.q_lease_expires AS q_lease_expires, q.q_decided_at AS q_decided_at, \
         q.q_expired_at AS q_expired_at, \
         (SELECT d.questions FROM definitions d WHERE d.digest = reviews.definition_digest) \
         AS questions FROM reviews JOIN (SELECT review_id AS q_review_id, slot AS q_slot, \
         claimed_by AS q_claimed_by, lease_expires AS q_lease_expires, \
         decided_at AS q_decided_at, expired_at AS q_expired_at FROM queue_items \
         WHERE id = $1) q \
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
        expired: row.try_get::<Option<i64>, _>("q_expired_at")?.is_some(),
        questions: json_of(row.try_get("questions")?, "questions")?.unwrap_or(Value::Null),
    })
}

/// The claim: one statement that picks and leases the oldest pending item this reviewer may
/// take. `$1` reviewer, `$2` lease end, `$3` now, `$4` version (when filtered). A pending
/// item with a lease end had a lease that ran out (decisions and releases clear it): the
/// claim counts it in `expired_leases`.
pub(super) fn claim_sql(kind: StoreKind, by_version: bool) -> String {
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
        "UPDATE queue_items SET claimed_by = $1, lease_expires = $2, \
         expired_leases = expired_leases + CASE WHEN lease_expires IS NULL THEN 0 ELSE 1 END \
         WHERE id = (\
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
/// flags, selected from `reviews` ([`subject_of`] reads them).
pub(super) fn review_with_definition_columns() -> String {
    format!(
        "{COLUMNS}, state AS state_text, \
         (SELECT d.questions FROM definitions d WHERE d.digest = reviews.definition_digest) \
         AS questions, \
         (SELECT d.expected FROM definitions d WHERE d.digest = reviews.definition_digest) \
         AS expected"
    )
}

/// A review, its kept state, its definition's questions (`null` when not stored) and
/// expected flags, from the columns of [`review_with_definition_columns`].
pub(super) fn subject_of(row: &AnyRow) -> Result<Subject, StoreError> {
    Ok(Subject {
        review: review_of(row)?,
        state: json_of(row.try_get("state_text")?, "state")?,
        questions: json_of(row.try_get("questions")?, "questions")?.unwrap_or(Value::Null),
        expected: expected_of(row.try_get("expected")?)?,
    })
}

/// PostgreSQL's claim: [`claim_sql`] in a `WITH`, joined to its review and definition, so
/// one statement leases the item and reads what the reviewer needs.
pub(super) fn claim_with_review_sql(by_version: bool) -> String {
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
pub(super) const PENDING_COUNTS_SQL: &str = "SELECT definition_version, COUNT(*) AS n FROM queue_items \
    WHERE decided_at IS NULL AND (lease_expires IS NULL OR lease_expires <= $1) \
    GROUP BY definition_version";

/// A queue page: `conditions` over `q`, the limit in `$limit`.
pub(super) fn page_sql(conditions: &str, limit: usize) -> String {
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

pub(super) const ENTRY_COLUMNS: &str = "q.id AS id, q.review_id AS review_id, \
    q.definition_version AS definition_version, r.status AS status, q.reason AS reason, \
    q.slot AS slot, q.queued_at AS queued_at, q.claimed_by AS claimed_by, \
    q.lease_expires AS lease_expires";

pub(super) fn entry_of(row: &AnyRow, now: i64) -> Result<QueueEntry, StoreError> {
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

/// What decide and release check before writing.
pub(super) struct ItemFacts {
    pub(super) review: Review,
    pub(super) slot: i64,
    pub(super) claimed_by: Option<String>,
    pub(super) lease_expires: Option<i64>,
    pub(super) decided: bool,
    pub(super) expired: bool,
    pub(super) questions: Value,
}

impl ItemFacts {
    pub(super) fn check_lease(&self, reviewer: &str, now: i64) -> Result<(), QueueError> {
        if self.expired {
            return Err(QueueError::Expired);
        }
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

/// `(definition_version, n)` rows as a map of counts.
pub(super) fn counts_by_version(rows: &[AnyRow]) -> Result<BTreeMap<String, u64>, StoreError> {
    rows.iter()
        .map(|row| {
            let n: i64 = row.try_get("n")?;
            Ok((
                row.try_get("definition_version")?,
                u64::try_from(n).unwrap_or(0),
            ))
        })
        .collect()
}
