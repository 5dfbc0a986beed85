-- Many crawls at once, polite to every host across all of them
-- (docs/crawling.md).
--
-- Crawls are no longer limited to one running crawl in the whole ledger: the
-- bound is per organization (CAPTURE_LEDGER_CRAWLS_PER_ORG), counted by the
-- start under an advisory lock of the organization. The index serves that
-- count.
DROP INDEX IF EXISTS crawls_single_active_idx;
CREATE INDEX crawls_running_org_idx ON crawls (org_id) WHERE state = 'running';

-- One row per host anything has captured: when its last capture ended and
-- until when the parties that captured it asked it to be left alone (the
-- delay they keep: a setting, robots.txt's Crawl-delay, a back-off after a
-- 429/503). Every capture locks its host's row to start and to end, so the
-- host's captures are ordered in PostgreSQL, whichever process makes them.
-- crawl_delay_ms is the host's robots.txt Crawl-delay as the last crawl to
-- read it found it (capped): every party keeps it, direct captures too.
CREATE TABLE host_pace (
    host           text PRIMARY KEY,
    last_end       timestamptz,
    hold_until     timestamptz,
    hold_source    text,
    crawl_delay_ms integer NOT NULL DEFAULT 0 CHECK (crawl_delay_ms >= 0)
);

-- Every capture of a host, by any crawl or direct capture, in any process: a
-- row is the host's lease while ended_at is NULL (at most
-- CAPTURE_LEDGER_HOST_CAPTURES_AT_ONCE such rows per host), and the evidence
-- of `ledgerctl hosts politeness` afterwards. Times are PostgreSQL's clock.
-- A lease whose process died ends at expires_at (expired = true).
CREATE TABLE host_captures (
    id           bigserial PRIMARY KEY,
    host         text NOT NULL,
    holder       uuid NOT NULL UNIQUE,
    kind         text NOT NULL CHECK (kind IN ('crawl', 'capture')),
    org_id       text NOT NULL,
    crawl_id     uuid REFERENCES crawls (id) ON DELETE SET NULL,
    url          text NOT NULL,
    started_at   timestamptz NOT NULL,
    ended_at     timestamptz CHECK (ended_at IS NULL OR ended_at >= started_at),
    expires_at   timestamptz NOT NULL,
    expired      boolean NOT NULL DEFAULT false,
    -- The end the gap was counted from (NULL: the host's first capture),
    -- the gap the capture had to keep after it, and why.
    prev_end     timestamptz,
    delay_ms     integer NOT NULL CHECK (delay_ms >= 0),
    delay_source text NOT NULL,
    -- What the party asked every next capture to keep after this one's end
    -- (its own delay, or a back-off after a 429/503), and why.
    hold_ms      integer CHECK (hold_ms >= 0),
    hold_source  text
);
CREATE INDEX host_captures_host_idx ON host_captures (host, started_at);
CREATE INDEX host_captures_open_idx ON host_captures (host) WHERE ended_at IS NULL;

-- Who waits for a host: the turn goes to the organization that was served
-- least recently (round robin between organizations, oldest waiter first
-- within one). A waiter not seen for a while (its process died) is dropped.
CREATE TABLE host_waiters (
    host     text NOT NULL,
    holder   uuid NOT NULL,
    org_id   text NOT NULL,
    delay_ms integer NOT NULL CHECK (delay_ms >= 0),
    since    timestamptz NOT NULL,
    seen_at  timestamptz NOT NULL,
    PRIMARY KEY (host, holder)
);

CREATE TABLE host_turns (
    host       text NOT NULL,
    org_id     text NOT NULL,
    granted_at timestamptz NOT NULL,
    PRIMARY KEY (host, org_id)
);
