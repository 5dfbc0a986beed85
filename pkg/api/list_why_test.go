package api_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// TestArchiveListWhy: ?why=1 says, per archive, the recorded reasons
// OpenFGA confirms for this caller: alice (acme, the job's owner) sees
// "organization acme" and "owner"; bob of partner, after a 1 h share to
// partner and one to him for 2 h, sees both shares with their ends; when the
// hour has passed only his own share is left; past both, nothing is listed.
// Without why the body has no "why"; a bad value is a 400 naming the field.
func TestArchiveListWhy(t *testing.T) {
	t.Parallel()
	f := newShareFixture(t)
	whyOf := func(subject, orgs string) [][]ledger.Reason {
		t.Helper()
		r := f.do(t, "GET", "/api/archives?why=1", subject, orgs, "")
		var page api.ArchivePage
		if r.status != 200 || json.Unmarshal([]byte(r.body), &page) != nil {
			t.Fatalf("list as %s: %d %s", subject, r.status, r.body)
		}
		var out [][]ledger.Reason
		for _, a := range page.Archives {
			if a.ID != f.id || a.Why == nil {
				t.Fatalf("list as %s: %s", subject, r.body)
			}
			out = append(out, *a.Why)
		}
		return out
	}
	kinds := func(rs []ledger.Reason) string {
		var s []string
		for _, r := range rs {
			k := r.Kind
			if r.Organization != "" {
				k += " " + r.Organization
			}
			if r.Until != nil {
				k += " until " + r.Until.UTC().Format(time.RFC3339)
			}
			s = append(s, k)
		}
		return strings.Join(s, ", ")
	}

	if got := whyOf("alice", "acme"); len(got) != 1 || kinds(got[0]) != "organization acme, owner" {
		t.Errorf("alice: %v", got)
	}
	// A member of acme who did not ask for the capture: the organization only.
	if got := whyOf("mia", "acme"); len(got) != 1 || kinds(got[0]) != "organization acme" {
		t.Errorf("mia: %v", got)
	}
	if r := f.do(t, "GET", "/api/archives", "alice", "acme", ""); strings.Contains(r.body, `"why"`) {
		t.Errorf("without why: %s", r.body)
	}
	if r := f.do(t, "GET", "/api/archives?why=maybe", "alice", "acme", ""); r.status != 400 || !strings.Contains(r.body, "why") {
		t.Errorf("why=maybe: %d %s", r.status, r.body)
	}

	if got := whyOf("bob", "partner"); len(got) != 0 {
		t.Fatalf("bob before any share: %v", got)
	}
	granted := f.clock.Now().UTC().Truncate(time.Second)
	for _, body := range []string{`{"organization":"partner","duration":"1h"}`, `{"user":"bob","duration":"2h"}`} {
		if r := f.do(t, "POST", "/api/archives/"+f.id+"/shares", "alice", "acme", body); r.status != 201 {
			t.Fatalf("share %s: %d %s", body, r.status, r.body)
		}
	}
	f.drain(t)
	hour, two := granted.Add(time.Hour).Format(time.RFC3339), granted.Add(2*time.Hour).Format(time.RFC3339)
	if got := whyOf("bob", "partner"); len(got) != 1 || kinds(got[0]) != "share partner until "+hour+", share until "+two {
		t.Errorf("bob with two shares: %v", kinds(got[0]))
	}
	// Someone else of partner sees it through the organization's share only.
	if got := whyOf("pat", "partner"); len(got) != 1 || kinds(got[0]) != "share partner until "+hour {
		t.Errorf("pat of partner: %v", got)
	}
	// 30 s past the hour the partner share is still a candidate (the list
	// asks about shares that ended within a minute) but OpenFGA no longer
	// confirms it: the reason is dropped, not shown.
	f.clock.Set(granted.Add(time.Hour + 30*time.Second))
	if got := whyOf("bob", "partner"); len(got) != 1 || kinds(got[0]) != "share until "+two {
		t.Errorf("bob after the hour: %v", got)
	}
	if got := whyOf("pat", "partner"); len(got) != 0 {
		t.Errorf("pat after the hour: %v", got)
	}
	f.clock.Set(granted.Add(2*time.Hour + 30*time.Second))
	if got := whyOf("bob", "partner"); len(got) != 0 {
		t.Errorf("bob after both shares: %v", got)
	}
}
