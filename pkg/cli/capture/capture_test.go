package capture_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	capturecmd "github.com/capture-ledger/ledgerctl/pkg/cli/capture"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// captureSite is a small site on 127.0.0.1 that counts the requests it
// gets.
func captureSite(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html lang="ja"><head><title>桜の記録</title><link rel="stylesheet" href="/s.css"></head>
<body><h1>桜の花が静かに咲いています</h1><p>Cherry blossoms, quietly.</p><img src="/i.png" alt=""><a href="/about">about</a></body></html>`)
	})
	mux.HandleFunc("/s.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		fmt.Fprint(w, "h1 { color: #a33; }")
	})
	mux.HandleFunc("/i.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte("\x89PNG\r\n\x1a\n not really"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><head><title>big</title></head><body><p>"+strings.Repeat("large page ", 20_000)+"</p></body></html>")
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// textReason is the reason on the one "failed" line of a text-mode run
// that exits 3.
func textReason(t *testing.T, out, errs string, code int) string {
	t.Helper()
	if code != cmdutil.ExitIncomplete {
		t.Fatalf("exit %d, want %d: %s %s", code, cmdutil.ExitIncomplete, out, errs)
	}
	rest, failed := strings.CutPrefix(strings.TrimSpace(out), "failed ")
	_, reason, ok := strings.Cut(strings.TrimLeft(rest, " "), "  ")
	if !failed || !ok || strings.Contains(reason, "\n") {
		t.Fatalf("want one line: failed  URL  REASON; got %q", out)
	}
	return reason
}

// TestCapture: `ledgerctl capture` captures a local page with the http
// engine, writes it in BrowserHive's layout, registers it for the
// organization (listed for its members once drained; its minted URL
// downloads the exact bytes written; an outsider gets not found), marks a
// capture cut by the body cap incomplete, refuses private addresses
// unless allowed (nothing fetched, a failed submission recorded, exit 3,
// the reason naming the setting that allows them),
// and refuses bad input with exit 2 and nothing written.
func TestCapture(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := clitest.DeployStack(t)
	dsn, objects, bucket, dir, env := st.DSN, st.Objects, st.Bucket, st.Dir, st.Env
	if _, errs, code := clitest.Run(t, dir, env, "fga", "grant", "submitter", "alice", "acme"); code != 0 {
		t.Fatalf("grant: %s", errs)
	}
	site, hits := captureSite(t)
	conn := testenv.Connect(t, dsn)

	// Private addresses are refused by default: nothing is fetched, the
	// failed capture is recorded with its manifest, exit 3.
	out, errs, code := clitest.Run(t, dir, env, "capture", site.URL+"/", "--org", "acme", "--as", "alice", "--engine", "http", "--json")
	if code != cmdutil.ExitIncomplete || hits.Load() != 0 {
		t.Fatalf("a loopback capture without ALLOW_PRIVATE: exit %d, %d requests reached the site: %s %s", code, hits.Load(), out, errs)
	}
	var refused archive.CapturedPage
	if err := json.Unmarshal([]byte(out), &refused); err != nil || refused.Status != archive.CaptureFailed || refused.ArchiveID != "" || refused.Error == "" {
		t.Fatalf("refused capture: %s (%v)", out, err)
	}
	var subs int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM capture_submissions WHERE task_id = $1 AND org_id = 'acme' AND manifest_key IS NOT NULL`, refused.TaskID).Scan(&subs); err != nil || subs != 1 {
		t.Fatalf("the refused capture's submission: %d (%v)", subs, err)
	}
	// The operator running the command is told why and what allows it, as
	// text and as JSON; the coarse words come first, as the API says them.
	out, errs, code = clitest.Run(t, dir, env, "capture", site.URL+"/", "--org", "acme", "--as", "alice", "--engine", "http")
	for _, reason := range []string{refused.Error, textReason(t, out, errs, code)} {
		if !strings.HasPrefix(reason, "refused by policy: ") || !strings.Contains(reason, "not public") ||
			!strings.Contains(reason, "loopback") || !strings.Contains(reason, "CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1") {
			t.Errorf("a refused capture's reason does not say the address is not public nor name CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1: %q", reason)
		}
		if strings.Contains(reason, "127.0.0.1") {
			t.Errorf("a refused capture's reason names the address: %q", reason)
		}
	}
	// The same refusal said under a Japanese locale: the capture's own
	// reason stays as the capture wrote it.
	ja := maps.Clone(env)
	ja["LANG"] = "ja_JP.UTF-8"
	out, errs, code = clitest.Run(t, dir, ja, "capture", site.URL+"/", "--org", "acme", "--as", "alice", "--engine", "http")
	if code != cmdutil.ExitIncomplete || !strings.HasPrefix(out, "失敗  "+site.URL+"/  refused by policy: ") ||
		!strings.Contains(errs, "acme のために http エンジンで 1 ページをキャプチャします") || !strings.Contains(errs, "1 ページ中 1 ページをキャプチャできませんでした") {
		t.Errorf("a refused capture in Japanese: exit %d:\n%s%s", code, out, errs)
	}
	if hits.Load() != 0 {
		t.Fatalf("%d requests reached the site without ALLOW_PRIVATE", hits.Load())
	}

	// Allowed, a page and a page past the body cap.
	env["CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE"] = "1"
	env["CAPTURE_LEDGER_CAPTURE_MAX_BODY_BYTES"] = "100000"
	out, errs, code = clitest.Run(t, dir, env, "capture", site.URL+"/", site.URL+"/big", "--org", "acme", "--as", "alice", "--engine", "http", "--json")
	if code != 0 {
		t.Fatalf("capture: exit %d: %s %s", code, out, errs)
	}
	var pages []archive.CapturedPage
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var p archive.CapturedPage
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
	}
	if len(pages) != 2 || pages[0].Status != archive.Captured || pages[1].Status != archive.Captured {
		t.Fatalf("pages: %s", out)
	}
	if !pages[0].Complete || pages[1].Complete {
		t.Errorf("completeness: page %v, big page %v; want true, false", pages[0].Complete, pages[1].Complete)
	}
	for _, p := range pages {
		if !strings.HasPrefix(p.ObjectKey, p.TaskID+"_") || !strings.HasSuffix(p.ObjectKey, ".wacz") {
			t.Errorf("object key %q does not follow <taskId>_<correlationId>.wacz", p.ObjectKey)
		}
		stem := strings.TrimSuffix(p.ObjectKey, ".wacz")
		for _, suffix := range []string{".links.json", ".result.json"} {
			if _, err := objects.Get(ctx, bucket, stem+suffix); err != nil {
				t.Errorf("%s%s: %v", stem, suffix, err)
			}
		}
	}
	data, err := objects.Get(ctx, bucket, pages[0].ObjectKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := wacz.Verify(bytes.NewReader(data), int64(len(data))); err != nil {
		t.Errorf("the WACZ does not verify: %v", err)
	}
	pr, err := wacz.OpenPages(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	first, err := pr.Next()
	if err != nil || first.Title != "桜の記録" || !strings.Contains(first.Text, "桜の花が静かに咲いています") {
		t.Errorf("pages.jsonl: %+v (%v)", first, err)
	}

	// Once drained, alice's organization sees both archives; the minted
	// URL downloads the bytes written; an outsider is told not found.
	if out, errs, code := clitest.Run(t, dir, env, "drain"); code != 0 {
		t.Fatalf("drain: exit %d: %s %s", code, out, errs)
	}
	out, errs, code = clitest.Run(t, dir, env, "archives", "list", "--as", "bob", "--org", "acme", "--json")
	var page archive.PageBody
	if code != 0 || json.Unmarshal([]byte(out), &page) != nil || len(page.Archives) != 2 {
		t.Fatalf("list as an acme member: exit %d: %s %s", code, out, errs)
	}
	out, errs, code = clitest.Run(t, dir, env, "archives", "url", pages[0].ArchiveID, "--as", "bob", "--org", "acme")
	if code != 0 {
		t.Fatalf("url: exit %d: %s", code, errs)
	}
	resp, err := http.Get(strings.TrimSpace(out))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, data) {
		t.Errorf("the minted URL gave %d and %d bytes, want the %d bytes written", resp.StatusCode, len(got), len(data))
	}
	if _, _, code := clitest.Run(t, dir, env, "archives", "url", pages[0].ArchiveID, "--as", "carol", "--org", "contoso"); code != cmdutil.ExitFailure {
		t.Errorf("an outsider's url: exit %d, want %d", code, cmdutil.ExitFailure)
	}

	// Bad input: exit 2, nothing written, nothing fetched.
	before := testenv.TakeSnapshot(t, dsn)
	fetched := hits.Load()
	for _, args := range [][]string{
		{"capture", "ftp://example.com/", "--org", "acme", "--as", "alice"},
		{"capture", "not a url", "--org", "acme", "--as", "alice"},
		{"capture", site.URL + "/\x00", "--org", "acme", "--as", "alice"},
		{"capture", site.URL + "/", "--org", "acme", "--as", "alice", "--engine", "wget"},
		{"capture", site.URL + "/", "--as", "alice"},
		{"capture", "--org", "acme", "--as", "alice"},
	} {
		if out, errs, code := clitest.Run(t, dir, env, args...); code != cmdutil.ExitUsage || errs == "" {
			t.Errorf("%q: exit %d: %s %s", args, code, out, errs)
		}
	}
	many := []string{"capture"}
	for i := 0; i <= archive.MaxCaptureURLs; i++ {
		many = append(many, fmt.Sprintf("%s/%d", site.URL, i))
	}
	if _, errs, code := clitest.Run(t, dir, env, append(many, "--org", "acme", "--as", "alice")...); code != cmdutil.ExitUsage || !strings.Contains(errs, "at most") {
		t.Errorf("too many URLs: exit %d: %s", code, errs)
	}
	// A signature asked for: the built-in capturer signs nothing, so the
	// capture is refused before anything is fetched or written (with
	// BrowserHive set, the setting itself is valid for crawls).
	signing := map[string]string{}
	for k, v := range env {
		signing[k] = v
	}
	signing["CAPTURE_LEDGER_CAPTURE_SIGNING"], signing["CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS"] = "1", "http://127.0.0.1:9"
	if out, errs, code := clitest.Run(t, dir, signing, "capture", site.URL+"/", "--org", "acme", "--as", "alice", "--engine", "http"); code != cmdutil.ExitUsage ||
		!strings.Contains(errs, "CAPTURE_LEDGER_CAPTURE_SIGNING") || !strings.Contains(errs, "does not sign") {
		t.Errorf("a capture asked to be signed: exit %d: %s %s", code, out, errs)
	}
	delete(signing, "CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS")
	if out, errs, code := clitest.Run(t, dir, signing, "archives", "list", "--as", "alice", "--org", "acme"); code != cmdutil.ExitUsage ||
		!strings.Contains(errs, "CAPTURE_LEDGER_BROWSERHIVE_ENDPOINTS") {
		t.Errorf("signing with nothing that signs: exit %d: %s %s", code, out, errs)
	}
	// Someone without can_submit on the organization: not allowed.
	if _, errs, code := clitest.Run(t, dir, env, "capture", site.URL+"/", "--org", "acme", "--as", "mallory"); code != cmdutil.ExitFailure || !strings.Contains(errs, "may not submit") {
		t.Errorf("mallory: exit %d: %s", code, errs)
	}
	testenv.Unchanged(t, dsn, before)
	if hits.Load() != fetched {
		t.Errorf("refused requests fetched %d pages", hits.Load()-fetched)
	}

	// A capture under a Japanese locale says each step in Japanese.
	ja["CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE"] = "1"
	out, errs, code = clitest.Run(t, dir, ja, "capture", site.URL+"/", "--org", "acme", "--as", "alice", "--engine", "http")
	if code != 0 || !strings.HasPrefix(out, "取得  "+site.URL+"/  アーカイブ ") ||
		!strings.Contains(errs, "acme のアーカイブを 1 件登録しました。") || !strings.Contains(errs, "検索：アーカイブ 1 件（1 ページ）を索引に入れました。もう検索で見つかります") {
		t.Errorf("a capture in Japanese: exit %d:\n%s%s", code, out, errs)
	}
}

// TestWordsTakeTheSameArguments: every sentence says, in Japanese, what
// its English says (cmdutil.Words.Mismatched).
func TestWordsTakeTheSameArguments(t *testing.T) {
	if bad := capturecmd.Words.Mismatched(); len(bad) > 0 {
		t.Errorf("English and Japanese take different arguments: %q", bad)
	}
}
