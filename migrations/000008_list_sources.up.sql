-- The sources of the archive list's candidates (docs/security.md).
--
-- The list asks OpenFGA about candidate rows only, and OpenFGA stays the only
-- authority: a candidate is shown only when BatchCheck allows it. For the
-- list to miss nothing, the candidates must include every archive a caller
-- may view. That holds because of one invariant: every tuple that grants
-- can_view on an archive is written by the ledger, through fga_outbox, and
-- the ledger records the grantee when it queues the tuple:
--   - member from parent / owner from parent: the capture_job tuples of an
--     admission (organization:<o> parent capture_job:<task>, user:<u> owner
--     capture_job:<task>), recorded in job_sources below by insertArchives,
--     the one place that queues them;
--   - viewer: a share's tuple, recorded in shares (000005).
-- A tuple written to OpenFGA by hand, behind the ledger's back, is not a
-- candidate: such an archive is listed only with CAPTURE_LEDGER_LIST_SOURCE=scan.
--
-- job_sources is one row per grantee of a capture_job the ledger queued a
-- tuple for. archive_sources is the same fact per archive of that job (an
-- archive reaches its job's grantees through archive parent capture_job),
-- with captured_at copied so that one index range gives a grantee's archives
-- newest first. A job that gains a grantee later (a second archive of the
-- same task, admitted for another organization) gains it on all its archives.
CREATE TABLE job_sources (
    task_id    uuid NOT NULL,
    kind       text NOT NULL CHECK (kind IN ('organization', 'owner')),
    principal  text NOT NULL CHECK (principal <> ''),
    PRIMARY KEY (task_id, kind, principal)
);

CREATE TABLE archive_sources (
    archive_id   uuid NOT NULL REFERENCES archives (id) ON DELETE CASCADE,
    captured_at  timestamptz NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('organization', 'owner')),
    principal    text NOT NULL CHECK (principal <> ''),
    PRIMARY KEY (archive_id, kind, principal)
);
-- A grantee's archives, newest first, from a (captured_at, id) position.
CREATE INDEX archive_sources_principal_idx
    ON archive_sources (kind, principal, captured_at DESC, archive_id DESC);

-- Backfill from what the ledger queued before this migration: fga_outbox
-- keeps every row it delivered (processed_at), dead or pending ones too.
INSERT INTO job_sources (task_id, kind, principal)
SELECT DISTINCT substr(w->>'object', 13)::uuid,
       CASE w->>'relation' WHEN 'parent' THEN 'organization' ELSE 'owner' END,
       CASE w->>'relation' WHEN 'parent' THEN substr(w->>'user', 14) ELSE substr(w->>'user', 6) END
FROM fga_outbox o, jsonb_array_elements(COALESCE(o.payload->'writes', '[]'::jsonb)) w
WHERE w->>'object' ~ '^capture_job:[0-9a-fA-F-]{36}$'
  AND ((w->>'relation' = 'parent' AND w->>'user' LIKE 'organization:_%')
    OR (w->>'relation' = 'owner' AND w->>'user' LIKE 'user:_%'))
ON CONFLICT DO NOTHING;

INSERT INTO archive_sources (archive_id, captured_at, kind, principal)
SELECT a.id, a.captured_at, j.kind, j.principal
FROM job_sources j JOIN archives a ON a.task_id = j.task_id
ON CONFLICT DO NOTHING;

-- A grantee's active shares, newest archive first, are read through
-- shares_grantee_idx (000005) and the archives' primary key.
