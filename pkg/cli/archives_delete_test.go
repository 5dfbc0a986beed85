package cli

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestArchivesDeleteCommand: `ledgerctl archives delete` refuses without
// --yes when nobody can be asked, does nothing when the answer is no or the
// person may not delete, and otherwise deletes; a deletion whose objects S3
// did not remove (exit 3) is finished by --pending; the deleted archive's
// manifest is never registered again.
func TestArchivesDeleteCommand(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newCapturedStack(t)
	if _, errs, code := s.run(t, "share", "grant", s.id, "carol", "--for", "1h", "--as", "alice"); code != 0 {
		t.Fatalf("share: %s", errs)
	}
	s.drain(t)
	before := testenv.TakeSnapshot(t, s.dsn)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no terminal, no --yes", []string{"archives", "delete", s.id, "--as", "alice"}, 2, "give --yes to delete without asking"},
		{"no id", []string{"archives", "delete", "--as", "alice", "--yes"}, 2, "give the ARCHIVE_ID"},
		{"bad id", []string{"archives", "delete", "nope", "--as", "alice", "--yes"}, 2, "ARCHIVE_ID must be a UUID"},
		{"no --as", []string{"archives", "delete", s.id, "--yes"}, 2, "--as is required"},
		{"--pending with an id", []string{"archives", "delete", s.id, "--pending"}, 2, "--pending takes no ARCHIVE_ID"},
		{"--pending as someone", []string{"archives", "delete", "--pending", "--as", "alice"}, 2, "--pending acts for nobody"},
		{"a member", []string{"archives", "delete", s.id, "--as", "bob", "--org", "acme", "--yes"}, 1, "not found (absent, or bob may not delete it)"},
		{"the grantee", []string{"archives", "delete", s.id, "--as", "carol", "--yes"}, 1, "not found"},
	} {
		if out, errs, code := s.run(t, tc.args...); code != tc.code || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%s: exit %d: %q %s, want %d saying %q", tc.name, code, out, errs, tc.code, tc.want)
		}
	}
	var asked string
	answer := func(yes bool) func(*cmdutil.Factory) {
		return func(f *cmdutil.Factory) { f.Confirm = func(q string) (bool, bool) { asked = q; return true, yes } }
	}
	if _, errs, code := runCtx(ctx, t, s.dir, s.env, answer(false), "archives", "delete", s.id, "--as", "alice"); code != 1 ||
		!strings.Contains(errs, "not confirmed; nothing was deleted") || !strings.Contains(asked, "Delete archive "+s.id+"?") {
		t.Errorf("answered no: exit %d: %s (asked %q)", code, errs, asked)
	}
	testenv.Unchanged(t, s.dsn, before)
	objects := blob.New(testenv.S3Config(t))
	present := func() int {
		n := 0
		for _, k := range s.keys {
			switch _, err := objects.Get(ctx, s.bucket, k); {
			case err == nil:
				n++
			case !errors.Is(err, blob.ErrNotFound):
				t.Fatal(err)
			}
		}
		return n
	}

	// S3 does not answer: the ledger entry is gone, the objects stay (exit 3).
	down := maps.Clone(s.env)
	down["CAPTURE_LEDGER_S3_ENDPOINT"] = "http://127.0.0.1:1"
	out, errs, code := runCtx(ctx, t, s.dir, down, answer(true), "archives", "delete", s.id, "--as", "alice", "--json")
	var d archive.Deletion
	if code != cmdutil.ExitIncomplete || json.Unmarshal([]byte(out), &d) != nil || d.ObjectsDeleted || !strings.Contains(errs, "archives delete --pending") {
		t.Fatalf("S3 down: exit %d: %s %s", code, out, errs)
	}
	if n := present(); n != 3 {
		t.Errorf("%d objects left after a failed removal, want 3", n)
	}
	if _, errs, code := s.run(t, "archives", "url", s.id, "--as", "alice"); code != 1 {
		t.Errorf("a URL for the deleted archive: exit %d %s", code, errs)
	}
	s.drain(t)
	// The worker's command finishes it.
	out, errs, code = s.run(t, "archives", "delete", "--pending")
	if code != 0 || !strings.Contains(out, "pending deletions: 1, finished: 1, still pending: 0") {
		t.Fatalf("--pending: exit %d: %s %s", code, out, errs)
	}
	if n := present(); n != 0 {
		t.Errorf("%d objects left after --pending", n)
	}
	if out, _, code := s.run(t, "archives", "delete", "--pending", "--json"); code != 0 || !strings.Contains(out, `"pending":0`) {
		t.Errorf("--pending again: exit %d: %s", code, out)
	}
	if _, errs, code := s.run(t, "archives", "delete", s.id, "--as", "alice", "--yes"); code != 1 || !strings.Contains(errs, "not found") {
		t.Errorf("deleting again: exit %d %s", code, errs)
	}

	// The capture server writes the manifest again: it is refused.
	task := strings.Split(strings.TrimPrefix(s.keys[0], "bh/"), "_")[0]
	if err := objects.Put(ctx, s.bucket, s.keys[1], "application/json", manifestJSON(task, "success", s.bucket, s.keys[0])); err != nil {
		t.Fatal(err)
	}
	before = testenv.TakeSnapshot(t, s.dsn)
	out, errs, code = s.run(t, "archives", "add", s.keys[1], "--org", "acme", "--as", "alice", "--json")
	var res addResult
	if code != cmdutil.ExitIncomplete || json.Unmarshal([]byte(out), &res) != nil || res.Refused != 1 || !strings.Contains(res.Results[0].Reason, "deleted from the ledger") {
		t.Errorf("add again: exit %d: %s %s", code, out, errs)
	}
	if out, errs, code := s.run(t, "reconcile", "--json"); code != 0 || !strings.Contains(out, `"pending":0`) {
		t.Errorf("reconcile: exit %d: %s %s", code, out, errs)
	}
	testenv.Unchanged(t, s.dsn, before)
}

// TestArchivesDeleteConfirmed: with the answer yes (or --yes), the archive
// is deleted and every object removed.
func TestArchivesDeleteConfirmed(t *testing.T) {
	t.Parallel()
	s := newCapturedStack(t)
	var asked string
	out, errs, code := runCtx(context.Background(), t, s.dir, s.env, func(f *cmdutil.Factory) {
		f.Confirm = func(q string) (bool, bool) { asked = q; return true, true }
	}, "archives", "delete", s.id, "--as", "alice", "--org", "acme")
	if code != 0 || !strings.Contains(out, s.id) || !strings.Contains(out, "objects removed") || asked == "" ||
		!strings.Contains(errs, "is deleted from the ledger") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := s.run(t, "archives", "url", s.id, "--as", "alice"); code != 1 {
		t.Errorf("a URL after the delete: exit %d %s", code, errs)
	}
}
