DROP INDEX archives_source_url_hash_idx;
ALTER TABLE archives DROP COLUMN title;
DROP FUNCTION ledger_url_host(text);
DROP FUNCTION ledger_active_shares(text[], text, timestamptz);
DROP FUNCTION ledger_viewer_grantees(text[], text);
