//! Reading every queued review for a labelled export, in batches (the rules that turn each
//! into a case are `crate::export`'s).

use std::collections::HashSet;

use super::*;

impl Store {
    /// Every queued review, in review id order, with its decisions, kept state, replayable
    /// record and definition facts, in batches: `each` gets one [`Labelled`] per review;
    /// returns how many there were. The caller applies the export rules.
    pub async fn export_labelled(
        &self,
        mut each: impl FnMut(Labelled) -> Result<(), StoreError>,
    ) -> Result<u64, StoreError> {
        let mut batches = Batches::new(
            &self.pool,
            "SELECT DISTINCT review_id FROM queue_items WHERE review_id > $1 \
             ORDER BY review_id LIMIT $2",
            "review_id",
            BATCH,
        );
        let mut count = 0;
        while let Some(ids) = batches.next().await? {
            let (Some(first), Some(last)) = (ids.first(), ids.last()) else {
                break;
            };
            let first: String = first.try_get("review_id")?;
            let last: String = last.try_get("review_id")?;
            let copies = sqlx::query(
                "SELECT q.review_id AS review_id, q.slot AS slot, d.findings AS findings, \
                 q.expired_at AS expired_at FROM queue_items q LEFT JOIN queue_decisions d ON d.item_id = q.id \
                 WHERE q.review_id >= $1 AND q.review_id <= $2 ORDER BY q.review_id, q.slot",
            )
            .bind(&first)
            .bind(&last)
            .fetch_all(&self.pool)
            .await?;
            let reviews = sqlx::query(&format!(
                "SELECT {RECORD_COLUMNS}, r.definition_version AS definition_version, \
                 d.expected AS expected FROM reviews r \
                 LEFT JOIN definitions d ON d.digest = r.definition_digest \
                 WHERE r.id >= $1 AND r.id <= $2 AND r.id IN \
                 (SELECT review_id FROM queue_items WHERE review_id >= $1 AND review_id <= $2) \
                 ORDER BY r.id"
            ))
            .bind(&first)
            .bind(&last)
            .fetch_all(&self.pool)
            .await?;
            let mut decisions: BTreeMap<String, Vec<Option<Findings>>> = BTreeMap::new();
            let mut expired: HashSet<String> = HashSet::new();
            for row in &copies {
                let findings: Option<String> = row.try_get("findings")?;
                let review_id: String = row.try_get("review_id")?;
                if row.try_get::<Option<i64>, _>("expired_at")?.is_some() {
                    expired.insert(review_id.clone());
                }
                decisions
                    .entry(review_id)
                    .or_default()
                    .push(findings.as_deref().map(findings_of).transpose()?);
            }
            // An adjudicated review's label is the lead's.
            for (review_id, lead) in self.adjudicated_between(&first, &last).await? {
                decisions.insert(review_id, vec![Some(lead)]);
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
                    expired: expired.contains(&id),
                })?;
                count += 1;
            }
        }
        Ok(count)
    }
}
