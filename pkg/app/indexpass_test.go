package app_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
)

// TestCommandCrawlGivesTheIndexBack: a crawl run by a command (as
// `crawl run` and `crawl start --wait` run it, with no serve) indexes each
// level's archives into the Bleve index and gives the index's lease back
// when the pass ends, while the command is still open. A serve started
// then takes the index at once and answers searches, instead of 503 until
// the command exits.
func TestCommandCrawlGivesTheIndexBack(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	ctx := context.Background()
	if _, err := authz.Grant(ctx, env.FGA, "submitter", "alice", "acme"); err != nil {
		t.Fatal(err)
	}
	site := twoPageSite(t, "quince")

	s := env.App.Settings
	s.CaptureEngine = "http"
	s.SearchDir = filepath.Join(t.TempDir(), "command", "index")
	s.SearchLeaseTTL = 1500 * time.Millisecond
	s.Lookup = func(name string) string {
		if name == capture.EnvAllowPrivate {
			return "1"
		}
		return os.Getenv(name)
	}
	cmd := app.New(s, nil)
	cmd.SetAuthz(env.FGA)
	t.Cleanup(cmd.Close)
	svc, r, err := cmd.CrawlRunner(ctx, "test")
	if err != nil || r == nil {
		t.Fatalf("the command's runner: %v", err)
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = r.Run(rctx) }()
	depth, delay := 1, 0
	alice := crawl.Caller{Subject: "alice", Orgs: []string{"acme"}}
	id, err := svc.Start(ctx, alice, crawl.StartRequest{Seeds: []string{site.URL + "/"}, MaxDepth: &depth, PerHostDelayMs: &delay})
	if err != nil {
		t.Fatal(err)
	}
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		v, err := svc.Get(ctx, alice, id)
		if err != nil {
			t.Fatal(err)
		}
		if v.State != crawl.StateRunning && v.Search != nil && v.Search.Archives == 2 && v.Search.Indexed == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command's crawl: %s, search %+v", v.State, v.Search)
		}
	}
	// The command, still open, holds the index no longer.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		rec, err := st.SearchIndexer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command still holds the search index (%s) after its crawl's archives were indexed", rec.Holder)
		}
	}
	late := startClusterServe(t, env, "late")
	late.waitHits(t, "quince", 2)
}
