-- Versions are recorded in _sqlx_migrations from here on. The table that recorded versions 1
-- and 2 stays, holding this version, so a jevjudge that still reads it refuses this database
-- as newer than it knows instead of migrating it again.

CREATE TABLE IF NOT EXISTS jevjudge_schema (
    version BIGINT PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at BIGINT NOT NULL
);

INSERT INTO jevjudge_schema (version, name, applied_at)
VALUES (3, 'retire jevjudge_schema', 0);
