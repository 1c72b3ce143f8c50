-- Shadow reviews: a review judged by a shadow version of a route beside a live review.
-- shadow_of: the id of the live review it shadows (NULL for every review a caller received);
-- route: the route the live review came through (NULL for a review of an exact version).
ALTER TABLE reviews ADD COLUMN shadow_of TEXT;
ALTER TABLE reviews ADD COLUMN route TEXT;

-- A live review's shadows, and a route's reviews per version, without reading the others.
CREATE INDEX reviews_shadow_of ON reviews (shadow_of) WHERE shadow_of IS NOT NULL;
CREATE INDEX reviews_route ON reviews (route, definition_version, id) WHERE route IS NOT NULL;

-- Every change to a route, in order: created (from a routes file or the API), its shadows
-- changed, promoted or rolled back. seq counts from 1 per route. actor: who made the change
-- (a token's name, or `routes-file`, or `cli` with the operator's name when given); from_live
-- and to_live: the live version before and after (equal when only shadows changed; from_live
-- NULL on creation); shadows: the JSON list of shadow versions after the change; forced: 1
-- when a promote overrode its refusal. Times are Unix milliseconds.
CREATE TABLE route_changes (
    route TEXT NOT NULL,
    seq BIGINT NOT NULL,
    changed_at BIGINT NOT NULL,
    action TEXT NOT NULL,
    actor TEXT NOT NULL,
    from_live TEXT,
    to_live TEXT NOT NULL,
    shadows TEXT NOT NULL,
    reason TEXT,
    forced BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (route, seq)
);
