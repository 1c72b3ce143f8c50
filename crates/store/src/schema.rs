//! Versioned migrations. Each entry is one schema version (its position from 1); a version,
//! once released, never changes: a later change is a new entry.
//!
//! Types are the common ground of SQLite and PostgreSQL: `TEXT` and `BIGINT` only. Times are
//! Unix milliseconds, ids are UUIDv7 text (which sorts by time), JSON is text.

/// The schema version this binary writes and reads.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// (name, statements) per version.
pub(crate) const MIGRATIONS: &[(&str, &[&str])] = &[
    (
        "reviews",
        &[
            "CREATE TABLE definitions (
            digest TEXT PRIMARY KEY,
            version TEXT NOT NULL,
            questions TEXT NOT NULL,
            first_seen_at BIGINT NOT NULL
        )",
            "CREATE TABLE reviews (
            id TEXT PRIMARY KEY,
            received_at BIGINT NOT NULL,
            definition_version TEXT NOT NULL,
            definition_digest TEXT NOT NULL,
            state_digest TEXT NOT NULL,
            reference TEXT,
            status TEXT NOT NULL,
            error TEXT NOT NULL,
            detail TEXT,
            findings TEXT NOT NULL,
            model TEXT,
            input_tokens BIGINT,
            output_tokens BIGINT,
            elapsed_micros BIGINT NOT NULL,
            request_id TEXT NOT NULL,
            backend TEXT NOT NULL,
            state TEXT,
            answers TEXT,
            requested_model TEXT,
            state_erased_at BIGINT
        )",
            "CREATE INDEX reviews_reference ON reviews (reference, id)",
            "CREATE INDEX reviews_version ON reviews (definition_version, id)",
            "CREATE INDEX reviews_status ON reviews (status, id)",
            "CREATE INDEX reviews_received ON reviews (received_at)",
        ],
    ),
    (
        "review queue",
        &[
            // Each definition's expected flags (`{"criterion id": true|false}`), so labelled
            // exports can derive `expected_pass`; NULL for definitions kept before version 2.
            "ALTER TABLE definitions ADD COLUMN expected TEXT",
            // One row per copy of a queued review: slot 1, and slot 2 for a second review.
            // Pending = decided_at IS NULL AND (lease_expires IS NULL OR lease_expires <= now).
            "CREATE TABLE queue_items (
            id TEXT PRIMARY KEY,
            review_id TEXT NOT NULL,
            definition_version TEXT NOT NULL,
            reason TEXT NOT NULL,
            slot BIGINT NOT NULL,
            queued_at BIGINT NOT NULL,
            copies BIGINT NOT NULL,
            claimed_by TEXT,
            lease_expires BIGINT,
            decided_at BIGINT
        )",
            // Partial indexes hold only open (undecided) items, so decided history costs the
            // hot statements nothing; `decided_at` is a column too, so SQLite sees them as
            // covering. They lead with `queued_at` (oldest first, then id), an order the
            // primary key cannot give, so no planner walks the primary key through decided
            // history instead. The oldest open item (any version), and pages of all versions.
            "CREATE INDEX queue_items_open ON queue_items \
             (queued_at, id, lease_expires, decided_at) WHERE decided_at IS NULL",
            // The oldest open item of one version, its pages, and pending counts by version.
            "CREATE INDEX queue_items_open_version ON queue_items \
             (definition_version, queued_at, id, lease_expires, decided_at) \
             WHERE decided_at IS NULL",
            // Live leases (`lease_expires > now`): a range scan.
            "CREATE INDEX queue_items_leased ON queue_items (lease_expires, decided_at) \
             WHERE decided_at IS NULL",
            // One item per slot of a review.
            "CREATE UNIQUE INDEX queue_items_slot ON queue_items (review_id, slot)",
            // A reviewer never holds two slots of one review (NULLs are distinct); leading
            // with the reviewer, it is also the claim's lookup of "items this reviewer has
            // of the same review".
            "CREATE UNIQUE INDEX queue_items_reviewer ON queue_items (claimed_by, review_id)",
            "CREATE TABLE queue_decisions (
            item_id TEXT PRIMARY KEY,
            review_id TEXT NOT NULL,
            slot BIGINT NOT NULL,
            reviewer TEXT NOT NULL,
            findings TEXT NOT NULL,
            note TEXT,
            decided_at BIGINT NOT NULL
        )",
            // Pairs of decisions of one review (agreement), and a review's decisions (export).
            "CREATE INDEX queue_decisions_review ON queue_decisions (review_id, slot)",
            "CREATE INDEX queue_decisions_slot ON queue_decisions (slot, review_id)",
        ],
    ),
];
