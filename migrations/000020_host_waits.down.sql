DROP FUNCTION IF EXISTS host_lease_release(uuid, integer, text);
DROP FUNCTION IF EXISTS host_lease_try(text, uuid, text, text, uuid, text, bigint, text, boolean, integer, integer, bigint, bigint, bigint);
ALTER TABLE host_captures DROP COLUMN IF EXISTS asked_at;
