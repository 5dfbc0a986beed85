ALTER TABLE crawl_levels DROP COLUMN refused;
