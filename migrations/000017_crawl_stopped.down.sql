-- Stopped crawls read as completed under the older constraint.
UPDATE crawls SET stop_reason = 'completed' WHERE stop_reason = 'stopped';
ALTER TABLE crawls DROP CONSTRAINT IF EXISTS crawls_stop_reason_check;
ALTER TABLE crawls ADD CONSTRAINT crawls_stop_reason_check
    CHECK (stop_reason IN ('completed', 'max_depth', 'max_pages', 'failed'));
