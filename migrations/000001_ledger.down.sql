DROP TABLE IF EXISTS crawl_decisions;
DROP TABLE IF EXISTS crawl_pages;
DROP TABLE IF EXISTS crawls;
DROP TABLE IF EXISTS capture_submissions;
DROP TABLE IF EXISTS fga_outbox;
DROP TABLE IF EXISTS archives;
DROP TABLE IF EXISTS capture_targets;
