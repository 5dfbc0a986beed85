-- Search narrows its index query to the caller's recorded grantees.
--
-- Each indexed page now carries the grantees the ledger recorded for its
-- archive (archive_sources: its organizations and owner) when it was
-- indexed, and a search asks the index only for pages holding one of the
-- caller's, or pages of archives it names by id: the caller's active shares
-- and the archives recorded for the caller that wait to be indexed. Pages
-- indexed before this migration carry no grantees, so every archive is
-- indexed again (serve's indexer does it in the background; `ledgerctl
-- search status` counts what is left). Until then a search finds those
-- archives by id, or, while more than a thousand archives wait, narrows
-- after the index as before.
UPDATE archives SET indexed_at = NULL WHERE indexed_at IS NOT NULL;

-- The archives waiting to be indexed, read by every search (how many, and
-- which of them are recorded for the caller) and by the indexer.
CREATE INDEX archives_unindexed_idx ON archives (id) WHERE indexed_at IS NULL;
