-- Items closed unanswered because retention erased their review's state text: nobody could
-- decide them any more. decided_at is when an item was closed: by a decision (its
-- queue_decisions row) or by expiry (expired_at set too, no decision). Closed items are never
-- handed out; expired ones count in the queue's stats and in the labelled export's left-out
-- counts.
ALTER TABLE queue_items ADD COLUMN expired_at BIGINT;

-- Items still open whose state a retention sweep erased before this version: expired at the
-- time of the erasure.
UPDATE queue_items
SET expired_at = (SELECT r.state_erased_at FROM reviews r WHERE r.id = queue_items.review_id),
    decided_at = (SELECT r.state_erased_at FROM reviews r WHERE r.id = queue_items.review_id),
    lease_expires = NULL
WHERE decided_at IS NULL
  AND EXISTS (SELECT 1 FROM reviews r WHERE r.id = queue_items.review_id
              AND r.state IS NULL AND r.state_erased_at IS NOT NULL);

-- The count of expired items, without reading decided history.
CREATE INDEX queue_items_expired ON queue_items (expired_at) WHERE expired_at IS NOT NULL;
