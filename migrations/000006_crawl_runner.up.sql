-- The embedded crawl runner's own records (pkg/crawl/runner, docs/crawling.md).
--
-- A level report must carry every page of the level, and pkg/crawl writes
-- crawl_pages only when the report is admitted. The runner keeps each
-- page's result here the moment its capture ends, so a runner stopped in the
-- middle of a level (serve restarted, `crawl start --wait` interrupted)
-- resumes with only the pages that have no result: no page is captured
-- twice and none is lost. A row whose result is NULL is a capture that was
-- in flight; its task_id lets the next runner look for the manifest it may
-- have written before capturing again.
CREATE TABLE crawl_runner_results (
    crawl_id     uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    url          text NOT NULL,
    depth        integer NOT NULL CHECK (depth >= 0),
    host         text NOT NULL,
    task_id      text,
    submitted_at timestamptz,
    finished_at  timestamptz,
    -- The page's crawl.PageReport as the level report will carry it.
    result       jsonb CHECK (result IS NULL OR jsonb_typeof(result) = 'object'),
    -- Captures made for the page (a 429/503 or a transient failure is
    -- retried once) and the back-off waited before the retry.
    attempts     integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    backoff_ms   integer NOT NULL DEFAULT 0 CHECK (backoff_ms >= 0),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (crawl_id, url)
);
CREATE INDEX crawl_runner_results_level_idx ON crawl_runner_results (crawl_id, depth);

-- How the runner paced each host at each level: what robots.txt said and
-- which delay it applied, and why. The politeness report
-- (GET /api/crawls/{id}/politeness) checks the recorded gaps against it.
CREATE TABLE crawl_runner_hosts (
    crawl_id       uuid NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    depth          integer NOT NULL CHECK (depth >= 0),
    host           text NOT NULL,
    robots         text NOT NULL CHECK (robots IN ('fetched', 'absent', 'unreachable', 'unparsable')),
    robots_status  integer,
    robots_error   text,
    crawl_delay_ms integer CHECK (crawl_delay_ms >= 0),
    delay_ms       integer NOT NULL CHECK (delay_ms >= 0),
    delay_source   text NOT NULL CHECK (delay_source IN ('setting', 'crawl-delay', 'cap')),
    backoffs       integer NOT NULL DEFAULT 0 CHECK (backoffs >= 0),
    backoff_ms     integer NOT NULL DEFAULT 0 CHECK (backoff_ms >= 0),
    PRIMARY KEY (crawl_id, depth, host)
);
