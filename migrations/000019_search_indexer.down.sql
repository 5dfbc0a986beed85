DROP TRIGGER IF EXISTS archives_search_wake_unindexed ON archives;
DROP TRIGGER IF EXISTS archives_search_wake_insert ON archives;
DROP FUNCTION IF EXISTS search_index_wake();
DROP TABLE IF EXISTS search_indexer;
