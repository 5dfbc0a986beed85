DROP TABLE IF EXISTS crawl_runner_hosts;
DROP TABLE IF EXISTS crawl_runner_results;
