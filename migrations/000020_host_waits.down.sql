ALTER TABLE host_captures DROP COLUMN IF EXISTS asked_at;
