-- The pages keep their grantees; earlier versions ignore them.
DROP INDEX IF EXISTS archives_unindexed_idx;
