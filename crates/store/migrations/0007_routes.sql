-- Routes: a stable name callers review under, pointing at one live definition version.
-- shadows: a JSON list of definition versions (kept for shadow reviews); shadow_sample: the
-- share of live reviews shadowed, as the shortest decimal text of the number (`1` for all).
-- Times are Unix milliseconds.
CREATE TABLE routes (
    name TEXT PRIMARY KEY,
    live TEXT NOT NULL,
    shadows TEXT NOT NULL,
    shadow_sample TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
