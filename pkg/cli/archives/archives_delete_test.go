package archives_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
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
	s := clitest.NewCapturedStack(t)
	if _, errs, code := s.Run(t, "share", "grant", s.ID, "carol", "--for", "1h", "--as", "alice"); code != 0 {
		t.Fatalf("share: %s", errs)
	}
	s.Drain(t)
	before := testenv.TakeSnapshot(t, s.DSN)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no terminal, no --yes", []string{"archives", "delete", s.ID, "--as", "alice"}, 2, "give --yes to delete without asking"},
		{"no id", []string{"archives", "delete", "--as", "alice", "--yes"}, 2, "give the ARCHIVE_ID"},
		{"bad id", []string{"archives", "delete", "nope", "--as", "alice", "--yes"}, 2, "ARCHIVE_ID must be a UUID"},
		{"no --as", []string{"archives", "delete", s.ID, "--yes"}, 2, "--as is required"},
		{"--pending with an id", []string{"archives", "delete", s.ID, "--pending"}, 2, "--pending takes no ARCHIVE_ID"},
		{"--pending as someone", []string{"archives", "delete", "--pending", "--as", "alice"}, 2, "--pending acts for nobody"},
		{"a member", []string{"archives", "delete", s.ID, "--as", "bob", "--org", "acme", "--yes"}, 1, "not found (absent, or bob may not delete it)"},
		{"the grantee", []string{"archives", "delete", s.ID, "--as", "carol", "--yes"}, 1, "not found"},
	} {
		if out, errs, code := s.Run(t, tc.args...); code != tc.code || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%s: exit %d: %q %s, want %d saying %q", tc.name, code, out, errs, tc.code, tc.want)
		}
	}
	var asked string
	answer := func(yes bool) func(*cmdutil.Factory) {
		return func(f *cmdutil.Factory) { f.Confirm = func(q string) (bool, bool) { asked = q; return true, yes } }
	}
	if _, errs, code := clitest.RunCtx(ctx, t, s.Dir, s.Env, answer(false), "archives", "delete", s.ID, "--as", "alice"); code != 1 ||
		!strings.Contains(errs, "not confirmed; nothing was deleted") || !strings.Contains(asked, "Delete archive "+s.ID+"?") {
		t.Errorf("answered no: exit %d: %s (asked %q)", code, errs, asked)
	}
	testenv.Unchanged(t, s.DSN, before)
	objects := blob.New(testenv.S3Config(t))
	present := func() int {
		n := 0
		for _, k := range s.Keys {
			switch _, err := objects.Get(ctx, s.Bucket, k); {
			case err == nil:
				n++
			case !errors.Is(err, blob.ErrNotFound):
				t.Fatal(err)
			}
		}
		return n
	}

	// S3 does not answer: the ledger entry is gone, the objects stay (exit 3).
	down := maps.Clone(s.Env)
	down["CAPTURE_LEDGER_S3_ENDPOINT"] = "http://127.0.0.1:1"
	out, errs, code := clitest.RunCtx(ctx, t, s.Dir, down, answer(true), "archives", "delete", s.ID, "--as", "alice", "--json")
	var d archive.Deletion
	if code != cmdutil.ExitIncomplete || json.Unmarshal([]byte(out), &d) != nil || d.ObjectsDeleted || !strings.Contains(errs, "archives delete --pending") {
		t.Fatalf("S3 down: exit %d: %s %s", code, out, errs)
	}
	if n := present(); n != 3 {
		t.Errorf("%d objects left after a failed removal, want 3", n)
	}
	if _, errs, code := s.Run(t, "archives", "url", s.ID, "--as", "alice"); code != 1 {
		t.Errorf("a URL for the deleted archive: exit %d %s", code, errs)
	}
	s.Drain(t)
	// The worker's command finishes it.
	out, errs, code = s.Run(t, "archives", "delete", "--pending")
	if code != 0 || !strings.Contains(out, "pending deletions: 1, finished: 1, still pending: 0") {
		t.Fatalf("--pending: exit %d: %s %s", code, out, errs)
	}
	if n := present(); n != 0 {
		t.Errorf("%d objects left after --pending", n)
	}
	if out, _, code := s.Run(t, "archives", "delete", "--pending", "--json"); code != 0 || !strings.Contains(out, `"pending":0`) {
		t.Errorf("--pending again: exit %d: %s", code, out)
	}
	if _, errs, code := s.Run(t, "archives", "delete", s.ID, "--as", "alice", "--yes"); code != 1 || !strings.Contains(errs, "not found") {
		t.Errorf("deleting again: exit %d %s", code, errs)
	}

	// The capture server writes the manifest again: it is refused.
	task := strings.Split(strings.TrimPrefix(s.Keys[0], "bh/"), "_")[0]
	if err := objects.Put(ctx, s.Bucket, s.Keys[1], "application/json", clitest.ManifestJSON(task, "success", s.Bucket, s.Keys[0])); err != nil {
		t.Fatal(err)
	}
	before = testenv.TakeSnapshot(t, s.DSN)
	out, errs, code = s.Run(t, "archives", "add", s.Keys[1], "--org", "acme", "--as", "alice", "--json")
	var res clitest.AddResult
	if code != cmdutil.ExitIncomplete || json.Unmarshal([]byte(out), &res) != nil || res.Refused != 1 || !strings.Contains(res.Results[0].Reason, "deleted from the ledger") {
		t.Errorf("add again: exit %d: %s %s", code, out, errs)
	}
	if out, errs, code := s.Run(t, "reconcile", "--json"); code != 0 || !strings.Contains(out, `"pending":0`) {
		t.Errorf("reconcile: exit %d: %s %s", code, out, errs)
	}
	testenv.Unchanged(t, s.DSN, before)
}

// TestArchivesDeleteConfirmed: with the answer yes (or --yes), the archive
// is deleted and every object removed.
func TestArchivesDeleteConfirmed(t *testing.T) {
	t.Parallel()
	s := clitest.NewCapturedStack(t)
	var asked string
	out, errs, code := clitest.RunCtx(context.Background(), t, s.Dir, s.Env, func(f *cmdutil.Factory) {
		f.Confirm = func(q string) (bool, bool) { asked = q; return true, true }
	}, "archives", "delete", s.ID, "--as", "alice", "--org", "acme")
	if code != 0 || !strings.Contains(out, s.ID) || !strings.Contains(out, "objects removed") || asked == "" ||
		!strings.Contains(errs, "is deleted from the ledger") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := s.Run(t, "archives", "url", s.ID, "--as", "alice"); code != 1 {
		t.Errorf("a URL after the delete: exit %d %s", code, errs)
	}
}
