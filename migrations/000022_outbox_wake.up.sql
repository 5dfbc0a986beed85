-- New outbox rows wake serve's drainer at once, in every process that
-- drains, so an admission's tuples reach OpenFGA (and its archives their
-- readers) within moments rather than at the next scheduled drain; the
-- schedule (CAPTURE_LEDGER_DRAIN_INTERVAL_MS) stays for retries and for a
-- missed notification. A dead-lettered row given a fresh start wakes it too.
-- The notification is sent when the transaction commits, one per
-- transaction (PostgreSQL folds identical ones).
CREATE FUNCTION fga_outbox_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('ledger_outbox', '');
    RETURN NULL;
END $$;

CREATE TRIGGER fga_outbox_wake_insert AFTER INSERT ON fga_outbox
    FOR EACH STATEMENT EXECUTE FUNCTION fga_outbox_wake();
CREATE TRIGGER fga_outbox_wake_requeued AFTER UPDATE OF dead_at ON fga_outbox
    FOR EACH ROW WHEN (NEW.dead_at IS NULL AND OLD.dead_at IS NOT NULL)
    EXECUTE FUNCTION fga_outbox_wake();
