-- Why archives could not be indexed for full-text search (docs/search.md).
--
-- The index's state stays the one column archives.indexed_at (one
-- statement, `UPDATE archives SET indexed_at = NULL`, rebuilds it). An archive that
-- fails keeps indexed_at NULL, so a later pass retries it; this table says
-- why it failed, for `ledgerctl search status`, and when to try again: a
-- WACZ that is not a ZIP does not become one, and retrying it on every pass
-- would read it forever, so retries back off (doubling, capped). A
-- successful index deletes the row.
CREATE TABLE search_index_failures (
    archive_id  uuid PRIMARY KEY REFERENCES archives (id) ON DELETE CASCADE,
    reason      text NOT NULL CHECK (reason <> ''),
    attempts    integer NOT NULL CHECK (attempts >= 1),
    failed_at   timestamptz NOT NULL DEFAULT now(),
    retry_at    timestamptz NOT NULL
);
