package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// DeleteChecker answers can_delete: only the archive's owner may delete it.
type DeleteChecker interface {
	CanDelete(ctx context.Context, subject, archiveID string) (bool, error)
}

// DeleteStore keeps the deletion's persisted state (see the PostgreSQL
// store's methods of the same names).
type DeleteStore interface {
	TombstoneArchive(ctx context.Context, id, by string, at time.Time, plan func(ledger.DeletingArchive) (ledger.DeletePlan, error)) (ledger.Tombstone, bool, error)
	PendingTombstone(ctx context.Context, id, by string) (ledger.Tombstone, error)
	PendingTombstones(ctx context.Context, limit int) ([]ledger.Tombstone, error)
	MarkObjectsDeleted(ctx context.Context, id string, at time.Time) error
	RecordObjectsFailure(ctx context.Context, id, msg string) error
}

// ObjectRemover removes objects from the bucket; removing one that is not
// there is not an error.
type ObjectRemover interface {
	Delete(ctx context.Context, bucket, key string) error
}

// Sidecar suffixes: BrowserHive (and the built-in capturer) name every
// output of a capture with the WACZ's stem (docs/manifests.md).
var sidecars = []string{ManifestSuffix, ".links.json"}

// Deleter deletes archives: the one function behind DELETE /api/archives/{id}
// and `ledgerctl archives delete`.
//
// Deleting is a persisted state machine, so a crash at any step leaves a
// state the next run finishes:
//
//  1. One transaction: the tombstone (who, when, which objects), the archives
//     row removed, the archive's shares ended, and the outbox rows deleting
//     its tuples. Before it commits nothing has changed; after, readers no
//     longer see the archive (URL, list) and no admission path registers its
//     object key or task again.
//  2. The objects (the WACZ, its .result.json and .links.json, and the
//     manifest key its submission recorded) are removed from the bucket;
//     removing an absent object succeeds, so a retry is safe. The tombstone
//     stays pending (objects_deleted_at NULL) until all are gone.
//  3. The outbox drain removes the tuples from OpenFGA (at-least-once).
//
// A pending tombstone is finished by the same delete run again (by the
// person who deleted it) or by FinishPending (`ledgerctl archives delete
// --pending`; a worker's periodic call), whichever comes first.
type Deleter struct {
	Perms   DeleteChecker
	Store   DeleteStore
	Objects ObjectRemover
	// Bucket is the configured bucket, where a submission's manifest key
	// lives.
	Bucket string
	// Now is the server's clock (time.Now when nil).
	Now func() time.Time
	Log *slog.Logger
}

// Deletion is a deleted archive as the API and the CLI show it.
type Deletion struct {
	ArchiveID string    `json:"archiveId"`
	ObjectKey string    `json:"objectKey"`
	SourceURL string    `json:"sourceUrl"`
	DeletedBy string    `json:"deletedBy"`
	DeletedAt time.Time `json:"deletedAt"`
	// Objects are the keys removed (or to remove) from the bucket.
	Objects []string `json:"objects"`
	// ObjectsDeleted says every object is gone; when false, Pending says
	// why, and the next run removes them.
	ObjectsDeleted bool    `json:"objectsDeleted"`
	Pending        *string `json:"pending"`
}

func (d *Deleter) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

func (d *Deleter) logger() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}

// Delete deletes archive id on behalf of subject when can_delete allows it;
// a refusal and an unknown id are ledger.ErrNotFound. When the archive is
// already deleted and its objects are not all gone, the same call (the same
// person, even once OpenFGA no longer holds their tuples) finishes it.
// Once the deleting transaction has committed, Delete returns the Deletion
// without an error even if removing the objects failed: the ledger entry is
// gone, and Pending says what is left for the next run.
func (d *Deleter) Delete(ctx context.Context, subject, id string) (Deletion, error) {
	ok, err := d.Perms.CanDelete(ctx, subject, id)
	if err != nil {
		return Deletion{}, fmt.Errorf("check can_delete: %w", err)
	}
	var tomb ledger.Tombstone
	if ok {
		var created bool
		tomb, created, err = d.Store.TombstoneArchive(ctx, id, subject, d.now().UTC(), d.plan)
		if err != nil {
			return Deletion{}, err
		}
		if created {
			d.logger().Info("Archive deleted", "archiveId", id, "objects", len(tomb.ObjectKeys))
		}
	} else {
		// A deletion of subject's own that a crash left pending: OpenFGA may
		// already have forgotten the tuples that allowed it.
		if tomb, err = d.Store.PendingTombstone(ctx, id, subject); err != nil {
			if errors.Is(err, ledger.ErrNotFound) {
				d.logger().Info("Denied", "archiveId", id, "relation", "can_delete")
			}
			return Deletion{}, err
		}
	}
	return d.finish(ctx, tomb), nil
}

// plan decides what deleting a removes: the WACZ and its sidecars (same
// stem), the manifest key its submission recorded, and every tuple the
// ledger wrote for it — its parent, its shares, and its job's organization
// and owner (a job has this one archive: a task is admitted once).
func (d *Deleter) plan(a ledger.DeletingArchive) (ledger.DeletePlan, error) {
	var p ledger.DeletePlan
	seen := map[string]bool{}
	add := func(key string) {
		if key != "" && !seen[key] {
			seen[key] = true
			p.ObjectKeys = append(p.ObjectKeys, key)
		}
	}
	add(a.ObjectKey)
	if stem, ok := strings.CutSuffix(a.ObjectKey, ".wacz"); ok && stem != "" {
		for _, s := range sidecars {
			add(stem + s)
		}
	}
	if s := a.Submission; s != nil && s.ManifestKey != nil && a.Bucket == d.Bucket {
		add(*s.ManifestKey)
	}
	p.Tuples = append(p.Tuples, ledger.Tuple{User: ledger.CaptureJobEntity(a.TaskID), Relation: "parent", Object: ledger.ArchiveEntity(a.ID)})
	for _, sh := range a.Shares {
		p.Tuples = append(p.Tuples, ledger.ShareTupleKey(a.ID, sh.Grantee))
	}
	if s := a.Submission; s != nil {
		by := s.SubmittedBy
		if by != nil && *by == "" {
			by = nil
		}
		if s.OrgID != "" {
			p.Tuples = append(p.Tuples, ledger.AdmissionTuples(a.ID, a.TaskID, s.OrgID, by).Writes[1:]...)
		}
	}
	return p, nil
}

// DeletionView shows a tombstone.
func DeletionView(t ledger.Tombstone) Deletion {
	return Deletion{
		ArchiveID: t.ArchiveID, ObjectKey: t.ObjectKey, SourceURL: t.SourceURL, DeletedBy: t.DeletedBy, DeletedAt: t.DeletedAt.UTC(),
		Objects: t.ObjectKeys, ObjectsDeleted: t.ObjectsDeletedAt != nil,
	}
}

// finish removes the objects of a pending tombstone and records it; a
// failure is recorded on the tombstone (attempts, last error) and returned
// in Pending.
func (d *Deleter) finish(ctx context.Context, t ledger.Tombstone) Deletion {
	out := DeletionView(t)
	if out.ObjectsDeleted {
		return out
	}
	fail := func(msg string) Deletion {
		out.Pending = &msg
		d.logger().Warn("Removing a deleted archive's objects failed; the next run finishes it", "archiveId", t.ArchiveID, "error", msg)
		// Recorded even when ctx is what ended the removal.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if err := d.Store.RecordObjectsFailure(rctx, t.ArchiveID, msg); err != nil {
			d.logger().Warn("Recording the failure failed", "archiveId", t.ArchiveID, "error", err.Error())
		}
		return out
	}
	for _, key := range t.ObjectKeys {
		if err := d.Objects.Delete(ctx, t.Bucket, key); err != nil && !errors.Is(err, ledger.ErrNoObject) {
			return fail(err.Error())
		}
	}
	if err := d.Store.MarkObjectsDeleted(ctx, t.ArchiveID, d.now().UTC()); err != nil {
		return fail("the objects are removed, but recording it failed: " + err.Error())
	}
	d.logger().Info("Deleted archive's objects removed", "archiveId", t.ArchiveID, "objects", len(t.ObjectKeys))
	out.ObjectsDeleted = true
	return out
}

// FinishResult counts what FinishPending did.
type FinishResult struct {
	Pending  int `json:"pending"`
	Finished int `json:"finished"`
	// Failures are the deletions still pending, with why.
	Failures []Deletion `json:"failures"`
}

// FinishPending removes the objects of up to limit pending tombstones,
// oldest first: what a crash, an unreachable S3 or a cancelled request left
// undone. A Deleter that only finishes needs no Perms. The deletions were authorized when they were recorded.
func (d *Deleter) FinishPending(ctx context.Context, limit int) (FinishResult, error) {
	ts, err := d.Store.PendingTombstones(ctx, limit)
	if err != nil {
		return FinishResult{}, err
	}
	res := FinishResult{Pending: len(ts), Failures: []Deletion{}}
	for _, t := range ts {
		if out := d.finish(ctx, t); out.ObjectsDeleted {
			res.Finished++
		} else {
			res.Failures = append(res.Failures, out)
		}
	}
	return res, nil
}
