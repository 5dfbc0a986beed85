package archive_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// failingRemover is the real S3 client with a failure injected: the call
// numbered failAt (1-based) fails without touching S3, every other goes
// through. cancel, when set, is called instead (the process going away
// mid-step) and the call returns the context's error.
type failingRemover struct {
	real   *blob.Client
	failAt int
	cancel context.CancelFunc

	mu    sync.Mutex
	calls int
}

func (r *failingRemover) Delete(ctx context.Context, bucket, key string) error {
	r.mu.Lock()
	r.calls++
	n := r.calls
	r.mu.Unlock()
	if n == r.failAt {
		if r.cancel != nil {
			r.cancel()
			<-ctx.Done()
			return ctx.Err()
		}
		return errors.New("injected: S3 went away before deleting " + key)
	}
	return r.real.Delete(ctx, bucket, key)
}

// crashingStore is the real store whose deleting transaction fails after
// reading everything, just before its writes: a crash inside step 1.
type crashingStore struct{ *postgres.Store }

func (s crashingStore) TombstoneArchive(ctx context.Context, id, by string, at time.Time, plan func(ledger.DeletingArchive) (ledger.DeletePlan, error)) (ledger.Tombstone, bool, error) {
	return s.Store.TombstoneArchive(ctx, id, by, at, func(a ledger.DeletingArchive) (ledger.DeletePlan, error) {
		if _, err := plan(a); err != nil {
			return ledger.DeletePlan{}, err
		}
		return ledger.DeletePlan{}, errors.New("injected: crashed inside the deleting transaction")
	})
}

func (m *managed) deleter(st archive.DeleteStore, objects archive.ObjectRemover) *archive.Deleter {
	return &archive.Deleter{Perms: authz.Managers{Client: m.env.FGA}, Store: st, Objects: objects, Bucket: m.env.Bucket, Now: m.clock.Now}
}

// present lists which of keys are in the bucket.
func (m *managed) present(t *testing.T, keys ...string) []string {
	t.Helper()
	var out []string
	for _, k := range keys {
		_, err := m.env.Blob.Get(context.Background(), m.env.Bucket, k)
		switch {
		case err == nil:
			out = append(out, k)
		case !errors.Is(err, blob.ErrNotFound):
			t.Fatal(err)
		}
	}
	return out
}

func (m *managed) stored(t *testing.T, tu authz.Tuple) bool {
	t.Helper()
	ok, err := m.env.FGA.ReadTuple(context.Background(), tu)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestDeleteFinishesAfterAFailureAtEveryStep is the deletion's state
// machine under failure: a crash inside the transaction changes nothing; S3
// failing before the first object, after the first, and the request being
// cancelled each leave the tombstone pending (the archive is gone for
// readers, the objects are not), and the next run — the same person's
// delete again, even once the outbox has removed the tuples that allowed it
// — finishes it. Nothing is left behind: no object, no tuple of the archive,
// its job or its share.
func TestDeleteFinishesAfterAFailureAtEveryStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManaged(t)
	id, k := m.add(t)
	keys := []string{k.wacz, k.manifest, k.links}
	carol := "carol"
	share, err := m.shares.Grant(ctx, "alice", id, archive.ShareRequest{User: &carol, Duration: "72h"})
	if err != nil {
		t.Fatal(err)
	}
	m.drain(t)
	task := m.taskOf(t, id)
	tuples := []authz.Tuple{
		{User: "capture_job:" + task, Relation: "parent", Object: "archive:" + id},
		{User: "organization:acme", Relation: "parent", Object: "capture_job:" + task},
		{User: "user:alice", Relation: "owner", Object: "capture_job:" + task},
		{User: "user:carol", Relation: "viewer", Object: "archive:" + id},
	}
	for _, tu := range tuples {
		if !m.stored(t, tu) {
			t.Fatalf("fixture: %s is not in OpenFGA", tu)
		}
	}

	// Who may not delete gets what an unknown id gets, and nothing changes.
	if err := m.env.FGA.Write(ctx, []authz.Tuple{{User: "user:erin", Relation: "admin", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	before := testenv.TakeSnapshot(t, m.env.DSN)
	for _, tc := range []struct{ who, id string }{{"bob", id}, {"erin", id}, {"carol", id}, {"alice", uuid.NewString()}} {
		if _, err := m.del.Delete(ctx, tc.who, tc.id); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("%s deleting %s: %v, want not found", tc.who, tc.id, err)
		}
	}

	// 1. A crash inside the transaction: nothing happened.
	if _, err := m.deleter(crashingStore{m.st}, m.env.Blob).Delete(ctx, "alice", id); err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("crash inside the transaction: %v", err)
	}
	testenv.Unchanged(t, m.env.DSN, before)
	if got := m.present(t, keys...); len(got) != 3 {
		t.Fatalf("objects after the crash: %v", got)
	}

	// 2. S3 fails before the first object: the ledger entry is gone, the
	// objects are not, the tombstone is pending.
	d, err := m.deleter(m.st, &failingRemover{real: m.env.Blob, failAt: 1}).Delete(ctx, "alice", id)
	if err != nil || d.ObjectsDeleted || d.Pending == nil || !strings.Contains(*d.Pending, "injected") || d.DeletedBy != "alice" {
		t.Fatalf("S3 failing first: %+v %v", d, err)
	}
	if got := m.present(t, keys...); len(got) != 3 {
		t.Errorf("objects after step 2: %v", got)
	}
	if n := m.count(t, `SELECT count(*) FROM archives WHERE id = $1`, id); n != 0 {
		t.Error("the archives row is still there")
	}
	if _, err := m.access.URL(ctx, "alice", nil, id); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("a URL for the deleted archive before the drain: %v", err)
	}
	if n := m.count(t, `SELECT count(*) FROM archive_tombstones WHERE archive_id = $1 AND objects_deleted_at IS NULL AND attempts = 1
		AND deleted_by = 'alice' AND cardinality(object_keys) = 3 AND last_error LIKE '%injected%'`, id); n != 1 {
		t.Error("no pending tombstone with one attempt")
	}
	if n := m.count(t, `SELECT count(*) FROM shares WHERE id = $1 AND revoke_reason = 'archive-deleted' AND revoked_by = 'alice'`, share.ID); n != 1 {
		t.Error("the share did not end with the archive")
	}

	// 3. S3 fails after the first object.
	d, err = m.deleter(m.st, &failingRemover{real: m.env.Blob, failAt: 2}).Delete(ctx, "alice", id)
	if err != nil || d.ObjectsDeleted {
		t.Fatalf("S3 failing second: %+v %v", d, err)
	}
	if got := m.present(t, keys...); len(got) != 2 || got[0] == k.wacz {
		t.Errorf("objects after step 3: %v", got)
	}

	// 4. The request is cancelled mid-removal: the attempt is still recorded.
	cctx, cancel := context.WithCancel(ctx)
	d, err = m.deleter(m.st, &failingRemover{real: m.env.Blob, failAt: 1, cancel: cancel}).Delete(cctx, "alice", id)
	if err != nil || d.ObjectsDeleted || d.Pending == nil || !strings.Contains(*d.Pending, "context canceled") {
		t.Fatalf("cancelled: %+v %v", d, err)
	}
	if n := m.count(t, `SELECT attempts FROM archive_tombstones WHERE archive_id = $1`, id); n != 3 {
		t.Errorf("attempts = %d, want 3", n)
	}

	// 3'. The outbox removes every tuple of the archive, its job and its
	// share; alice no longer may delete anything there.
	m.drain(t)
	for _, tu := range tuples {
		if m.stored(t, tu) {
			t.Errorf("%s is still in OpenFGA", tu)
		}
	}
	if ok, err := (authz.Managers{Client: m.env.FGA}).CanDelete(ctx, "alice", id); err != nil || ok {
		t.Fatalf("can_delete after the drain: %v %v", ok, err)
	}
	// Nobody else can finish alice's deletion through Delete.
	if _, err := m.del.Delete(ctx, "bob", id); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("bob resumes alice's deletion: %v", err)
	}

	// 5. The next run finishes it.
	d, err = m.del.Delete(ctx, "alice", id)
	if err != nil || !d.ObjectsDeleted || d.Pending != nil || len(d.Objects) != 3 {
		t.Fatalf("the next run: %+v %v", d, err)
	}
	if got := m.present(t, keys...); len(got) != 0 {
		t.Errorf("objects left: %v", got)
	}
	if n := m.count(t, `SELECT count(*) FROM archive_tombstones WHERE archive_id = $1 AND objects_deleted_at IS NOT NULL`, id); n != 1 {
		t.Error("the tombstone is not finished")
	}
	// Finished: the archive is absent for everyone, alice included.
	if _, err := m.del.Delete(ctx, "alice", id); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("deleting again: %v", err)
	}
	// Its shares stay in the trail, but nobody may see them any more.
	if _, err := m.shares.List(ctx, "alice", id); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("shares of the deleted archive: %v", err)
	}
}

// TestDeleteFinishPending: what a failed removal left is finished by
// FinishPending (`archives delete --pending`, the serve worker), without a
// permission check: the deletion was authorized when it was recorded.
func TestDeleteFinishPending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManaged(t)
	var all []string
	for range 3 {
		id, k := m.add(t)
		all = append(all, k.wacz, k.manifest, k.links)
		if d, err := m.deleter(m.st, &failingRemover{real: m.env.Blob, failAt: 2}).Delete(ctx, "alice", id); err != nil || d.ObjectsDeleted {
			t.Fatalf("delete: %+v %v", d, err)
		}
	}
	// S3 down for the worker: every deletion stays pending, each with its
	// reason.
	res, err := m.deleter(m.st, &failingRemover{real: m.env.Blob, failAt: 1}).FinishPending(ctx, 10)
	if err != nil || res.Pending != 3 || res.Finished != 2 || len(res.Failures) != 1 {
		t.Fatalf("worker with one failure: %+v %v", res, err)
	}
	finisher := &archive.Deleter{Store: m.st, Objects: m.env.Blob, Now: m.clock.Now}
	res, err = finisher.FinishPending(ctx, 10)
	if err != nil || res.Pending != 1 || res.Finished != 1 || len(res.Failures) != 0 {
		t.Fatalf("worker: %+v %v", res, err)
	}
	if got := m.present(t, all...); len(got) != 0 {
		t.Errorf("objects left: %v", got)
	}
	if res, err := finisher.FinishPending(ctx, 10); err != nil || res.Pending != 0 {
		t.Errorf("nothing left: %+v %v", res, err)
	}
}

// TestTombstoneRefusesRegistration: once deleted, the archive's object key
// and task are never registered again, by archives add (refused, nothing
// written), reconcile (the submission is no longer pending), or admission
// (a level report's path: the row is skipped).
func TestTombstoneRefusesRegistration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := newManaged(t)
	id, k := m.add(t)
	if d, err := m.del.Delete(ctx, "alice", id); err != nil || !d.ObjectsDeleted {
		t.Fatalf("delete: %+v %v", d, err)
	}
	m.drain(t)
	// The capture server writes the same objects again.
	task := m.tombstoneTask(t, id)
	raw := apptest.Manifest(task, "success", "https://example.com/again", m.env.Bucket, k.wacz, time.Now())
	for key, body := range map[string][]byte{k.wacz: []byte("PK again"), k.manifest: raw} {
		if err := m.env.Blob.Put(ctx, m.env.Bucket, key, "application/octet-stream", body); err != nil {
			t.Fatal(err)
		}
	}
	before := testenv.TakeSnapshot(t, m.env.DSN)

	adder := &archive.Adder{Store: m.st, Objects: m.env.Blob, Bucket: m.env.Bucket}
	res, err := adder.Add(ctx, archive.AddRequest{Keys: []string{k.manifest}, Org: "acme", SubmittedBy: "alice"})
	if err != nil || res.Refused != 1 || res.Registered != 0 || !strings.Contains(res.Results[0].Reason, "deleted from the ledger") ||
		res.Results[0].ArchiveID != id {
		t.Errorf("archives add: %+v %v", res, err)
	}
	// The same WACZ under another manifest of the same task, and another
	// key of the same task: refused as well.
	otherKey := "bh/" + task + "_other.wacz"
	otherManifest := "bh/" + task + "_other.result.json"
	_ = m.env.Blob.Put(ctx, m.env.Bucket, otherKey, "application/wacz", []byte("PK"))
	_ = m.env.Blob.Put(ctx, m.env.Bucket, otherManifest, "application/json", apptest.Manifest(task, "success", "https://e/", m.env.Bucket, otherKey, time.Now()))
	if res, err := adder.Add(ctx, archive.AddRequest{Keys: []string{otherManifest}, Org: "acme", SubmittedBy: "alice"}); err != nil || res.Refused != 1 {
		t.Errorf("another key of the task: %+v %v", res, err)
	}

	adm := &archive.Admitter{Store: m.st, Bucket: m.env.Bucket}
	rec := &archive.Reconciler{Admitter: adm, Objects: m.env.Blob}
	if r, err := rec.Reconcile(ctx, nil); err != nil || r.Pending != 0 {
		t.Errorf("reconcile: %+v %v", r, err)
	}
	mf, err := manifest.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	alice := "alice"
	if got, outcome, err := adm.Admit(ctx, mf, "acme", &alice); err != nil || outcome != archive.AlreadyKnown || got != "" {
		t.Errorf("admission: %q %v %v", got, outcome, err)
	}
	testenv.Unchanged(t, m.env.DSN, before)
}

func (m *managed) taskOf(t *testing.T, id string) string {
	t.Helper()
	var task string
	if err := m.st.Pool.QueryRow(context.Background(), `SELECT task_id::text FROM archives WHERE id = $1`, id).Scan(&task); err != nil {
		t.Fatal(err)
	}
	return task
}

func (m *managed) tombstoneTask(t *testing.T, id string) string {
	t.Helper()
	var task string
	if err := m.st.Pool.QueryRow(context.Background(), `SELECT task_id::text FROM archive_tombstones WHERE archive_id = $1`, id).Scan(&task); err != nil {
		t.Fatal(err)
	}
	return task
}
