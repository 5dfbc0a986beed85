package app_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// TestAdminSocketSearch: while serve holds the Bleve index, a command on
// the same machine cannot open it (search.ErrIndexBusy) and searches
// through serve's admin socket instead — OpenFGA still deciding, bad input
// refused naming the field. The socket is its user's only, a second serve
// on the same index directory is refused, and the socket goes when serve
// stops.
func TestAdminSocketSearch(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	rows := apptest.SeedArchives(t, env, 3, func(i int) string { return []string{"acme", "globex", "acme"}[i] })
	s := env.App.Settings
	s.APIPort = 0
	s.DevIdentity = true
	s.ReplayKey = strings.Repeat("k", 48)
	s.WebhookURL = ""
	s.CaptureEngine = "http"
	s.SearchDir = filepath.Join(t.TempDir(), "index")
	a := app.New(s, nil)
	a.SetAuthz(env.FGA)
	t.Cleanup(a.Close)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	srv, err := a.Server(ctx, app.ServeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	b, err := a.SearchBackend(ctx)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]search.Document{}
	for _, r := range rows {
		docs[r.ID] = []search.Document{{ArchiveID: r.ID, URL: "https://example.com/" + r.ID, Title: "plum " + r.Org, Text: "a plum tree", CapturedAt: r.At}}
	}
	if err := b.Put(ctx, docs); err != nil {
		t.Fatal(err)
	}

	sock := app.AdminSocketPath(s.SearchDir)
	fi, err := os.Stat(sock)
	if err != nil || fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("admin socket %s: %v %v, want a socket of mode 0600", sock, fi, err)
	}
	// Another process (here: another App of the same settings) cannot open
	// the index; the socket answers for it.
	cli := app.New(s, nil)
	cli.SetAuthz(env.FGA)
	t.Cleanup(cli.Close)
	if _, err := cli.Searcher(ctx); !errors.Is(err, search.ErrIndexBusy) {
		t.Fatalf("opening the index beside serve: %v, want ErrIndexBusy", err)
	}
	page, err := app.AdminSearch(ctx, sock, "alice", []string{"acme"}, url.Values{"q": {"plum"}})
	if err != nil || len(page.Hits) != 2 || page.Total == nil || *page.Total != 2 {
		t.Fatalf("alice's search through the socket: %+v %v", page, err)
	}
	for _, h := range page.Hits {
		for _, r := range rows {
			if h.ArchiveID == r.ID && r.Org != "acme" {
				t.Errorf("alice (acme) sees %s's archive %s", r.Org, h.ArchiveID)
			}
		}
	}
	for _, tc := range []struct {
		params url.Values
		want   string
	}{
		{url.Values{"q": {"a\x00b"}}, "querystring/q must not contain control characters"},
		{url.Values{"q": {"plum"}, "host": {"a/b"}}, "querystring/host must be a host name"},
		{url.Values{"q": {"plum"}, "cursor": {"s1.nope"}}, "querystring/cursor"},
	} {
		_, err := app.AdminSearch(ctx, sock, "alice", []string{"acme"}, tc.params)
		var ae *app.AdminError
		if !errors.As(err, &ae) || !strings.HasPrefix(ae.Message, tc.want) {
			t.Errorf("%v: %v, want a refusal %q", tc.params, err, tc.want)
		}
	}
	// Hostile names are refused, naming them, as on every other path.
	for _, tc := range []struct {
		subject string
		orgs    []string
		want    string
	}{
		{"al\x00ice", []string{"acme"}, "as: "},
		{"alice", []string{"ac\xffme"}, "org: "},
		{"alice", []string{"ac#me"}, "org: "},
	} {
		_, err := app.AdminSearch(ctx, sock, tc.subject, tc.orgs, url.Values{"q": {"plum"}})
		var ae *app.AdminError
		if !errors.As(err, &ae) || !strings.HasPrefix(ae.Message, tc.want) {
			t.Errorf("%q of %q: %v, want a refusal %q", tc.subject, tc.orgs, err, tc.want)
		}
	}
	// A second serve on the same index directory is refused.
	second := app.New(s, nil)
	second.SetAuthz(env.FGA)
	t.Cleanup(second.Close)
	if _, err := second.Server(ctx, app.ServeOptions{}); err == nil {
		t.Error("a second serve on the same index directory started")
	}
	stop()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop")
	}
	a.Close()
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the admin socket outlives serve: %v", err)
	}
}
