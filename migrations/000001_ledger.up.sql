-- The ledger's schema: the original TypeScript capture-ledger's final schema
-- plus crawl_decisions, pinned crawl rules, the final URL and discovered_from
-- of crawl pages, outbox backoff and dead-letter state, and a crawl progress
-- timestamp (docs/architecture.md lists where the project differs).
CREATE EXTENSION IF NOT EXISTS pgcrypto;

CREATE TABLE capture_targets (
    id          bigserial PRIMARY KEY,
    org_id      text NOT NULL CHECK (org_id <> ''),
    url         text NOT NULL CHECK (url <> '' AND url = btrim(url)),
    url_hash    bytea GENERATED ALWAYS AS (digest(url, 'sha256')) STORED,
    labels      text[] NOT NULL DEFAULT '{}'::text[],
    enabled     boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT capture_targets_url_http_check CHECK (url ~* '^https?://')
);
CREATE UNIQUE INDEX capture_targets_org_url_hash_key ON capture_targets (org_id, url_hash);
CREATE INDEX capture_targets_enabled_id_idx ON capture_targets (id) WHERE enabled;

-- No owner or org column on purpose: who may read an archive is a relation
-- that lives in OpenFGA only, the one authority on who may read what.
CREATE TABLE archives (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    task_id         uuid NOT NULL,
    correlation_id  text,
    bucket          text NOT NULL CHECK (bucket <> ''),
    object_key      text NOT NULL CHECK (object_key <> ''),
    source_url      text NOT NULL,
    labels          text[] NOT NULL DEFAULT '{}'::text[],
    wacz_complete   boolean,
    signed          boolean,
    captured_at     timestamptz NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    indexed_at      timestamptz,
    CONSTRAINT archives_bucket_object_key_key UNIQUE (bucket, object_key)
);
CREATE INDEX archives_task_id_idx ON archives (task_id);
-- The list is newest first with a (captured_at, id) cursor.
CREATE INDEX archives_captured_at_idx ON archives (captured_at DESC, id DESC);
CREATE INDEX archives_unindexed_idx ON archives (id) WHERE indexed_at IS NULL;

CREATE TABLE fga_outbox (
    id               bigserial PRIMARY KEY,
    payload          jsonb NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    processed_at     timestamptz,
    attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    last_error       text,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    dead_at          timestamptz,
    CONSTRAINT fga_outbox_delivered_or_dead CHECK (processed_at IS NULL OR dead_at IS NULL)
);
CREATE INDEX fga_outbox_pending_idx ON fga_outbox (next_attempt_at, id)
    WHERE processed_at IS NULL AND dead_at IS NULL;
CREATE INDEX fga_outbox_dead_idx ON fga_outbox (id) WHERE dead_at IS NOT NULL;

CREATE TABLE capture_submissions (
    task_id         uuid PRIMARY KEY,
    correlation_id  text,
    org_id          text NOT NULL,
    submitted_by    text,
    submitted_at    timestamptz NOT NULL DEFAULT now(),
    manifest_key    text,
    manifest_error  text
);
CREATE INDEX capture_submissions_submitted_at_idx ON capture_submissions (submitted_at)
    WHERE manifest_key IS NOT NULL;

CREATE TABLE crawls (
    id                   uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    seeds                text[] NOT NULL,
    rules                jsonb NOT NULL DEFAULT '[{"follow":"same-origin"}]'::jsonb,
    max_depth            integer NOT NULL CHECK (max_depth BETWEEN 0 AND 10),
    max_pages            integer NOT NULL CHECK (max_pages >= 1),
    per_host_delay_ms    integer NOT NULL CHECK (per_host_delay_ms >= 0),
    host_parallelism     integer NOT NULL CHECK (host_parallelism >= 1),
    org_id               text NOT NULL,
    requested_by         text NOT NULL,
    state                text NOT NULL DEFAULT 'running'
                         CHECK (state IN ('running', 'succeeded', 'failed')),
    stop_reason          text CHECK (stop_reason IN ('completed', 'max_depth', 'max_pages', 'failed')),
    started_at           timestamptz NOT NULL DEFAULT now(),
    finished_at          timestamptz,
    progressed_at        timestamptz NOT NULL DEFAULT now(),
    pages_discovered     integer NOT NULL DEFAULT 0,
    pages_captured       integer NOT NULL DEFAULT 0,
    error                text,
    artifact_key_prefix  text,
    last_job_id          text,
    last_job_depth       integer,
    -- array_length of an empty array is NULL, and a CHECK passes on NULL: the
    -- coalesce is what makes this reject '{}'.
    CONSTRAINT crawls_seeds_not_empty CHECK (coalesce(array_length(seeds, 1), 0) >= 1),
    CONSTRAINT crawls_rules_array CHECK (jsonb_typeof(rules) = 'array')
);
-- One running crawl across every organization: politeness holds only within
-- one runner, and two crawls cannot see each other's timing.
CREATE UNIQUE INDEX crawls_single_active_idx ON crawls ((true)) WHERE state = 'running';
CREATE INDEX crawls_started_at_idx ON crawls (started_at DESC, id DESC);

CREATE TABLE crawl_pages (
    id               bigserial PRIMARY KEY,
    crawl_id         uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    url              text NOT NULL CHECK (url <> '' AND url = btrim(url)),
    url_hash         bytea GENERATED ALWAYS AS (digest(url, 'sha256')) STORED,
    depth            integer NOT NULL CHECK (depth >= 0),
    host             text NOT NULL,
    state            text NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'captured', 'failed', 'skipped')),
    skip_reason      text,
    task_id          text,
    correlation_id   text,
    final_url        text,
    discovered_from  bigint REFERENCES crawl_pages (id) ON DELETE SET NULL,
    submitted_at     timestamptz,
    finished_at      timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX crawl_pages_crawl_id_url_hash_key ON crawl_pages (crawl_id, url_hash);
CREATE INDEX crawl_pages_crawl_id_depth_idx ON crawl_pages (crawl_id, depth);
CREATE INDEX crawl_pages_crawl_id_host_idx ON crawl_pages (crawl_id, host, submitted_at);
CREATE INDEX crawl_pages_task_id_idx ON crawl_pages (task_id) WHERE task_id IS NOT NULL;

-- What the rules decided: per crawl, depth, rule and hostname, the number of
-- distinct links and a few samples. A re-sent level replaces its rows.
CREATE TABLE crawl_decisions (
    crawl_id  uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    depth     integer NOT NULL CHECK (depth >= 0),
    rule      integer NOT NULL CHECK (rule >= 0),
    action    text NOT NULL CHECK (action IN ('follow', 'capture', 'skip')),
    hostname  text NOT NULL,
    links     integer NOT NULL CHECK (links >= 0),
    samples   text[] NOT NULL DEFAULT '{}'::text[],
    PRIMARY KEY (crawl_id, depth, rule, hostname)
);
-- Label-boundary domain lookups: reverse(hostname) LIKE reverse('.' || domain) || '%'.
CREATE INDEX crawl_decisions_rhostname_idx ON crawl_decisions (reverse(hostname) text_pattern_ops);
