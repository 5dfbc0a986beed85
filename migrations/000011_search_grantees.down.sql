-- Nothing to undo: the pages keep their grantees, which earlier versions
-- ignore, and archives indexed again stay indexed.
SELECT 1;
