package app_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/config"
)

// TestAdmittedArchivesReachOpenFGAAtOnce: a crawl's archives become
// visible to their owner — listed, and found by search — as soon as their
// level is admitted, not at serve's next scheduled drain of the outbox
// (here an hour away): the outbox's new rows wake serve's drainer.
func TestAdmittedArchivesReachOpenFGAAtOnce(t *testing.T) {
	t.Parallel()
	env := apptest.NewWith(t, func(s *config.Settings) { s.DrainInterval = time.Hour })
	ctx := context.Background()
	if _, err := authz.Grant(ctx, env.FGA, "submitter", "alice", "acme"); err != nil {
		t.Fatal(err)
	}
	site := twoPageSite(t, "quince")
	srv := startClusterServe(t, env, "a")
	api := func(method, path, body string) (int, map[string]any) { return srv.aliceCalls(t, method, path, body) }
	// serve drained once as it started; what comes after waits for a wake.
	time.Sleep(500 * time.Millisecond)
	code, out := api("POST", "/api/crawls", fmt.Sprintf(`{"seeds":[%q],"maxDepth":1,"perHostDelayMs":0}`, site.URL+"/"))
	if code != http.StatusAccepted {
		t.Fatalf("start the crawl: %d %v", code, out)
	}
	id := out["crawlId"].(string)
	start := time.Now()
	deadline := start.Add(30 * time.Second)
	for listed, found := false, false; !listed || !found; {
		if !listed {
			code, out = api("GET", "/api/archives", "")
			as, _ := out["archives"].([]any)
			if listed = code == http.StatusOK && len(as) == 2; listed {
				t.Logf("both archives listed %v after the crawl started", time.Since(start).Round(time.Millisecond))
			}
		}
		if !found {
			code, out = api("GET", "/api/search?q=quince", "")
			hits, _ := out["hits"].([]any)
			if found = code == http.StatusOK && len(hits) == 2; found {
				t.Logf("both pages found by search %v after the crawl started", time.Since(start).Round(time.Millisecond))
			}
		}
		if time.Now().After(deadline) {
			_, view := api("GET", "/api/crawls/"+id, "")
			t.Fatalf("30 s after the crawl started: listed %v, found by search %v (last answer %d %v; the crawl %v)", listed, found, code, out, view["state"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
