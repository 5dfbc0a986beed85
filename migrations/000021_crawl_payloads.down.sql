DROP TABLE IF EXISTS crawl_payloads;
