-- One search index per database (docs/search.md, "Several serve processes").
--
-- search_indexer is a single row: which index the archives' indexed_at
-- marks were made for (index_id: the random id a Bleve index directory
-- carries, or "opensearch <url> <index>"), and, with Bleve, the process
-- that holds the index (holder), where it answers searches forwarded by
-- the other processes (address, secret) and until when its lease holds
-- (lease_until: renewed by the holder; past it another process takes
-- over). opensearch_until is how long an OpenSearch process that checked in
-- counts as running (a Bleve process is refused meanwhile).
CREATE TABLE search_indexer (
    id               boolean PRIMARY KEY DEFAULT true CHECK (id),
    index_id         text NOT NULL DEFAULT '',
    holder           text NOT NULL DEFAULT '',
    address          text NOT NULL DEFAULT '',
    secret           text NOT NULL DEFAULT '',
    lease_until      timestamptz NOT NULL DEFAULT 'epoch',
    acquired_at      timestamptz,
    opensearch_until timestamptz NOT NULL DEFAULT 'epoch'
);
INSERT INTO search_indexer (id) VALUES (true);

-- Archives to index wake the indexer at once, in whichever process it runs:
-- an admission (crawl level, direct capture, archives add) inserts them; a
-- new grantee, a rebuild or a takeover sets indexed_at back to NULL. The
-- notification is sent when the transaction commits (one per transaction:
-- PostgreSQL folds identical ones).
CREATE FUNCTION search_index_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('ledger_search_index', '');
    RETURN NULL;
END $$;

CREATE TRIGGER archives_search_wake_insert AFTER INSERT ON archives
    FOR EACH STATEMENT EXECUTE FUNCTION search_index_wake();
CREATE TRIGGER archives_search_wake_unindexed AFTER UPDATE OF indexed_at ON archives
    FOR EACH ROW WHEN (NEW.indexed_at IS NULL AND OLD.indexed_at IS NOT NULL)
    EXECUTE FUNCTION search_index_wake();
