-- Each queued item's inclusion probability π: the chance that its review was queued at all,
-- as the shortest decimal text of the number (`1` for a status queued in full, the sampling
-- rate such as `0.3` for a sampled PASS; a second review's copy holds its review's π). A
-- labelled export weighs each case by 1/π, so labels of sampled traffic estimate rates of
-- the whole traffic.
ALTER TABLE queue_items ADD COLUMN inclusion TEXT;

-- Items queued before this version: a status was queued in full (π = 1, exactly). The rate a
-- PASS was sampled at was not recorded: those items keep NULL, which exports read as π = 1
-- (weight 1) and count as "inclusion not recorded".
UPDATE queue_items SET inclusion = '1'
WHERE review_id IN (SELECT review_id FROM queue_items WHERE slot = 1 AND reason = 'status');

-- How many leases of the item ran out before its holder decided or released it, counted when
-- the item is claimed again (a lease that has run out and is not yet claimed again is counted
-- from lease_expires). Their sum is the queue's count of expired leases.
ALTER TABLE queue_items ADD COLUMN expired_leases BIGINT NOT NULL DEFAULT 0;

-- The items whose leases ran out, without reading the others.
CREATE INDEX queue_items_expired_leases ON queue_items (expired_leases) WHERE expired_leases > 0;
