package authz_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
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
		en, ja           string
		done             authz.Done
		code, note       string
	}{
		{"grant", "submitter",
			"alice may now start crawls for acme (wrote: user:alice submitter organization:acme)",
			"alice は acme のクロールを始められます (書いた: user:alice submitter organization:acme)",
			authz.Written, "wrote", ""},
		{"grant", "submitter",
			"alice may now start crawls for acme (already there: user:alice submitter organization:acme)",
			"alice は acme のクロールを始められます (もう在った: user:alice submitter organization:acme)",
			authz.Unchanged, "already-present", ""},
		{"grant", "admin",
			"alice may now start crawls for acme (wrote: user:alice admin organization:acme)",
			"alice は acme のクロールを始められます (書いた: user:alice admin organization:acme)",
			authz.Written, "wrote", ""},
		{"revoke", "submitter",
			"alice may still start crawls for acme (deleted: user:alice submitter organization:acme; still allowed through another relation)",
			"alice は acme のクロールを始められます (消した: user:alice submitter organization:acme。ほかの関係で許されています)",
			authz.Removed, "deleted", "other-relation"},
		{"revoke", "admin",
			"alice may not start crawls for acme (deleted: user:alice admin organization:acme)",
			"alice は acme のクロールを始められません (消した: user:alice admin organization:acme)",
			authz.Removed, "deleted", ""},
		{"revoke", "admin",
			"alice may not start crawls for acme (already gone: user:alice admin organization:acme)",
			"alice は acme のクロールを始められません (もう無かった: user:alice admin organization:acme)",
			authz.Unchanged, "already-absent", ""},
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
		for _, w := range []struct {
			lang i18n.Lang
			want string
		}{{i18n.English, s.en}, {i18n.Japanese, s.ja}, {"fr", s.en}} {
			if got := r.Sentence(w.lang); got != w.want {
				t.Errorf("%s %s (%s):\n got %s\nwant %s", s.action, s.relation, w.lang, got, w.want)
			}
		}
		if r.Done != s.done || r.DoneCode != s.code || r.Note != s.note {
			t.Errorf("%s %s: done %q, doneCode %q, note %q; want %q, %q, %q", s.action, s.relation, r.Done, r.DoneCode, r.Note, s.done, s.code, s.note)
		}
		// The JSON is for machines: stable English, whatever the reader reads.
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.ValidString(string(b)) || strings.ContainsFunc(string(b), func(r rune) bool { return r > unicode.MaxASCII }) {
			t.Errorf("%s %s: JSON is not plain ASCII: %s", s.action, s.relation, b)
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
	// What OpenFGA cannot hold is refused before it is asked (it answered
	// bytes that are not UTF-8 with an internal error), naming the side.
	for _, bad := range []string{"a\x00b", "a\xffb", "a\xed\xa0\x80b", "*", "a:b", strings.Repeat("a", 300)} {
		if err := authz.ValidateGrant("submitter", bad, "acme"); err == nil || !strings.HasPrefix(err.Error(), "user ") {
			t.Errorf("user %.40q: %v", bad, err)
		}
		if err := authz.ValidateGrant("submitter", "alice", bad); err == nil || !strings.HasPrefix(err.Error(), "organization ") {
			t.Errorf("organization %.40q: %v", bad, err)
		}
	}
	if err := authz.ValidateGrant("submitter", "alice@example.com", "営業部"); err != nil {
		t.Errorf("plain names refused: %v", err)
	}
}
