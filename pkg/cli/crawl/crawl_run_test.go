package crawl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	crawlcmd "github.com/capture-ledger/ledgerctl/pkg/cli/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

// TestCrawlRunInTerminal: `crawl run` runs a crawl with the embedded runner
// and the http engine, no server; interrupted, it leaves the crawl running
// and a second run finishes it; `crawl politeness` then reports the
// robots.txt delay it was held to.
func TestCrawlRunInTerminal(t *testing.T) {
	t.Parallel()
	dir, env := clitest.LocalCaptureStack(t)

	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "User-agent: *\nCrawl-delay: 1\nDisallow: /private\n")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<html><title>%s</title><a href="/a">a</a> <a href="/b">b</a> <a href="/private">p</a></html>`, r.URL.Path)
	})
	site := httptest.NewServer(mux)
	defer site.Close()

	factory := func() (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
		var out, errb bytes.Buffer
		f := cmdutil.NewFactory(cmdutil.Streams{In: strings.NewReader(""), Out: &out, Err: &errb})
		f.Dir = dir
		own := maps.Clone(env)
		f.Env = func(name string) (string, bool) { v, ok := own[name]; return v, ok }
		t.Cleanup(f.Close)
		return f, &out, &errb
	}
	alice := crawl.Caller{Subject: "alice", Orgs: []string{"acme"}}
	f, _, _ := factory()
	svc, err := crawlcmd.Service(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	maxDepth, delay := 1, 0
	id, err := svc.Start(context.Background(), alice, crawl.StartRequest{Seeds: []string{site.URL + "/"}, MaxDepth: &maxDepth, PerHostDelayMs: &delay})
	if err != nil {
		t.Fatal(err)
	}

	// Interrupted: with Crawl-delay 1 the four pages take three seconds.
	f1, _, errs1 := factory()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	if err := crawlcmd.RunCrawlHere(ctx, crawlcmd.NewCrawlOptions(f1, "alice", []string{"acme"}), alice, ""); err != nil {
		t.Fatalf("interrupted run: %v", err)
	}
	if !strings.Contains(errs1.String(), "is still running") {
		t.Errorf("the interrupted run did not say how to resume: %s", errs1)
	}
	if v, _ := svc.Get(context.Background(), alice, id); v.State != crawl.StateRunning {
		t.Fatalf("after the interruption the crawl is %s, want running", v.State)
	}

	f2, out2, _ := factory()
	if err := crawlcmd.RunCrawlHere(context.Background(), crawlcmd.NewCrawlOptions(f2, "alice", []string{"acme"}), alice, id); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if s := out2.String(); !strings.Contains(s, "succeeded (max_depth)") || !strings.Contains(s, strings.TrimPrefix(site.URL, "http://")) {
		t.Errorf("the run's last drawing: %s", s)
	}
	v, err := svc.Get(context.Background(), alice, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != crawl.StateSucceeded || v.PagesCaptured != 3 {
		t.Errorf("crawl %s with %d captured, want succeeded with 3 (/private kept out)", v.State, v.PagesCaptured)
	}

	f3, out3, _ := factory()
	cmd := crawlcmd.NewCmdCrawlPoliteness(crawlcmd.NewCrawlOptions(f3, "alice", []string{"acme"}))
	cmd.SetContext(context.Background())
	if err := cmd.RunE(cmd, []string{id}); err != nil {
		t.Fatalf("politeness: %v", err)
	}
	if s := out3.String(); !strings.Contains(s, "1000 (crawl-delay)") || !strings.Contains(s, "1 kept out") {
		t.Errorf("politeness table: %s", s)
	}
}

// TestCrawlStatusWatchShowsEveryHost: a crawl whose last level is on
// another host than its first is drawn, once ended, with both hosts and
// their pages (not only the last level's host), as text and as JSON.
func TestCrawlStatusWatchShowsEveryHost(t *testing.T) {
	t.Parallel()
	dir, env := clitest.LocalCaptureStack(t)
	page := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.NotFound(w, r)
				return
			}
			fmt.Fprintf(w, `<html><title>%s</title>%s</html>`, r.URL.Path, body)
		}
	}
	blog := httptest.NewServer(page(""))
	defer blog.Close()
	www := httptest.NewServer(page(`<a href="` + blog.URL + `/post">post</a>`))
	defer www.Close()

	as := []string{"--as", "alice", "--org", "acme"}
	out, errs, code := clitest.Run(t, dir, env, append([]string{"crawl", "start", "--seed", www.URL + "/", "--rule", "follow:any",
		"--max-depth", "1", "--per-host-delay-ms", "0", "--wait"}, as...)...)
	id := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	if code != 0 || len(id) != 36 {
		t.Fatalf("crawl start --wait: exit %d %q %s", code, out, errs)
	}
	wwwHost, blogHost := strings.TrimPrefix(www.URL, "http://"), strings.TrimPrefix(blog.URL, "http://")
	out, errs, code = clitest.Run(t, dir, env, append([]string{"crawl", "status", id, "--watch"}, as...)...)
	if code != 0 {
		t.Fatalf("status --watch: exit %d %s", code, errs)
	}
	for _, h := range []string{wwwHost, blogHost} {
		if !hostRow(out, h, "1") {
			t.Errorf("the drawing lacks %s with 1 page captured:\n%s", h, out)
		}
	}
	// With a Japanese locale, the status and its drawing say it in
	// Japanese; --json is the same whatever the locale.
	ja := maps.Clone(env)
	ja["LANG"] = "ja_JP.UTF-8"
	out, errs, code = clitest.Run(t, dir, ja, append([]string{"crawl", "status", id}, as...)...)
	for _, want := range []string{"クロール " + id + "（acme、alice が開始）", "状態：成功   停止理由：深さの上限に到達", "ページ：取得 2、発見 2（上限 30 ページ、深さ 1 まで）", "ルール 1：follow:any"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("crawl status in Japanese: exit %d, lacks %q:\n%s%s", code, want, out, errs)
		}
	}
	out, errs, code = clitest.Run(t, dir, ja, append([]string{"crawl", "status", id, "--watch"}, as...)...)
	if code != 0 || !strings.Contains(out, "クロール "+id+" · 成功（深さの上限に到達） · 深さ 1 · 取得 2、発見 2") || !strings.Contains(out, "ホスト") {
		t.Errorf("crawl status --watch in Japanese: exit %d:\n%s%s", code, out, errs)
	}
	jaJSON, _, _ := clitest.Run(t, dir, ja, append([]string{"crawl", "status", id, "--json"}, as...)...)
	enJSON, _, _ := clitest.Run(t, dir, env, append([]string{"crawl", "status", id, "--json"}, as...)...)
	if jaJSON != enJSON || !strings.Contains(enJSON, `"state":"succeeded"`) {
		t.Errorf("crawl status --json differs by locale:\n%s\n%s", jaJSON, enJSON)
	}
	out, _, _ = clitest.Run(t, dir, env, append([]string{"crawl", "status", id, "--watch", "--json"}, as...)...)
	var p struct {
		Depth int `json:"depth"`
		Hosts []struct {
			Host     string `json:"host"`
			Captured int    `json:"captured"`
		} `json:"hosts"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]int{}
	for _, h := range p.Hosts {
		got[h.Host] = h.Captured
	}
	if p.Depth != 1 || len(got) != 2 || got[wwwHost] != 1 || got[blogHost] != 1 {
		t.Errorf("--json: depth %d, hosts %v; want depth 1 and both hosts with a page each", p.Depth, got)
	}

	// crawl why: the post was captured (its archive named); a page no
	// page linked was never reached; a URL that is not one changes
	// nothing and says why.
	out, errs, code = clitest.Run(t, dir, env, append([]string{"crawl", "why", id, blog.URL + "/post"}, as...)...)
	if code != 0 || !strings.HasPrefix(out, blog.URL+"/post: captured, archive ") || !strings.Contains(out, "(depth 1; rule 1 (follow any))") {
		t.Errorf("crawl why of the post: exit %d %q %s", code, out, errs)
	}
	out, errs, code = clitest.Run(t, dir, env, append([]string{"crawl", "why", id, blog.URL + "/never"}, as...)...)
	if code != 0 || !strings.Contains(out, "not captured: rule 1 (follow any) would take it, but no page the crawl followed linked to it within depth 1 and 30 pages; the crawl ended (succeeded, max_depth)") {
		t.Errorf("crawl why of a page never linked: exit %d %q %s", code, out, errs)
	}
	out, errs, code = clitest.Run(t, dir, env, append([]string{"crawl", "why", id, blog.URL + "/post", "--json"}, as...)...)
	var w struct {
		Verdict string `json:"verdict"`
		Page    struct {
			ArchiveID string `json:"archiveId"`
		} `json:"page"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &w) != nil || w.Verdict != "captured" || w.Page.ArchiveID == "" {
		t.Errorf("crawl why --json: exit %d %q %s", code, out, errs)
	}
	_, errs, code = clitest.Run(t, dir, env, append([]string{"crawl", "why", id, "/post"}, as...)...)
	if code != 2 || !strings.Contains(errs, "URL: ") || !strings.Contains(errs, "no scheme") {
		t.Errorf("crawl why of a relative URL: exit %d %s", code, errs)
	}

	// crawl pages: both pages with what decided each and their archives;
	// narrowed to a state; a state that is none refused.
	out, errs, code = clitest.Run(t, dir, env, append([]string{"crawl", "pages", id}, as...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[1], www.URL+"/ ") || !strings.Contains(lines[1], " captured  seed ") ||
		!strings.HasPrefix(lines[2], blog.URL+"/post ") || !strings.Contains(lines[2], "rule 1 (follow any)") {
		t.Errorf("crawl pages: exit %d\n%s%s", code, out, errs)
	}
	out, _, code = clitest.Run(t, dir, env, append([]string{"crawl", "pages", id, "--state", "failed"}, as...)...)
	if code != 0 || out != "no page in that state\n" {
		t.Errorf("crawl pages --state failed: exit %d %q", code, out)
	}
	out, _, code = clitest.Run(t, dir, env, append([]string{"crawl", "pages", id, "--state", "captured", "--json"}, as...)...)
	var archives []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var pg struct {
			State     string `json:"state"`
			ArchiveID string `json:"archiveId"`
		}
		if json.Unmarshal([]byte(l), &pg) == nil && pg.State == "captured" && pg.ArchiveID != "" {
			archives = append(archives, pg.ArchiveID)
		}
	}
	if code != 0 || len(archives) != 2 {
		t.Errorf("crawl pages --json: exit %d, %d captured pages with archives in %q; want 2", code, len(archives), out)
	}
	_, errs, code = clitest.Run(t, dir, env, append([]string{"crawl", "pages", id, "--state", "lost"}, as...)...)
	if code != 2 || !strings.Contains(errs, "--state must be equal to one of the allowed values (pending, captured, failed, skipped)") {
		t.Errorf("crawl pages --state lost: exit %d %s", code, errs)
	}

	// crawl start --wait and crawl start under a Japanese locale: the id
	// alone on stdout as ever, the drawing and what the command says on
	// stderr in Japanese.
	out, errs, code = clitest.Run(t, dir, ja, append([]string{"crawl", "start", "--seed", blog.URL + "/", "--rule", "follow:any",
		"--max-depth", "0", "--per-host-delay-ms", "0", "--wait"}, as...)...)
	if first := strings.SplitN(out, "\n", 2)[0]; code != 0 || len(first) != 36 || !strings.Contains(out, "取得 1、発見 1") ||
		!strings.HasPrefix(errs, "この実行のアーカイブ：") || strings.Contains(errs, "archives of this run") {
		t.Errorf("crawl start --wait in Japanese: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = clitest.Run(t, dir, ja, append([]string{"crawl", "pages", id}, as...)...)
	if head := strings.Fields(strings.SplitN(out, "\n", 2)[0]); code != 0 || !slices.Equal(head, []string{"URL", "深さ", "状態", "決め手", "理由", "アーカイブ"}) ||
		!strings.Contains(out, " 取得 ") || !strings.Contains(out, "シード") || !strings.Contains(out, "ルール 1（たどる any）") {
		t.Errorf("crawl pages in Japanese: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = clitest.Run(t, dir, ja, append([]string{"crawl", "politeness", id}, as...)...)
	if head := strings.Fields(strings.SplitN(out, "\n", 2)[0]); code != 0 || len(head) < 3 || !slices.Equal(head[:3], []string{"ホスト", "取得数", "間隔数"}) {
		t.Errorf("crawl politeness in Japanese: exit %d\n%s%s", code, out, errs)
	}
	out, errs, code = clitest.Run(t, dir, ja, append([]string{"crawl", "start", "--seed", blog.URL + "/", "--rule", "follow:any"}, as...)...)
	if code != 0 || len(strings.TrimSpace(out)) != 36 || !strings.HasPrefix(errs, "クロールを開始しました。") {
		t.Errorf("crawl start in Japanese: exit %d\n%s%s", code, out, errs)
	}
}

// TestWhySentence: each verdict in words, with what decided it, in
// English and in Japanese.
func TestWhySentence(t *testing.T) {
	t.Parallel()
	archive, reason, stopped, final, depth := "a1", "timeout after 30 s", "stopped", "https://e.test/home", "max_depth"
	rule := politeness.DecidedBy{Kind: "rule", Rule: 2, Action: "follow", Pattern: "same-origin"}
	page := func(state string) *politeness.Page {
		return &politeness.Page{URL: "https://e.test/a", Depth: 1, State: state, DecidedBy: rule}
	}
	captured := page("captured")
	captured.ArchiveID = &archive
	failed := page("failed")
	failed.Reason = &reason
	redirected := &politeness.Page{URL: "https://e.test/", Depth: 0, State: "captured", DecidedBy: politeness.DecidedBy{Kind: "seed"}, ArchiveID: &archive, FinalURL: &final}
	for _, c := range []struct {
		w        politeness.Why
		want, ja string
	}{
		{politeness.Why{URL: "https://e.test/a", Verdict: "captured", Page: captured},
			"https://e.test/a: captured, archive a1 (depth 1; rule 2 (follow same-origin))",
			"https://e.test/a：取得済み、アーカイブ a1（深さ 1、ルール 2（たどる same-origin））"},
		{politeness.Why{URL: final, Verdict: "captured", Page: redirected},
			final + ": captured, archive a1: the capture of https://e.test/ was redirected here (depth 0; a seed of the crawl)",
			final + "：取得済み、アーカイブ a1。https://e.test/ の取得がここへリダイレクトされました（深さ 0、クロールのシード）"},
		{politeness.Why{URL: "https://e.test/a", Verdict: "failed", Page: failed},
			"https://e.test/a: not captured: its capture failed: timeout after 30 s (depth 1; rule 2 (follow same-origin))",
			"https://e.test/a：未取得。取得に失敗しました：timeout after 30 s（深さ 1、ルール 2（たどる same-origin））"},
		{politeness.Why{URL: "https://e.test/a", Verdict: "skipped", Page: page("skipped")},
			"https://e.test/a: not captured: not fetched, robots.txt disallows it (depth 1)",
			"https://e.test/a：未取得。取得しませんでした：robots.txt が禁止しています（深さ 1）"},
		{politeness.Why{URL: "https://e.test/a", Verdict: "pending", Page: page("pending"), State: "running"},
			"https://e.test/a: not captured yet: queued at depth 1 (rule 2 (follow same-origin)); the crawl is running",
			"https://e.test/a：まだ未取得。深さ 1 で順番を待っています（ルール 2（たどる same-origin））。クロールは実行中です"},
		{politeness.Why{URL: "https://e.test/a", Verdict: "notCaptured", Page: page("pending"), State: "succeeded", StopReason: &stopped},
			"https://e.test/a: not captured: queued at depth 1 (rule 2 (follow same-origin)), and the crawl was stopped before its capture",
			"https://e.test/a：未取得。深さ 1 で順番を待っていましたが（ルール 2（たどる same-origin））、取得の前にクロールが停止されました"},
		{politeness.Why{URL: "https://x.test/", Verdict: "ruledOut", Rules: politeness.DecidedBy{Kind: "rule", Rule: 1, Action: "skip", Pattern: "x.test"}},
			"https://x.test/: not captured: rule 1 (skip x.test)",
			"https://x.test/：未取得。ルール 1（除外 x.test）"},
		{politeness.Why{URL: "https://y.test/", Verdict: "ruledOut", Rules: politeness.DecidedBy{Kind: "rule"}},
			"https://y.test/: not captured: no rule of the crawl matches it (a link no rule matches is skipped)",
			"https://y.test/：未取得。クロールのどのルールにも一致しません（一致しないリンクは除外されます）"},
		// A terminal's control sequence in a stored URL is printed quoted, never sent.
		{politeness.Why{URL: "https://y.test/\x1b[2J", Verdict: "ruledOut", Rules: politeness.DecidedBy{Kind: "rule"}},
			`"https://y.test/\x1b[2J": not captured: no rule of the crawl matches it (a link no rule matches is skipped)`,
			`"https://y.test/\x1b[2J"：未取得。クロールのどのルールにも一致しません（一致しないリンクは除外されます）`},
		{politeness.Why{URL: "https://e.test/b", Verdict: "notReached", Rules: rule, State: "running", MaxDepth: 2, MaxPages: 30},
			"https://e.test/b: not captured: rule 2 (follow same-origin) would take it, but no page the crawl followed linked to it within depth 2 and 30 pages so far; the crawl is running",
			"https://e.test/b：未取得。ルール 2（たどる same-origin） の対象ですが、深さ 2・30 ページの範囲でたどったページからのリンクがありませんでした（これまでのところ）。クロールは実行中です"},
		{politeness.Why{URL: "https://e.test/b", Verdict: "notReached", Rules: rule, State: "succeeded", StopReason: &depth, MaxDepth: 2, MaxPages: 30},
			"https://e.test/b: not captured: rule 2 (follow same-origin) would take it, but no page the crawl followed linked to it within depth 2 and 30 pages; the crawl ended (succeeded, max_depth)",
			"https://e.test/b：未取得。ルール 2（たどる same-origin） の対象ですが、深さ 2・30 ページの範囲でたどったページからのリンクがありませんでした。クロールが終了しました（成功、深さの上限に到達）"},
	} {
		if got := crawlcmd.WhySentence(c.w, i18n.English); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.w.Verdict, got, c.want)
		}
		if got := crawlcmd.WhySentence(c.w, i18n.Japanese); got != c.ja {
			t.Errorf("%s in Japanese:\n got %q\nwant %q", c.w.Verdict, got, c.ja)
		}
	}
}

// hostRow reports whether the drawing has a row for host whose captured
// column is captured.
func hostRow(drawing, host, captured string) bool {
	for _, line := range strings.Split(drawing, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == host && f[1] == captured {
			return true
		}
	}
	return false
}

// TestProgressOfAnEndedCrawl: the drawing counts a running crawl's
// uncaptured pages as pending, and an ended crawl's as not captured
// (nothing will capture them any more), in the levels line and the hosts'
// column.
func TestProgressOfAnEndedCrawl(t *testing.T) {
	t.Parallel()
	stopped := "stopped"
	p := politeness.Progress{CrawlID: "c", State: "running", PagesCaptured: 3, PagesDiscovered: 30, Depth: 1,
		Hosts:  []politeness.HostProgress{{Host: "example.test", Captured: 3, Pending: 27}},
		Levels: []politeness.LevelProgress{{Depth: 0, Captured: 1}, {Depth: 1, Captured: 2, Pending: 27}}}
	for _, c := range []struct {
		state, word, not string
		stop             *string
	}{
		{"running", "pending", "not captured", nil},
		{"succeeded", "not captured", "pending", &stopped},
		{"failed", "not captured", "pending", nil},
	} {
		p.State, p.StopReason = c.state, c.stop
		out := crawlcmd.RenderProgress(p, i18n.English)
		if !strings.Contains(out, "1: 2 captured, 0 failed, 0 skipped, 27 "+c.word) {
			t.Errorf("%s: the levels line does not count 27 %s:\n%s", c.state, c.word, out)
		}
		if head := strings.SplitN(out, "\n", 4)[2]; !strings.Contains(head, "skipped  "+c.word) {
			t.Errorf("%s: the hosts' heading is %q, want a %q column", c.state, head, c.word)
		}
		if strings.Contains(out, c.not) {
			t.Errorf("%s: the drawing says %q:\n%s", c.state, c.not, out)
		}
	}
}

// TestProgressInJapanese: with a Japanese locale the drawing says the
// crawl's state, stop reason, levels, columns, delay sources and
// robots.txt outcomes in the console's words; the hosts' columns stay
// aligned (Japanese headings are two columns wide a character), and the
// crawl's own words (its host, a failure's reason) are left as they are.
func TestProgressInJapanese(t *testing.T) {
	t.Parallel()
	stop, delay, source, robots := "max_depth", 1000, "crawl-delay", "fetched"
	p := politeness.Progress{CrawlID: "c", State: "succeeded", StopReason: &stop, PagesCaptured: 3, PagesDiscovered: 30, Depth: 1,
		Hosts: []politeness.HostProgress{{Host: "example.test", Captured: 3, Pending: 27, DelayMs: &delay, DelaySource: &source, Robots: &robots},
			{Host: "b.test", Captured: 10, Failed: 2}},
		Levels:   []politeness.LevelProgress{{Depth: 0, Captured: 1}, {Depth: 1, Captured: 2, Pending: 27}},
		Failures: []politeness.Failure{{Reason: "net::ERR_FAILED", Pages: 2}}}
	out := crawlcmd.RenderProgress(p, i18n.Japanese)
	t.Logf("\n%s", out)
	for _, want := range []string{
		"クロール c · 成功（深さの上限に到達） · 深さ 1 · 取得 3、発見 30",
		"深さ別  0：取得 1、失敗 0、スキップ 0、未取得 0 · 1：取得 2、失敗 0、スキップ 0、未取得 27",
		"1000（robots.txt の Crawl-delay）", "読み込み済み",
		"失敗  2 ページ：net::ERR_FAILED",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the drawing lacks %q", want)
		}
	}
	for _, english := range []string{"captured", "succeeded", "max_depth", "pending", "fetched", "level"} {
		if strings.Contains(out, english) {
			t.Errorf("the Japanese drawing says %q", english)
		}
	}
	// Each column starts at the same terminal column on every line.
	lines := strings.Split(out, "\n")
	head := lines[2]
	if !strings.HasPrefix(head, "ホスト") {
		t.Fatalf("line 3 is %q, want the hosts' heading", head)
	}
	at := func(line, cell string) int { return lipgloss.Width(line[:strings.Index(line, cell)]) }
	for _, row := range []struct{ line, cell, heading string }{
		{lines[3], "3", "取得"}, {lines[4], "10", "取得"}, {lines[4], "2", "失敗"},
	} {
		if got, want := at(row.line, " "+row.cell+" ")+1, at(head, row.heading); got != want {
			t.Errorf("%q starts at column %d of %q, its heading %q at %d", row.cell, got, row.line, row.heading, want)
		}
	}
}

// TestWordsTakeTheSameArguments: every sentence says, in Japanese, what
// its English says (cmdutil.Words.Mismatched).
func TestWordsTakeTheSameArguments(t *testing.T) {
	if bad := crawlcmd.Words.Mismatched(); len(bad) > 0 {
		t.Errorf("English and Japanese take different arguments: %q", bad)
	}
}
