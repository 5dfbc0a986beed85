package authz

import "context"

// WriteOneByOne exposes the fallback of WriteIdempotent (for servers without
// on_duplicate/on_missing) so tests can run it against every implementation.
func WriteOneByOne(ctx context.Context, c Client, writes, deletes []Tuple) error {
	return writeOneByOne(ctx, c.(writer), writes, deletes)
}

// MigrationMarker is the tuple Deploy keeps in the new store while it copies
// the legacy store.
var MigrationMarker = migrationMarker
