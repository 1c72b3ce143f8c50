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
