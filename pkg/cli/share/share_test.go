package share_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestShareCommands: `ledgerctl share grant|list|revoke` do what the API
// does, as --as: grants to a user and to an organization's members take
// effect once drained, a revoke ends one, the list shows active and past
// apart; bad input is a usage error naming the flag and writes nothing; a
// person who may not share is told the archive is not found.
func TestShareCommands(t *testing.T) {
	t.Parallel()
	s := clitest.NewCapturedStack(t)
	before := testenv.TakeSnapshot(t, s.DSN)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no --for", []string{"share", "grant", s.ID, "carol", "--as", "alice"}, 2, "--for is required"},
		{"zero", []string{"share", "grant", s.ID, "carol", "--for", "0s", "--as", "alice"}, 2, "--for must be positive"},
		{"over the cap", []string{"share", "grant", s.ID, "carol", "--for", "91d", "--as", "alice"}, 2, "--for is longer than the maximum of 90 days"},
		{"unparsable", []string{"share", "grant", s.ID, "carol", "--for", "a while", "--as", "alice"}, 2, "--for is not a duration"},
		{"invalid user", []string{"share", "grant", s.ID, "user:carol", "--for", "1h", "--as", "alice"}, 2, "USER contains ':'"},
		{"empty user", []string{"share", "grant", s.ID, "", "--for", "1h", "--as", "alice"}, 2, "USER is empty"},
		{"empty organization", []string{"share", "grant", s.ID, "--organization", "", "--for", "1h", "--as", "alice"}, 2, "--organization is empty"},
		{"both", []string{"share", "grant", s.ID, "carol", "--organization", "partner", "--for", "1h", "--as", "alice"}, 2, "not both"},
		{"neither", []string{"share", "grant", s.ID, "--for", "1h", "--as", "alice"}, 2, "give USER"},
		{"bad archive id", []string{"share", "grant", "nope", "carol", "--for", "1h", "--as", "alice"}, 2, "ARCHIVE_ID must be a UUID"},
		{"no --as", []string{"share", "grant", s.ID, "carol", "--for", "1h"}, 2, "--as is required"},
		{"a member may not share", []string{"share", "grant", s.ID, "carol", "--for", "1h", "--as", "bob", "--org", "acme"}, 1, "not found (absent, or bob may not share it)"},
		{"unknown archive", []string{"share", "grant", uuid.NewString(), "carol", "--for", "1h", "--as", "alice"}, 1, "not found"},
		{"a member may not list", []string{"share", "list", s.ID, "--as", "bob", "--org", "acme"}, 1, "not found"},
		{"unknown share", []string{"share", "revoke", uuid.NewString(), "--as", "alice"}, 1, "not found"},
	} {
		if out, errs, code := s.Run(t, tc.args...); code != tc.code || !strings.Contains(errs, tc.want) || out != "" {
			t.Errorf("%s: exit %d: %q %s, want %d saying %q", tc.name, code, out, errs, tc.code, tc.want)
		}
	}
	testenv.Unchanged(t, s.DSN, before)

	out, errs, code := s.Run(t, "share", "grant", s.ID, "carol", "--for", "72h", "--as", "alice", "--org", "acme", "--json")
	var carol archive.Granted
	if code != 0 || json.Unmarshal([]byte(out), &carol) != nil || carol.Status != "active" || *carol.User != "carol" ||
		carol.ExpiresAt.Sub(carol.GrantedAt) != 72*time.Hour {
		t.Fatalf("grant carol: exit %d: %s %s", code, out, errs)
	}
	out, errs, code = s.Run(t, "share", "grant", s.ID, "--organization", "partner", "--for", "7d", "--as", "alice")
	if code != 0 || !strings.Contains(out, "org partner") || !strings.Contains(errs, "the members of partner may view archive "+s.ID) {
		t.Fatalf("grant partner: exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := s.Run(t, "archives", "url", s.ID, "--as", "carol"); code != 1 {
		t.Errorf("carol before the drain: exit %d %s", code, errs)
	}
	s.Drain(t)
	if out, errs, code := s.Run(t, "archives", "url", s.ID, "--as", "carol"); code != 0 || !strings.Contains(out, "X-Amz-Signature=") {
		t.Errorf("carol after the drain: exit %d %s %s", code, out, errs)
	}
	if _, errs, code := s.Run(t, "archives", "url", s.ID, "--as", "frank", "--org", "partner"); code != 0 {
		t.Errorf("a member of partner: exit %d %s", code, errs)
	}

	out, errs, code = s.Run(t, "share", "revoke", carol.ID, "--as", "alice", "--json")
	var revoked archive.Share
	if code != 0 || json.Unmarshal([]byte(out), &revoked) != nil || revoked.Status != "revoked" || *revoked.RevokedBy != "alice" {
		t.Fatalf("revoke: exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := s.Run(t, "share", "revoke", carol.ID, "--as", "alice"); code != 0 || !strings.Contains(errs, "had already ended (revoked); nothing changed") {
		t.Errorf("revoke again: exit %d: %s", code, errs)
	}
	s.Drain(t)
	if _, errs, code := s.Run(t, "archives", "url", s.ID, "--as", "carol"); code != 1 || !strings.Contains(errs, "not found") {
		t.Errorf("carol after the revoke: exit %d %s", code, errs)
	}

	out, errs, code = s.Run(t, "share", "list", s.ID, "--as", "alice", "--json")
	var l archive.ShareList
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil || len(l.Active) != 1 || *l.Active[0].Organization != "partner" ||
		len(l.Past) != 1 || l.Past[0].ID != carol.ID {
		t.Errorf("list: exit %d: %s %s", code, out, errs)
	}
	out, errs, code = s.Run(t, "share", "list", s.ID, "--as", "alice")
	if code != 0 || !strings.Contains(out, "active shares: 1") || !strings.Contains(out, "past shares: 1") || !strings.Contains(out, "revoked") {
		t.Errorf("list for a person: exit %d: %s %s", code, out, errs)
	}
	out, errs, code = s.Run(t, "share", "list", "--as", "alice", "--json")
	var all archive.ShareList
	if code != 0 || json.Unmarshal([]byte(out), &all) != nil || all.ArchiveID != "" || len(all.Active)+len(all.Past) != 2 {
		t.Errorf("list across archives: exit %d: %s %s", code, out, errs)
	}
	if out, _, code := s.Run(t, "share", "list", "--as", "bob", "--org", "acme", "--json"); code != 0 || !strings.Contains(out, `"active":[],"past":[]`) {
		t.Errorf("bob's list across archives: exit %d: %s", code, out)
	}
}
