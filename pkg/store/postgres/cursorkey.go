package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
)

// cursorKeyCache holds the list cursor key once it has been read: the key
// never changes while a process runs (replacing it is an operator's act that
// invalidates every cursor, and a restart picks the new one up).
type cursorKeyCache struct {
	mu  sync.Mutex
	key []byte
}

// ListCursorKey returns the 32-byte key that seals list cursors (migration
// 000004), read from the database once per Store and cached. A failed read
// is not cached, so the next call tries again.
func (s *Store) ListCursorKey(ctx context.Context) ([]byte, error) {
	s.cursorKey.mu.Lock()
	defer s.cursorKey.mu.Unlock()
	if s.cursorKey.key != nil {
		return s.cursorKey.key, nil
	}
	var key []byte
	err := s.Pool.QueryRow(ctx, `SELECT key FROM list_cursor_key`).Scan(&key)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errors.New("list cursor key: the list_cursor_key table is empty (run `ledgerctl migrate up`, or insert a row: INSERT INTO list_cursor_key (key) VALUES (gen_random_bytes(32)))")
	}
	if err != nil {
		return nil, fmt.Errorf("list cursor key: %w", err)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("list cursor key: %d bytes, want 32", len(key))
	}
	s.cursorKey.key = key
	return key, nil
}
