DROP TRIGGER IF EXISTS fga_outbox_wake_requeued ON fga_outbox;
DROP TRIGGER IF EXISTS fga_outbox_wake_insert ON fga_outbox;
DROP FUNCTION IF EXISTS fga_outbox_wake();
