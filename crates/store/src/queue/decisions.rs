//! The review queue's decisions read back: each queued review's reviewers with their findings
//! and notes, the adjudication, and the final label with who gave it, in keyset pages; and a
//! reviewer's own history.

use super::team::{answer_of, id_of, kind_of};
use super::*;

/// Which decisions [`Store::queue_decisions`] lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DecisionFilter {
    /// Of this definition version.
    pub version: Option<String>,
    /// Whose first decision is at or after this time.
    pub since: Option<SystemTime>,
    /// Decided (or adjudicated) by this reviewer.
    pub reviewer: Option<String>,
    /// `Some(true)`: only reviews whose two reviewers disagreed; `Some(false)`: only others.
    pub disagreement: Option<bool>,
}

/// A cursor of [`Store::queue_decisions`]: `d1.`, the first decision's time (Unix
/// milliseconds), `.` and the review id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionCursor {
    decided_at: i64,
    review_id: ReviewId,
}

impl fmt::Display for DecisionCursor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "d1.{}.{}", self.decided_at, self.review_id)
    }
}

impl FromStr for DecisionCursor {
    type Err = crate::CursorError;

    fn from_str(text: &str) -> Result<DecisionCursor, crate::CursorError> {
        let rest = text.strip_prefix("d1.").ok_or(crate::CursorError)?;
        let (at, review) = rest.split_once('.').ok_or(crate::CursorError)?;
        if at.is_empty() || !at.bytes().all(|b| b.is_ascii_digit()) {
            return Err(crate::CursorError);
        }
        Ok(DecisionCursor {
            decided_at: at.parse().map_err(|_| crate::CursorError)?,
            review_id: review.parse().map_err(|_| crate::CursorError)?,
        })
    }
}

/// A lead's adjudication as listed with a review's decisions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AdjudicationSummary {
    /// `pending` or `decided`.
    pub state: &'static str,
    /// The lead's answer, once decided.
    pub decision: Option<ReviewerAnswer>,
    /// `first`, `second`, `both` or `neither`, once decided.
    pub upheld: Option<String>,
}

/// A queued review's decisions and its label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionRecord {
    /// The review's first queue item.
    pub item: QueueItemId,
    /// The review.
    pub review_id: ReviewId,
    /// Its definition version.
    pub definition_version: String,
    /// Its first decision's time, RFC 3339.
    pub decided_at: String,
    /// Each reviewer's answer, in slot order.
    pub reviewers: Vec<ReviewerAnswer>,
    /// Whether the two reviewers answered a criterion differently.
    pub disagreement: bool,
    /// The adjudication, when the review went to one.
    pub adjudication: Option<AdjudicationSummary>,
    /// The final label: the lead's findings when adjudicated; the findings of the reviewer(s)
    /// otherwise; `null` while a copy or the adjudication is undecided.
    pub label: Option<Findings>,
    /// Who gave the label: the lead, or the reviewer(s) whose findings it is.
    pub label_by: Vec<String>,
}

/// Findings as `id=yes|no|?`, comma-separated.
fn findings_text(findings: &Findings) -> String {
    findings
        .iter()
        .map(|(id, answer)| {
            let answer = match answer {
                Some(true) => "yes",
                Some(false) => "no",
                None => "?",
            };
            format!("{id}={answer}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// One line: the item, the version, each reviewer's findings (and note), the label and who
/// gave it (`pending` while undecided), and `disagreement` when the reviewers disagreed.
impl fmt::Display for DecisionRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}  {}", self.item, self.definition_version)?;
        for answer in &self.reviewers {
            write!(f, "  {}: {}", answer.name, findings_text(&answer.findings))?;
            if let Some(note) = &answer.note {
                write!(f, " {note:?}")?;
            }
        }
        match &self.label {
            Some(label) => write!(
                f,
                "  → {} by {}",
                findings_text(label),
                self.label_by.join("+")
            )?,
            None => write!(f, "  → pending")?,
        }
        if self.disagreement {
            write!(f, "  disagreement")?;
        }
        Ok(())
    }
}

/// A page of decisions, oldest first decision first.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionPage {
    /// The reviews.
    pub decisions: Vec<DecisionRecord>,
    /// Pass as `cursor` for the next page; absent on the last page.
    pub next_cursor: Option<String>,
}

/// One of a reviewer's own decisions, newest first ([`Store::reviewer_history`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HistoryEntry {
    /// The item they decided (a queue item, or an adjudication).
    pub item: QueueItemId,
    /// Review or adjudication.
    pub kind: ItemKind,
    /// The definition version.
    pub definition_version: String,
    /// When, RFC 3339.
    pub decided_at: String,
}

impl Store {
    /// Every queued review [`Store::queue_decisions`] selects, oldest first, read a page at a
    /// time: `each` sees them in order (its first error stops the walk). Returns how many.
    pub async fn each_queue_decision<E: From<StoreError>>(
        &self,
        filter: &DecisionFilter,
        mut each: impl FnMut(&DecisionRecord) -> Result<(), E>,
    ) -> Result<usize, E> {
        let (mut cursor, mut count) = (None, 0);
        loop {
            let page = self
                .queue_decisions(filter, MAX_PAGE, cursor.as_ref())
                .await?;
            page.decisions.iter().try_for_each(&mut each)?;
            count += page.decisions.len();
            match page.next_cursor {
                // The store's own cursor always parses.
                Some(next) => cursor = Some(next.parse().map_err(|_| StoreError::Invalid(next))?),
                None => return Ok(count),
            }
        }
    }

    /// The queued reviews with at least one decision, oldest first decision first,
    /// keyset-paged (`limit` 1 to [`MAX_PAGE`]): each reviewer's answer, the adjudication
    /// and the final label with who gave it.
    pub async fn queue_decisions(
        &self,
        filter: &DecisionFilter,
        limit: u32,
        cursor: Option<&DecisionCursor>,
    ) -> Result<DecisionPage, StoreError> {
        let limit = limit.clamp(1, MAX_PAGE);
        let mut binds: Vec<Bind> = Vec::new();
        let mut conditions: Vec<String> = Vec::new();
        let mut having: Vec<String> = Vec::new();
        if let Some(version) = &filter.version {
            crate::check_no_controls("version", version).map_err(StoreError::Invalid)?;
            binds.push(Bind::Text(version.clone()));
            conditions.push(format!("q.definition_version = ${}", binds.len()));
        }
        if let Some(reviewer) = &filter.reviewer {
            crate::check_no_controls("reviewer", reviewer).map_err(StoreError::Invalid)?;
            binds.push(Bind::Text(reviewer.clone()));
            let n = binds.len();
            conditions.push(format!(
                "(EXISTS (SELECT 1 FROM queue_decisions r WHERE r.review_id = d.review_id \
                 AND r.reviewer = ${n}) OR EXISTS (SELECT 1 FROM queue_adjudications l \
                 WHERE l.review_id = d.review_id AND l.lead = ${n}))"
            ));
        }
        match filter.disagreement {
            Some(true) => conditions.push(
                "EXISTS (SELECT 1 FROM queue_adjudications a WHERE a.review_id = d.review_id \
                 AND a.disagreement = 1)"
                    .to_owned(),
            ),
            Some(false) => conditions.push(
                "NOT EXISTS (SELECT 1 FROM queue_adjudications a \
                 WHERE a.review_id = d.review_id AND a.disagreement = 1)"
                    .to_owned(),
            ),
            None => {}
        }
        if let Some(since) = filter.since {
            binds.push(Bind::Int(unix_millis(since)));
            having.push(format!("MIN(d.decided_at) >= ${}", binds.len()));
        }
        if let Some(cursor) = cursor {
            binds.push(Bind::Int(cursor.decided_at));
            binds.push(Bind::Text(cursor.review_id.to_string()));
            let (a, b) = (binds.len() - 1, binds.len());
            having.push(format!(
                "(MIN(d.decided_at) > ${a} OR (MIN(d.decided_at) = ${a} AND d.review_id > ${b}))"
            ));
        }
        let where_sql = if conditions.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conditions.join(" AND "))
        };
        let having_sql = if having.is_empty() {
            String::new()
        } else {
            format!(" HAVING {}", having.join(" AND "))
        };
        let sql = format!(
            "SELECT d.review_id AS review_id, MIN(d.decided_at) AS first_at \
             FROM queue_decisions d JOIN queue_items q ON q.id = d.item_id{where_sql} \
             GROUP BY d.review_id{having_sql} ORDER BY first_at, review_id LIMIT ${}",
            binds.len() + 1
        );
        let rows = query_with(&sql, binds)
            .bind(i64::from(limit) + 1)
            .fetch_all(&self.pool)
            .await?;
        let more = rows.len() > limit as usize;
        let mut decisions = Vec::new();
        let mut last = None;
        for row in rows.iter().take(limit as usize) {
            let review_id: String = row.try_get("review_id")?;
            let first_at: i64 = row.try_get("first_at")?;
            let record = self.decision_record(&review_id, first_at).await?;
            last = Some(DecisionCursor {
                decided_at: first_at,
                review_id: record.review_id,
            });
            decisions.push(record);
        }
        let next_cursor = last.filter(|_| more).map(|cursor| cursor.to_string());
        Ok(DecisionPage {
            decisions,
            next_cursor,
        })
    }

    async fn decision_record(
        &self,
        review_id: &str,
        first_at: i64,
    ) -> Result<DecisionRecord, StoreError> {
        let item = sqlx::query(
            "SELECT id, definition_version, copies FROM queue_items WHERE review_id = $1 \
             AND slot = 1",
        )
        .bind(review_id)
        .fetch_one(&self.pool)
        .await?;
        let copies: i64 = item.try_get("copies")?;
        let reviewers = self.answers_of(review_id).await?;
        let adjudication = sqlx::query(
            "SELECT disagreement, decided_at, lead, findings, note, upheld \
             FROM queue_adjudications WHERE review_id = $1",
        )
        .bind(review_id)
        .fetch_optional(&self.pool)
        .await?;
        let (adjudication, disagreement, label, label_by) = match adjudication {
            Some(row) => {
                let disagreement = row.try_get::<i64, _>("disagreement")? != 0;
                if row.try_get::<Option<i64>, _>("decided_at")?.is_some() {
                    let lead = answer_of(&row, "lead")?;
                    let label = Some(lead.findings.clone());
                    let by = vec![lead.name.clone()];
                    let summary = AdjudicationSummary {
                        state: "decided",
                        decision: Some(lead),
                        upheld: row.try_get("upheld")?,
                    };
                    (Some(summary), disagreement, label, by)
                } else {
                    let summary = AdjudicationSummary {
                        state: "pending",
                        decision: None,
                        upheld: None,
                    };
                    (Some(summary), disagreement, None, Vec::new())
                }
            }
            None if reviewers.len() as i64 >= copies => (
                None,
                false,
                reviewers.first().map(|answer| answer.findings.clone()),
                reviewers.iter().map(|answer| answer.name.clone()).collect(),
            ),
            None => (None, false, None, Vec::new()),
        };
        Ok(DecisionRecord {
            item: id_of(&item, "id")?,
            review_id: review_id.parse().map_err(|_| corrupt("review_id"))?,
            definition_version: item.try_get("definition_version")?,
            decided_at: rfc3339_millis(first_at),
            reviewers,
            disagreement,
            adjudication,
            label,
            label_by,
        })
    }

    /// A reviewer's own decisions (and adjudications), newest first, at most `limit`.
    pub async fn reviewer_history(
        &self,
        reviewer: &str,
        limit: u32,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        crate::check_no_controls("reviewer", reviewer).map_err(StoreError::Invalid)?;
        let rows = sqlx::query(
            "SELECT d.item_id AS id, q.definition_version AS definition_version, \
             d.decided_at AS decided_at, 'review' AS kind FROM queue_decisions d \
             JOIN queue_items q ON q.id = d.item_id WHERE d.reviewer = $1 \
             UNION ALL SELECT id, definition_version, decided_at, 'adjudication' AS kind \
             FROM queue_adjudications WHERE lead = $1 AND decided_at IS NOT NULL \
             ORDER BY decided_at DESC, id DESC LIMIT $2",
        )
        .bind(reviewer)
        .bind(i64::from(limit.clamp(1, MAX_PAGE)))
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|row| {
                Ok(HistoryEntry {
                    item: id_of(row, "id")?,
                    kind: kind_of(row)?,
                    definition_version: row.try_get("definition_version")?,
                    decided_at: rfc3339_millis(row.try_get("decided_at")?),
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decision_cursors_round_trip() {
        let review_id = ReviewId::new();
        let cursor = DecisionCursor {
            decided_at: 1_795_996_800_000,
            review_id,
        };
        assert_eq!(cursor.to_string(), format!("d1.1795996800000.{review_id}"));
        assert_eq!(cursor.to_string().parse::<DecisionCursor>(), Ok(cursor));
        assert!(
            format!("q1.1.{review_id}")
                .parse::<DecisionCursor>()
                .is_err()
        );
        assert!("d1.x.y".parse::<DecisionCursor>().is_err());
    }
}
