//! The promote gate: the figures a promote of version V on route R is judged by
//! ([`Store::promote_figures`]) and the rule that refuses it ([`PromoteGate::check`]).
//!
//! - Shadowed reviews: V's shadow reviews of R (`route = R`, `definition_version = V`,
//!   `shadow_of` set).
//! - Labelled false PASS: among those, the ones whose live review people labelled in the queue
//!   as not supported (its label says it should not have passed) where V said PASS; and on
//!   the same labelled live reviews, the ones the live review itself passed. Both figures are
//!   counted on the same reviews, so a shadow sampling a share of the traffic is compared on
//!   equal terms.
//!
//! The gate refuses when V is not loaded, has fewer shadowed reviews than the minimum, or more
//! labelled false PASS than the live version.

use serde::Serialize;
use sqlx::Row as _;

use crate::{Store, StoreError};

/// The fewest shadowed reviews a version needs to be promoted without `force`.
pub const DEFAULT_MIN_SHADOW_REVIEWS: u64 = 100;

/// The gate's figures for one version of one route.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PromoteFigures {
    /// The version's shadow reviews of the route.
    pub shadowed_reviews: u64,
    /// Those whose live review people labelled.
    pub labelled_reviews: u64,
    /// The version's PASS on labelled reviews that should not have passed.
    pub false_pass: u64,
    /// The live reviews' PASS on the same labelled reviews that should not have passed.
    pub live_false_pass: u64,
}

impl std::fmt::Display for PromoteFigures {
    /// `150 shadowed reviews; on 40 labelled: 1 false PASS (live 3)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} shadowed reviews; on {} labelled: {} false PASS (live {})",
            self.shadowed_reviews, self.labelled_reviews, self.false_pass, self.live_false_pass
        )
    }
}

/// Why the gate refuses a promote; the message names the figure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromoteRefusal {
    /// The version cannot judge reviews where the promote was asked.
    #[error("{version} is not loaded")]
    NotLoaded {
        /// The version.
        version: String,
    },
    /// Too few shadowed reviews to judge the version by.
    #[error("{version} has {shadowed} shadowed reviews, fewer than {min}")]
    TooFewShadowed {
        /// The version.
        version: String,
        /// Its shadowed reviews.
        shadowed: u64,
        /// The minimum.
        min: u64,
    },
    /// More labelled false PASS than the live version on the same reviews.
    #[error(
        "{version} has {false_pass} labelled false PASS, more than the live version's \
         {live_false_pass} on the same {labelled} labelled reviews"
    )]
    MoreFalsePass {
        /// The version.
        version: String,
        /// Its labelled false PASS.
        false_pass: u64,
        /// The live version's.
        live_false_pass: u64,
        /// The labelled reviews both are counted on.
        labelled: u64,
    },
}

/// The promote gate's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromoteGate {
    /// The fewest shadowed reviews a version needs.
    pub min_shadow_reviews: u64,
}

impl Default for PromoteGate {
    fn default() -> PromoteGate {
        PromoteGate {
            min_shadow_reviews: DEFAULT_MIN_SHADOW_REVIEWS,
        }
    }
}

impl PromoteGate {
    /// The first refusal that applies to promoting `version` (`loaded`: whether it can judge
    /// reviews), or `Ok` when none does.
    pub fn check(
        &self,
        version: &str,
        loaded: bool,
        figures: &PromoteFigures,
    ) -> Result<(), PromoteRefusal> {
        if !loaded {
            return Err(PromoteRefusal::NotLoaded {
                version: version.to_owned(),
            });
        }
        if figures.shadowed_reviews < self.min_shadow_reviews {
            return Err(PromoteRefusal::TooFewShadowed {
                version: version.to_owned(),
                shadowed: figures.shadowed_reviews,
                min: self.min_shadow_reviews,
            });
        }
        if figures.false_pass > figures.live_false_pass {
            return Err(PromoteRefusal::MoreFalsePass {
                version: version.to_owned(),
                false_pass: figures.false_pass,
                live_false_pass: figures.live_false_pass,
                labelled: figures.labelled_reviews,
            });
        }
        Ok(())
    }
}

impl Store {
    /// The gate's figures for promoting `version` on `route`.
    pub async fn promote_figures(
        &self,
        route: &str,
        version: &str,
    ) -> Result<PromoteFigures, StoreError> {
        let shadowed: i64 = sqlx::query(
            "SELECT COUNT(*) AS n FROM reviews \
             WHERE route = $1 AND definition_version = $2 AND shadow_of IS NOT NULL",
        )
        .bind(route)
        .bind(version)
        .fetch_one(&self.pool)
        .await?
        .try_get("n")?;
        let mut figures = PromoteFigures {
            shadowed_reviews: u64::try_from(shadowed).unwrap_or(0),
            ..PromoteFigures::default()
        };
        let labels = self.route_expected_pass(route).await?;
        if labels.is_empty() {
            return Ok(figures);
        }
        let pairs = sqlx::query(
            "SELECT s.shadow_of AS live_id, s.status AS status, l.status AS live_status \
             FROM reviews s JOIN reviews l ON l.id = s.shadow_of \
             WHERE s.route = $1 AND s.definition_version = $2 AND s.shadow_of IS NOT NULL \
             AND s.shadow_of IN (SELECT review_id FROM queue_items)",
        )
        .bind(route)
        .bind(version)
        .fetch_all(&self.pool)
        .await?;
        for row in &pairs {
            let live_id: String = row.try_get("live_id")?;
            let Some(pass) = labels.get(&live_id) else {
                continue;
            };
            figures.labelled_reviews += 1;
            let status: String = row.try_get("status")?;
            let live_status: String = row.try_get("live_status")?;
            if !pass && status == "PASS" {
                figures.false_pass += 1;
            }
            if !pass && live_status == "PASS" {
                figures.live_false_pass += 1;
            }
        }
        Ok(figures)
    }

    /// Whether the store knows the definition `version` (a service that loaded it logged it).
    pub async fn knows_version(&self, version: &str) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT 1 AS one FROM definitions WHERE version = $1 LIMIT 1")
            .bind(version)
            .fetch_optional(&self.pool)
            .await?;
        Ok(row.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figures(shadowed: u64, labelled: u64, false_pass: u64, live: u64) -> PromoteFigures {
        PromoteFigures {
            shadowed_reviews: shadowed,
            labelled_reviews: labelled,
            false_pass,
            live_false_pass: live,
        }
    }

    #[test]
    fn promote_is_refused_for_a_version_not_loaded_first() {
        let gate = PromoteGate::default();
        let refusal = gate.check("v2", false, &figures(500, 0, 0, 0)).unwrap_err();
        assert_eq!(refusal.to_string(), "v2 is not loaded");
    }

    #[test]
    fn promote_is_refused_below_the_minimum_of_shadowed_reviews_naming_the_figure() {
        let gate = PromoteGate::default();
        let refusal = gate.check("v2", true, &figures(12, 0, 0, 0)).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "v2 has 12 shadowed reviews, fewer than 100"
        );
        let lower = PromoteGate {
            min_shadow_reviews: 12,
        };
        assert_eq!(lower.check("v2", true, &figures(12, 0, 0, 0)), Ok(()));
    }

    #[test]
    fn promote_is_refused_with_more_labelled_false_pass_than_the_live_version() {
        let gate = PromoteGate::default();
        let refusal = gate.check("v2", true, &figures(150, 40, 3, 1)).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "v2 has 3 labelled false PASS, more than the live version's 1 on the same 40 \
             labelled reviews"
        );
        assert_eq!(gate.check("v2", true, &figures(150, 40, 1, 1)), Ok(()));
        assert_eq!(gate.check("v2", true, &figures(150, 40, 0, 2)), Ok(()));
    }
}
