//! The queue's figures for monitoring, read at scrape time: pending items and the age of the
//! oldest by version, decisions by outcome, and leases that ran out. Each is one statement
//! over a partial index (pending: `queue_items_open_version`; expired leases:
//! `queue_items_leased` and `queue_items_expired_leases`) but the decisions' count, which
//! reads every decision once.

use super::*;

/// Pending items of one definition version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingVersion {
    /// Items not decided and not under a live lease.
    pub items: u64,
    /// When the oldest of them was queued, Unix milliseconds.
    pub oldest_queued_at_millis: i64,
}

/// The queue's monitoring figures at one moment ([`Store::queue_gauges_at`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QueueGauges {
    /// Pending items by definition version (versions without pending items are absent).
    pub pending: BTreeMap<String, PendingVersion>,
    /// Decisions that answered every criterion.
    pub decisions_answered: u64,
    /// Decisions with a can't-tell on at least one criterion.
    pub decisions_cant_tell: u64,
    /// Leases that ran out before their holder decided or released the item, ever.
    pub leases_expired: u64,
}

impl Store {
    /// The queue's monitoring figures now.
    pub async fn queue_gauges(&self) -> Result<QueueGauges, StoreError> {
        self.queue_gauges_at(SystemTime::now()).await
    }

    /// [`Store::queue_gauges`] at an explicit time (tests).
    pub async fn queue_gauges_at(&self, now: SystemTime) -> Result<QueueGauges, StoreError> {
        let now = unix_millis(now);
        let mut gauges = QueueGauges::default();
        let rows = sqlx::query(
            "SELECT definition_version, COUNT(*) AS n, MIN(queued_at) AS oldest \
             FROM queue_items WHERE decided_at IS NULL \
             AND (lease_expires IS NULL OR lease_expires <= $1) GROUP BY definition_version",
        )
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        for row in &rows {
            gauges.pending.insert(
                row.try_get("definition_version")?,
                PendingVersion {
                    items: count_of(row.try_get("n")?),
                    oldest_queued_at_millis: row.try_get("oldest")?,
                },
            );
        }
        // A can't-tell is a null answer: `"criterion":null` in the stored findings.
        let row = sqlx::query(
            "SELECT COUNT(*) AS n, \
             COUNT(CASE WHEN findings LIKE '%\":null%' THEN 1 END) AS cant_tell \
             FROM queue_decisions",
        )
        .fetch_one(&self.pool)
        .await?;
        let (decided, cant_tell) = (
            count_of(row.try_get("n")?),
            count_of(row.try_get("cant_tell")?),
        );
        gauges.decisions_cant_tell = cant_tell;
        gauges.decisions_answered = decided.saturating_sub(cant_tell);
        // Leases counted when their item was claimed again, and leases run out now.
        let row = sqlx::query(
            "SELECT CAST(COALESCE(SUM(expired_leases), 0) AS BIGINT) AS n FROM queue_items \
             WHERE expired_leases > 0",
        )
        .fetch_one(&self.pool)
        .await?;
        let counted = count_of(row.try_get("n")?);
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM queue_items WHERE decided_at IS NULL \
             AND lease_expires <= $1",
        )
        .bind(now)
        .fetch_one(&self.pool)
        .await?;
        gauges.leases_expired = counted + count_of(row.try_get("n")?);
        Ok(gauges)
    }
}

fn count_of(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}
