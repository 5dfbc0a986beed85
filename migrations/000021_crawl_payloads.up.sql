-- A crawl's payload index: each payload (by its WARC-Payload-Digest) that a
-- capture of the crawl stored in full, and where — the response record's
-- URL and date, and the WACZ holding it, by the name the crawl's replay
-- collection gives it. A later capture of the same crawl fetching the same
-- payload writes a WARC revisit record pointing here instead of the body
-- (pkg/capture, docs/replay.md). A row is added only once its WACZ, links
-- file and manifest are uploaded; the first row of a digest stays.
CREATE TABLE crawl_payloads (
    crawl_id    uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    digest      text NOT NULL CHECK (digest ~ '^sha256:[0-9a-f]{64}$'),
    url         text NOT NULL CHECK (url ~* '^https?://'),
    captured_at timestamptz NOT NULL,
    container   text NOT NULL CHECK (container ~ '^[A-Za-z0-9_-][A-Za-z0-9._-]*\.wacz$'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (crawl_id, digest)
);
