-- One row per level report a crawl accepted. It makes a
-- re-sent report idempotent: a report whose digest matches is answered from
-- here and changes nothing, and a different report for a depth that was
-- already reported is refused. The counts are what that report contributed
-- to the crawl's counters, kept as evidence.
CREATE TABLE crawl_levels (
    crawl_id          uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    depth             integer NOT NULL CHECK (depth >= 0),
    -- sha256 of the report in canonical form (see pkg/crawl LevelReport.Digest).
    digest            bytea NOT NULL CHECK (length(digest) = 32),
    results           integer NOT NULL CHECK (results >= 0),
    pages_closed      integer NOT NULL CHECK (pages_closed >= 0),
    pages_captured    integer NOT NULL CHECK (pages_captured >= 0),
    pages_recovered   integer NOT NULL CHECK (pages_recovered >= 0),
    archives_admitted integer NOT NULL CHECK (archives_admitted >= 0),
    pages_discovered  integer NOT NULL CHECK (pages_discovered >= 0),
    next_pages        integer NOT NULL CHECK (next_pages >= 0),
    -- This level's stop reason as the report's answer gave it (NULL when the
    -- crawl went on), not the crawl's coalesced one.
    stop_reason       text CHECK (stop_reason IN ('completed', 'max_depth', 'max_pages')),
    reported_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (crawl_id, depth)
);
