-- A crawl can be stopped by a person (POST /api/crawls/{id}/stop, `ledgerctl
-- crawl stop`): it ends succeeded with the stop reason 'stopped', keeping
-- what its admitted levels captured.
ALTER TABLE crawls DROP CONSTRAINT IF EXISTS crawls_stop_reason_check;
ALTER TABLE crawls ADD CONSTRAINT crawls_stop_reason_check
    CHECK (stop_reason IN ('completed', 'max_depth', 'max_pages', 'failed', 'stopped'));
