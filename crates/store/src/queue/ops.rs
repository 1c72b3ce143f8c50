//! The queue's operations on a [`Store`]: enqueue, claim, decide, release, counts, pages,
//! items. Labelled exports read through `labelled.rs`.

use super::{sql::*, *};

impl Store {
    /// Keeps a definition's expected flags (`{"criterion id": true|false}`) beside its
    /// questions ([`Store::put_definition`] first), so labelled exports can derive
    /// `expected_pass` and claims can show them.
    pub async fn put_definition_expected(
        &self,
        digest: &str,
        expected: &BTreeMap<String, bool>,
    ) -> Result<(), StoreError> {
        let text =
            serde_json::to_string(expected).map_err(|e| StoreError::Invalid(e.to_string()))?;
        let done = sqlx::query("UPDATE definitions SET expected = $1 WHERE digest = $2")
            .bind(text)
            .bind(digest)
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            return Err(StoreError::Invalid(format!(
                "no definition with digest {digest}: put_definition first"
            )));
        }
        Ok(())
    }

    /// Writes the review and (if `Some`) its queue item(s) in ONE transaction: the review is
    /// never queued without being logged, nor logged as queued without its items.
    pub async fn insert_queued(
        &self,
        review: &NewReview,
        enqueue: Option<&Enqueue>,
    ) -> Result<Vec<QueueItemId>, StoreError> {
        let inclusion = enqueue
            .filter(|enqueue| enqueue.reason == QueueReason::Status)
            .map(|_| Inclusion::FULL);
        self.write_queued(review, enqueue, inclusion).await
    }

    /// [`Store::insert_queued`] recording `inclusion` (NULL: not recorded).
    pub(super) async fn write_queued(
        &self,
        review: &NewReview,
        enqueue: Option<&Enqueue>,
        inclusion: Option<Inclusion>,
    ) -> Result<Vec<QueueItemId>, StoreError> {
        let Some(enqueue) = enqueue else {
            self.insert(review).await?;
            return Ok(Vec::new());
        };
        let ids = item_ids(Some(enqueue))?;
        let now = unix_millis(SystemTime::now());
        let mut transaction = self.begin_write().await?;
        write_review(&mut transaction, review).await?;
        write_items(&mut transaction, review, enqueue, inclusion, &ids, now).await?;
        transaction.commit().await?;
        Ok(ids)
    }

    /// A write transaction: SQLite takes its write lock at once (`BEGIN IMMEDIATE`, so a read
    /// never has to be upgraded under contention), PostgreSQL a plain one.
    pub(crate) async fn begin_write(
        &self,
    ) -> Result<sqlx::Transaction<'static, sqlx::Any>, StoreError> {
        Ok(match self.kind {
            StoreKind::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            StoreKind::Postgres => self.pool.begin().await?,
        })
    }

    /// Leases the oldest pending item (optionally of one definition version) to `reviewer`
    /// until now + `lease`. Pending = not decided and (not claimed or lease expired). A
    /// reviewer is never given two items of the same review. `None` when nothing is pending.
    pub async fn claim(
        &self,
        reviewer: &str,
        version: Option<&str>,
        lease: Duration,
    ) -> Result<Option<Claimed>, StoreError> {
        self.claim_at(reviewer, version, lease, SystemTime::now())
            .await
    }

    /// [`Store::claim`] at an explicit time (tests, benchmarks).
    pub async fn claim_at(
        &self,
        reviewer: &str,
        version: Option<&str>,
        lease: Duration,
        now: SystemTime,
    ) -> Result<Option<Claimed>, StoreError> {
        match self
            .claim_inner(reviewer, version, lease, now, None)
            .await?
        {
            Claim::Leased(claimed) => Ok(Some(*claimed)),
            Claim::Empty | Claim::AtCap { .. } => Ok(None),
        }
    }

    /// [`Store::claim`] for a reviewer who may hold at most `max_leases` live leases: when they
    /// hold that many already, nothing is leased and [`Claim::AtCap`] lists what they hold.
    /// The count and the claim are atomic across replicas: on SQLite one write transaction
    /// (`BEGIN IMMEDIATE`); on PostgreSQL one transaction under an advisory lock of the
    /// reviewer's name, so two claims of one reviewer take turns and the second sees the
    /// first's lease.
    pub async fn claim_capped(
        &self,
        reviewer: &str,
        version: Option<&str>,
        lease: Duration,
        max_leases: u32,
    ) -> Result<Claim, StoreError> {
        self.claim_capped_at(reviewer, version, lease, max_leases, SystemTime::now())
            .await
    }

    /// [`Store::claim_capped`] at an explicit time (tests, benchmarks).
    pub async fn claim_capped_at(
        &self,
        reviewer: &str,
        version: Option<&str>,
        lease: Duration,
        max_leases: u32,
        now: SystemTime,
    ) -> Result<Claim, StoreError> {
        self.claim_inner(reviewer, version, lease, now, Some(max_leases))
            .await
    }

    async fn claim_inner(
        &self,
        reviewer: &str,
        version: Option<&str>,
        lease: Duration,
        now: SystemTime,
        cap: Option<u32>,
    ) -> Result<Claim, StoreError> {
        if reviewer.is_empty() {
            return Err(StoreError::Invalid(
                "a reviewer name is required".to_owned(),
            ));
        }
        check_texts(reviewer, version)?;
        let now = unix_millis(now);
        let expires = now.saturating_add(millis_of(lease));
        // PostgreSQL: the lease and the read of the review and its definition are ONE
        // statement (a round trip and a pool checkout fewer per claim); SQLite cannot put an
        // UPDATE in a WITH, and its statements are calls within the process.
        let sql = match self.kind {
            StoreKind::Postgres => claim_with_review_sql(version.is_some()),
            StoreKind::Sqlite => claim_sql(self.kind, version.is_some()),
        };
        let bound = || {
            let mut query = sqlx::query(&sql).bind(reviewer).bind(expires).bind(now);
            if let Some(version) = version {
                query = query.bind(version);
            }
            query
        };
        let mut attempt = 0;
        let row = loop {
            let result = match cap {
                None => bound().fetch_optional(&self.pool).await,
                Some(cap) => {
                    let mut transaction = self.begin_write().await?;
                    if self.kind == StoreKind::Postgres {
                        // Claims of one reviewer take turns until commit; READ COMMITTED
                        // reads the held leases after the lock, so they include the last
                        // claim's.
                        sqlx::query(
                            "SELECT CAST(pg_advisory_xact_lock($1, hashtext($2)) AS TEXT) \
                             AS locked",
                        )
                        .bind(CLAIM_LOCK_CLASS)
                        .bind(reviewer)
                        .fetch_one(&mut *transaction)
                        .await?;
                    }
                    let held = held_items(&mut transaction, reviewer, now).await?;
                    if held.len() >= cap as usize {
                        transaction.rollback().await?;
                        return Ok(Claim::AtCap { held });
                    }
                    match bound().fetch_optional(&mut *transaction).await {
                        Ok(row) => {
                            transaction.commit().await?;
                            Ok(row)
                        }
                        Err(error) => Err(error),
                    }
                }
            };
            match result {
                Ok(row) => break row,
                // The same reviewer's other claim took the review's other slot meanwhile.
                Err(error) if is_unique_violation(&error) && attempt < CLAIM_RETRIES => {
                    attempt += 1;
                }
                Err(error) => return Err(error.into()),
            }
        };
        let Some(row) = row else {
            return Ok(Claim::Empty);
        };
        let item: String = row.try_get("item_id")?;
        let item: QueueItemId = item.parse().map_err(|_| corrupt("queue_items.id"))?;
        let reason: String = row.try_get("item_reason")?;
        let slot: i64 = row.try_get("item_slot")?;
        let subject = match self.kind {
            StoreKind::Postgres => {
                // A LEFT JOIN: an item whose review is missing is an error, not "nothing
                // pending".
                if row.try_get::<Option<String>, _>("id")?.is_none() {
                    return Err(corrupt("a queued review is missing"));
                }
                subject_of(&row)?
            }
            StoreKind::Sqlite => {
                let review_id: String = row.try_get("item_review")?;
                self.review_with_definition(&review_id).await?
            }
        };
        Ok(Claim::Leased(Box::new(Claimed {
            item,
            subject,
            reason,
            slot: u8::try_from(slot).map_err(|_| corrupt("queue_items.slot"))?,
            lease_expires: time_of(expires),
        })))
    }

    /// A review with its kept state, its definition's questions and expected flags.
    pub(super) async fn review_with_definition(
        &self,
        review_id: &str,
    ) -> Result<Subject, StoreError> {
        let row = sqlx::query(&format!(
            "SELECT {} FROM reviews WHERE id = $1",
            review_with_definition_columns()
        ))
        .bind(review_id)
        .fetch_optional(&self.pool)
        .await?
        .ok_or_else(|| corrupt("a queued review is missing"))?;
        subject_of(&row)
    }

    /// Saves `reviewer`'s decision on `item`, which they must hold under a live lease; the
    /// findings must answer exactly the definition's criteria.
    pub async fn decide(
        &self,
        item: QueueItemId,
        reviewer: &str,
        decision: &Decision,
    ) -> Result<Decided, QueueError> {
        self.decide_at(item, reviewer, decision, SystemTime::now())
            .await
    }

    /// [`Store::decide`] at an explicit time (tests, benchmarks).
    pub async fn decide_at(
        &self,
        item: QueueItemId,
        reviewer: &str,
        decision: &Decision,
        now: SystemTime,
    ) -> Result<Decided, QueueError> {
        if let Some(note) = &decision.note {
            check_note(note).map_err(QueueError::Invalid)?;
        }
        let now = unix_millis(now);
        // One pool checkout for the check and the transaction (each checkout costs the pool's
        // liveness round trip).
        let mut connection = self.pool.acquire().await?;
        let facts = item_facts(&mut *connection, item).await?;
        facts.check_lease(reviewer, now)?;
        let criteria = criterion_ids(&facts.questions).ok_or_else(|| {
            QueueError::Invalid("the review's definition is not in the store".to_owned())
        })?;
        check_decision(decision, &criteria)?;
        let findings = serde_json::to_string(&decision.findings)
            .map_err(|e| QueueError::Invalid(e.to_string()))?;

        let mut transaction = match self.kind {
            StoreKind::Sqlite => connection.begin_with("BEGIN IMMEDIATE").await?,
            StoreKind::Postgres => connection.begin().await?,
        };
        let done = sqlx::query(
            "UPDATE queue_items SET decided_at = $1, lease_expires = NULL WHERE id = $2 \
             AND claimed_by = $3 AND decided_at IS NULL AND lease_expires > $1",
        )
        .bind(now)
        .bind(item.to_string())
        .bind(reviewer)
        .execute(&mut *transaction)
        .await?;
        if done.rows_affected() == 0 {
            transaction.rollback().await?;
            // Lost a race since the check above: say what happened.
            let facts = item_facts(&mut *connection, item).await?;
            facts.check_lease(reviewer, now)?;
            return Err(QueueError::LeaseNotHeld);
        }
        sqlx::query(
            "INSERT INTO queue_decisions (item_id, review_id, slot, reviewer, findings, note, \
             decided_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        )
        .bind(item.to_string())
        .bind(facts.review.review_id.to_string())
        .bind(facts.slot)
        .bind(reviewer)
        .bind(findings)
        .bind(&decision.note)
        .bind(now)
        .execute(&mut *transaction)
        .await?;
        super::team::queue_adjudication_if_needed(
            &mut transaction,
            self.kind,
            &facts.review.review_id.to_string(),
            now,
        )
        .await?;
        transaction.commit().await?;
        Ok(Decided {
            item,
            findings_by_jev: facts.review.findings.clone(),
            review: facts.review,
        })
    }

    /// Gives a leased item back to the queue (only its holder, while the lease is live).
    pub async fn release(&self, item: QueueItemId, reviewer: &str) -> Result<(), QueueError> {
        self.release_at(item, reviewer, SystemTime::now()).await
    }

    /// [`Store::release`] at an explicit time (tests, benchmarks).
    pub async fn release_at(
        &self,
        item: QueueItemId,
        reviewer: &str,
        now: SystemTime,
    ) -> Result<(), QueueError> {
        let now = unix_millis(now);
        let done = sqlx::query(
            "UPDATE queue_items SET claimed_by = NULL, lease_expires = NULL WHERE id = $1 \
             AND claimed_by = $2 AND decided_at IS NULL AND lease_expires > $3",
        )
        .bind(item.to_string())
        .bind(reviewer)
        .bind(now)
        .execute(&self.pool)
        .await?;
        if done.rows_affected() == 1 {
            return Ok(());
        }
        let facts = item_facts(&self.pool, item).await?;
        facts.check_lease(reviewer, now)?;
        Err(QueueError::LeaseNotHeld)
    }

    /// Pending counts by version, live leases, decisions and agreement.
    pub async fn queue_stats(&self) -> Result<QueueStats, StoreError> {
        self.queue_stats_at(SystemTime::now()).await
    }

    /// [`Store::queue_stats`] at an explicit time (tests, benchmarks).
    pub async fn queue_stats_at(&self, now: SystemTime) -> Result<QueueStats, StoreError> {
        let mut stats = self.queue_counts_at(now).await?;
        stats.agreement = self.agreement().await?;
        Ok(stats)
    }

    /// The counts of [`Store::queue_stats`] without the agreement (`agreement` is empty):
    /// what the queue page shows, without reading every pair of decisions.
    pub async fn queue_counts(&self) -> Result<QueueStats, StoreError> {
        self.queue_counts_at(SystemTime::now()).await
    }

    /// [`Store::queue_counts`] at an explicit time (tests, benchmarks).
    pub async fn queue_counts_at(&self, now: SystemTime) -> Result<QueueStats, StoreError> {
        self.counts(unix_millis(now), None).await
    }

    /// The counts of [`Store::queue_counts`] for a page shown often, each reading at most
    /// `cap` rows of an index, so the page costs the same at 100,000 pending items as at
    /// 10,000 (an exact count reads every open item):
    /// - pending by version counts the oldest `cap` pending items: exact while fewer than `cap`
    ///   are pending; when the figures add up to `cap`, each is a lower bound ("or more");
    /// - claimed is exact (live leases: as many as people reviewing, through their index);
    /// - decided stops at `cap` (a figure equal to `cap` means "`cap` or more").
    pub async fn queue_counts_capped(&self, cap: u64) -> Result<QueueStats, StoreError> {
        let cap = i64::try_from(cap).unwrap_or(i64::MAX);
        self.counts(unix_millis(SystemTime::now()), Some(cap)).await
    }

    /// Pending by version, live leases and decisions at `now` (Unix milliseconds), exact or,
    /// with `cap`, as [`Store::queue_counts_capped`] says; `agreement` is empty.
    async fn counts(&self, now: i64, cap: Option<i64>) -> Result<QueueStats, StoreError> {
        let (pending_sql, decided_sql) = match cap {
            None => (
                PENDING_COUNTS_SQL,
                "SELECT COUNT(*) AS n FROM queue_decisions",
            ),
            Some(_) => (
                "SELECT definition_version, COUNT(*) AS n FROM (SELECT definition_version \
                 FROM queue_items WHERE decided_at IS NULL \
                 AND (lease_expires IS NULL OR lease_expires <= $1) \
                 ORDER BY queued_at, id LIMIT $2) oldest GROUP BY definition_version",
                "SELECT COUNT(*) AS n FROM (SELECT 1 FROM queue_decisions LIMIT $1) capped",
            ),
        };
        let cap = || cap.map(Bind::Int);
        let pending_binds = [Some(Bind::Int(now)), cap()].into_iter().flatten();
        let rows = query_with(pending_sql, pending_binds.collect())
            .fetch_all(&self.pool)
            .await?;
        let expired_sql = match cap() {
            None => "SELECT COUNT(*) AS n FROM queue_items WHERE expired_at IS NOT NULL",
            Some(_) => {
                "SELECT COUNT(*) AS n FROM (SELECT 1 FROM queue_items \
                 WHERE expired_at IS NOT NULL LIMIT $1) capped"
            }
        };
        Ok(QueueStats {
            pending_by_version: counts_by_version(&rows)?,
            claimed: self.live_leases(now).await?,
            decided: count_rows(&self.pool, decided_sql, cap().into_iter().collect()).await?,
            expired: count_rows(&self.pool, expired_sql, cap().into_iter().collect()).await?,
            agreement: BTreeMap::new(),
        })
    }

    /// Items under a live lease (through `queue_items_leased`).
    async fn live_leases(&self, now: i64) -> Result<u64, StoreError> {
        count_rows(
            &self.pool,
            "SELECT COUNT(*) AS n FROM queue_items WHERE decided_at IS NULL AND lease_expires > $1",
            vec![Bind::Int(now)],
        )
        .await
    }

    /// Agreement per criterion over the reviews decided twice, in batches.
    async fn agreement(&self) -> Result<BTreeMap<String, Agreement>, StoreError> {
        let mut tables: BTreeMap<String, AgreementTable> = BTreeMap::new();
        let mut batches = Batches::new(
            &self.pool,
            "SELECT b.review_id AS review_id, a.findings AS first, b.findings AS second \
             FROM queue_decisions b JOIN queue_decisions a \
             ON a.review_id = b.review_id AND a.slot = 1 \
             WHERE b.slot = 2 AND b.review_id > $1 ORDER BY b.review_id LIMIT $2",
            "review_id",
            BATCH,
        );
        while let Some(rows) = batches.next().await? {
            for row in &rows {
                let first = findings_of(&row.try_get::<String, _>("first")?)?;
                let second = findings_of(&row.try_get::<String, _>("second")?)?;
                for (id, answer) in &first {
                    let table = tables.entry(id.clone()).or_default();
                    if let (Some(a), Some(Some(b))) = (answer, second.get(id)) {
                        table.add(*a, *b);
                    }
                }
            }
        }
        Ok(tables
            .into_iter()
            .map(|(id, table)| {
                (
                    id,
                    Agreement {
                        items: table.total(),
                        observed: table.observed(),
                        kappa: table.kappa(),
                        scott_pi: table.scott_pi(),
                    },
                )
            })
            .collect())
    }

    /// Open (pending and leased) items, oldest first, keyset-paged (`limit` 1 to
    /// [`MAX_PAGE`]), optionally of one definition version.
    pub async fn queue_page(
        &self,
        version: Option<&str>,
        limit: u32,
        cursor: Option<&QueueCursor>,
    ) -> Result<QueuePage, StoreError> {
        self.queue_page_at(version, limit, cursor, SystemTime::now())
            .await
    }

    /// [`Store::queue_page`] at an explicit time (which leases count as live).
    pub async fn queue_page_at(
        &self,
        version: Option<&str>,
        limit: u32,
        cursor: Option<&QueueCursor>,
        now: SystemTime,
    ) -> Result<QueuePage, StoreError> {
        let limit = limit.clamp(1, MAX_PAGE);
        if let Some(version) = version {
            crate::check_no_controls("version", version).map_err(StoreError::Invalid)?;
        }
        let mut conditions = vec!["q.decided_at IS NULL".to_owned()];
        let mut binds: Vec<Bind> = Vec::new();
        if let Some(version) = version {
            binds.push(Bind::Text(version.to_owned()));
            conditions.push(format!("q.definition_version = ${}", binds.len()));
        }
        if let Some(cursor) = cursor {
            binds.push(Bind::Int(cursor.queued_at));
            binds.push(Bind::Text(cursor.item.to_string()));
            conditions.push(format!(
                "(q.queued_at, q.id) > (${}, ${})",
                binds.len() - 1,
                binds.len()
            ));
        }
        let sql = page_sql(&conditions.join(" AND "), binds.len() + 1);
        let query = query_with(&sql, binds);
        let rows = query
            .bind(i64::from(limit) + 1)
            .fetch_all(&self.pool)
            .await?;
        let now = unix_millis(now);
        let mut items = rows
            .iter()
            .map(|row| entry_of(row, now))
            .collect::<Result<Vec<_>, _>>()?;
        let next_cursor = if items.len() > limit as usize {
            items.truncate(limit as usize);
            items
                .last()
                .map(|entry| QueueCursor::after(entry).to_string())
        } else {
            None
        };
        Ok(QueuePage { items, next_cursor })
    }

    /// One item with its review, the definition's questions, and its decision if decided.
    pub async fn queue_item(&self, item: QueueItemId) -> Result<Option<QueueItemView>, StoreError> {
        let Some(row) = sqlx::query(&format!(
            "SELECT {ENTRY_COLUMNS}, q.decided_at AS item_decided_at, d.reviewer AS reviewer, \
             d.findings AS decided_findings, d.note AS note, d.decided_at AS decided_at \
             FROM queue_items q JOIN reviews r ON r.id = q.review_id \
             LEFT JOIN queue_decisions d ON d.item_id = q.id WHERE q.id = $1"
        ))
        .bind(item.to_string())
        .fetch_optional(&self.pool)
        .await?
        else {
            return Ok(None);
        };
        let entry = entry_of(&row, unix_millis(SystemTime::now()))?;
        let decision = match row.try_get::<Option<String>, _>("decided_findings")? {
            Some(findings) => Some(DecisionView {
                reviewer: row.try_get("reviewer")?,
                findings: findings_of(&findings)?,
                note: row.try_get("note")?,
                decided_at: rfc3339_millis(row.try_get("decided_at")?),
            }),
            None => None,
        };
        let subject = self
            .review_with_definition(&entry.review_id.to_string())
            .await?;
        Ok(Some(QueueItemView {
            entry,
            subject,
            decision,
        }))
    }
}

/// Refuses a reviewer name or version filter with a control character
/// ([`StoreError::Invalid`] naming it): PostgreSQL would refuse a NUL as an encoding error.
fn check_texts(reviewer: &str, version: Option<&str>) -> Result<(), StoreError> {
    crate::check_no_controls("reviewer", reviewer).map_err(StoreError::Invalid)?;
    if let Some(version) = version {
        crate::check_no_controls("version", version).map_err(StoreError::Invalid)?;
    }
    Ok(())
}

/// The first key of the advisory locks that serialise one reviewer's capped claims on
/// PostgreSQL (the second is a hash of the name); two-key locks never meet sqlx's migration
/// lock, which takes one 64-bit key.
pub(super) const CLAIM_LOCK_CLASS: i32 = 0x6a65_7601;

/// The items `reviewer` holds under a live lease at `now`, soonest lease end first.
async fn held_items(
    connection: &mut sqlx::AnyConnection,
    reviewer: &str,
    now: i64,
) -> Result<Vec<QueueItemId>, StoreError> {
    let rows = sqlx::query(
        "SELECT id FROM queue_items WHERE claimed_by = $1 AND decided_at IS NULL \
         AND lease_expires > $2 ORDER BY lease_expires, id",
    )
    .bind(reviewer)
    .bind(now)
    .fetch_all(&mut *connection)
    .await?;
    rows.iter()
        .map(|row| {
            let id: String = row.try_get("id")?;
            id.parse().map_err(|_| corrupt("queue_items.id"))
        })
        .collect()
}

/// New ids for the queue items of one review: none without `enqueue`, else one per copy
/// (1, or 2 for a second review; any other count is refused).
pub(crate) fn item_ids(enqueue: Option<&Enqueue>) -> Result<Vec<QueueItemId>, StoreError> {
    let Some(enqueue) = enqueue else {
        return Ok(Vec::new());
    };
    if !(1..=2).contains(&enqueue.copies) {
        return Err(StoreError::Invalid(format!(
            "a review is queued once or twice (second review), not {} times",
            enqueue.copies
        )));
    }
    Ok((0..enqueue.copies).map(|_| QueueItemId::new()).collect())
}

/// Writes the queue items `ids` ([`item_ids`]) of `review`, queued at `now` (Unix ms), on
/// `connection` (inside the transaction that writes the review).
pub(crate) async fn write_items(
    connection: &mut sqlx::AnyConnection,
    review: &NewReview,
    enqueue: &Enqueue,
    inclusion: Option<Inclusion>,
    ids: &[QueueItemId],
    now: i64,
) -> Result<(), sqlx::Error> {
    for (index, id) in ids.iter().enumerate() {
        let reason = if index == 0 {
            enqueue.reason.as_str()
        } else {
            SECOND_REVIEW
        };
        sqlx::query(
            "INSERT INTO queue_items (id, review_id, definition_version, reason, slot, \
             queued_at, copies, inclusion) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(id.to_string())
        .bind(review.id.to_string())
        .bind(&review.definition_version)
        .bind(reason)
        .bind(index as i64 + 1)
        .bind(now)
        .bind(i64::from(enqueue.copies))
        .bind(inclusion.map(Inclusion::to_text))
        .execute(&mut *connection)
        .await?;
    }
    Ok(())
}
