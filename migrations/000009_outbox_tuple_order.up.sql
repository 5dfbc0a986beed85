-- Per-tuple order in the OpenFGA outbox.
--
-- For any one tuple (user, relation, object), OpenFGA must end in the state
-- of the ledger's latest intent for it, whatever fails and in whatever order
-- rows are retried. Rows are retried independently (back-off, dead letters,
-- requeues), so an older row delivered late could undo a newer one: a share
-- written after its revoke's delete came back.
--
-- tuple_keys lists the tuples a row writes or deletes, one key per tuple
-- (the JSON array [user, relation, object]); the trigger below fills it.
-- When a row is queued, every older row not yet delivered (pending or dead)
-- that names one of its tuples gives that tuple up: the key goes into its
-- superseded_keys, the drain never sends it, and a row whose every tuple was
-- superseded is closed as delivered without being sent. So at most one
-- undelivered row holds the live intent for a tuple, and it is the newest.
--
-- leased_until is set while a drainer holds a row (between the lease and
-- the delivered/failed/released mark): a row is not leased while another
-- row naming one of its tuples is in flight (by the invariant above, an
-- older intent, superseded after it was leased), so a newer intent is never
-- sent before, or at the same time as, an older one already on its way.
ALTER TABLE fga_outbox
    ADD COLUMN tuple_keys      text[] NOT NULL DEFAULT '{}',
    ADD COLUMN superseded_keys text[] NOT NULL DEFAULT '{}',
    ADD COLUMN leased_until    timestamptz;

-- The keys of a payload's well-formed tuples; anything else is left to the
-- drain, which dead-letters a malformed payload.
CREATE FUNCTION fga_outbox_keys(payload jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(DISTINCT jsonb_build_array(t->'user', t->'relation', t->'object')::text), '{}')
    FROM (SELECT payload->'writes' AS a UNION ALL SELECT payload->'deletes') parts,
         jsonb_array_elements(CASE WHEN jsonb_typeof(parts.a) = 'array' THEN parts.a ELSE '[]'::jsonb END) t
    WHERE jsonb_typeof(t) = 'object' AND jsonb_typeof(t->'user') = 'string'
      AND jsonb_typeof(t->'relation') = 'string' AND jsonb_typeof(t->'object') = 'string'
$$;

-- The payload without its superseded tuples (the payload itself when none).
CREATE FUNCTION fga_outbox_live(payload jsonb, superseded text[]) RETURNS jsonb
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN cardinality(superseded) = 0 OR jsonb_typeof(payload) <> 'object' THEN payload
    ELSE (SELECT coalesce(jsonb_object_agg(part, kept), '{}'::jsonb) FROM (
        SELECT part, jsonb_agg(t ORDER BY i) AS kept
        FROM (VALUES ('writes'), ('deletes')) p(part),
             jsonb_array_elements(CASE WHEN jsonb_typeof(payload->part) = 'array' THEN payload->part ELSE '[]'::jsonb END) WITH ORDINALITY e(t, i)
        WHERE NOT (jsonb_build_array(t->'user', t->'relation', t->'object')::text = ANY (superseded))
        GROUP BY part) k)
    END
$$;

-- The row that last named each tuple, and the one before it: the trigger's
-- lookup (one row per tuple ever queued, like OpenFGA's own tuple table).
-- The upsert takes the tuple's lock, so two transactions queueing the same
-- tuple at once are ordered: the second sees the first's row as previous.
CREATE TABLE fga_outbox_latest (
    tuple_key   text PRIMARY KEY,
    outbox_id   bigint NOT NULL,
    previous_id bigint
);

CREATE FUNCTION fga_outbox_supersede() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    prev record;
BEGIN
    NEW.tuple_keys := fga_outbox_keys(NEW.payload);
    IF cardinality(NEW.tuple_keys) = 0 THEN
        RETURN NEW;
    END IF;
    FOR prev IN
        WITH up AS (
            INSERT INTO fga_outbox_latest AS l (tuple_key, outbox_id)
            SELECT k, NEW.id FROM unnest(NEW.tuple_keys) k
            ON CONFLICT (tuple_key) DO UPDATE SET outbox_id = EXCLUDED.outbox_id, previous_id = l.outbox_id
            RETURNING l.tuple_key, l.previous_id)
        SELECT previous_id AS id, array_agg(tuple_key) AS keys FROM up
        WHERE previous_id IS NOT NULL AND previous_id <> NEW.id GROUP BY previous_id
    LOOP
        UPDATE fga_outbox o
           SET superseded_keys = o.superseded_keys || prev.keys,
               processed_at = CASE WHEN o.tuple_keys <@ (o.superseded_keys || prev.keys) THEN now() END,
               dead_at      = CASE WHEN o.tuple_keys <@ (o.superseded_keys || prev.keys) THEN NULL ELSE o.dead_at END,
               last_error   = CASE WHEN o.tuple_keys <@ (o.superseded_keys || prev.keys) THEN 'superseded by a newer intent for the same tuples' ELSE o.last_error END
         WHERE o.id = prev.id AND o.processed_at IS NULL;
    END LOOP;
    RETURN NEW;
END
$$;

CREATE TRIGGER fga_outbox_supersede BEFORE INSERT ON fga_outbox
    FOR EACH ROW EXECUTE FUNCTION fga_outbox_supersede();

-- Rows queued before this migration: the newest undelivered row naming a
-- tuple keeps it, older ones give it up, as if queued now.
UPDATE fga_outbox SET tuple_keys = fga_outbox_keys(payload) WHERE processed_at IS NULL;
CREATE TEMPORARY TABLE fga_outbox_undelivered_keys AS
    SELECT id, unnest(tuple_keys) AS tuple_key FROM fga_outbox WHERE processed_at IS NULL;
INSERT INTO fga_outbox_latest (tuple_key, outbox_id)
    SELECT tuple_key, max(id) FROM fga_outbox_undelivered_keys GROUP BY tuple_key;
UPDATE fga_outbox o SET superseded_keys = s.keys
  FROM (SELECT u.id, array_agg(u.tuple_key) AS keys
          FROM fga_outbox_undelivered_keys u JOIN fga_outbox_latest l USING (tuple_key)
         WHERE l.outbox_id > u.id GROUP BY u.id) s
 WHERE o.id = s.id;
UPDATE fga_outbox
   SET processed_at = now(), dead_at = NULL, last_error = 'superseded by a newer intent for the same tuples'
 WHERE processed_at IS NULL AND cardinality(tuple_keys) > 0 AND tuple_keys <@ superseded_keys;
DROP TABLE fga_outbox_undelivered_keys;

-- The rows in flight (the lease's lookup: few, a drain's batch or two).
CREATE INDEX fga_outbox_leased_idx ON fga_outbox (id) WHERE leased_until IS NOT NULL;
