DROP TRIGGER IF EXISTS fga_outbox_supersede ON fga_outbox;
DROP FUNCTION IF EXISTS fga_outbox_supersede();
DROP FUNCTION IF EXISTS fga_outbox_live(jsonb, text[]);
DROP FUNCTION IF EXISTS fga_outbox_keys(jsonb);
DROP INDEX IF EXISTS fga_outbox_leased_idx;
DROP TABLE IF EXISTS fga_outbox_latest;
ALTER TABLE fga_outbox
    DROP COLUMN IF EXISTS leased_until,
    DROP COLUMN IF EXISTS superseded_keys,
    DROP COLUMN IF EXISTS tuple_keys;
