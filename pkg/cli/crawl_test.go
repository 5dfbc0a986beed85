package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

func TestTargetsCommands(t *testing.T) {
	t.Parallel()
	dsn := testenv.Database(t)
	env := map[string]string{"DATABASE_URL": dsn}
	dir := t.TempDir()

	// All or nothing: one unreadable URL adds none, and every bad one is named.
	_, errs, code := run(t, dir, env, "targets", "add", "https://a.example.com/", "ftp://x/", "not a url", "--org", "acme")
	if code != ExitUsage || !strings.Contains(errs, "ftp://x/") || !strings.Contains(errs, "not a url") {
		t.Fatalf("bad urls: exit %d: %s", code, errs)
	}
	out, _, _ := run(t, dir, env, "targets", "list", "--org", "acme", "--json")
	if strings.TrimSpace(out) != "[]" {
		t.Fatalf("something was added: %s", out)
	}
	if _, errs, code := run(t, dir, env, "targets", "list"); code != ExitUsage || !strings.Contains(errs, "--org") {
		t.Errorf("no --org: exit %d %s", code, errs)
	}

	out, errs, code = run(t, dir, env, "targets", "add", "https://A.example.com/#top", "https://b.example.com/x?b=2&a=1", "--org", "acme", "--label", "daily")
	if code != 0 || !strings.Contains(out, "2 added") {
		t.Fatalf("add: exit %d: %s %s", code, out, errs)
	}
	out, _, _ = run(t, dir, env, "targets", "list", "--org", "acme", "--json")
	var ts []struct {
		ID      int64
		URL     string
		Labels  []string
		Enabled bool
	}
	if err := json.Unmarshal([]byte(out), &ts); err != nil || len(ts) != 2 || ts[0].URL != "https://a.example.com/" || ts[1].URL != "https://b.example.com/x?b=2&a=1" || ts[0].Labels[0] != "daily" {
		t.Fatalf("list: %s", out)
	}
	id := fmt.Sprint(ts[0].ID)
	if out, _, code := run(t, dir, env, "targets", "disable", id, "--org", "acme"); code != 0 || !strings.Contains(out, "disabled") {
		t.Errorf("disable: %d %s", code, out)
	}
	// Another organization cannot touch it.
	if _, _, code := run(t, dir, env, "targets", "rm", id, "--org", "contoso"); code == 0 {
		t.Error("rm from another org succeeded")
	}
	// Re-adding a disabled URL enables it again, through stdin.
	out, errs, code = runStdin(t, dir, env, "https://a.example.com/\n# comment\n", "targets", "add", "-", "--org", "acme")
	if code != 0 || !strings.Contains(out, "1 enabled again") {
		t.Errorf("stdin add: exit %d %s %s", code, out, errs)
	}
	if _, _, code := run(t, dir, env, "targets", "rm", id, "--org", "acme"); code != 0 {
		t.Errorf("rm: exit %d", code)
	}
	if _, errs, code := run(t, dir, env, "targets", "enable", "x", "--org", "acme"); code != ExitUsage {
		t.Errorf("bad id: exit %d %s", code, errs)
	}
}

func TestCrawlCommands(t *testing.T) {
	t.Parallel()
	dsn := testenv.Database(t)
	_, bucket, _ := testenv.Bucket(t)
	dir := t.TempDir()
	env := stackEnv(t, dsn, bucket)
	env["CAPTURE_LEDGER_FGA_DATASTORE_URI"] = testenv.EmptyDatabase(t)
	if _, errs, code := run(t, dir, env, "fga", "deploy"); code != 0 {
		t.Fatalf("deploy: %s", errs)
	}
	if _, errs, code := run(t, dir, env, "fga", "grant", "submitter", "alice", "acme"); code != 0 {
		t.Fatalf("grant: %s", errs)
	}

	// Without a runner, starting is refused and nothing is written.
	_, errs, code := run(t, dir, env, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", "https://www.example.com/")
	if code != ExitUsage || !strings.Contains(errs, "CAPTURE_LEDGER_CRAWL_WEBHOOK_URL") {
		t.Fatalf("no runner: exit %d %s", code, errs)
	}

	var levels atomic.Int32
	flow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { levels.Add(1) }))
	defer flow.Close()
	env["CAPTURE_LEDGER_CRAWL_WEBHOOK_URL"], env["CAPTURE_LEDGER_CRAWL_WEBHOOK_TOKEN"] = flow.URL, "t"

	for _, bad := range [][]string{
		{"--seed", "https://www.example.com/", "--max-pages", "0"},
		{"--seed", "https://www.example.com/", "--rule", "fetch:any"},
		{"--seed", "https://www.example.com/", "--from-targets"},
	} {
		if _, errs, code := run(t, dir, env, append([]string{"crawl", "start", "--as", "alice", "--org", "acme"}, bad...)...); code != ExitUsage {
			t.Errorf("%v: exit %d %s", bad, code, errs)
		}
	}
	if _, errs, code := run(t, dir, env, "crawl", "start", "--as", "bob", "--org", "acme", "--seed", "https://www.example.com/"); code != ExitFailure || !strings.Contains(errs, "bob may not start crawls for acme") || !strings.Contains(errs, "ledgerctl fga grant submitter bob acme") {
		t.Errorf("bob may not start: exit %d %s", code, errs)
	}
	// Plain mode speaks sentences naming the flag or argument at fault;
	// --json keeps the API's machine shape.
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"crawl", "start", "--as", "alice", "--org", "acme", "--seed", "https://www.example.com/", "--from-targets"}, ExitUsage, "give either --seed URL (repeatable) or --from-targets, not both"},
		{[]string{"crawl", "start", "--as", "alice", "--org", "acme", "--from-targets"}, ExitUsage, "no enabled capture targets; add some with: ledgerctl targets add"},
		{[]string{"crawl", "status", "nope", "--as", "alice", "--org", "acme"}, ExitUsage, "CRAWL_ID must be a crawl id (a UUID"},
		{[]string{"crawl", "status", "nope", "--as", "alice", "--org", "acme", "--json"}, ExitUsage, `"code":"FST_ERR_VALIDATION"`},
		{[]string{"crawl", "status", "5b0a3c1e-0000-4000-8000-000000000000", "--as", "alice", "--org", "acme"}, ExitFailure, "no crawl 5b0a3c1e-0000-4000-8000-000000000000 that alice may see"},
		{[]string{"targets", "disable", "99", "--org", "acme"}, ExitFailure, "no capture target 99 in organization acme"},
	} {
		_, errs, code := run(t, dir, env, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || (!strings.Contains(tc.want, "FST") && strings.Contains(errs, "{")) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errs)
		}
	}
	out, errs, code := run(t, dir, env, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", "https://www.example.com/", "--rule", "follow:same-site", "--max-depth", "1")
	id := strings.TrimSpace(out)
	if code != 0 || len(id) != 36 || levels.Load() != 1 {
		t.Fatalf("start: exit %d %q %s (levels dispatched %d)", code, out, errs, levels.Load())
	}
	if _, errs, code := run(t, dir, env, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", "https://other.example.org/"); code != ExitFailure || !strings.Contains(errs, id) {
		t.Errorf("second crawl: exit %d %s", code, errs)
	}
	out, _, code = run(t, dir, env, "crawl", "status", id, "--as", "alice", "--org", "acme", "--json")
	if code != 0 || !strings.Contains(out, `"state":"running"`) || !strings.Contains(out, `"same-site"`) {
		t.Errorf("status: %d %s", code, out)
	}
	out, _, code = run(t, dir, env, "crawl", "list", "--as", "alice", "--org", "acme")
	if code != 0 || !strings.Contains(out, id) {
		t.Errorf("list: %d %s", code, out)
	}
	out, _, code = run(t, dir, env, "crawl", "decisions", id, "--as", "alice", "--org", "acme")
	if code != 0 || !strings.Contains(out, "rule 1: follow:same-site") {
		t.Errorf("decisions: %d %s", code, out)
	}
	out, _, code = run(t, dir, env, "crawl", "fail", id, "--as", "alice", "--org", "acme", "--reason", "testing")
	if code != 0 || out != "crawl "+id+" closed as failed\n" {
		t.Errorf("fail: %d %s", code, out)
	}
	// Nothing to close: a failure in plain mode, the API's shape in --json.
	if _, errs, code := run(t, dir, env, "crawl", "fail", id, "--as", "alice", "--org", "acme"); code != ExitFailure || !strings.Contains(errs, "is not running; nothing was changed") {
		t.Errorf("fail again: %d %s", code, errs)
	}
	if out, _, code := run(t, dir, env, "crawl", "fail", id, "--as", "alice", "--org", "acme", "--json"); code != 0 || strings.TrimSpace(out) != `{"closed":false}` {
		t.Errorf("fail again --json: %d %s", code, out)
	}
	out, _, _ = run(t, dir, env, "crawl", "status", id, "--as", "alice", "--org", "acme")
	if !strings.Contains(out, "state: failed") || !strings.Contains(out, "error: testing") {
		t.Errorf("status after fail: %s", out)
	}
}
