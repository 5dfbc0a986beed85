-- The key that seals list cursors (docs/security.md). A list's `next` token
-- carries the position where a scan stopped, which can be a row the caller
-- may not see; it is encrypted and authenticated (AES-GCM, bound to the
-- caller) so it reveals nothing and cannot be forged. The key lives here so
-- that `serve` across restarts and replicas and the offline CLI all open the
-- same tokens. One row, written once; replacing it invalidates every cursor
-- handed out (callers start again from the top).
CREATE TABLE list_cursor_key (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    key bytea NOT NULL CHECK (length(key) = 32)
);
INSERT INTO list_cursor_key (key) VALUES (gen_random_bytes(32));
