DROP TABLE IF EXISTS archive_sources;
DROP TABLE IF EXISTS job_sources;
