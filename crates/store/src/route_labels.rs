//! People's verdicts on a route's live reviews, as the labelled export reads them: for each
//! queued live review of a route whose copies are all decided and agree (or that a lead
//! adjudicated), whether the draft should have passed ([`crate::export::label_of`] and
//! [`crate::export::expected_pass`] with the review's definition's expected flags). Reviews
//! still undecided, disagreed on, with a can't-tell, or without expected flags have no label.

use std::collections::{BTreeMap, HashMap};

use sqlx::Row as _;

use crate::{
    Findings, Store, StoreError,
    export::{Label, expected_pass, label_of},
    queue::{expected_of, findings_of},
};

impl Store {
    /// The live reviews of `route` that people labelled, each with whether it should have
    /// passed (by review id).
    pub(crate) async fn route_expected_pass(
        &self,
        route: &str,
    ) -> Result<HashMap<String, bool>, StoreError> {
        let copies = sqlx::query(
            "SELECT q.review_id AS review_id, d.findings AS findings FROM queue_items q \
             JOIN reviews r ON r.id = q.review_id \
             LEFT JOIN queue_decisions d ON d.item_id = q.id \
             WHERE r.route = $1 AND r.shadow_of IS NULL ORDER BY q.review_id, q.slot",
        )
        .bind(route)
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
        // An adjudicated review's label is the lead's.
        let leads = sqlx::query(
            "SELECT a.review_id AS review_id, a.findings AS findings \
             FROM queue_adjudications a JOIN reviews r ON r.id = a.review_id \
             WHERE r.route = $1 AND r.shadow_of IS NULL AND a.decided_at IS NOT NULL",
        )
        .bind(route)
        .fetch_all(&self.pool)
        .await?;
        for row in &leads {
            let findings: String = row.try_get("findings")?;
            decisions.insert(
                row.try_get("review_id")?,
                vec![Some(findings_of(&findings)?)],
            );
        }
        let flags = sqlx::query(
            "SELECT r.id AS id, d.expected AS expected FROM reviews r \
             LEFT JOIN definitions d ON d.digest = r.definition_digest \
             WHERE r.route = $1 AND r.shadow_of IS NULL \
             AND r.id IN (SELECT review_id FROM queue_items)",
        )
        .bind(route)
        .fetch_all(&self.pool)
        .await?;
        let mut labels = HashMap::new();
        for row in &flags {
            let id: String = row.try_get("id")?;
            let Some(expected) = expected_of(row.try_get("expected")?)? else {
                continue;
            };
            let Some(copies) = decisions.get(&id) else {
                continue;
            };
            if let Label::Case(found) = label_of(copies) {
                if let Some(pass) = expected_pass(&found, &expected) {
                    labels.insert(id, pass);
                }
            }
        }
        Ok(labels)
    }
}
