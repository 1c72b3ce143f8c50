//! Reading every queued review for a labelled export, in batches, and the definition versions
//! a store holds reviews of (the rules that turn each review into a case, and that pick one
//! version, are `crate::export`'s).

use std::collections::{HashMap, HashSet};

use super::*;

impl Store {
    /// Every queued review, in review id order, with its decisions, kept state, replayable
    /// record and definition facts, in batches: `each` gets one [`Labelled`] per review;
    /// returns how many there were. The caller applies the export rules.
    pub async fn export_labelled(
        &self,
        each: impl FnMut(Labelled) -> Result<(), StoreError>,
    ) -> Result<u64, StoreError> {
        self.export_labelled_of(None, each).await
    }

    /// [`Store::export_labelled`] of the queued reviews of one definition version (`None`:
    /// every version).
    pub async fn export_labelled_of(
        &self,
        version: Option<&str>,
        mut each: impl FnMut(Labelled) -> Result<(), StoreError>,
    ) -> Result<u64, StoreError> {
        let (only, only_q) = match version {
            Some(_) => (
                " AND definition_version = $3",
                " AND q.definition_version = $3",
            ),
            None => ("", ""),
        };
        let batch_sql = format!(
            "SELECT DISTINCT review_id FROM queue_items WHERE review_id > $1{only} \
             ORDER BY review_id LIMIT $2"
        );
        let mut after = String::new();
        let mut count = 0;
        loop {
            let mut batch = sqlx::query(&batch_sql).bind(&after).bind(BATCH);
            if let Some(version) = version {
                batch = batch.bind(version);
            }
            let ids = batch.fetch_all(&self.pool).await?;
            let (Some(first), Some(last)) = (ids.first(), ids.last()) else {
                break;
            };
            let first: String = first.try_get("review_id")?;
            let last: String = last.try_get("review_id")?;
            after.clone_from(&last);
            let copies_sql = format!(
                "SELECT q.review_id AS review_id, q.slot AS slot, d.findings AS findings, \
                 q.expired_at AS expired_at, q.inclusion AS inclusion FROM queue_items q LEFT JOIN queue_decisions d ON d.item_id = q.id \
                 WHERE q.review_id >= $1 AND q.review_id <= $2{only_q} ORDER BY q.review_id, q.slot",
            );
            let mut copies = sqlx::query(&copies_sql).bind(&first).bind(&last);
            if let Some(version) = version {
                copies = copies.bind(version);
            }
            let copies = copies.fetch_all(&self.pool).await?;
            let reviews_sql = format!(
                "SELECT {RECORD_COLUMNS}, r.definition_version AS definition_version, \
                 d.expected AS expected FROM reviews r \
                 LEFT JOIN definitions d ON d.digest = r.definition_digest \
                 WHERE r.id >= $1 AND r.id <= $2 AND r.id IN \
                 (SELECT review_id FROM queue_items WHERE review_id >= $1 AND review_id <= $2{only}) \
                 ORDER BY r.id"
            );
            let mut reviews = sqlx::query(&reviews_sql).bind(&first).bind(&last);
            if let Some(version) = version {
                reviews = reviews.bind(version);
            }
            let reviews = reviews.fetch_all(&self.pool).await?;
            let mut decisions: BTreeMap<String, Vec<Option<Findings>>> = BTreeMap::new();
            let mut expired: HashSet<String> = HashSet::new();
            let mut inclusions: HashMap<String, Inclusion> = HashMap::new();
            for row in &copies {
                let findings: Option<String> = row.try_get("findings")?;
                let review_id: String = row.try_get("review_id")?;
                let inclusion: Option<String> = row.try_get("inclusion")?;
                if let Some(inclusion) = Inclusion::from_text(inclusion.as_deref())? {
                    // Every copy holds its review's π; the first (slot 1) wins.
                    inclusions.entry(review_id.clone()).or_insert(inclusion);
                }
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
                    inclusion: inclusions.remove(&id),
                })?;
                count += 1;
            }
        }
        Ok(count)
    }
}

impl Store {
    /// The definition versions the decision log holds reviews of, whatever their status,
    /// each with its count of reviews, in version order.
    pub async fn review_versions(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let rows = sqlx::query(
            "SELECT definition_version, COUNT(*) AS n FROM reviews \
             GROUP BY definition_version ORDER BY definition_version",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let count: i64 = row.try_get("n")?;
                Ok((
                    row.try_get("definition_version")?,
                    u64::try_from(count).unwrap_or(0),
                ))
            })
            .collect()
    }
}
