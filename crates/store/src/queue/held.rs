//! The items a reviewer holds: listed with their lease ends, and handed back by a claim before
//! a new one.

use super::team::{ItemKind, check_texts_team, id_of, kind_of};
use super::*;

/// An item a reviewer holds under a live lease.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldItem {
    /// The item (a queue item id, or an adjudication id).
    pub item: QueueItemId,
    /// Review or adjudication.
    pub kind: ItemKind,
    /// The definition version.
    pub definition_version: String,
    /// When the lease ends, RFC 3339 UTC with milliseconds.
    pub lease_expires: String,
}

impl Store {
    /// The items `reviewer` holds under a live lease at `now` (queue items, then
    /// adjudications), soonest lease end first.
    pub async fn held_at(
        &self,
        reviewer: &str,
        now: SystemTime,
    ) -> Result<Vec<HeldItem>, StoreError> {
        crate::check_no_controls("reviewer", reviewer).map_err(StoreError::Invalid)?;
        let now = unix_millis(now);
        let rows = sqlx::query(
            "SELECT id, definition_version, lease_expires, 'review' AS kind FROM queue_items \
             WHERE claimed_by = $1 AND decided_at IS NULL AND lease_expires > $2 \
             UNION ALL SELECT id, definition_version, lease_expires, 'adjudication' AS kind \
             FROM queue_adjudications WHERE claimed_by = $1 AND decided_at IS NULL \
             AND lease_expires > $2 ORDER BY lease_expires, id",
        )
        .bind(reviewer)
        .bind(now)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(HeldItem {
                    item: id_of(row, "id")?,
                    kind: kind_of(row)?,
                    definition_version: row.try_get("definition_version")?,
                    lease_expires: rfc3339_millis(row.try_get("lease_expires")?),
                })
            })
            .collect()
    }

    /// A claim that hands back an item `reviewer` already holds (of `version`, when named)
    /// before leasing a new one; with `new`, always a new one (within `max_leases`). The
    /// `bool` says whether the item was held already (its lease unchanged).
    pub async fn claim_or_resume_at(
        &self,
        reviewer: &str,
        version: Option<&str>,
        lease: Duration,
        max_leases: u32,
        new: bool,
        now: SystemTime,
    ) -> Result<(Claim, bool), StoreError> {
        if !new {
            check_texts_team(reviewer, version)?;
            let mut binds = vec![Bind::Text(reviewer.to_owned()), Bind::Int(unix_millis(now))];
            let mut sql = "SELECT id, review_id, reason, slot, lease_expires FROM queue_items \
                           WHERE claimed_by = $1 AND decided_at IS NULL AND lease_expires > $2"
                .to_owned();
            if let Some(version) = version {
                binds.push(Bind::Text(version.to_owned()));
                sql.push_str(" AND definition_version = $3");
            }
            sql.push_str(" ORDER BY lease_expires, id LIMIT 1");
            if let Some(row) = query_with(&sql, binds).fetch_optional(&self.pool).await? {
                let review_id: String = row.try_get("review_id")?;
                let slot: i64 = row.try_get("slot")?;
                let claimed = Claimed {
                    item: id_of(&row, "id")?,
                    subject: self.review_with_definition(&review_id).await?,
                    reason: row.try_get("reason")?,
                    slot: u8::try_from(slot).map_err(|_| corrupt("queue_items.slot"))?,
                    lease_expires: time_of(row.try_get("lease_expires")?),
                };
                return Ok((Claim::Leased(Box::new(claimed)), true));
            }
        }
        let claim = self
            .claim_capped_at(reviewer, version, lease, max_leases, now)
            .await?;
        Ok((claim, false))
    }
}
