package crawl_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
)

// TestCrawlStop: `crawl stop` stops a running crawl for a submitter of its
// organization and says so; again, it says the crawl had ended and changes
// nothing (exit 0; --json: "stopped": false); a caller who may not stop it
// is told what an absent crawl is told; a bad id is a usage error.
func TestCrawlStop(t *testing.T) {
	t.Parallel()
	dir, env := clitest.DeployedStack(t)
	if _, errs, code := clitest.Run(t, dir, env, "fga", "grant", "submitter", "alice", "acme"); code != 0 {
		t.Fatalf("grant: %s", errs)
	}
	out, errs, code := clitest.Run(t, dir, env, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", "https://www.example.com/")
	id := strings.TrimSpace(out)
	if code != 0 || len(id) != 36 {
		t.Fatalf("start: exit %d %q %s", code, out, errs)
	}
	_, absent, _ := clitest.Run(t, dir, env, "crawl", "stop", "5b0a3c1e-0000-4000-8000-000000000000", "--as", "bob", "--org", "acme")
	_, errs, code = clitest.Run(t, dir, env, "crawl", "stop", id, "--as", "bob", "--org", "acme")
	if code != cmdutil.ExitFailure || strings.ReplaceAll(errs, id, "ID") != strings.ReplaceAll(absent, "5b0a3c1e-0000-4000-8000-000000000000", "ID") {
		t.Errorf("bob stops: exit %d %q (absent: %q)", code, errs, absent)
	}
	if _, errs, code := clitest.Run(t, dir, env, "crawl", "stop", "nope", "--as", "alice", "--org", "acme"); code != cmdutil.ExitUsage || !strings.Contains(errs, "CRAWL_ID must be a crawl id") {
		t.Errorf("bad id: exit %d %s", code, errs)
	}
	out, errs, code = clitest.Run(t, dir, env, "crawl", "stop", id, "--as", "alice", "--org", "acme")
	if code != 0 || out != "crawl "+id+" stopped\n" {
		t.Fatalf("stop: exit %d %q %s", code, out, errs)
	}
	out, _, code = clitest.Run(t, dir, env, "crawl", "stop", id, "--as", "alice", "--org", "acme")
	if code != 0 || out != "crawl "+id+" had already ended: succeeded (stopped); nothing was changed\n" {
		t.Errorf("stop again: exit %d %q", code, out)
	}
	ja := maps.Clone(env)
	ja["LANG"] = "ja_JP.UTF-8"
	out, _, code = clitest.Run(t, dir, ja, "crawl", "stop", id, "--as", "alice", "--org", "acme")
	if code != 0 || out != "クロール "+id+" はすでに終了していました：成功（停止）。変更はありません\n" {
		t.Errorf("stop again in Japanese: exit %d %q", code, out)
	}
	out, _, code = clitest.Run(t, dir, env, "crawl", "stop", id, "--as", "alice", "--org", "acme", "--json")
	if code != 0 || strings.TrimSpace(out) != `{"stopped":false,"state":"succeeded","stopReason":"stopped"}` {
		t.Errorf("stop again --json: exit %d %s", code, out)
	}
	// The stopped crawl leaves room for the next one.
	if _, errs, code := clitest.Run(t, dir, env, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", "https://www.example.org/"); code != 0 {
		t.Errorf("start after stop: exit %d %s", code, errs)
	}
}
