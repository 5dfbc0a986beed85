DROP TABLE IF EXISTS crawl_levels;
