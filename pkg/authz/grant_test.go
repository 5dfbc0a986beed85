package authz_test

import (
	"context"
	"errors"
	"testing"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

func TestGrantRevokeSentences(t *testing.T) {
	ctx := context.Background()
	c, err := authz.NewMemory(authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := authz.Deploy(ctx, c, "grants", fga.Model); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		action, relation string
		want             string
	}{
		{"grant", "submitter", "alice は acme のクロールを始められます (書いた: user:alice submitter organization:acme)"},
		{"grant", "submitter", "alice は acme のクロールを始められます (もう在った: user:alice submitter organization:acme)"},
		{"grant", "admin", "alice は acme のクロールを始められます (書いた: user:alice admin organization:acme)"},
		{"revoke", "submitter", "alice は acme のクロールを始められます (消した: user:alice submitter organization:acme。ほかの関係で許されています)"},
		{"revoke", "admin", "alice は acme のクロールを始められません (消した: user:alice admin organization:acme)"},
		{"revoke", "admin", "alice は acme のクロールを始められません (もう無かった: user:alice admin organization:acme)"},
	}
	for _, s := range steps {
		change := authz.Grant
		if s.action == "revoke" {
			change = authz.Revoke
		}
		r, err := change(ctx, c, s.relation, "alice", "acme")
		if err != nil {
			t.Fatalf("%s %s: %v", s.action, s.relation, err)
		}
		if got := r.Sentence(); got != s.want {
			t.Errorf("%s %s:\n got %s\nwant %s", s.action, s.relation, got, s.want)
		}
	}
}

func TestGrantRefusesMember(t *testing.T) {
	for _, rel := range []string{"member", "viewer", "can_submit", ""} {
		_, err := authz.Grant(context.Background(), nil, rel, "alice", "acme")
		if err == nil {
			t.Errorf("grant %q accepted", rel)
		}
		if rel == "member" && !errors.Is(err, authz.ErrMemberNotStored) {
			t.Errorf("grant member: %v", err)
		}
	}
	if err := authz.ValidateGrant("admin", "user:alice", "acme"); err == nil {
		t.Error("a prefixed user was accepted")
	}
}
