-- Who a caller is to the ledger, written once, and what the list and search
-- can filter by.
--
-- ledger_viewer_grantees is the grantees a caller holds in archive_sources
-- (000008): each organization of its identity, and itself as owner.
-- ledger_active_shares is the shares that reach a caller: not revoked, not
-- expired at `at`, granted to it or to one of its organizations. The list's
-- candidates (CandidatesBefore), search's narrowing by id (RecordedFor) and
-- search's scope (SearchScope) all read these two, so the predicates are
-- spelled here only. Both are plain SQL functions the planner inlines: an
-- archive_sources range per grantee and the shares indexes are used as
-- before.
CREATE FUNCTION ledger_viewer_grantees(orgs text[], subject text)
RETURNS TABLE (kind text, principal text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT 'organization'::text, o FROM unnest(orgs) AS o
    UNION ALL
    SELECT 'owner'::text, subject
$$;

CREATE FUNCTION ledger_active_shares(orgs text[], subject text, at timestamptz)
RETURNS SETOF shares
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT * FROM shares
    WHERE revoked_at IS NULL AND expires_at > at
      AND ((grantee_type = 'user' AND grantee = subject)
        OR (grantee_type = 'organization' AND grantee = ANY(orgs)))
$$;

-- The host of a source URL, lower-cased (no user info, no port), for the
-- host filter.
CREATE FUNCTION ledger_url_host(url text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
    SELECT lower(substring(url FROM '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?(\[[^]]*\]|[^/?#:]*)'))
$$;

-- A captured page's title (pages.jsonl of its WACZ), for the list and its
-- text filter. It is written when the archive is indexed (serve indexes
-- each archive seconds after its admission; `ledgerctl search reindex`
-- fills every archive's); archives not indexed since this migration show
-- an empty title until then.
ALTER TABLE archives ADD COLUMN title text NOT NULL DEFAULT '';

-- A URL's captures, for search's "other captures" (hash: URLs can be longer
-- than a btree entry may be).
CREATE INDEX archives_source_url_hash_idx ON archives USING hash (source_url);
