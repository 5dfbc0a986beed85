package authz

import (
	"context"
	"fmt"
)

// DefaultStoreName is the default of CAPTURE_LEDGER_FGA_STORE_NAME.
const DefaultStoreName = "capture-ledger"

// LegacyStoreName is the store name ledgerctl used by default before it was
// DefaultStoreName; Deploy migrates such a store's tuples.
const LegacyStoreName = "wacz-validator"

// migrationMarker is stored in the new store while Deploy copies the legacy
// store's tuples into it and deleted once all are copied, so a deploy that
// stopped half-way resumes the copy when run again, while a finished
// migration is never repeated (that would bring back tuples revoked since).
// It grants nothing: the capture job has no owner and no organization.
var migrationMarker = Tuple{User: CaptureJob("ledgerctl-store-migration"), Relation: "parent", Object: Archive("ledgerctl-store-migration-in-progress")}

// MigrationError says Deploy stopped while copying the legacy store's tuples.
// Running Deploy again resumes the copy; the legacy store is unchanged.
type MigrationError struct {
	From, To StoreRef
	Copied   int // tuples written before the failure
	Err      error
}

func (e *MigrationError) Error() string {
	return fmt.Sprintf("copying the tuples of store %s (%s) into %s (%s) stopped after %d: %v; run the deploy again to finish (the old store is left as it was)",
		e.From.Name, e.From.ID, e.To.Name, e.To.ID, e.Copied, e.Err)
}

func (e *MigrationError) Unwrap() error { return e.Err }

// pendingMigration returns the legacy store to copy into the store named
// name, or nil. It migrates only when name is DefaultStoreName and a store
// named LegacyStoreName exists, and then only when the new store does not
// exist yet, has no model yet, or still holds migrationMarker (an earlier
// copy stopped). It leaves c's binding as it was.
func pendingMigration(ctx context.Context, c Client, name string) (*StoreRef, error) {
	if name != DefaultStoreName {
		return nil, nil
	}
	newID, err := c.FindStore(ctx, name)
	if err != nil {
		return nil, err
	}
	if newID != "" {
		unfinished, err := unfinishedMigration(ctx, c, newID)
		if err != nil || !unfinished {
			return nil, err
		}
	}
	oldID, err := c.FindStore(ctx, LegacyStoreName)
	if err != nil || oldID == "" {
		return nil, err
	}
	return &StoreRef{Name: LegacyStoreName, ID: oldID}, nil
}

// unfinishedMigration says whether store storeID was created by a migration
// that did not finish: it has no model (nothing was ever written) or holds
// migrationMarker.
func unfinishedMigration(ctx context.Context, c Client, storeID string) (bool, error) {
	prevStore, prevModel := c.Target()
	defer c.UseStore(prevStore, prevModel)
	c.UseStore(storeID, "")
	if _, err := c.ReadModel(ctx); err != nil {
		if KindOf(err) == KindNotFound {
			return true, nil
		}
		return false, err
	}
	return c.ReadTuple(ctx, migrationMarker)
}

// copyLegacyTuples copies every tuple of store from into store to (whose model is
// modelID), page by page, with writes of at most readPageSize tuples that
// accept tuples already there. c ends bound to to and modelID.
func copyLegacyTuples(ctx context.Context, c Client, from, to StoreRef, modelID string) (copied int, err error) {
	defer c.UseStore(to.ID, modelID)
	fail := func(err error) (int, error) {
		return copied, &MigrationError{From: from, To: to, Copied: copied, Err: err}
	}
	c.UseStore(to.ID, modelID)
	if err := c.WriteIdempotent(ctx, []Tuple{migrationMarker}, nil); err != nil {
		return fail(fmt.Errorf("mark the migration: %w", err))
	}
	token := ""
	for {
		c.UseStore(from.ID, "")
		page, next, err := c.ReadTuples(ctx, token)
		if err != nil {
			return fail(err)
		}
		c.UseStore(to.ID, modelID)
		for start := 0; start < len(page); start += readPageSize {
			chunk := page[start:min(start+readPageSize, len(page))]
			if err := c.WriteIdempotent(ctx, chunk, nil); err != nil {
				return fail(err)
			}
			copied += len(chunk)
		}
		if next == "" || next == token {
			break
		}
		token = next
	}
	if err := c.WriteIdempotent(ctx, nil, []Tuple{migrationMarker}); err != nil {
		return fail(fmt.Errorf("clear the migration mark: %w", err))
	}
	return copied, nil
}
