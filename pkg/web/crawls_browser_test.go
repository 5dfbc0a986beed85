package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// crawlServe is serve for the crawl screens: captures may reach loopback
// (the test's sites), and alice is a submitter of acme.
func crawlServe(t testing.TB) *served {
	t.Helper()
	return crawlServeWith(t, nil)
}

// crawlServeWith is crawlServe with its settings tweaked.
func crawlServeWith(t testing.TB, tweak func(*config.Settings)) *served {
	t.Helper()
	srv := startServe(t, func(s *config.Settings) {
		s.Lookup = func(name string) string {
			if name == capture.EnvAllowPrivate {
				return "1"
			}
			return os.Getenv(name)
		}
		if tweak != nil {
			tweak(s)
		}
	})
	if _, err := authz.Grant(context.Background(), srv.Env.FGA, "submitter", "alice", "acme"); err != nil {
		t.Fatal(err)
	}
	return srv
}

// signInOnCrawls is signIn on a crawl screen: until the console's home
// screen is served, "/" is the API's picker, whose form signIn does not
// drive (the query absorbs signIn's trailing "/").
func signInOnCrawls(t *testing.T, ctx context.Context, srv *served, subject, orgs string) {
	t.Helper()
	signIn(t, ctx, srv.URL+"/crawls/new?from=", subject, orgs)
}

// site is a loopback web site: / links to /a, /b and /private (which its
// robots.txt disallows); every page takes slow to answer.
func site(t *testing.T, slow time.Duration) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		time.Sleep(slow)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<!doctype html><title>ホーム</title><a href="/a">a</a> <a href="/b">b</a> <a href="/private">p</a> <a href="https://elsewhere.example/">x</a>`)
		case "/a", "/b", "/private":
			fmt.Fprintf(w, `<!doctype html><title>page %s</title><p>%s</p>`, r.URL.Path, r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// evalString runs js in the tab and returns its string value.
func evalString(t *testing.T, ctx context.Context, js string) string {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// waitFor evaluates js (a boolean) until it is true, or fails the test
// after limit saying what. Each evaluation has its own short deadline, so a
// page being replaced (a form's navigation) cannot hold the wait.
func waitFor(t *testing.T, ctx context.Context, limit time.Duration, what, js string) {
	t.Helper()
	for deadline := time.Now().Add(limit); ; time.Sleep(100 * time.Millisecond) {
		ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ok, err := chromedp.Run(ectx, chromedp.Evaluate[bool](js))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v; page reads: %.1500s", what, err, evalString(t, ctx, `document.body.innerText`))
		}
	}
}

// typeInto replaces the value of the field sel with text as a person
// types it (input events fire, so the live check runs).
func typeInto(t *testing.T, ctx context.Context, sel, text string) {
	t.Helper()
	evalString(t, ctx, fmt.Sprintf(`(function(){var e=document.querySelector(%q); e.value=""; return "";})()`, sel))
	if err := chromedp.Do(ctx, chromedp.Focus(sel), chromedp.SendKeys(sel, text)); err != nil {
		t.Fatalf("type into %s: %v", sel, err)
	}
}

// TestCrawlScreensLive: alice starts a crawl of two loopback hosts from
// the form — the rules check answering as she types (which rule decides a
// link, a shadowed rule) — lands on the crawl's page and watches it run
// and finish without a reload; the page shows its levels, the pages with
// what decided each (robots.txt for /private, rule 1 for /a) and links to
// their archives, and the politeness picture has one row per host and no
// red mark. The list shows the crawl with its counts.
func TestCrawlScreensLive(t *testing.T) {
	t.Parallel()
	// A replay collection lists 4 of the crawl's 6 captures: the replay
	// link says so, and the download holds all 6.
	srv := crawlServeWith(t, func(s *config.Settings) { s.ReplayCollectionLimit = 4 })
	one, two := site(t, 150*time.Millisecond), site(t, 150*time.Millisecond)
	ctx := testenv.BrowserTab(t, 4*time.Minute)
	signInOnCrawls(t, ctx, srv, "alice", "acme")

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/crawls/new"), chromedp.WaitVisible("#seeds")); err != nil {
		t.Fatal(err)
	}
	typeInto(t, ctx, "#seeds", one.URL+"/\n"+two.URL+"/")
	typeInto(t, ctx, "#try-urls", one.URL+"/a\nhttps://elsewhere.example/")
	waitFor(t, ctx, 20*time.Second, "the rules check to decide the links",
		`document.querySelectorAll("#try-check li").length === 2 && document.querySelector("#try-check li[data-rule='1']") !== null && document.querySelector("#try-check li[data-rule='0']") !== null && document.querySelector("#try-check li[data-rule='0']").getBoundingClientRect().left >= 0`)
	if got := evalString(t, ctx, `document.querySelector("#seeds-check").textContent`); strings.Count(got, "followed (site") != 2 {
		t.Errorf("seeds check reads %q", got)
	}
	// A second rule the first already covers is named as shadowed.
	if err := chromedp.Do(ctx, chromedp.Click("#add-rule")); err != nil {
		t.Fatal(err)
	}
	typeInto(t, ctx, "#rules li.rule:nth-child(2) .rule-pattern", "same-origin")
	waitFor(t, ctx, 20*time.Second, "the shadowed rule to be named",
		`(document.querySelector("#rules li.rule:nth-child(2) .rule-check")||{}).textContent === "never matches: rule 1 already decides every link it would"`)
	shot(t, ctx, "crawl-new-en.png")
	if err := chromedp.Do(ctx, chromedp.Click("#rules li.rule:nth-child(2) .remove")); err != nil {
		t.Fatal(err)
	}
	// A field the API refuses is named at the field, and nothing starts.
	typeInto(t, ctx, "#maxDepth", "11")
	if err := chromedp.Do(ctx, chromedp.Click("#start")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the depth to be refused at its field",
		`document.querySelector("#maxDepth-error").textContent.indexOf("body/maxDepth") === 0 && document.querySelector("#maxDepth").getAttribute("aria-invalid") === "true"`)
	typeInto(t, ctx, "#maxDepth", "1")
	typeInto(t, ctx, "#perHostDelayMs", "300")
	typeInto(t, ctx, "#maxPages", "10")
	if err := chromedp.Do(ctx, chromedp.Click("#start")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the crawl's page", `/^\/crawls\/[0-9a-f-]{36}$/.test(location.pathname) && document.body.getAttribute("data-crawl-state") !== null`)
	id := strings.TrimPrefix(evalString(t, ctx, `location.pathname`), "/crawls/")
	// The page is not reloaded from here on: a mark set now must stay.
	evalString(t, ctx, `window.__sameLoad = "yes"; document.body.getAttribute("data-crawl-state")`)
	var seen []string
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st := evalString(t, ctx, `document.body.getAttribute("data-crawl-state") || ""`)
		if len(seen) == 0 || seen[len(seen)-1] != st {
			seen = append(seen, st)
		}
		if st == "succeeded" || st == "failed" || time.Now().After(deadline) {
			break
		}
	}
	if len(seen) < 2 || seen[0] != "running" || seen[len(seen)-1] != "succeeded" {
		t.Fatalf("states seen on the page: %v (want running … succeeded)", seen)
	}
	if evalString(t, ctx, `String(window.__sameLoad)`) != "yes" {
		t.Fatal("the page was reloaded")
	}
	waitFor(t, ctx, 20*time.Second, "the final tables",
		`document.querySelectorAll("#pages tbody tr").length === 8 && document.querySelectorAll("svg.timeline g.row").length === 2`)
	// How far its archives are searchable: the ended crawl's page keeps
	// looking until serve's indexer has them all.
	waitFor(t, ctx, 60*time.Second, "the crawl's archives to be searchable",
		`/^all 6 archives searchable \((by the time the crawl ended|[0-9.]+ (ms|s|min [0-9]+ s) after the crawl ended)\)$/.test((document.querySelector("#crawl-search")||{}).textContent || "")`)

	// Pages: what decided each, and links to archives.
	rows := evalString(t, ctx, `Array.prototype.map.call(document.querySelectorAll("#pages tbody tr"), function (r) { return Array.prototype.map.call(r.cells, function (c) { return c.textContent; }).join(" | "); }).join("\n")`)
	for _, want := range []string{
		one.URL + "/ | 0 | captured | seed | Open",
		one.URL + "/a | 1 | captured | rule 1: follow same-origin | Open",
		one.URL + "/private | 1 | skipped | robots.txt disallows it | —",
		two.URL + "/b | 1 | captured | rule 1: follow same-origin | Open",
	} {
		if !strings.Contains(rows, want) {
			t.Errorf("pages table lacks %q:\n%s", want, rows)
		}
	}
	// Why: robots.txt kept /private out; a page no page linked was never
	// reached, and the sentence says how the crawl ended.
	for _, q := range []struct{ url, want string }{
		{one.URL + "/private", one.URL + "/private: not captured: its robots.txt disallows it, so it was not fetched (depth 1)."},
		{one.URL + "/never", one.URL + "/never: not captured: rule 1: follow same-origin would take it, but no page the crawl followed linked to it within depth 1 and 10 pages; the crawl ended (succeeded, depth limit reached)."},
	} {
		typeInto(t, ctx, "#why-url", q.url)
		evalString(t, ctx, `(function () { document.querySelector("#why-answer").textContent = ""; return ""; })()`)
		if err := chromedp.Do(ctx, chromedp.Click("#why-ask")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, 20*time.Second, "the answer for "+q.url, `document.querySelector("#why-answer").textContent !== ""`)
		if got := evalString(t, ctx, `document.querySelector("#why-answer").textContent`); got != q.want {
			t.Errorf("why %s:\n got %q\nwant %q", q.url, got, q.want)
		}
	}
	// The hosts table counts each host's pages over every level: its seed
	// and its two pages of level 1, and the page robots.txt kept out.
	for _, h := range []string{one.URL, two.URL} {
		h = strings.TrimPrefix(h, "http://")
		if got := evalString(t, ctx, `Array.prototype.map.call(document.querySelectorAll("#hosts tr[data-host='`+h+`'] td"), function (td) { return td.textContent; }).slice(0, 4).join(" ")`); got != "3 0 1 0" {
			t.Errorf("hosts table, %s: captured, failed, skipped, pending %q; want 3 0 1 0 (both levels)", h, got)
		}
	}
	if got := evalString(t, ctx, hostDelays); got != "300 ms (the crawl's setting) 300 ms (the crawl's setting)" {
		t.Errorf("hosts' delays %q", got)
	}
	if got := evalString(t, ctx, `document.querySelector("#hosts h3").textContent`); got != "Hosts" {
		t.Errorf("hosts table's title %q", got)
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll("#pages a[href^='/archives/']").length)`); n != "6" {
		t.Errorf("%s archive links, want 6 (6 pages captured)", n)
	}
	// Politeness: one row per host, no red mark, a polite verdict and a
	// text summary per host.
	if got := evalString(t, ctx, `Array.prototype.map.call(document.querySelectorAll("svg.timeline g.row"), function (g) { return g.getAttribute("data-host") + ":" + g.querySelectorAll("rect.capture").length; }).sort().join(" ")`); got != fmt.Sprintf("%s:3 %s:3", strings.TrimPrefix(one.URL, "http://"), strings.TrimPrefix(two.URL, "http://")) &&
		got != sortedHosts(strings.TrimPrefix(one.URL, "http://")+":3", strings.TrimPrefix(two.URL, "http://")+":3") {
		t.Errorf("timeline rows %q", got)
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll("svg.timeline rect.bad, svg.timeline rect.late").length)`); n != "0" {
		t.Errorf("%s red marks on a polite crawl", n)
	}
	if got := evalString(t, ctx, `document.querySelector("#politeness-verdict").textContent + " / " + document.querySelectorAll("#politeness-summary li.ok").length`); !strings.HasPrefix(got, "Polite:") || !strings.HasSuffix(got, "/ 2") {
		t.Errorf("politeness verdict %q", got)
	}
	// Decisions by rule and host list the links rule 0 dropped.
	if got := evalString(t, ctx, `document.querySelector("#decisions").textContent`); !strings.Contains(got, "no rule matched") || !strings.Contains(got, "elsewhere.example") {
		t.Errorf("decisions read %q", got)
	}
	// A host and its port stay on one line where the table has room (a
	// URL may break anywhere; "127.0.0.1:3996" over "7" reads as another
	// host).
	if got := evalString(t, ctx, `Array.prototype.filter.call(document.querySelectorAll("#hosts tbody th, #decisions td.host"), function (c) { var r = document.createRange(); r.selectNodeContents(c); return r.getClientRects().length !== 1; }).map(function (c) { return c.textContent; }).join(" ")`); got != "" {
		t.Errorf("host cells broken over lines, or missing their class: %q", got)
	}
	if n := evalString(t, ctx, `String(document.querySelectorAll("#hosts tbody th, #decisions td.host").length)`); n != "5" {
		t.Errorf("%s host cells (want 2 in the hosts table, 3 in the decisions and robots.txt tables)", n)
	}
	shot(t, ctx, "crawl-en.png")
	// Replay the crawl as one collection: a link that opens a new tab
	// without opener or referrer, on a replay origin (not this one).
	if err := chromedp.Do(ctx, chromedp.Click("#replay")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the replay link", `document.querySelector("#replay-open") !== null`)
	if got := evalString(t, ctx, `(function () { var a = document.querySelector("#replay-open"); return a.target + " " + a.rel + " " + (new URL(a.href).origin !== location.origin); })()`); got != "_blank noopener noreferrer true" {
		t.Errorf("replay link: %q", got)
	}
	if got, want := evalString(t, ctx, `(document.querySelector("#replay-limit")||{}).textContent`), " This crawl has more than 4 captures: the collection holds the 4 of its first 4 you may view. Download as one WACZ holds every one."; got != want {
		t.Errorf("the collection's limit:\n got %q\nwant %q", got, want)
	}
	shot(t, ctx, "crawl-replay-limit-en.png")
	// Download the crawl as one WACZ: the browser saves the file the
	// button starts, and it is a WACZ of the crawl's six pages.
	checkCrawlDownload(t, ctx, srv.URL, id, 6)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 800)); err != nil {
		t.Fatal(err)
	}
	if w := evalString(t, ctx, `String(document.documentElement.scrollWidth)`); w != "360" {
		t.Errorf("at 360 px the page is %s px wide", w)
	}
	shot(t, ctx, "crawl-360.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)); err != nil {
		t.Fatal(err)
	}

	// The list shows it with its counts.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/crawls")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the list", `document.querySelector("#crawls-body tr[data-crawl='`+id+`']") !== null`)
	row := evalString(t, ctx, `Array.prototype.map.call(document.querySelector("#crawls-body tr").cells, function (c) { return c.textContent; }).join(" | ")`)
	if !strings.Contains(row, "| succeeded | 6 | 0 | 2 | alice |") {
		t.Errorf("list row %q", row)
	}
	shot(t, ctx, "crawls-en.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 800)); err != nil {
		t.Fatal(err)
	}
	shot(t, ctx, "crawls-360.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1200, 900)); err != nil {
		t.Fatal(err)
	}

	// Japanese: the same screens, switched by the language link.
	for _, p := range []struct{ path, ready, name string }{
		{"/crawls?lang=ja", `document.querySelector("#crawls-body tr") !== null`, "crawls-ja.png"},
		{"/crawls/" + id + "?lang=ja", `document.querySelectorAll("svg.timeline g.row").length === 2 && document.querySelectorAll("#pages tbody tr").length === 8 && (document.querySelector("#crawl-search")||{}).textContent.indexOf("6 件のアーカイブすべてを検索できます（クロール終了の") === 0 && (document.querySelector("#hosts h3")||{}).textContent === "ホスト"`, "crawl-ja.png"},
		{"/crawls/new?lang=ja", `document.querySelectorAll("#seeds-check li, #rules li.rule .rule-check span").length > 0`, "crawl-new-ja.png"},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+p.path)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, 20*time.Second, p.path, p.ready)
		if lang := evalString(t, ctx, `document.documentElement.lang`); lang != "ja" {
			t.Errorf("%s: lang %q", p.path, lang)
		}
		if p.name == "crawl-ja.png" {
			// A host's delay and its source, in Japanese punctuation.
			if got := evalString(t, ctx, hostDelays); got != "300 ミリ秒（クロールの設定） 300 ミリ秒（クロールの設定）" {
				t.Errorf("ja: hosts' delays %q", got)
			}
			// The collection's limit, said in Japanese.
			if err := chromedp.Do(ctx, chromedp.Click("#replay")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, 20*time.Second, "the collection's limit in Japanese", `(document.querySelector("#replay-limit")||{}).textContent === " このクロールの取得は 4 件を超えています。コレクションには最初の 4 件のうち閲覧できる 4 件が入ります。「1 つの WACZ としてダウンロード」にはすべてが入ります。"`)
			shot(t, ctx, "crawl-replay-limit-ja.png")
			// The download, said in Japanese.
			if err := chromedp.Do(ctx, chromedp.Click("#download")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, 20*time.Second, "the download's note in Japanese", `document.querySelector("#action-note").textContent === "ダウンロードを開始しました。このクロールのうち閲覧できるアーカイブを 1 つの WACZ ファイルにまとめています。"`)
		}
		shot(t, ctx, p.name)
	}
}

// checkCrawlDownload clicks the crawl page's download button in the tab
// (signed in as alice of acme on the server at base), first while a link
// alice made and has not followed holds her place: the page says why
// nothing starts. Then it lets the browser save what the button starts,
// and checks the saved file: named for the crawl, a WACZ wacz.Check
// accepts, holding pages pages.
func checkCrawlDownload(t *testing.T, ctx context.Context, base, id string, pages int) {
	t.Helper()
	dir := t.TempDir()
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir,
	}); err != nil {
		t.Fatal(err)
	}
	code, held := apiAs(t, base, "POST", "/api/crawls/"+id+"/download", "alice", "acme", "")
	heldURL, _ := held["url"].(string)
	if code != 200 || !strings.HasPrefix(heldURL, "/api/crawls/"+id+"/wacz?") {
		t.Fatalf("a download link made through the API: %d %v", code, held)
	}
	if err := chromedp.Do(ctx, chromedp.Click("#download")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the download refused while alice's place is held", `document.querySelector("#action-note").textContent === "Another crawl download of yours or of your organization is running: try again in 10 s."`)
	shot(t, ctx, "crawl-download-busy-en.png")
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused download saved %v", entries)
	}
	// Followed, that link's download gives the place back as it ends.
	res, err := http.Get(base + heldURL)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("the API's link followed: %d", res.StatusCode)
	}
	if err := chromedp.Do(ctx, chromedp.Click("#download")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the download's note", `document.querySelector("#action-note").textContent.indexOf("Download started") === 0`)
	file := filepath.Join(dir, "crawl-"+id+".wacz")
	var data []byte
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		var err error
		if data, err = os.ReadFile(file); err == nil {
			break
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			t.Fatalf("no %s after 60 s; the download directory holds %v", file, entries)
		}
	}
	if keep := os.Getenv("LEDGER_TEST_KEEP_DIR"); keep != "" {
		// To replay with the WACZ checker, outside the test.
		_ = os.WriteFile(filepath.Join(keep, "crawl-download.wacz"), data, 0o644)
	}
	if problems, err := wacz.Check(bytes.NewReader(data), int64(len(data))); err != nil || len(problems) > 0 {
		t.Fatalf("the downloaded crawl: %v %v", problems, err)
	}
	got, _, err := wacz.ReadPages(bytes.NewReader(data), int64(len(data)))
	if err != nil || len(got) != pages {
		t.Errorf("the downloaded crawl holds %d pages (%v), want %d", len(got), err, pages)
	}
}

// hostDelays reads the hosts table's delay cells.
const hostDelays = `Array.prototype.map.call(document.querySelectorAll("#hosts tbody tr"), function (r) { return r.cells[r.cells.length-1].textContent; }).join(" ")`

func sortedHosts(a, b string) string {
	if a < b {
		return a + " " + b
	}
	return b + " " + a
}

// apiAs calls the API at base as subject of orgs.
func apiAs(t *testing.T, base, method, path, subject, orgs, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Capture-Ledger-Subject", subject)
	req.Header.Set("X-Capture-Ledger-Organizations", orgs)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// openStartedCrawl starts alice's crawl of seed (depth 1, delayMs between
// a host's captures) through the API and opens its page in a signed-in
// tab.
func openStartedCrawl(t *testing.T, srv *served, seed string, delayMs int) (context.Context, string) {
	t.Helper()
	ctx := testenv.BrowserTab(t, 2*time.Minute)
	signInOnCrawls(t, ctx, srv, "alice", "acme")
	code, body := apiAs(t, srv.URL, "POST", "/api/crawls", "alice", "acme",
		fmt.Sprintf(`{"seeds":[%q],"maxDepth":1,"perHostDelayMs":%d}`, seed, delayMs))
	if code != 202 {
		t.Fatalf("start: %d %v", code, body)
	}
	id := body["crawlId"].(string)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/crawls/"+id)); err != nil {
		t.Fatal(err)
	}
	return ctx, id
}

// TestCrawlScreenStops: a running crawl of a slow site is stopped from its
// page while its level's second page is being fetched; the page says so
// without a reload and the crawl ends "stopped". Every capture made stays,
// the one in flight at the stop included: each page the page shows
// captured links its archive, and no other page does, and the politeness
// timeline shows its capture, in English and Japanese.
func TestCrawlScreenStops(t *testing.T) {
	t.Parallel()
	srv := crawlServe(t)
	// Thirty pages of a second each, a second apart: a minute of crawl.
	// The fetch of /p1 is signalled as it starts.
	p1 := make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/p1" {
			select {
			case p1 <- struct{}{}:
			default:
			}
		}
		time.Sleep(time.Second)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		for i := 0; i < 30 && r.URL.Path == "/"; i++ {
			fmt.Fprintf(w, `<a href="/p%d">%d</a> `, i, i)
		}
	}))
	t.Cleanup(slow.Close)
	ctx, id := openStartedCrawl(t, srv, slow.URL+"/", 1000)
	waitFor(t, ctx, 20*time.Second, "the stop button", `document.body.getAttribute("data-crawl-state") === "running" && !document.querySelector("#stop").hidden`)
	evalString(t, ctx, `window.__sameLoad = "yes"`)
	// Stopped while /p1 is being fetched: its capture is in flight.
	select {
	case <-p1:
	case <-time.After(30 * time.Second):
		t.Fatal("/p1 was not fetched within 30 s")
	}
	if err := chromedp.Do(ctx, chromedp.Click("#stop")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the stopped crawl",
		`document.body.getAttribute("data-crawl-state") === "succeeded" && document.querySelector("#crawl-facts .chip").textContent === "stopped" && document.querySelector("#stop").hidden`)
	if got := evalString(t, ctx, `document.querySelector("#action-note").textContent + "|" + window.__sameLoad`); got != "Stopped: no new page starts; every capture already made stays.|yes" {
		t.Errorf("after stop the page reads %q", got)
	}
	code, body := apiAs(t, srv.URL, "GET", "/api/crawls/"+id, "alice", "acme", "")
	if code != 200 || body["state"] != "succeeded" || body["stopReason"] != "stopped" {
		t.Errorf("the crawl after stop: %d %v", code, body)
	}
	// A capture in flight at the stop ends up to a second later (the
	// site answers in a second) and is registered then.
	time.Sleep(2 * time.Second)
	// Each row: its state chip, and whether it links an archive; the
	// crawl's archives as the API counts them.
	rows := `Array.prototype.map.call(document.querySelectorAll("#pages tbody tr"), function (r) { return r.cells[2].textContent + (r.querySelector("a[href^='/archives/']") ? "+archive" : ""); }).join("|")`
	// The pages the stop left uncaptured read so (not "pending": they
	// never will be), and so do the columns that count them.
	for _, c := range []struct {
		lang, captured, unreached, head, file, whyFile, whyBad string
		why                                                    [3]string
	}{
		{"en", "captured", "not captured", "Not captured", "crawl-stopped-en.png", "crawl-why-en.png", "Type a whole URL, starting with http:// or https://.", [3]string{
			slow.URL + "/p0: captured (rule 1: follow same-origin, depth 1). Open its archive",
			"https://elsewhere.example/x: not captured: no rule of the crawl matches it, and a link no rule matches is skipped.",
			slow.URL + "/p5: not captured: it was queued at depth 1 (rule 1: follow same-origin), and the crawl ended (stopped) before its capture."}},
		{"ja", "取得", "未取得", "未取得", "crawl-stopped-ja.png", "crawl-why-ja.png", "http:// または https:// で始まる URL 全体を入力してください。", [3]string{
			slow.URL + "/p0：取得済み（ルール 1：たどる same-origin、深さ 1）。 アーカイブを開く",
			"https://elsewhere.example/x：未取得。クロールのどのルールにも一致せず、一致しないリンクは除外されます。",
			slow.URL + "/p5：未取得。深さ 1 で順番を待っていましたが（ルール 1：たどる same-origin）、取得の前にクロールが終了しました（停止）。"}},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/crawls/"+id+"?lang="+c.lang)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, 20*time.Second, "the stopped crawl's pages in "+c.lang,
			`document.documentElement.lang === "`+c.lang+`" && document.body.getAttribute("data-crawl-state") === "succeeded" && document.querySelectorAll("#pages tbody tr").length >= 3`)
		got := strings.Split(evalString(t, ctx, rows), "|")
		linked, other := 0, ""
		for _, r := range got {
			state, archive := strings.CutSuffix(r, "+archive")
			if (state == c.captured) != archive {
				t.Errorf("%s: a page %s with archive %v; every captured page links its archive, and only those (rows: %v)", c.lang, state, archive, got)
			}
			if state != c.captured && state != c.unreached {
				other = state
			}
			if archive {
				linked++
			}
		}
		if other != "" {
			t.Errorf("%s: a page of the stopped crawl reads %q, want %q or %q (rows: %v)", c.lang, other, c.captured, c.unreached, got)
		}
		for _, table := range []string{"#levels", "#hosts"} {
			if head := evalString(t, ctx, `(function () { var h = document.querySelectorAll("`+table+` thead th"); return h.length ? h[4].textContent : "no table"; })()`); head != c.head {
				t.Errorf("%s: %s counts the uncaptured pages under %q, want %q", c.lang, table, head, c.head)
			}
		}
		if linked != 3 {
			t.Errorf("%s: %d pages link an archive after the stop, want 3: the seed, /p0 and /p1, in flight at the stop (rows: %v)", c.lang, linked, got)
		}
		// /p1's capture is on the politeness timeline with the others.
		if bars := evalString(t, ctx, `Array.prototype.map.call(document.querySelectorAll("svg.timeline rect.capture"), function (r) { return r.getAttribute("class"); }).join(",")`); bars != "capture state-captured,capture state-captured,capture state-captured" {
			t.Errorf("%s: the politeness timeline's captures are %q, want 3 captured (the seed, /p0, /p1)", c.lang, bars)
		}
		if p1 := evalString(t, ctx, `(function () { var r = Array.prototype.find.call(document.querySelectorAll("#pages tbody tr"), function (r) { return r.cells[0].textContent === "`+slow.URL+`/p1"; }); return r ? r.cells[2].textContent + (r.querySelector("a[href^='/archives/']") ? "+archive" : "") : "no row"; })()`); p1 != c.captured+"+archive" {
			t.Errorf("%s: /p1, in flight at the stop, reads %q; want %s with its archive", c.lang, p1, c.captured)
		}
		// The list follows OpenFGA, which the outbox reaches a moment
		// after the registration.
		listed := -1
		for deadline := time.Now().Add(15 * time.Second); listed != linked && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			_, list := apiAs(t, srv.URL, "GET", "/api/archives?crawl="+id, "alice", "acme", "")
			as, _ := list["archives"].([]any)
			listed = len(as)
		}
		if listed != linked {
			t.Errorf("%s: alice lists %d archives of the crawl, %d pages link one (rows: %v)", c.lang, listed, linked, got)
		}
		shot(t, ctx, c.file)
		// Why a URL was captured or not, asked on the page.
		for _, q := range []struct{ url, verdict, want string }{
			{slow.URL + "/p0", "captured", c.why[0]},
			{"https://elsewhere.example/x", "ruledOut", c.why[1]},
			{slow.URL + "/p5#top", "notCaptured", c.why[2]},
			{"/p5", "", c.whyBad},
		} {
			typeInto(t, ctx, "#why-url", q.url)
			evalString(t, ctx, `(function () { var a = document.querySelector("#why-answer"); a.textContent = ""; a.removeAttribute("data-verdict"); return ""; })()`)
			if err := chromedp.Do(ctx, chromedp.Click("#why-ask")); err != nil {
				t.Fatal(err)
			}
			waitFor(t, ctx, 20*time.Second, "the answer for "+q.url, `document.querySelector("#why-answer").textContent !== ""`)
			verdict := evalString(t, ctx, `document.querySelector("#why-answer").getAttribute("data-verdict") || ""`)
			text := evalString(t, ctx, `document.querySelector("#why-answer").textContent`)
			if verdict != q.verdict || !strings.Contains(text, q.want) {
				t.Errorf("%s: why %s: %q %q, want %q containing %q", c.lang, q.url, verdict, text, q.verdict, q.want)
			}
			if q.verdict == "captured" {
				if href := evalString(t, ctx, `(document.querySelector("#why-archive") || {}).getAttribute ? document.querySelector("#why-archive").getAttribute("href") : ""`); !strings.HasPrefix(href, "/archives/") {
					t.Errorf("%s: the captured page's answer links %q, want its archive", c.lang, href)
				}
			}
			if q.verdict == "notCaptured" {
				if err := chromedp.Do(ctx, chromedp.ScrollIntoView("#h-why")); err != nil {
					t.Fatal(err)
				}
				shot(t, ctx, c.whyFile)
			}
		}
		// The pages table narrowed to one state; the pending pages are
		// offered as not captured.
		if got := evalString(t, ctx, `document.querySelector("#pages-state option[value='pending']").textContent`); got != c.unreached {
			t.Errorf("%s: the filter offers the pending pages as %q, want %q", c.lang, got, c.unreached)
		}
		for _, f := range []struct {
			state string
			rows  int
			chip  string
		}{{"captured", 3, c.captured}, {"pending", 27, c.unreached}, {"failed", 0, ""}, {"", 30, ""}} {
			evalString(t, ctx, `(function () { var s = document.querySelector("#pages-state"); s.value = "`+f.state+`"; s.dispatchEvent(new Event("change")); return ""; })()`)
			want := fmt.Sprintf(`document.querySelectorAll("#pages tbody tr").length === %d`, f.rows)
			if f.rows == 0 {
				want = `document.querySelector("#pages-none") !== null`
			}
			waitFor(t, ctx, 20*time.Second, c.lang+" pages narrowed to "+f.state, want)
			if f.state == "captured" {
				shot(t, ctx, "crawl-pages-captured-"+c.lang+".png")
			}
			if f.chip == "" {
				continue
			}
			if got := strings.Split(evalString(t, ctx, rows), "|"); len(got) != f.rows || strings.TrimSuffix(got[0], "+archive") != f.chip || strings.TrimSuffix(got[len(got)-1], "+archive") != f.chip {
				t.Errorf("%s: pages narrowed to %s read %v", c.lang, f.state, got)
			}
		}
	}
}

// downloadWhileRunning clicks a running crawl's download button until
// the note says want (while the download before it still holds the
// person's place, the note says that instead) and the crawl still runs.
func downloadWhileRunning(t *testing.T, ctx context.Context, want string) {
	t.Helper()
	var got string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if err := chromedp.Do(ctx, chromedp.Click("#download")); err != nil {
			t.Fatal(err)
		}
		for until := time.Now().Add(5 * time.Second); time.Now().Before(until); time.Sleep(50 * time.Millisecond) {
			if got = evalString(t, ctx, `document.querySelector("#action-note").textContent`); got != "" {
				break
			}
		}
		if got == want {
			break
		}
	}
	if got != want || evalString(t, ctx, `document.body.getAttribute("data-crawl-state")`) != "running" {
		t.Errorf("a running crawl's download says %q, want %q while the crawl runs", got, want)
	}
}

// TestCrawlPageShowsCapturesAsTheyLand: while a level is still being
// captured (ten pages 1.5 s apart), the crawl's page — without a
// reload — links the archive of a page captured moments ago, counts it
// among the crawl's archives indexed for search and among its level's
// captured pages, in English and Japanese; the page's archive opens.
func TestCrawlPageShowsCapturesAsTheyLand(t *testing.T) {
	t.Parallel()
	srv := crawlServe(t)
	// / links ten pages, captured 1.5 s apart: the level lasts ≥ 13.5 s,
	// time enough for both languages under load.
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch p := r.URL.Path; {
		case p == "/":
			fmt.Fprint(w, `<!doctype html><title>home</title>`)
			for _, c := range "abcdefghij" {
				fmt.Fprintf(w, `<a href="/%c">%c</a> `, c, c)
			}
		case len(p) == 2 && p[1] >= 'a' && p[1] <= 'j':
			fmt.Fprintf(w, `<!doctype html><title>page %s</title><p>%s</p>`, p, p)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	ctx, id := openStartedCrawl(t, srv, s.URL+"/", 1500)
	waitFor(t, ctx, 20*time.Second, "the running crawl's page", `document.body.getAttribute("data-crawl-state") === "running"`)
	evalString(t, ctx, `window.__sameLoad = "yes"`)
	// /a is level 1's first page; /j comes 13.5 s after it.
	rowOf := func(path string) string {
		return `Array.prototype.find.call(document.querySelectorAll("#pages tbody tr"), function (r) { return r.cells[0].textContent === "` + s.URL + path + `"; })`
	}
	waitFor(t, ctx, 30*time.Second, "/a's archive linked while the crawl runs",
		`(function () { var r = `+rowOf("/a")+`; return !!r && r.querySelector("a[href^='/archives/']") !== null && document.body.getAttribute("data-crawl-state") === "running"; })()`)
	waitFor(t, ctx, 20*time.Second, "the running crawl's archives counted",
		`document.body.getAttribute("data-crawl-state") === "running" && (function (m) { return !!m && m[1] === m[2] && Number(m[1]) >= 2; })(/^(\d+) of (\d+) archives indexed for search$/.exec((document.querySelector("#crawl-search")||{}).textContent || ""))`)
	// The progress by level counts /a as captured, as the pages and hosts
	// tables do, while its level runs.
	waitFor(t, ctx, 20*time.Second, "level 1's progress to count /a",
		`document.body.getAttribute("data-crawl-state") === "running" && Array.prototype.some.call(document.querySelectorAll("#levels tbody tr"), function (r) { return r.cells[0].textContent === "1" && Number(r.cells[1].textContent) >= 1; })`)
	if st := evalString(t, ctx, `document.body.getAttribute("data-crawl-state") + " " + window.__sameLoad`); st != "running yes" {
		t.Fatalf("the crawl's page: %q; want the crawl running, the page not reloaded", st)
	}
	if got := evalString(t, ctx, `(function () { var r = `+rowOf("/j")+`; return r ? r.cells[r.cells.length-1].textContent : "no row"; })()`); got != "—" {
		t.Errorf("/j, not captured yet, links %q", got)
	}
	// Its download holds what the crawl has captured so far, and says so.
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: t.TempDir(),
	}); err != nil {
		t.Fatal(err)
	}
	downloadWhileRunning(t, ctx, "Download started: the archives of this crawl you may view, captured so far (the crawl is still running), in one WACZ file.")
	shot(t, ctx, "crawl-running-en.png")
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/crawls/"+id+"?lang=ja")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the Japanese page while the crawl runs",
		`document.documentElement.lang === "ja" && document.body.getAttribute("data-crawl-state") === "running" && (function (m) { return !!m && m[1] === m[2] && Number(m[1]) >= 2; })(/^(\d+) 件中 (\d+) 件のアーカイブを検索用に索引済み$/.exec((document.querySelector("#crawl-search")||{}).textContent || ""))`)
	downloadWhileRunning(t, ctx, "ダウンロードを開始しました。このクロールのうち閲覧できる、これまでに取得したアーカイブ（クロールはまだ実行中です）を 1 つの WACZ ファイルにまとめています。")
	shot(t, ctx, "crawl-running-ja.png")
	href := evalString(t, ctx, `(`+rowOf("/a")+`).querySelector("a[href^='/archives/']").getAttribute("href")`)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+href)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "/a's archive page", `document.body.innerText.indexOf("`+s.URL+`/a") >= 0`)
}

// Hostile strings a crawl can carry (URLs, reasons, rules, errors,
// hostnames), as markup and in Japanese: each sets window.__pwned if it
// ever runs.
const (
	xssScript = `<script>window.__pwned="script"</script>`
	xssImg    = `<img src=x onerror="window.__pwned='img';document.title='pwned'">`
	xssJa     = `日本語の理由「タイムアウト」`
)

// recordCrawl writes a finished crawl of alice's acme straight into the
// ledger, as a runner would have recorded it: hostile strings in its seed,
// rules, error, page URLs, failure reason and decisions, and two captures
// on www.example.com that overlap (the second started 500 ms before the
// first ended). It returns the crawl id.
func recordCrawl(t testing.TB, srv *served) string {
	t.Helper()
	ctx := context.Background()
	db := testenv.Connect(t, srv.Env.DSN)
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	rules, _ := json.Marshal([]map[string]string{{"follow": "same-origin"}, {"skip": xssImg}})
	var id string
	err := db.QueryRow(ctx, `
		INSERT INTO crawls (seeds, rules, max_depth, max_pages, per_host_delay_ms, host_parallelism, org_id, requested_by,
		                    state, stop_reason, started_at, finished_at, progressed_at, pages_discovered, pages_captured, error)
		VALUES ($1, $2, 1, 30, 1000, 4, 'acme', 'alice', 'succeeded', 'completed', $3, $4, $4, 4, 2, $5)
		RETURNING id::text`,
		[]string{"https://www.example.com/?q=" + xssScript}, rules, t0, at(9000), xssImg+" "+xssJa).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		url, host, state string
		depth            int
		reason           *string
		sub, fin         int
	}{
		{"https://www.example.com/" + xssScript, "www.example.com", "captured", 0, nil, 0, 1000},
		{"https://www.example.com/日本語/\">" + xssImg, "www.example.com", "failed", 1, ptr(xssImg + " " + xssJa), 500, 1500},
		{"https://www.example.com/private", "www.example.com", "skipped", 1, ptr("robots"), -1, -1},
		{"https://other.example/", "other.example", "captured", 1, nil, 200, 800},
	} {
		var sub, fin *time.Time
		if p.sub >= 0 {
			s, f := at(p.sub), at(p.fin)
			sub, fin = &s, &f
		}
		if _, err := db.Exec(ctx, `INSERT INTO crawl_pages (crawl_id, url, depth, host, state, skip_reason, submitted_at, finished_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, id, p.url, p.depth, p.host, p.state, p.reason, sub, fin); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec(ctx, `INSERT INTO crawl_decisions (crawl_id, depth, rule, action, hostname, links, samples)
		VALUES ($1, 0, 0, 'skip', $2, 3, $3)`, id, xssImg, []string{"https://x.example/" + xssScript, xssJa}); err != nil {
		t.Fatal(err)
	}
	return id
}

func ptr(s string) *string { return &s }

// TestCrawlScreensHostileStrings: a crawl whose URLs, reasons, rules, error
// and decisions hold markup and Japanese is shown as text on its page and
// in the list, and nothing in them runs; its politeness picture marks the
// overlap in red and says so in words. The form's live rules check shows a
// hostile pattern and link as text too.
func TestCrawlScreensHostileStrings(t *testing.T) {
	t.Parallel()
	srv := crawlServe(t)
	id := recordCrawl(t, srv)
	ctx := testenv.BrowserTab(t, 2*time.Minute)
	signInOnCrawls(t, ctx, srv, "alice", "acme")

	noScriptRan := func(where, title string) {
		t.Helper()
		if got := evalString(t, ctx, `String(window.__pwned) + "|" + document.title`); got != "undefined|"+title {
			t.Errorf("%s: window.__pwned|title = %q", where, got)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/crawls/"+id)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the recorded crawl", `document.querySelectorAll("#pages tbody tr").length === 4 && document.querySelector("svg.timeline") !== null && document.querySelector("#decisions table") !== null`)
	text := evalString(t, ctx, `document.body.innerText`)
	for _, want := range []string{
		"https://www.example.com/?q=" + xssScript, // seed
		"skip " + xssImg,                           // pinned rule
		xssImg + " " + xssJa,                       // crawl error and page reason
		"https://www.example.com/" + xssScript,     // page URL
		"https://www.example.com/日本語/\">" + xssImg, // page URL
		"rule 2: skip " + xssImg,                   // not used: rule 0 decided; checked below
	}[:5] {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q literally", want)
		}
	}
	if got := evalString(t, ctx, `document.querySelector("#decisions").textContent`); !strings.Contains(got, xssImg) || !strings.Contains(got, xssJa) || !strings.Contains(got, xssScript) {
		t.Errorf("decisions read %q", got)
	}
	noScriptRan("the crawl's page", "Crawl · capture-ledger")
	// The overlap on www.example.com is red, in the picture and in words;
	// other.example is clean.
	if got := evalString(t, ctx, `Array.prototype.map.call(document.querySelectorAll("svg.timeline g.row"), function (g) { return g.getAttribute("data-host") + ":" + g.querySelectorAll("rect.bad.overlap").length; }).join(" ")`); got != "other.example:0 www.example.com:1" {
		t.Errorf("red marks per host: %q", got)
	}
	if got := evalString(t, ctx, `document.querySelector("#politeness-verdict").textContent + " / " + document.querySelector("#politeness-summary li.error").textContent`); !strings.HasPrefix(got, "Not polite") || !strings.Contains(got, "www.example.com") || !strings.Contains(got, "Overlaps: 1;") {
		t.Errorf("politeness in words: %q", got)
	}
	// A long host name breaks rather than widen its table past the page.
	if got := evalString(t, ctx, `Array.prototype.filter.call(document.querySelectorAll(".table-wrap"), function (w) { return w.scrollWidth > w.clientWidth; }).map(function (w) { return w.parentNode.id; }).join(" ")`); got != "" {
		t.Errorf("tables wider than the page: %q", got)
	}
	shot(t, ctx, "crawl-hostile-overlap-en.png")

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/crawls")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the list", `document.querySelector("#crawls-body tr") !== null`)
	if got := evalString(t, ctx, `document.querySelector("#crawls-body tr a").textContent`); got != "https://www.example.com/?q="+xssScript {
		t.Errorf("list seed %q", got)
	}
	noScriptRan("the list", "Crawls · capture-ledger")

	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/crawls/new")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, 20*time.Second, "the form", `document.querySelector("#rules li.rule") !== null`)
	typeInto(t, ctx, "#seeds", "https://www.example.com/")
	typeInto(t, ctx, "#rules li.rule .rule-pattern", xssImg)
	typeInto(t, ctx, "#try-urls", "https://www.example.com/"+xssScript)
	waitFor(t, ctx, 20*time.Second, "the check of the hostile rule",
		`(document.querySelector("#rules li.rule .rule-check")||{}).textContent.indexOf("cannot be read") === 0 && document.querySelector("#try-check li") !== null`)
	if got := evalString(t, ctx, `document.querySelector("#rules li.rule .rule-pattern").value`); got != xssImg {
		t.Errorf("the pattern field holds %q", got)
	}
	if got := evalString(t, ctx, `document.querySelector("#try-check").textContent`); !strings.Contains(got, "%3Cscript%3Ewindow.__pwned=%22script%22%3C/script%3E — no rule matches") {
		t.Errorf("the link check shows %q", got)
	}
	noScriptRan("the form", "New crawl · capture-ledger")
}

// TestCrawlScreenCountsOfOne: a count of one reads in the singular in
// English ("1 gap", "1 host at once", "0 of 1 archive"), a count of two
// in the plural, and Japanese, which has no plural, reads the same for
// both. Two crawls recorded of one host each (two captures one gap apart,
// and a single capture), one host at once, their archives not indexed.
// The time line's axis starts at 0 in the page's language.
func TestCrawlScreenCountsOfOne(t *testing.T) {
	t.Parallel()
	s := startServe(t, nil)
	two := seedCrawl(t, s.Env, "acme", "alice", seedArchives(t, s.Env, "acme", time.Now().Add(-time.Hour), "https://crawl.test/", "https://crawl.test/about"))
	one := seedCrawl(t, s.Env, "acme", "alice", seedArchives(t, s.Env, "acme", time.Now().Add(-2*time.Hour), "https://crawl.test/single"))
	ctx := testenv.BrowserTab(t, 2*time.Minute)
	signInOnCrawls(t, ctx, s, "alice", "acme")
	read := `(document.querySelector("#crawl-facts")||{}).textContent + " | " + (document.querySelector("#politeness-summary")||{}).textContent +
		" | axis " + ((document.querySelector("svg.timeline text.axis")||{}).textContent || "")`
	for _, c := range []struct {
		id, lang string
		want     []string
	}{
		{two, "en", []string{"1 host at once", "2 captures, 1 gap (shortest", "0 of 2 archives indexed for search"}},
		{one, "en", []string{"1 host at once", "1 capture, 0 gaps", "0 of 1 archive indexed for search"}},
		{two, "ja", []string{"同時に 1 ホスト", "取得 2 件、間隔 1 件（最短", "2 件中 0 件のアーカイブを検索用に索引済み", "axis 0 秒"}},
		{one, "ja", []string{"同時に 1 ホスト", "取得 1 件、間隔 0 件", "1 件中 0 件のアーカイブを検索用に索引済み", "axis 0 秒"}},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/crawls/"+c.id+"?lang="+c.lang)); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, 20*time.Second, "the crawl's facts and politeness summary",
			`document.querySelector("#crawl-search") !== null && document.querySelector("#politeness-summary li") !== null`)
		got, pages := evalString(t, ctx, read), map[string]int{two: 2, one: 1}[c.id]
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s crawl of %d page(s) reads %q; want %q in it", c.lang, pages, got, w)
			}
		}
		shot(t, ctx, fmt.Sprintf("crawl-counts-%d-%s.png", pages, c.lang))
		if c.lang == "en" {
			for _, bad := range []string{"1 gaps", "1 captures", "1 hosts", "1 archives"} {
				if strings.Contains(got, bad) {
					t.Errorf("en crawl reads %q", bad)
				}
			}
		}
	}
}

// TestCrawlFormAtTheOrganizationsLimit: acme may run two crawls at once
// and runs two; alice submits a third from the form. The form says that
// her organization runs as many crawls as it may, how many, and links the
// oldest, in English and Japanese; nothing is started. Another
// organization still starts one.
func TestCrawlFormAtTheOrganizationsLimit(t *testing.T) {
	t.Parallel()
	srv := crawlServeWith(t, func(s *config.Settings) { s.CrawlsPerOrg = 2 })
	if _, err := authz.Grant(context.Background(), srv.Env.FGA, "submitter", "bob", "beta"); err != nil {
		t.Fatal(err)
	}
	// Thirty pages a second apart: the crawls run for the whole test.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		for i := 0; i < 30 && r.URL.Path == "/"; i++ {
			fmt.Fprintf(w, `<a href="/p%d">%d</a> `, i, i)
		}
	}))
	t.Cleanup(slow.Close)
	start := func(subject, org string) (int, map[string]any) {
		return apiAs(t, srv.URL, "POST", "/api/crawls", subject, org, fmt.Sprintf(`{"seeds":[%q],"maxDepth":1,"perHostDelayMs":1000}`, slow.URL+"/"))
	}
	var ids []string
	for range 2 {
		code, body := start("alice", "acme")
		if code != 202 {
			t.Fatalf("start: %d %v", code, body)
		}
		ids = append(ids, body["crawlId"].(string))
	}
	ctx := testenv.BrowserTab(t, 2*time.Minute)
	signInOnCrawls(t, ctx, srv, "alice", "acme")
	for _, c := range []struct{ lang, text, link, file string }{
		{"en", "Your organization already runs 2 crawls, as many as it may run at once: start this one when one of them has ended. Open the oldest", "Open the oldest", "crawl-limit-en.png"},
		{"ja", "この組織ではすでに 2 件のクロールが実行中で、同時に実行できる上限に達しています。いずれかが終わってから開始してください。 最も古いものを開く", "最も古いものを開く", "crawl-limit-ja.png"},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/crawls/new?lang="+c.lang), chromedp.WaitVisible("#seeds")); err != nil {
			t.Fatal(err)
		}
		typeInto(t, ctx, "#seeds", slow.URL+"/")
		if err := chromedp.Do(ctx, chromedp.Click("#start")); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, 20*time.Second, "the refusal in "+c.lang, `document.querySelector("#form-error").textContent !== ""`)
		if got := evalString(t, ctx, `document.querySelector("#form-error").textContent`); got != c.text {
			t.Errorf("%s: the form reads %q, want %q", c.lang, got, c.text)
		}
		if got := evalString(t, ctx, `(function () { var a = document.querySelector("#form-error a"); return a ? a.textContent + " " + a.getAttribute("href") : "no link"; })()`); got != c.link+" /crawls/"+ids[0] {
			t.Errorf("%s: the form links %q, want %q to the oldest crawl", c.lang, got, c.link+" /crawls/"+ids[0])
		}
		shot(t, ctx, c.file)
	}
	_, list := apiAs(t, srv.URL, "GET", "/api/crawls?state=running", "alice", "acme", "")
	if cs, _ := list["crawls"].([]any); len(cs) != 2 {
		t.Errorf("acme runs %d crawls after the refusals, want 2: %v", len(cs), list)
	}
	if code, body := start("bob", "beta"); code != 202 {
		t.Errorf("another organization's crawl: %d %v, want 202", code, body)
	}
}
