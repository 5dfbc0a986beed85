DROP TABLE IF EXISTS list_cursor_key;
