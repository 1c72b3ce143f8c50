-- The review queue: items to review, and the reviewers' decisions.

-- Each definition's expected flags ({"criterion id": true|false}), so labelled exports can
-- derive expected_pass; NULL for definitions kept before this version.
ALTER TABLE definitions ADD COLUMN expected TEXT;

-- One row per copy of a queued review: slot 1, and slot 2 for a second review.
-- Pending = decided_at IS NULL AND (lease_expires IS NULL OR lease_expires <= now).
CREATE TABLE queue_items (
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
);

-- Partial indexes hold only open (undecided) items, so decided history costs the hot
-- statements nothing; decided_at is a column too, so SQLite sees them as covering. They lead
-- with queued_at (oldest first, then id), an order the primary key cannot give, so no planner
-- walks the primary key through decided history instead. The oldest open item (any version),
-- and pages of all versions.
CREATE INDEX queue_items_open ON queue_items
    (queued_at, id, lease_expires, decided_at) WHERE decided_at IS NULL;

-- The oldest open item of one version, its pages, and pending counts by version.
CREATE INDEX queue_items_open_version ON queue_items
    (definition_version, queued_at, id, lease_expires, decided_at) WHERE decided_at IS NULL;

-- Live leases (lease_expires > now): a range scan.
CREATE INDEX queue_items_leased ON queue_items (lease_expires, decided_at)
    WHERE decided_at IS NULL;

-- One item per slot of a review.
CREATE UNIQUE INDEX queue_items_slot ON queue_items (review_id, slot);

-- A reviewer never holds two slots of one review (NULLs are distinct); leading with the
-- reviewer, it is also the claim's lookup of "items this reviewer has of the same review".
CREATE UNIQUE INDEX queue_items_reviewer ON queue_items (claimed_by, review_id);

CREATE TABLE queue_decisions (
    item_id TEXT PRIMARY KEY,
    review_id TEXT NOT NULL,
    slot BIGINT NOT NULL,
    reviewer TEXT NOT NULL,
    findings TEXT NOT NULL,
    note TEXT,
    decided_at BIGINT NOT NULL
);

-- Pairs of decisions of one review (agreement), and a review's decisions (export).
CREATE INDEX queue_decisions_review ON queue_decisions (review_id, slot);
CREATE INDEX queue_decisions_slot ON queue_decisions (slot, review_id);
