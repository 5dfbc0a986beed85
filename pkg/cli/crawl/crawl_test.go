package crawl_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/cli/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/cli/search"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

func TestTargetsCommands(t *testing.T) {
	t.Parallel()
	dsn := testenv.Database(t)
	env := map[string]string{"DATABASE_URL": dsn}
	dir := t.TempDir()

	// All or nothing: one unreadable URL adds none, and every bad one is named.
	_, errs, code := clitest.Run(t, dir, env, "targets", "add", "https://a.example.com/", "ftp://x/", "not a url", "--org", "acme")
	if code != cmdutil.ExitUsage || !strings.Contains(errs, "ftp://x/") || !strings.Contains(errs, "not a url") {
		t.Fatalf("bad urls: exit %d: %s", code, errs)
	}
	out, _, _ := clitest.Run(t, dir, env, "targets", "list", "--org", "acme", "--json")
	if strings.TrimSpace(out) != "[]" {
		t.Fatalf("something was added: %s", out)
	}
	if _, errs, code := clitest.Run(t, dir, env, "targets", "list"); code != cmdutil.ExitUsage || !strings.Contains(errs, "--org") {
		t.Errorf("no --org: exit %d %s", code, errs)
	}

	out, errs, code = clitest.Run(t, dir, env, "targets", "add", "https://A.example.com/#top", "https://b.example.com/x?b=2&a=1", "--org", "acme", "--label", "daily")
	if code != 0 || !strings.Contains(out, "2 added") {
		t.Fatalf("add: exit %d: %s %s", code, out, errs)
	}
	out, _, _ = clitest.Run(t, dir, env, "targets", "list", "--org", "acme", "--json")
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
	if out, _, code := clitest.Run(t, dir, env, "targets", "disable", id, "--org", "acme"); code != 0 || !strings.Contains(out, "disabled") {
		t.Errorf("disable: %d %s", code, out)
	}
	// Another organization cannot touch it.
	if _, _, code := clitest.Run(t, dir, env, "targets", "rm", id, "--org", "contoso"); code == 0 {
		t.Error("rm from another org succeeded")
	}
	// Re-adding a disabled URL enables it again, through stdin.
	out, errs, code = clitest.RunStdin(t, dir, env, "https://a.example.com/\n# comment\n", "targets", "add", "-", "--org", "acme")
	if code != 0 || !strings.Contains(out, "1 enabled again") {
		t.Errorf("stdin add: exit %d %s %s", code, out, errs)
	}
	if _, _, code := clitest.Run(t, dir, env, "targets", "rm", id, "--org", "acme"); code != 0 {
		t.Errorf("rm: exit %d", code)
	}
	if _, errs, code := clitest.Run(t, dir, env, "targets", "enable", "x", "--org", "acme"); code != cmdutil.ExitUsage {
		t.Errorf("bad id: exit %d %s", code, errs)
	}
}

func TestCrawlCommands(t *testing.T) {
	t.Parallel()
	dir, env := clitest.DeployedStack(t)
	if _, errs, code := clitest.Run(t, dir, env, "fga", "grant", "submitter", "alice", "acme"); code != 0 {
		t.Fatalf("grant: %s", errs)
	}

	// Without the webhook, starting starts the crawl for the embedded
	// runner and says which commands run it; nothing here has run it, so
	// it is still running at depth 0 with nothing captured.
	out, errs, code := clitest.Run(t, dir, env, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", "https://www.example.com/")
	embedded := strings.TrimSpace(out)
	if code != 0 || len(embedded) != 36 || !strings.Contains(errs, "ledgerctl serve") || !strings.Contains(errs, "ledgerctl crawl run "+embedded+" --as alice --org acme") {
		t.Fatalf("start without a webhook: exit %d %q %s", code, out, errs)
	}
	out, _, code = clitest.Run(t, dir, env, "crawl", "status", embedded, "--as", "alice", "--org", "acme", "--json")
	if code != 0 || !strings.Contains(out, `"state":"running"`) || !strings.Contains(out, `"pagesCaptured":0`) {
		t.Fatalf("status of the embedded crawl: %d %s", code, out)
	}
	// Only one crawl runs at a time: close it to make room.
	if out, errs, code := clitest.Run(t, dir, env, "crawl", "fail", embedded, "--as", "alice", "--org", "acme", "--reason", "not run here"); code != 0 {
		t.Fatalf("fail the embedded crawl: %d %s %s", code, out, errs)
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
		if _, errs, code := clitest.Run(t, dir, env, append([]string{"crawl", "start", "--as", "alice", "--org", "acme"}, bad...)...); code != cmdutil.ExitUsage {
			t.Errorf("%v: exit %d %s", bad, code, errs)
		}
	}
	if _, errs, code := clitest.Run(t, dir, env, "crawl", "start", "--as", "bob", "--org", "acme", "--seed", "https://www.example.com/"); code != cmdutil.ExitFailure || !strings.Contains(errs, "bob may not start crawls for acme") || !strings.Contains(errs, "ledgerctl fga grant submitter bob acme") {
		t.Errorf("bob may not start: exit %d %s", code, errs)
	}
	// Plain mode speaks sentences naming the flag or argument at fault;
	// --json keeps the API's machine shape.
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"crawl", "start", "--as", "alice", "--org", "acme", "--seed", "https://www.example.com/", "--from-targets"}, cmdutil.ExitUsage, "give either --seed URL (repeatable) or --from-targets, not both"},
		{[]string{"crawl", "start", "--as", "alice", "--org", "acme", "--from-targets"}, cmdutil.ExitUsage, "no enabled capture targets; add some with: ledgerctl targets add"},
		{[]string{"crawl", "status", "nope", "--as", "alice", "--org", "acme"}, cmdutil.ExitUsage, "CRAWL_ID must be a crawl id (a UUID"},
		{[]string{"crawl", "status", "nope", "--as", "alice", "--org", "acme", "--json"}, cmdutil.ExitUsage, `"code":"FST_ERR_VALIDATION"`},
		{[]string{"crawl", "status", "5b0a3c1e-0000-4000-8000-000000000000", "--as", "alice", "--org", "acme"}, cmdutil.ExitFailure, "no crawl 5b0a3c1e-0000-4000-8000-000000000000 that alice may see"},
		{[]string{"targets", "disable", "99", "--org", "acme"}, cmdutil.ExitFailure, "no capture target 99 in organization acme"},
	} {
		_, errs, code := clitest.Run(t, dir, env, tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) || (!strings.Contains(tc.want, "FST") && strings.Contains(errs, "{")) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, errs)
		}
	}
	out, errs, code = clitest.Run(t, dir, env, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", "https://www.example.com/", "--rule", "follow:same-site", "--max-depth", "1")
	id := strings.TrimSpace(out)
	if code != 0 || len(id) != 36 || levels.Load() != 1 || !strings.Contains(errs, "Windmill") {
		t.Fatalf("start: exit %d %q %s (levels dispatched %d)", code, out, errs, levels.Load())
	}
	// At a bound of one crawl per organization, a second start is refused
	// naming the running one.
	bound := map[string]string{"CAPTURE_LEDGER_CRAWLS_PER_ORG": "1"}
	for k, v := range env {
		bound[k] = v
	}
	if _, errs, code := clitest.Run(t, dir, bound, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", "https://other.example.org/"); code != cmdutil.ExitFailure ||
		!strings.Contains(errs, id) || !strings.Contains(errs, "1 crawl(s)") {
		t.Errorf("second crawl: exit %d %s", code, errs)
	}
	out, _, code = clitest.Run(t, dir, env, "crawl", "status", id, "--as", "alice", "--org", "acme", "--json")
	if code != 0 || !strings.Contains(out, `"state":"running"`) || !strings.Contains(out, `"same-site"`) {
		t.Errorf("status: %d %s", code, out)
	}
	out, _, code = clitest.Run(t, dir, env, "crawl", "list", "--as", "alice", "--org", "acme")
	if code != 0 || !strings.Contains(out, id) {
		t.Errorf("list: %d %s", code, out)
	}
	out, _, code = clitest.Run(t, dir, env, "crawl", "decisions", id, "--as", "alice", "--org", "acme")
	if code != 0 || !strings.Contains(out, "rule 1: follow:same-site") {
		t.Errorf("decisions: %d %s", code, out)
	}
	// The same, under a Japanese locale.
	ja := maps.Clone(env)
	ja["LANG"] = "ja_JP.UTF-8"
	out, _, code = clitest.Run(t, dir, ja, "crawl", "list", "--as", "alice", "--org", "acme")
	if head := strings.Fields(strings.SplitN(out, "\n", 2)[0]); code != 0 || !slices.Equal(head, []string{"クロール", "開始", "組織", "状態", "停止理由", "取得", "WACZ"}) ||
		!strings.Contains(out, id) || !strings.Contains(out, "実行中") {
		t.Errorf("list in Japanese: %d %s", code, out)
	}
	out, _, code = clitest.Run(t, dir, ja, "crawl", "decisions", id, "--as", "alice", "--org", "acme")
	if code != 0 || !strings.Contains(out, "ルール 1：follow:same-site") || !strings.Contains(out, "深さ  ルール  扱い  ホスト名  リンク数  例") {
		t.Errorf("decisions in Japanese: %d %s", code, out)
	}
	out, _, code = clitest.Run(t, dir, env, "crawl", "fail", id, "--as", "alice", "--org", "acme", "--reason", "testing")
	if code != 0 || out != "crawl "+id+" closed as failed\n" {
		t.Errorf("fail: %d %s", code, out)
	}
	// Nothing to close: a failure in plain mode, the API's shape in --json.
	if _, errs, code := clitest.Run(t, dir, env, "crawl", "fail", id, "--as", "alice", "--org", "acme"); code != cmdutil.ExitFailure || !strings.Contains(errs, "is not running; nothing was changed") {
		t.Errorf("fail again: %d %s", code, errs)
	}
	if _, errs, code := clitest.Run(t, dir, ja, "crawl", "fail", id, "--as", "alice", "--org", "acme"); code != cmdutil.ExitFailure || !strings.Contains(errs, "クロール "+id+" は実行中ではありません。変更はありません") {
		t.Errorf("fail again in Japanese: %d %s", code, errs)
	}
	if out, _, code := clitest.Run(t, dir, env, "crawl", "fail", id, "--as", "alice", "--org", "acme", "--json"); code != 0 || strings.TrimSpace(out) != `{"closed":false}` {
		t.Errorf("fail again --json: %d %s", code, out)
	}
	out, _, _ = clitest.Run(t, dir, env, "crawl", "status", id, "--as", "alice", "--org", "acme")
	if !strings.Contains(out, "state: failed") || !strings.Contains(out, "error: testing") {
		t.Errorf("status after fail: %s", out)
	}
	// Watching an ended crawl draws it once; a failed one exits 1 with
	// its reason.
	out, errs, code = clitest.Run(t, dir, env, "crawl", "status", id, "--as", "alice", "--org", "acme", "--watch")
	if code != cmdutil.ExitFailure || !strings.Contains(out, "crawl "+id+" · failed") || !strings.Contains(errs, "crawl "+id+" failed: testing") {
		t.Errorf("status --watch after fail: exit %d %q %s", code, out, errs)
	}
}

// TestCrawlFlagErrors: a request the use-cases refuse names the flag or
// argument at fault (never an API place such as body/maxPages), exits 2, and
// is refused before any configuration is read (env is empty here).
func TestCrawlFlagErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	as := []string{"--as", "alice", "--org", "acme"}
	many := []string{}
	for range 33 {
		many = append(many, "--rule", "follow:any")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"crawl", "start", "--seed", "https://e.com/", "--max-pages", "0"}, "--max-pages must be >= 1"},
		{[]string{"crawl", "start", "--seed", "https://e.com/", "--max-depth", "11"}, "--max-depth must be <= 10"},
		{[]string{"crawl", "start", "--seed", "https://e.com/", "--per-host-delay-ms", "-1"}, "--per-host-delay-ms must be >= 0"},
		{[]string{"crawl", "start", "--seed", "https://e.com/", "--host-parallelism", "33"}, "--host-parallelism must be <= 32"},
		{[]string{"crawl", "start", "--from-targets", "--limit", "0"}, "--limit must be >= 1"},
		{[]string{"crawl", "start", "--seed", "https://e.com/", "--seed", ""}, "--seed #2 must NOT have fewer than 1 characters"},
		{[]string{"crawl", "start", "--seed", "https://e.com/\x00"}, "--seed #1 must NOT contain U+0000 (NUL)"},
		{[]string{"crawl", "start", "--seed", "https://e.com/", "--rule", "follow:same-site", "--rule", "skip:\xff"}, "--rule #2 must be valid UTF-8"},
		{[]string{"crawl", "start", "--seed", "https://e.com/", "--rule", "fetch:any"}, "--rule #1: "},
		{append([]string{"crawl", "start", "--seed", "https://e.com/"}, many...), "--rule #33 too many rules"},
		{[]string{"crawl", "fail", "5b0a3c1e-0000-4000-8000-000000000000", "--reason", "a\x00"}, "--reason must NOT contain U+0000 (NUL)"},
		{[]string{"crawl", "fail", "5b0a3c1e-0000-4000-8000-000000000000", "--reason", strings.Repeat("é", 2001)}, "--reason must NOT have more than 2000 characters"},
		{[]string{"crawl", "decisions", "--domain", "Example.COM"}, "--domain must be a lowercase hostname"},
		{[]string{"crawl", "decisions", "--domain", "example.com", "--days", "0"}, "--days must be a positive integer"},
		{[]string{"crawl", "decisions", "--domain", "example.com", "--action", ""}, "--action must be equal to one of the allowed values"},
		{[]string{"crawl", "decisions", "--domain", "example.com", "--action", "drop"}, "--action must be equal to one of the allowed values"},
		{[]string{"crawl", "decisions", "5b0a3c1e-0000-4000-8000-000000000000", "--action", "follow"}, "--action goes with --domain"},
		{[]string{"crawl", "decisions", "5b0a3c1e-0000-4000-8000-000000000000", "--days", "7"}, "--days goes with --domain"},
		{[]string{"crawl", "list", "--state", "done"}, "--state must be running, succeeded or failed"},
	} {
		_, errs, code := clitest.Run(t, dir, map[string]string{}, append(tc.args, as...)...)
		if code != cmdutil.ExitUsage || !strings.Contains(errs, tc.want) || strings.Contains(errs, "body/") || strings.Contains(errs, "querystring/") {
			t.Errorf("%q: exit %d, stderr %q; want %q", tc.args, code, errs, tc.want)
		}
	}
	// --json: the API's validation shape, the message naming the flag.
	_, errs, code := clitest.Run(t, dir, map[string]string{}, append([]string{"crawl", "start", "--seed", "https://e.com/", "--max-pages", "0", "--json"}, as...)...)
	want := `{"statusCode":400,"code":"FST_ERR_VALIDATION","error":"Bad Request","message":"--max-pages must be \u003e= 1"}`
	if code != cmdutil.ExitUsage || !strings.Contains(errs, want) {
		t.Errorf("--json: exit %d, stderr %q; want %s", code, errs, want)
	}
}

func TestFlagOf(t *testing.T) {
	t.Parallel()
	for field, want := range map[string]string{
		"maxDepth": "--max-depth", "fromTargets/limit": "--limit", "seeds": "--seed", "seeds/2": "--seed #3",
		"rules": "--rule", "rules/1": "--rule #2", "rules/1/follow": "--rule #2", "id": "CRAWL_ID", "reason": "--reason",
		"domain": "--domain", "something/else": "something/else",
	} {
		if got := crawl.FlagOf(field); got != want {
			t.Errorf("flagOf(%q) = %q, want %q", field, got, want)
		}
	}
}

// TestCrawlStartWait: without the webhook, `crawl start --wait` starts the
// crawl and runs it here with the embedded runner until it ends.
func TestCrawlStartWait(t *testing.T) {
	t.Parallel()
	dir, env := clitest.LocalCaptureStack(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, `<html><title>%s</title><a href="/a">a</a><p>the page at %s</p></html>`, r.URL.Path, r.URL.Path)
	}))
	defer site.Close()

	// Without private addresses allowed, every page of the loopback site
	// is refused: the crawl ends failed with that reason, and --wait says
	// so and exits non-zero.
	delete(env, "CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE")
	out, errs, code := clitest.Run(t, dir, env, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", site.URL+"/", "--max-depth", "1", "--per-host-delay-ms", "0", "--wait")
	failedID, _, _ := strings.Cut(out, "\n")
	if code != cmdutil.ExitFailure || !strings.Contains(errs, "crawl "+failedID+" failed: no page was captured: 1 failed") || !strings.Contains(errs, "refused") ||
		!strings.Contains(out, "failed  1 page(s): ") {
		t.Fatalf("start --wait, every page refused: exit %d %q %s", code, out, errs)
	}
	// It registered no archive, and says so rather than that they can be
	// listed.
	if !strings.Contains(errs, "archives of this run: none (no page was captured)") || strings.Contains(errs, "can list and open them") {
		t.Errorf("start --wait, every page refused, on its archives: %s", errs)
	}
	out, _, code = clitest.Run(t, dir, env, "crawl", "status", failedID, "--as", "alice", "--org", "acme", "--json")
	if code != 0 || !strings.Contains(out, `"state":"failed"`) || !strings.Contains(out, `"pagesCaptured":0`) {
		t.Errorf("status of the failed crawl: %d %s", code, out)
	}
	env["CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE"] = "1"

	out, errs, code = clitest.Run(t, dir, env, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", site.URL+"/", "--max-depth", "1", "--per-host-delay-ms", "0", "--wait")
	id, _, _ := strings.Cut(out, "\n")
	// The last drawing shows the whole crawl: both levels.
	if code != 0 || len(id) != 36 || !strings.Contains(out, "crawl "+id+" · succeeded") || !strings.Contains(out, "levels  0: 1 captured, 0 failed, 0 skipped, 0 not captured · 1: 1 captured") {
		t.Fatalf("start --wait: exit %d %q %s", code, out, errs)
	}
	out, _, code = clitest.Run(t, dir, env, "crawl", "status", id, "--as", "alice", "--org", "acme", "--json")
	if code != 0 || !strings.Contains(out, `"state":"succeeded"`) || !strings.Contains(out, `"pagesCaptured":2`) {
		t.Errorf("status after --wait: %d %s", code, out)
	}
	// The run delivered its permissions: the archives are listable with no
	// serve and no drain.
	if !strings.Contains(errs, "their permissions are in OpenFGA") {
		t.Errorf("--wait did not say its archives are listable: %s", errs)
	}
	out, errs2, code := clitest.Run(t, dir, env, "archives", "list", "--as", "alice", "--org", "acme", "--json")
	if code != 0 || strings.Count(out, `"sourceUrl"`) != 2 {
		t.Errorf("archives list right after --wait: %d %s %s", code, out, errs2)
	}
	// The runner indexed each admitted level's archives for search (the
	// command waited for it before closing the index).
	out, _, code = clitest.Run(t, dir, env, "search", "status", "--json")
	var st search.SearchStatus
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil || st.Archives != 2 || st.Indexed != 2 || st.Pending != 0 {
		t.Errorf("search status after --wait: %d %s", code, out)
	}

	// The crawl as one WACZ: both archives, which the checker accepts.
	file := filepath.Join(t.TempDir(), "crawl.wacz")
	out, errs, code = clitest.Run(t, dir, env, "crawl", "export", id, "--out", file, "--as", "alice", "--org", "acme", "--json")
	var res struct {
		Archives, Pages int
		Bytes           int64
		SHA256          string
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Archives != 2 || res.Pages != 2 || !strings.Contains(errs, "reading archive 2 of 2") {
		t.Fatalf("crawl export: exit %d %q %s", code, out, errs)
	}
	jaEnv := maps.Clone(env)
	jaEnv["LANG"] = "ja_JP.UTF-8"
	jaFile := filepath.Join(t.TempDir(), "クロール.wacz")
	out, errs, code = clitest.Run(t, dir, jaEnv, "crawl", "export", id, "--out", jaFile, "--as", "alice", "--org", "acme")
	if code != 0 || !strings.HasPrefix(out, jaFile+" を書きました：アーカイブ 2 件、ページ 2 件、") || !strings.Contains(errs, "アーカイブを読んでいます（2 件中 2 件目）") {
		t.Errorf("crawl export in Japanese: exit %d %q %s", code, out, errs)
	}
	data, err := os.ReadFile(file)
	if err != nil || int64(len(data)) != res.Bytes || fmt.Sprintf("%x", sha256.Sum256(data)) != res.SHA256 {
		t.Fatalf("the exported file: %d bytes, %v; the summary %+v", len(data), err, res)
	}
	if problems, err := wacz.Check(bytes.NewReader(data), int64(len(data))); err != nil || len(problems) > 0 {
		t.Errorf("the exported WACZ: %v %v", problems, err)
	}
	if keep := os.Getenv("LEDGER_TEST_KEEP_DIR"); keep != "" {
		// For the replay checker (ReplayWeb.page in Chromium).
		if err := os.WriteFile(filepath.Join(keep, "crawl-export.wacz"), data, 0o644); err != nil {
			t.Error(err)
		}
	}
	// Replayed as one collection that lists one capture of the two, the
	// link says the collection is not the whole crawl, and names the export.
	withLimit := maps.Clone(env)
	withLimit["CAPTURE_LEDGER_REPLAY_KEY"] = "the replay key of this test, long enough to sign with"
	withLimit["CAPTURE_LEDGER_REPLAY_COLLECTION_LIMIT"] = "1"
	out, errs, code = clitest.Run(t, dir, withLimit, "archives", "open", "--crawl", id, "--as", "alice", "--org", "acme", "--json")
	var link struct{ Archives, Limit int }
	if code != 0 || json.Unmarshal([]byte(out), &link) != nil || link.Archives != 1 || link.Limit != 1 ||
		!strings.Contains(errs, "the crawl has more captures than its collection lists (its first 1): this collection holds the 1 of them that alice may view; `ledgerctl crawl export "+id+" --out FILE` writes every one") {
		t.Errorf("archives open --crawl past the collection's limit: exit %d %s %s", code, out, errs)
	}
	// An existing file is left alone; a crawl nobody lets bob view, and one
	// that does not exist, are the same refusal, and write nothing.
	if _, errs, code = clitest.Run(t, dir, env, "crawl", "export", id, "--out", file, "--as", "alice", "--org", "acme"); code != cmdutil.ExitUsage || !strings.Contains(errs, "exists") {
		t.Errorf("export over an existing file: exit %d %s", code, errs)
	}
	other := filepath.Join(t.TempDir(), "other.wacz")
	for _, tc := range [][]string{{id, "bob", "elsewhere"}, {uuid.NewString(), "alice", "acme"}} {
		_, errs, code = clitest.Run(t, dir, env, "crawl", "export", tc[0], "--out", other, "--as", tc[1], "--org", tc[2])
		if code != cmdutil.ExitFailure || !strings.Contains(errs, "no archive of crawl "+tc[0]+" that "+tc[1]+" may view") {
			t.Errorf("export of %s as %s: exit %d %s", tc[0], tc[1], code, errs)
		}
		if entries, _ := os.ReadDir(filepath.Dir(other)); len(entries) != 0 {
			t.Errorf("a refused export left %v", entries)
		}
	}
	if _, errs, code = clitest.Run(t, dir, env, "crawl", "export", "not-a-crawl", "--out", other, "--as", "alice", "--org", "acme"); code != cmdutil.ExitUsage || !strings.Contains(errs, "CRAWL_ID must be a UUID") {
		t.Errorf("export of a bad id: exit %d %s", code, errs)
	}
}
