DROP TRIGGER IF EXISTS archives_skip_tombstoned ON archives;
DROP FUNCTION IF EXISTS archives_skip_tombstoned();
DROP TABLE IF EXISTS archive_tombstones;
DROP TABLE IF EXISTS shares;
