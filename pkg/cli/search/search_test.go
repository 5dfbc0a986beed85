package search_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	searchcmd "github.com/capture-ledger/ledgerctl/pkg/cli/search"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// TestSearchCommands drives `ledgerctl search` the way an operator does:
// archives added with `archives add` and drained, `search status` before
// and after `search reindex` (which indexes them, and lists the one it
// could not with exit 3), `search QUERY` as people of two organizations,
// bad input as usage errors, and a reindex that follows another process's
// indexer while that process holds the index.
func TestSearchCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	indexDir := filepath.Join(t.TempDir(), "index")
	stack := clitest.DeployStack(t, "CAPTURE_LEDGER_SEARCH_DIR", indexDir)
	dsn, objects, bucket, dir, env := stack.DSN, stack.Objects, stack.Bucket, stack.Dir, stack.Env
	// Five captures of acme, three of globex, one of acme whose WACZ is
	// not a ZIP.
	add := func(org, title, text string, body []byte) {
		t.Helper()
		task := uuid.NewString()
		at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
		u := "https://example.com/" + task[:8]
		if body == nil {
			var buf bytes.Buffer
			if _, err := wacz.Write(&buf, wacz.Capture{Created: at, Pages: []wacz.Page{{URL: u, Date: at, Title: title, Text: text}}}); err != nil {
				t.Fatal(err)
			}
			body = buf.Bytes()
		}
		base := "bh/" + task + "_c0ffee00"
		if err := objects.Put(ctx, bucket, base+".wacz", "application/wacz", body); err != nil {
			t.Fatal(err)
		}
		if err := objects.Put(ctx, bucket, base+".result.json", "application/json", apptest.Manifest(task, "success", u, bucket, base+".wacz", at)); err != nil {
			t.Fatal(err)
		}
		if out, errs, code := clitest.Run(t, dir, env, "archives", "add", base+".result.json", "--as", "submitter", "--org", org); code != 0 {
			t.Fatalf("add: exit %d: %s %s", code, out, errs)
		}
	}
	for i := range 5 {
		add("acme", fmt.Sprintf("acme ページ %d", i), "画面に合わせるレスポンシブなデザイン。She runs daily.", nil)
	}
	for i := range 3 {
		add("globex", fmt.Sprintf("globex ページ %d", i), "レスポンシブなデザインの東京支社。", nil)
	}
	add("acme", "", "", []byte("not a zip"))
	if out, errs, code := clitest.Run(t, dir, env, "drain"); code != 0 {
		t.Fatalf("drain: exit %d: %s %s", code, out, errs)
	}

	status := func() searchcmd.SearchStatus {
		t.Helper()
		out, errs, code := clitest.Run(t, dir, env, "search", "status", "--json")
		var s searchcmd.SearchStatus
		if code != 0 || json.Unmarshal([]byte(out), &s) != nil {
			t.Fatalf("status: exit %d: %s %s", code, out, errs)
		}
		return s
	}
	if s := status(); s.Archives != 9 || s.Pending != 9 || s.Indexed != 0 || s.Failed != 0 {
		t.Fatalf("status before: %+v", s)
	}

	out, errs, code := clitest.Run(t, dir, env, "search", "reindex")
	if code != cmdutil.ExitIncomplete || !strings.Contains(errs, "indexed 8 archive(s), 8 page(s); 1 failed") || !strings.Contains(errs, "search status") {
		t.Fatalf("reindex: exit %d: %s %s", code, out, errs)
	}
	s := status()
	if s.Archives != 9 || s.Indexed != 8 || s.Pending != 0 || s.Failed != 1 || len(s.Failures) != 1 || !strings.Contains(s.Failures[0].Reason, "not a ZIP") || s.Failures[0].Attempts != 1 {
		t.Fatalf("status after: %+v", s)
	}
	// The reindex recorded its index and gave the lease back as it exited.
	if !strings.HasPrefix(s.Index, "bleve ") || s.Holder != nil {
		t.Errorf("status after reindex: index %q, holder %+v", s.Index, s.Holder)
	}
	if out, errs, code := clitest.Run(t, dir, env, "search", "status"); code != 0 || !strings.Contains(out, "not a ZIP") || !strings.Contains(out, s.Failures[0].ArchiveID) {
		t.Fatalf("status for a person: exit %d: %s %s", code, out, errs)
	}

	// Searching as people: each sees their organization's pages only.
	find := func(who, org, q string) search.Page {
		t.Helper()
		out, errs, code := clitest.Run(t, dir, env, "search", q, "--as", who, "--org", org, "--json")
		var p search.Page
		if code != 0 || json.Unmarshal([]byte(out), &p) != nil {
			t.Fatalf("search %q as %s: exit %d: %s %s", q, who, code, out, errs)
		}
		return p
	}
	if p := find("alice", "acme", "レスポンシブ"); len(p.Hits) != 5 || *p.Total != 5 || !p.TotalExact {
		t.Errorf("alice: %d hits, total %v", len(p.Hits), p.Total)
	}
	if p := find("bob", "globex", "レスポンシブ"); len(p.Hits) != 3 || *p.Total != 3 {
		t.Errorf("bob: %d hits, total %v", len(p.Hits), p.Total)
	}
	if p := find("bob", "globex", "running"); len(p.Hits) != 0 || *p.Total != 0 {
		t.Errorf("bob, running: %d hits, total %v", len(p.Hits), p.Total)
	}
	out, errs, code = clitest.Run(t, dir, env, "search", "東京", "支社", "--as", "bob", "--org", "globex", "--limit", "2")
	if code != 0 || strings.Count(out, "«東京支社»") != 2 || !strings.Contains(errs, "2 hit(s) shown of 3 visible to bob") || !strings.Contains(errs, "more: --cursor "+search.CursorTokenPrefix) {
		t.Errorf("search for a person: exit %d: %s %s", code, out, errs)
	}

	// With a Japanese locale the same search says so in Japanese.
	ja := maps.Clone(env)
	ja["LANG"] = "ja_JP.UTF-8"
	out, errs, code = clitest.Run(t, dir, ja, "search", "東京", "支社", "--as", "bob", "--org", "globex", "--limit", "2")
	if code != 0 || strings.Count(out, "«東京支社»") != 2 || strings.Count(out, "アーカイブ ") != 2 ||
		!strings.Contains(errs, "2 件を表示（bob が見られるのは 3 件）") || !strings.Contains(errs, "続き：--cursor "+search.CursorTokenPrefix) {
		t.Errorf("search for a person, in Japanese: exit %d: %s %s", code, out, errs)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"search", "", "--as", "alice", "--org", "acme"}, "QUERY must not be empty"},
		{[]string{"search", "a\x00b", "--as", "alice", "--org", "acme"}, "QUERY must not contain control characters"},
		{[]string{"search", "x", "--as", "alice", "--org", "acme", "--limit", "0"}, "--limit must be an integer between 1 and 100"},
		{[]string{"search", "x", "--as", "alice", "--org", "acme", "--cursor", "c1.nope"}, "--cursor is not a cursor"},
		{[]string{"search", "x", "--org", "acme"}, "--as is required"},
	} {
		if out, errs, code := clitest.Run(t, dir, env, tc.args...); code != cmdutil.ExitUsage || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%q: exit %d: %q %q", tc.args, code, out, errs)
		}
	}

	// While another process holds the index (as serve does), a search
	// says so, and a reindex follows that process's indexer to the end.
	held, err := search.OpenBleve(indexDir)
	if err != nil {
		t.Fatal(err)
	}
	heldOpen := true
	defer func() {
		if heldOpen {
			held.Close()
		}
	}()
	if _, errs, code := clitest.Run(t, dir, env, "search", "x", "--as", "alice", "--org", "acme"); code == 0 || !strings.Contains(errs, "open in another process") {
		t.Errorf("search with the index held: exit %d: %s", code, errs)
	}
	// "serve": another process holding the index (and its lease).
	other := app.New(config.Settings{
		DatabaseURL: dsn, S3Endpoint: env["CAPTURE_LEDGER_S3_ENDPOINT"], S3Bucket: bucket, S3Region: "us-east-1",
		S3AccessKeyID: env["CAPTURE_LEDGER_S3_ACCESS_KEY_ID"], S3SecretAccessKey: env["CAPTURE_LEDGER_S3_SECRET_ACCESS_KEY"], S3ForcePathStyle: true,
	}, nil)
	defer other.Close()
	other.SetSearchBackend(held)
	ix, err := other.Indexer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var rout, rerrs string
	var rcode int
	go func() {
		defer close(done)
		rout, rerrs, rcode = clitest.Run(t, dir, env, "search", "reindex")
	}()
	// "serve": wait for the clear, then index with the held backend.
	for {
		if s := status(); s.Indexed == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if res, err := ix.IndexPending(ctx, nil); err != nil || res.Indexed != 8 {
		t.Fatalf("the other process's pass: %+v %v", res, err)
	}
	<-done
	if rcode != cmdutil.ExitIncomplete || !strings.Contains(rerrs, "following its indexer") {
		t.Errorf("reindex while held: exit %d: %s %s", rcode, rout, rerrs)
	}
	held.Close()
	heldOpen = false

	// While serve runs (holding the index), `ledgerctl search` goes through
	// its admin socket: same answers, no token.
	senv := maps.Clone(env)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	senv["CAPTURE_LEDGER_API_PORT"] = strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	senv["CAPTURE_LEDGER_DEV_IDENTITY"] = "1"
	senv["CAPTURE_LEDGER_CAPTURE_ENGINE"] = "http"
	sctx, stopServe := context.WithCancel(ctx)
	served := make(chan string, 1)
	go func() {
		_, serrs, _ := clitest.RunCtx(sctx, t, dir, senv, nil, "serve")
		served <- serrs
	}()
	sock := app.AdminSocketPath(indexDir)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			stopServe()
			t.Fatalf("serve opened no admin socket: %s", <-served)
		}
	}
	if p := find("alice", "acme", "レスポンシブ"); len(p.Hits) != 5 || *p.Total != 5 || !p.TotalExact {
		t.Errorf("alice beside serve: %d hits, total %v", len(p.Hits), p.Total)
	}
	if out, errs, code := clitest.Run(t, dir, env, "search", "a\x00b", "--as", "alice", "--org", "acme"); code != cmdutil.ExitUsage || out != "" || !strings.Contains(errs, "must not contain control characters") {
		t.Errorf("a bad query beside serve: exit %d: %q %q", code, out, errs)
	}
	stopServe()
	<-served
}

// TestHitsPrinted: a hit is printed with the other captures of its page
// (how many; "and more" when there may be more), in English and in
// Japanese, and the count line says whether the total is exact.
func TestHitsPrinted(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	total := 7
	page := search.Page{Hits: []search.Hit{
		{ArchiveID: "a1", URL: "https://example.org/", Title: "", CapturedAt: at,
			OtherCaptures: []search.Capture{{ArchiveID: "a0", CapturedAt: at.Add(-time.Hour)}}},
		{ArchiveID: "b1", URL: "https://example.org/b", Title: "B", CapturedAt: at,
			OtherCaptures: []search.Capture{{ArchiveID: "b0"}, {ArchiveID: "b00"}}, OtherCapturesMore: true},
		{ArchiveID: "c1", URL: "https://example.org/c", Title: "C", CapturedAt: at},
	}, Total: &total}
	for _, c := range []struct {
		lang       i18n.Lang
		out, count []string
	}{
		{i18n.English, []string{"1. (no title)", "archive a1", "   1 other capture of this page\n", "   2 other captures of this page (and more)\n"}, []string{"3 hit(s) shown; at least 7 visible to bob"}},
		{i18n.Japanese, []string{"1. （タイトルなし）", "アーカイブ a1", "   このページの他の取得 1 件\n", "   このページの他の取得 2 件以上\n"}, []string{"3 件を表示（bob が見られるのは少なくとも 7 件）"}},
	} {
		var out, errw bytes.Buffer
		searchcmd.PrintHits(&ui.Printer{W: &out}, &errw, c.lang, "bob", page)
		for _, want := range c.out {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: the hits lack %q:\n%s", c.lang, want, out.String())
			}
		}
		if strings.Count(out.String(), "other capture")+strings.Count(out.String(), "他の取得") != 2 {
			t.Errorf("%s: a hit without other captures says it has some:\n%s", c.lang, out.String())
		}
		for _, want := range c.count {
			if !strings.Contains(errw.String(), want) {
				t.Errorf("%s: the count line is %q, want %q", c.lang, errw.String(), want)
			}
		}
	}
}

// TestWordsTakeTheSameArguments: every sentence says, in Japanese, what
// its English says (cmdutil.Words.Mismatched).
func TestWordsTakeTheSameArguments(t *testing.T) {
	if bad := searchcmd.Words.Mismatched(); len(bad) > 0 {
		t.Errorf("English and Japanese take different arguments: %q", bad)
	}
}
