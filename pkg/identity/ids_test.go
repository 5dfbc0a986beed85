package identity

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

// hostileIDs are strings OpenFGA refuses as the id of user:<id> or
// organization:<id>, with the reason CheckSubject/CheckOrganization give.
var hostileIDs = []struct{ id, reason string }{
	{"user:alice", `contains ':'`},
	{"organization:acme", `contains ':'`},
	{"alice#member", `contains '#'`},
	{"acme#member", `contains '#'`},
	{"*", `is "*", the wildcard`},
	{"a b", "contains whitespace"},
	{"a\u00a0b", "contains whitespace"},
	{"a\u2028b", "contains whitespace"},
	{"a\tb", "contains whitespace"},
	{"a\x00b", "contains a control character"},
	{"a\x7fb", "contains a control character"},
	{"bob\xe9", "is not valid UTF-8"},
	{"", "is empty"},
	{strings.Repeat("x", 300), "is longer than"},
}

func TestCheckIDsRefuseWhatOpenFGARefuses(t *testing.T) {
	for _, h := range hostileIDs {
		for _, check := range []func(string) error{CheckSubject, CheckOrganization} {
			err := check(h.id)
			if err == nil || !errors.Is(err, ErrInvalidID) || !strings.Contains(err.Error(), h.reason) {
				t.Errorf("%q: %v, want %q", h.id, err, h.reason)
			}
		}
	}
	for _, ok := range []string{"alice", "alice@example.com", "auth0|5f7c8ec7c33c6c004bbafe82", "josé", "営業部", "a*b", "**", "a.b-c_d+e/f", "@", strings.Repeat("a", MaxOrganizationBytes)} {
		if err := CheckSubject(ok); err != nil {
			t.Errorf("subject %q refused: %v", ok, err)
		}
		if err := CheckOrganization(ok); err != nil {
			t.Errorf("organization %q refused: %v", ok, err)
		}
	}
	if CheckSubject(strings.Repeat("a", MaxSubjectBytes)) != nil || CheckSubject(strings.Repeat("a", MaxSubjectBytes+1)) == nil {
		t.Error("subject limit is not MaxSubjectBytes")
	}
	if CheckOrganization(strings.Repeat("a", MaxOrganizationBytes+1)) == nil {
		t.Error("organization limit is not MaxOrganizationBytes")
	}
	orgs := make([]string, MaxOrganizations+1)
	for i := range orgs {
		orgs[i] = "o" + strings.Repeat("x", i)
	}
	if CheckIdentity(Identity{Subject: "a", Organizations: orgs[:MaxOrganizations]}) != nil || CheckIdentity(Identity{Subject: "a", Organizations: orgs}) == nil {
		t.Error("organization count limit is not MaxOrganizations")
	}
}

// TestCheckIDsAgreeWithOpenFGA asks the embedded OpenFGA the API's own
// question (can_view with the member tuples) for ids at the edge of the
// rules: every id CheckIdentity accepts must be a question OpenFGA answers,
// and the ids it refuses are ones OpenFGA refuses too (or, for the
// wildcard, turns into "every user").
func TestCheckIDsAgreeWithOpenFGA(t *testing.T) {
	c, err := authz.NewMemory(authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := authz.Deploy(ctx, c, "ids", fga.Model); err != nil {
		t.Fatal(err)
	}
	const archive = "00000000-0000-4000-8000-000000000001"
	ask := func(subject string, orgs []string) error {
		_, err := c.Check(ctx, authz.ArchiveCheck(subject, orgs, archive, time.Now()))
		if err == nil {
			_, err = c.Check(ctx, authz.SubmitCheck(subject, orgs[0]))
		}
		return err
	}
	many := make([]string, MaxOrganizations)
	for i := range many {
		many[i] = "org" + strings.Repeat("x", i)
	}
	for _, id := range []Identity{
		{Subject: strings.Repeat("s", MaxSubjectBytes), Organizations: []string{strings.Repeat("o", MaxOrganizationBytes)}},
		{Subject: strings.Repeat("é", MaxSubjectBytes/2), Organizations: []string{strings.Repeat("é", MaxOrganizationBytes/2)}},
		{Subject: "alice@example.com", Organizations: []string{"a*b", "営業部"}},
		{Subject: "auth0|abc", Organizations: many},
	} {
		if err := CheckIdentity(id); err != nil {
			t.Fatalf("%v", err)
		}
		if err := ask(id.Subject, id.Organizations); err != nil {
			t.Errorf("OpenFGA refused an identity CheckIdentity accepts (%d-byte subject): %v", len(id.Subject), err)
		}
	}
	for _, h := range []string{"user:alice", "alice#member", "a b", "*", strings.Repeat("o", 300)} {
		if err := ask("alice", []string{h}); err == nil {
			t.Errorf("OpenFGA accepted organization %q", h)
		}
	}
	// A subject of 300 bytes would fit OpenFGA's 512-byte user field: the
	// subject's limit is OIDC's, stricter.
	for _, h := range []string{"user:alice", "alice#member", "a b", strings.Repeat("s", 600)} {
		if err := ask(h, []string{"acme"}); err == nil {
			t.Errorf("OpenFGA accepted subject %q", h)
		}
	}
	tooMany := append(many, "one-more")
	if err := ask("alice", tooMany); err == nil {
		t.Errorf("OpenFGA accepted %d organizations", len(tooMany))
	}
}
