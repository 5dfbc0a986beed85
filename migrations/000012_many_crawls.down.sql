DROP TABLE IF EXISTS host_turns;
DROP TABLE IF EXISTS host_waiters;
DROP TABLE IF EXISTS host_captures;
DROP TABLE IF EXISTS host_pace;
DROP INDEX IF EXISTS crawls_running_org_idx;
-- Going back to one running crawl in all: refused while several run.
CREATE UNIQUE INDEX crawls_single_active_idx ON crawls ((true)) WHERE state = 'running';
