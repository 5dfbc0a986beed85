DROP TABLE IF EXISTS search_index_failures;
