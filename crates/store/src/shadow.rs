//! Shadow reviews read back beside the live reviews they shadow: the pairs a route's evidence
//! (live vs one shadow version) is computed from.

use std::{collections::HashMap, time::SystemTime};

use crate::{
    Review, Store, StoreError,
    review::unix_millis,
    store::{COLUMNS, review_of},
};

/// A live review and one shadow version's review of the same state.
#[derive(Debug, Clone, PartialEq)]
pub struct ShadowPair {
    /// The review the caller received.
    pub live: Review,
    /// The shadow version's review of it.
    pub shadow: Review,
}

impl Store {
    /// Every live review that came through `route` and was shadowed by `version` at or after
    /// `since`, with that shadow review, in live review id (time) order.
    pub async fn shadow_pairs(
        &self,
        route: &str,
        version: &str,
        since: Option<SystemTime>,
    ) -> Result<Vec<ShadowPair>, StoreError> {
        for (field, text) in [("route", route), ("version", version)] {
            crate::check_no_controls(field, text).map_err(StoreError::Invalid)?;
        }
        let since = since.map_or(0, unix_millis);
        let shadows_of = "SELECT shadow_of FROM reviews WHERE route = $1 AND \
                          definition_version = $2 AND shadow_of IS NOT NULL AND received_at >= $3";
        let shadows = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM reviews WHERE route = $1 AND definition_version = $2 \
             AND shadow_of IS NOT NULL AND received_at >= $3 ORDER BY id"
        ))
        .bind(route)
        .bind(version)
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        let lives = sqlx::query(&format!(
            "SELECT {COLUMNS} FROM reviews WHERE shadow_of IS NULL AND id IN ({shadows_of}) \
             ORDER BY id"
        ))
        .bind(route)
        .bind(version)
        .bind(since)
        .fetch_all(&self.pool)
        .await?;
        let mut shadow_by_live: HashMap<_, Review> = HashMap::with_capacity(shadows.len());
        for row in &shadows {
            let shadow = review_of(row)?;
            if let Some(live) = shadow.shadow_of {
                // One shadow per live review and version; a second (never written) is ignored.
                shadow_by_live.entry(live).or_insert(shadow);
            }
        }
        let mut pairs = Vec::with_capacity(lives.len());
        for row in &lives {
            let live = review_of(row)?;
            if let Some(shadow) = shadow_by_live.remove(&live.review_id) {
                pairs.push(ShadowPair { live, shadow });
            }
        }
        Ok(pairs)
    }
}
