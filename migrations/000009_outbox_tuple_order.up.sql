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
-- the delivered/failed/released mark): a row is not leased while an older
-- row naming one of its tuples is in flight, so a newer intent is never
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

CREATE FUNCTION fga_outbox_supersede() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.tuple_keys := fga_outbox_keys(NEW.payload);
    IF cardinality(NEW.tuple_keys) = 0 THEN
        RETURN NEW;
    END IF;
    UPDATE fga_outbox o
       SET superseded_keys = ARRAY(SELECT DISTINCT k FROM unnest(o.superseded_keys || o.tuple_keys) k
                                   WHERE k = ANY (o.superseded_keys) OR k = ANY (NEW.tuple_keys)),
           processed_at = CASE WHEN o.tuple_keys <@ (o.superseded_keys || NEW.tuple_keys) THEN now() END,
           dead_at      = CASE WHEN o.tuple_keys <@ (o.superseded_keys || NEW.tuple_keys) THEN NULL ELSE o.dead_at END,
           last_error   = CASE WHEN o.tuple_keys <@ (o.superseded_keys || NEW.tuple_keys) THEN 'superseded by a newer intent for the same tuples' ELSE o.last_error END
     WHERE o.processed_at IS NULL AND o.id < NEW.id AND o.tuple_keys && NEW.tuple_keys;
    RETURN NEW;
END
$$;

CREATE TRIGGER fga_outbox_supersede BEFORE INSERT ON fga_outbox
    FOR EACH ROW EXECUTE FUNCTION fga_outbox_supersede();

-- Rows queued before this migration: the newest undelivered row naming a
-- tuple keeps it, older ones give it up, as if queued now.
UPDATE fga_outbox SET tuple_keys = fga_outbox_keys(payload) WHERE processed_at IS NULL;
UPDATE fga_outbox o
   SET superseded_keys = ARRAY(SELECT k FROM unnest(o.tuple_keys) k
                               WHERE EXISTS (SELECT 1 FROM fga_outbox n
                                             WHERE n.processed_at IS NULL AND n.id > o.id AND k = ANY (n.tuple_keys)))
 WHERE o.processed_at IS NULL;
UPDATE fga_outbox
   SET processed_at = now(), dead_at = NULL, last_error = 'superseded by a newer intent for the same tuples'
 WHERE processed_at IS NULL AND cardinality(tuple_keys) > 0 AND tuple_keys <@ superseded_keys;

-- Undelivered rows by tuple (the trigger's lookup), and the rows in flight
-- by tuple (the lease's).
CREATE INDEX fga_outbox_undelivered_keys_idx ON fga_outbox USING gin (tuple_keys) WHERE processed_at IS NULL;
CREATE INDEX fga_outbox_leased_keys_idx ON fga_outbox USING gin (tuple_keys) WHERE leased_until IS NOT NULL;
