-- A team's queue: adjudication of second-reviewed items whose two reviewers disagree (or one
-- could not tell), decided by a lead; and the decisions read back in pages.

-- One row per review sent to adjudication. Open = decided_at IS NULL; leased like a queue item
-- (claimed_by, lease_expires), but only a lead claims it. The lead's findings are the review's
-- label. disagreement: 1 when the two reviewers answered a criterion differently (a can't-tell
-- against an answer counts), 0 when they agreed but one could not tell. upheld: which
-- reviewer's findings the lead's equal: first, second, both or neither.
CREATE TABLE queue_adjudications (
    id TEXT PRIMARY KEY,
    review_id TEXT NOT NULL,
    definition_version TEXT NOT NULL,
    disagreement BIGINT NOT NULL,
    queued_at BIGINT NOT NULL,
    claimed_by TEXT,
    lease_expires BIGINT,
    decided_at BIGINT,
    lead TEXT,
    findings TEXT,
    note TEXT,
    upheld TEXT
);

-- One adjudication per review.
CREATE UNIQUE INDEX queue_adjudications_review ON queue_adjudications (review_id);

-- Open adjudications, oldest first (the lead's claim and the pending count).
CREATE INDEX queue_adjudications_open ON queue_adjudications
    (queued_at, id, lease_expires, decided_at) WHERE decided_at IS NULL;

-- A lead's held adjudications.
CREATE INDEX queue_adjudications_held ON queue_adjudications (claimed_by, lease_expires)
    WHERE decided_at IS NULL;

-- Decisions read back in pages: a review's first decision time, and one reviewer's history.
CREATE INDEX queue_decisions_time ON queue_decisions (decided_at, review_id);
CREATE INDEX queue_decisions_reviewer ON queue_decisions (reviewer, decided_at);
