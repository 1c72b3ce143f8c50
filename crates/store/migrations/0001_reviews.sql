-- The decision log: the definitions reviews were made with, and one row per review.
-- Types are the common ground of SQLite and PostgreSQL: TEXT and BIGINT only. Times are Unix
-- milliseconds, ids are UUIDv7 text (which sorts by time), JSON is text.

CREATE TABLE definitions (
    digest TEXT PRIMARY KEY,
    version TEXT NOT NULL,
    questions TEXT NOT NULL,
    first_seen_at BIGINT NOT NULL
);

CREATE TABLE reviews (
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
);

CREATE INDEX reviews_reference ON reviews (reference, id);
CREATE INDEX reviews_version ON reviews (definition_version, id);
CREATE INDEX reviews_status ON reviews (status, id);
CREATE INDEX reviews_received ON reviews (received_at);
