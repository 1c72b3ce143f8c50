//! A team's queue: the items a reviewer holds (handed back before a new one), adjudication of
//! second-reviewed items whose reviewers disagree or could not tell (decided by a lead, whose
//! decision is the label), and the decisions read back in keyset pages.
//!
//! A second-reviewed item goes to adjudication when the second of its two decisions is saved
//! ([`queue_adjudication_if_needed`], in the decision's transaction): on PostgreSQL under an
//! advisory lock of the review, so of two decisions committed at once the later one reads the
//! earlier one; on SQLite under the write lock every decision takes.

use super::*;

/// The first key of the advisory lock that serialises the two decisions of one review on
/// PostgreSQL (the second is a hash of the review id).
const ADJUDICATION_LOCK_CLASS: i32 = 0x6a65_7602;

/// What kind of item: a review to decide, or an adjudication (leads only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKind {
    /// A queued review's copy.
    Review,
    /// A second-reviewed item whose reviewers disagreed or could not tell.
    Adjudication,
}

/// One reviewer's saved answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReviewerAnswer {
    /// Who.
    pub name: String,
    /// The findings as decided (`null`: can't tell).
    pub findings: Findings,
    /// The note.
    pub note: Option<String>,
    /// When, RFC 3339.
    pub decided_at: String,
}

/// An adjudication with what a lead needs to decide it: the state, the criteria and both
/// reviewers' answers and notes (never Jev's findings). `Debug` never shows the state text.
#[derive(Clone, PartialEq, Serialize)]
pub struct Adjudication {
    /// The adjudication's id.
    pub item: QueueItemId,
    /// The definition version.
    pub definition_version: String,
    /// Whether the reviewers answered a criterion differently (else one could not tell).
    pub disagreement: bool,
    /// The kept state text.
    pub state: Option<Value>,
    /// The definition's questions JSON (`null` if not stored).
    pub questions: Value,
    /// The reviewers' answers, in slot order.
    pub answers: Vec<ReviewerAnswer>,
    /// Who holds it, while a lease is live.
    pub claimed_by: Option<String>,
    /// When that lease ends, RFC 3339.
    pub lease_expires: Option<String>,
    /// The lead's decision, once decided.
    pub decision: Option<ReviewerAnswer>,
    /// Whose findings the lead's equal: `first`, `second`, `both` or `neither`.
    pub upheld: Option<String>,
}

impl fmt::Debug for Adjudication {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Adjudication")
            .field("item", &self.item)
            .field("definition_version", &self.definition_version)
            .field("state", &self.state.as_ref().map(|_| "<private>"))
            .field("answers", &self.answers)
            .field("decision", &self.decision)
            .finish_non_exhaustive()
    }
}

/// What a lead's adjudication claim gave.
#[derive(Debug, Clone, PartialEq)]
pub enum AdjudicationClaim {
    /// An adjudication, now leased to the lead (`resumed`: one they held already).
    Leased {
        /// The adjudication.
        adjudication: Box<Adjudication>,
        /// Whether the lead held it already.
        resumed: bool,
    },
    /// Nothing to adjudicate (that this lead may take: never a review they decided).
    Empty,
    /// The lead holds as many items as the cap allows.
    AtCap {
        /// The items held.
        held: Vec<QueueItemId>,
    },
}

/// How often the lead's decision equalled each reviewer's.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Upheld {
    /// The first reviewer's findings only.
    pub first: u64,
    /// The second reviewer's findings only.
    pub second: u64,
    /// Both (they agreed, and one or both could not tell on a criterion).
    pub both: u64,
    /// Neither.
    pub neither: u64,
}

/// A reviewer's adjudicated decisions: upheld (the lead decided as they did) or overruled.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReviewerUpheld {
    /// The lead's decision equalled theirs.
    pub upheld: u64,
    /// It did not.
    pub overruled: u64,
}

/// Adjudication in numbers.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AdjudicationStats {
    /// Adjudications not decided yet (held or not).
    pub pending: u64,
    /// Adjudications decided by a lead.
    pub decided: u64,
    /// How often each side was upheld.
    pub upheld: Upheld,
    /// Per reviewer: how often the lead upheld or overruled them.
    pub by_reviewer: BTreeMap<String, ReviewerUpheld>,
}

/// Whether two decisions of one review send it to adjudication: `Some(true)` when they
/// answer a criterion differently (a can't-tell against an answer counts), `Some(false)` when
/// they agree but one or both could not tell on a criterion, `None` when they agree on answers.
pub fn needs_adjudication(first: &Findings, second: &Findings) -> Option<bool> {
    let mut ids: Vec<&String> = first.keys().chain(second.keys()).collect();
    ids.sort();
    ids.dedup();
    let mut cant_tell = false;
    let mut disagreement = false;
    for id in ids {
        let a = first.get(id).copied().flatten();
        let b = second.get(id).copied().flatten();
        if a != b {
            disagreement = true;
        }
        if a.is_none() || b.is_none() {
            cant_tell = true;
        }
    }
    if disagreement {
        Some(true)
    } else if cant_tell {
        Some(false)
    } else {
        None
    }
}

/// Whose findings `lead` equals: `first`, `second`, `both` or `neither`.
pub fn upheld_side(lead: &Findings, first: &Findings, second: &Findings) -> &'static str {
    match (lead == first, lead == second) {
        (true, true) => "both",
        (true, false) => "first",
        (false, true) => "second",
        (false, false) => "neither",
    }
}

/// In a decision's transaction, after the decision is written: when it is the second of a
/// second-reviewed item's two decisions and they disagree or one could not tell, the review
/// goes to adjudication.
pub(super) async fn queue_adjudication_if_needed(
    connection: &mut sqlx::AnyConnection,
    kind: StoreKind,
    review_id: &str,
    now: i64,
) -> Result<(), StoreError> {
    if kind == StoreKind::Postgres {
        sqlx::query("SELECT CAST(pg_advisory_xact_lock($1, hashtext($2)) AS TEXT) AS locked")
            .bind(ADJUDICATION_LOCK_CLASS)
            .bind(review_id)
            .fetch_one(&mut *connection)
            .await?;
    }
    let Some(first) = sqlx::query(
        "SELECT copies, definition_version FROM queue_items WHERE review_id = $1 AND slot = 1",
    )
    .bind(review_id)
    .fetch_optional(&mut *connection)
    .await?
    else {
        return Ok(());
    };
    let copies: i64 = first.try_get("copies")?;
    if copies != 2 {
        return Ok(());
    }
    let version: String = first.try_get("definition_version")?;
    let rows = sqlx::query(
        "SELECT findings FROM queue_decisions WHERE review_id = $1 AND slot IN (1, 2) \
         ORDER BY slot",
    )
    .bind(review_id)
    .fetch_all(&mut *connection)
    .await?;
    if rows.len() != 2 {
        return Ok(());
    }
    let first = findings_of(&rows[0].try_get::<String, _>("findings")?)?;
    let second = findings_of(&rows[1].try_get::<String, _>("findings")?)?;
    let Some(disagreement) = needs_adjudication(&first, &second) else {
        return Ok(());
    };
    sqlx::query(
        "INSERT INTO queue_adjudications (id, review_id, definition_version, disagreement, \
         queued_at) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(QueueItemId::new().to_string())
    .bind(review_id)
    .bind(version)
    .bind(i64::from(disagreement))
    .bind(now)
    .execute(&mut *connection)
    .await?;
    Ok(())
}

pub(super) fn id_of(row: &AnyRow, column: &str) -> Result<QueueItemId, StoreError> {
    let id: String = row.try_get(column)?;
    id.parse().map_err(|_| corrupt(column))
}

/// The row's `kind` column: `adjudication`, else a queued review's copy.
pub(super) fn kind_of(row: &AnyRow) -> Result<ItemKind, StoreError> {
    let kind: String = row.try_get("kind")?;
    Ok(if kind == "adjudication" {
        ItemKind::Adjudication
    } else {
        ItemKind::Review
    })
}

pub(super) fn answer_of(row: &AnyRow, name_column: &str) -> Result<ReviewerAnswer, StoreError> {
    Ok(ReviewerAnswer {
        name: row.try_get(name_column)?,
        findings: findings_of(&row.try_get::<String, _>("findings")?)?,
        note: row.try_get("note")?,
        decided_at: rfc3339_millis(row.try_get("decided_at")?),
    })
}

impl Store {
    /// A lead's claim of an adjudication: one they hold first (unless `new`), else the oldest
    /// open one of a review they did not decide themselves, within `max_leases` held items
    /// (queue items and adjudications together).
    pub async fn claim_adjudication_at(
        &self,
        lead: &str,
        lease: Duration,
        max_leases: u32,
        new: bool,
        now: SystemTime,
    ) -> Result<AdjudicationClaim, StoreError> {
        check_texts_team(lead, None)?;
        let at = unix_millis(now);
        if !new {
            let held = sqlx::query(
                "SELECT id FROM queue_adjudications WHERE claimed_by = $1 \
                 AND decided_at IS NULL AND lease_expires > $2 ORDER BY lease_expires, id \
                 LIMIT 1",
            )
            .bind(lead)
            .bind(at)
            .fetch_optional(&self.pool)
            .await?;
            if let Some(row) = held {
                let id = id_of(&row, "id")?;
                let adjudication = self
                    .adjudication_at(id, now)
                    .await?
                    .ok_or_else(|| corrupt("an adjudication vanished"))?;
                return Ok(AdjudicationClaim::Leased {
                    adjudication: Box::new(adjudication),
                    resumed: true,
                });
            }
        }
        let expires = at.saturating_add(millis_of(lease));
        let lock = match self.kind {
            StoreKind::Postgres => " FOR UPDATE SKIP LOCKED",
            StoreKind::Sqlite => "",
        };
        let mut transaction = self.begin_write().await?;
        if self.kind == StoreKind::Postgres {
            sqlx::query("SELECT CAST(pg_advisory_xact_lock($1, hashtext($2)) AS TEXT) AS locked")
                .bind(super::ops::CLAIM_LOCK_CLASS)
                .bind(lead)
                .fetch_one(&mut *transaction)
                .await?;
        }
        let held: Vec<QueueItemId> = {
            let rows = sqlx::query(
                "SELECT id, lease_expires FROM queue_items WHERE claimed_by = $1 \
                 AND decided_at IS NULL AND lease_expires > $2 UNION ALL \
                 SELECT id, lease_expires FROM queue_adjudications WHERE claimed_by = $1 \
                 AND decided_at IS NULL AND lease_expires > $2 ORDER BY lease_expires, id",
            )
            .bind(lead)
            .bind(at)
            .fetch_all(&mut *transaction)
            .await?;
            rows.iter()
                .map(|row| id_of(row, "id"))
                .collect::<Result<_, _>>()?
        };
        if held.len() >= max_leases as usize {
            transaction.rollback().await?;
            return Ok(AdjudicationClaim::AtCap { held });
        }
        let row = sqlx::query(&format!(
            "UPDATE queue_adjudications SET claimed_by = $1, lease_expires = $2 WHERE id = (\
             SELECT a.id FROM queue_adjudications a WHERE a.decided_at IS NULL \
             AND (a.lease_expires IS NULL OR a.lease_expires <= $3) \
             AND NOT EXISTS (SELECT 1 FROM queue_decisions d WHERE d.review_id = a.review_id \
             AND d.reviewer = $1) ORDER BY a.queued_at, a.id LIMIT 1{lock}) RETURNING id"
        ))
        .bind(lead)
        .bind(expires)
        .bind(at)
        .fetch_optional(&mut *transaction)
        .await?;
        transaction.commit().await?;
        let Some(row) = row else {
            return Ok(AdjudicationClaim::Empty);
        };
        let adjudication = self
            .adjudication_at(id_of(&row, "id")?, now)
            .await?
            .ok_or_else(|| corrupt("an adjudication vanished"))?;
        Ok(AdjudicationClaim::Leased {
            adjudication: Box::new(adjudication),
            resumed: false,
        })
    }

    /// One adjudication as of `now` (which lease is live), with both answers; `None` when
    /// no adjudication has this id.
    pub async fn adjudication_at(
        &self,
        id: QueueItemId,
        now: SystemTime,
    ) -> Result<Option<Adjudication>, StoreError> {
        let Some(row) = sqlx::query(
            "SELECT id, review_id, definition_version, disagreement, claimed_by, lease_expires, \
             decided_at, lead, findings, note, upheld FROM queue_adjudications WHERE id = $1",
        )
        .bind(id.to_string())
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let review_id: String = row.try_get("review_id")?;
        let subject = self.review_with_definition(&review_id).await?;
        let now = unix_millis(now);
        let lease: Option<i64> = row.try_get("lease_expires")?;
        let decided: Option<i64> = row.try_get("decided_at")?;
        let live = lease.filter(|expires| *expires > now && decided.is_none());
        let decision = match decided {
            Some(_) => Some(answer_of(&row, "lead")?),
            None => None,
        };
        Ok(Some(Adjudication {
            item: id,
            definition_version: row.try_get("definition_version")?,
            disagreement: row.try_get::<i64, _>("disagreement")? != 0,
            state: subject.state,
            questions: subject.questions,
            answers: self.answers_of(&review_id).await?,
            claimed_by: if live.is_some() {
                row.try_get("claimed_by")?
            } else {
                None
            },
            lease_expires: live.map(rfc3339_millis),
            decision,
            upheld: row.try_get("upheld")?,
        }))
    }

    /// The reviewers' answers of a review, in slot order.
    pub(super) async fn answers_of(
        &self,
        review_id: &str,
    ) -> Result<Vec<ReviewerAnswer>, StoreError> {
        let rows = sqlx::query(
            "SELECT reviewer, findings, note, decided_at FROM queue_decisions \
             WHERE review_id = $1 ORDER BY slot",
        )
        .bind(review_id)
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|row| answer_of(row, "reviewer")).collect()
    }

    /// Saves a lead's decision on an adjudication they hold: it answers exactly the
    /// definition's criteria, and becomes the review's label.
    pub async fn decide_adjudication_at(
        &self,
        id: QueueItemId,
        lead: &str,
        decision: &Decision,
        now: SystemTime,
    ) -> Result<Adjudication, QueueError> {
        let at = unix_millis(now);
        let row = sqlx::query(
            "SELECT review_id, claimed_by, lease_expires, decided_at FROM queue_adjudications \
             WHERE id = $1",
        )
        .bind(id.to_string())
        .fetch_optional(&self.pool)
        .await?
        .ok_or(QueueError::NotFound)?;
        let check = |row: &AnyRow| -> Result<(), QueueError> {
            if row.try_get::<Option<i64>, _>("decided_at")?.is_some() {
                return Err(QueueError::AlreadyDecided);
            }
            let live = row
                .try_get::<Option<i64>, _>("lease_expires")?
                .is_some_and(|expires| expires > at);
            let holder: Option<String> = row.try_get("claimed_by")?;
            if !live || holder.as_deref() != Some(lead) {
                return Err(QueueError::LeaseNotHeld);
            }
            Ok(())
        };
        check(&row)?;
        let review_id: String = row.try_get("review_id")?;
        let subject = self.review_with_definition(&review_id).await?;
        let criteria = criterion_ids(&subject.questions).ok_or_else(|| {
            QueueError::Invalid("the review's definition is not in the store".to_owned())
        })?;
        check_decision(decision, &criteria)?;
        let answers = self.answers_of(&review_id).await?;
        let upheld = match answers.as_slice() {
            [first, second] => upheld_side(&decision.findings, &first.findings, &second.findings),
            _ => "neither",
        };
        let findings = serde_json::to_string(&decision.findings)
            .map_err(|e| QueueError::Invalid(e.to_string()))?;
        let done = sqlx::query(
            "UPDATE queue_adjudications SET decided_at = $1, lease_expires = NULL, lead = $2, \
             findings = $3, note = $4, upheld = $5 WHERE id = $6 AND claimed_by = $2 \
             AND decided_at IS NULL AND lease_expires > $1",
        )
        .bind(at)
        .bind(lead)
        .bind(findings)
        .bind(&decision.note)
        .bind(upheld)
        .bind(id.to_string())
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 0 {
            let row = sqlx::query(
                "SELECT claimed_by, lease_expires, decided_at FROM queue_adjudications \
                 WHERE id = $1",
            )
            .bind(id.to_string())
            .fetch_one(&self.pool)
            .await?;
            check(&row)?;
            return Err(QueueError::LeaseNotHeld);
        }
        self.adjudication_at(id, now)
            .await?
            .ok_or(QueueError::NotFound)
    }

    /// Gives a held adjudication back (only its holder, while the lease is live).
    pub async fn release_adjudication_at(
        &self,
        id: QueueItemId,
        lead: &str,
        now: SystemTime,
    ) -> Result<(), QueueError> {
        let at = unix_millis(now);
        let done = sqlx::query(
            "UPDATE queue_adjudications SET claimed_by = NULL, lease_expires = NULL \
             WHERE id = $1 AND claimed_by = $2 AND decided_at IS NULL AND lease_expires > $3",
        )
        .bind(id.to_string())
        .bind(lead)
        .bind(at)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 1 {
            return Ok(());
        }
        let row = sqlx::query("SELECT decided_at FROM queue_adjudications WHERE id = $1")
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await?
            .ok_or(QueueError::NotFound)?;
        if row.try_get::<Option<i64>, _>("decided_at")?.is_some() {
            return Err(QueueError::AlreadyDecided);
        }
        Err(QueueError::LeaseNotHeld)
    }

    /// Adjudications not decided yet (held or not): one count, cheap enough for each scrape.
    pub async fn adjudications_pending(&self) -> Result<u64, StoreError> {
        count_rows(
            &self.pool,
            "SELECT COUNT(*) AS n FROM queue_adjudications WHERE decided_at IS NULL",
            Vec::new(),
        )
        .await
    }

    /// Adjudications pending and decided, and how often each side was upheld.
    pub async fn adjudication_stats(&self) -> Result<AdjudicationStats, StoreError> {
        let mut stats = AdjudicationStats {
            pending: self.adjudications_pending().await?,
            ..AdjudicationStats::default()
        };
        let rows = sqlx::query(
            "SELECT upheld, COUNT(*) AS n FROM queue_adjudications WHERE decided_at IS NOT NULL \
             GROUP BY upheld",
        )
        .fetch_all(&self.pool)
        .await?;
        for row in &rows {
            let n = u64::try_from(row.try_get::<i64, _>("n")?).unwrap_or(0);
            stats.decided += n;
            match row.try_get::<Option<String>, _>("upheld")?.as_deref() {
                Some("first") => stats.upheld.first += n,
                Some("second") => stats.upheld.second += n,
                Some("both") => stats.upheld.both += n,
                _ => stats.upheld.neither += n,
            }
        }
        let rows = sqlx::query(
            "SELECT d.reviewer AS reviewer, d.slot AS slot, a.upheld AS upheld, COUNT(*) AS n \
             FROM queue_adjudications a JOIN queue_decisions d ON d.review_id = a.review_id \
             WHERE a.decided_at IS NOT NULL GROUP BY d.reviewer, d.slot, a.upheld",
        )
        .fetch_all(&self.pool)
        .await?;
        for row in &rows {
            let n = u64::try_from(row.try_get::<i64, _>("n")?).unwrap_or(0);
            let slot: i64 = row.try_get("slot")?;
            let upheld: Option<String> = row.try_get("upheld")?;
            let entry = stats
                .by_reviewer
                .entry(row.try_get("reviewer")?)
                .or_default();
            let kept = matches!(
                (slot, upheld.as_deref()),
                (_, Some("both")) | (1, Some("first")) | (2, Some("second"))
            );
            if kept {
                entry.upheld += n;
            } else {
                entry.overruled += n;
            }
        }
        Ok(stats)
    }

    /// The lead's findings of the reviews with ids in `first..=last` whose adjudication is
    /// decided (for the labelled export: an open adjudication leaves the reviewers' answers,
    /// so the review is left out as a disagreement or a can't-tell until a lead decides).
    pub(super) async fn adjudicated_between(
        &self,
        first: &str,
        last: &str,
    ) -> Result<Vec<(String, Findings)>, StoreError> {
        let rows = sqlx::query(
            "SELECT review_id, findings FROM queue_adjudications \
             WHERE review_id >= $1 AND review_id <= $2 AND decided_at IS NOT NULL",
        )
        .bind(first)
        .bind(last)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                let findings: String = row.try_get("findings")?;
                Ok((row.try_get("review_id")?, findings_of(&findings)?))
            })
            .collect()
    }
}

pub(super) fn check_texts_team(reviewer: &str, version: Option<&str>) -> Result<(), StoreError> {
    if reviewer.is_empty() {
        return Err(StoreError::Invalid(
            "a reviewer name is required".to_owned(),
        ));
    }
    crate::check_no_controls("reviewer", reviewer).map_err(StoreError::Invalid)?;
    if let Some(version) = version {
        crate::check_no_controls("version", version).map_err(StoreError::Invalid)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(pairs: &[(&str, Option<bool>)]) -> Findings {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    #[test]
    fn a_differing_answer_or_a_cant_tell_sends_a_review_to_adjudication() {
        let yes = findings(&[("a", Some(true)), ("b", Some(false))]);
        assert_eq!(needs_adjudication(&yes, &yes), None);
        let differs = findings(&[("a", Some(false)), ("b", Some(false))]);
        assert_eq!(needs_adjudication(&yes, &differs), Some(true));
        let cant = findings(&[("a", None), ("b", Some(false))]);
        assert_eq!(
            needs_adjudication(&yes, &cant),
            Some(true),
            "a can't-tell against an answer is a disagreement"
        );
        assert_eq!(
            needs_adjudication(&cant, &cant),
            Some(false),
            "both could not tell: adjudicated, not a disagreement"
        );
    }

    #[test]
    fn the_upheld_side_is_whose_findings_the_lead_equals() {
        let a = findings(&[("a", Some(true))]);
        let b = findings(&[("a", Some(false))]);
        let none = findings(&[("a", None)]);
        assert_eq!(upheld_side(&a, &a, &b), "first");
        assert_eq!(upheld_side(&b, &a, &b), "second");
        assert_eq!(upheld_side(&none, &a, &b), "neither");
        assert_eq!(upheld_side(&none, &none, &none), "both");
    }
}
