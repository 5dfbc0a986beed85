package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/web"
)

// The list API's answers for TestArchivesRenderWhatTheAPIGives: two pages,
// the second repeating the first's last row (a row that moved between two
// requests), with titles — hostile and Japanese — and thumbnails of each
// kind.
const (
	rowA = "00000000-0000-4000-8000-00000000000a" // a PNG thumbnail
	rowB = "00000000-0000-4000-8000-00000000000b" // an SVG "thumbnail" with a script
	rowC = "00000000-0000-4000-8000-00000000000c" // no thumbnail (404)
	rowD = "00000000-0000-4000-8000-00000000000d"
	runC = "00000000-0000-4000-8000-0000000000c1"

	hostileTitle   = `<img src=x onerror="window.__pwned=1"><script>document.title='pwned'</script>`
	hostileJaTitle = `「桜の季節」</h3><svg onload=window.__pwned=2>東京&amp;大阪`
)

func listPage(rows ...map[string]any) map[string]any {
	return map[string]any{"archives": rows, "next": nil, "truncated": false}
}

func row(id, title, url string, at time.Time) map[string]any {
	return map[string]any{"id": id, "taskId": "t-" + id, "sourceUrl": url, "title": title, "labels": []string{"<i>label</i>"}, "waczComplete": true, "capturedAt": at.Format(time.RFC3339Nano)}
}

// thumbPNG is a small PNG.
func thumbPNG(t *testing.T) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 16, 10))
	for x := range 16 {
		for y := range 10 {
			img.Set(x, y, color.RGBA{200, 40, 40, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestArchivesRenderWhatTheAPIGives: the home screen against a list API
// answering what this test decides (the console is what is tested): titles
// carrying HTML and Japanese are shown as text and run nothing; a title
// stands in for the URL, which is shown below it; a PNG thumbnail is
// shown, an SVG one (which could carry script) and a missing one give the
// placeholder; a row a later page repeats is shown once; the running
// crawl's strip links to the crawl and shows its seed as text.
func TestArchivesRenderWhatTheAPIGives(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	pngBytes := thumbPNG(t)
	var mu sync.Mutex
	var asked []string
	mux := http.NewServeMux()
	(&web.Console{Config: web.Config{Who: web.WhoNames, Host: "127.0.0.1", Features: web.Features{Crawls: true, Replay: true}}}).Register(mux)
	mux.HandleFunc("GET /api/archives", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.Header.Get("X-Capture-ledger-Subject")+"|"+r.URL.RawQuery)
		mu.Unlock()
		page := listPage(row(rowA, hostileTitle, "https://a.test/", at), row(rowB, hostileJaTitle, "https://例え.jp/", at.Add(-time.Minute)), row(rowC, "", "https://c.test/<b>x</b>", at.Add(-2*time.Minute)))
		page["next"] = map[string]string{"before": "tok", "beforeId": ""}
		if r.URL.Query().Get("before") == "tok" {
			page = listPage(row(rowC, "", "https://c.test/<b>x</b>", at.Add(-2*time.Minute)), row(rowD, "D", "https://d.test/", at.Add(-3*time.Minute)))
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(page)
	})
	mux.HandleFunc("GET /api/archives/{id}/thumbnail", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Capture-ledger-Subject") != "alice" {
			http.Error(w, "{}", http.StatusUnauthorized)
			return
		}
		switch r.PathValue("id") {
		case rowA:
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write(pngBytes)
		case rowB:
			w.Header().Set("Content-Type", "image/svg+xml")
			_, _ = w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>parent.__pwned=4</script></svg>`))
		default:
			http.NotFound(w, r)
		}
	})
	mux.HandleFunc("GET /api/crawls", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		crawls := []map[string]any{}
		if r.URL.Query().Get("state") == "running" {
			crawls = append(crawls, map[string]any{"crawlId": runC, "state": "running", "requestedBy": "alice", "orgId": "acme", "seeds": []string{`https://seed.test/<script>window.__pwned=5</script>`},
				"pagesCaptured": 3, "pagesDiscovered": 9, "waczCount": 3, "startedAt": at.Format(time.RFC3339), "finishedAt": nil, "lastJob": nil})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"crawls": crawls, "next": nil})
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx := testenv.BrowserTab(t, 2*time.Minute, chromedp.WindowSize(1280, 900))
	signIn(t, ctx, srv.URL, "alice", "acme")
	waitJS(t, ctx, "the first page", `document.querySelectorAll("#rows li.archive").length === 3 && !document.getElementById("more").hidden`, `document.getElementById("status").textContent`, 30*time.Second)
	waitJS(t, ctx, "the PNG thumbnail", `document.querySelector('li.archive[data-id="`+rowA+`"] img.thumb').src.indexOf("data:image/png;base64,") === 0`,
		`document.querySelector('li.archive[data-id="`+rowA+`"] img.thumb').src.slice(0, 60)`, 20*time.Second)
	got := evalJS[[]string](t, ctx, `(function () {
  function li(id) { return document.querySelector('li.archive[data-id="' + id + '"]'); }
  return [li("`+rowA+`").querySelector("a.name").textContent, li("`+rowA+`").querySelector(".url").textContent,
    li("`+rowB+`").querySelector("a.name").textContent, li("`+rowC+`").querySelector("a.name").textContent, String(!!li("`+rowC+`").querySelector(".url")),
    new URL(li("`+rowB+`").querySelector("img.thumb").src).pathname, new URL(li("`+rowC+`").querySelector("img.thumb").src).pathname,
    li("`+rowA+`").querySelector(".chip").textContent,
    document.querySelector("#running a").getAttribute("href"), document.querySelector("#running a").textContent, String(document.getElementById("running").hidden)];
})()`)
	want := []string{hostileTitle, "https://a.test/", hostileJaTitle, "https://c.test/<b>x</b>", "false",
		"/assets/thumb-placeholder.svg", "/assets/thumb-placeholder.svg", "<i>label</i>",
		"/crawls/" + runC, "https://seed.test/<script>window.__pwned=5</script> — 3 captured of 9 discovered", "false"}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("item %d shows %q, want %q", i, got[min(i, len(got)-1)], want[i])
		}
	}
	if img := evalJS[string](t, ctx, `document.querySelector('li.archive[data-id="`+rowA+`"] img.thumb').src`); !strings.HasSuffix(img, base64.StdEncoding.EncodeToString(pngBytes)) {
		t.Errorf("the PNG thumbnail is not the API's bytes: %.80s", img)
	}

	// The second page repeats C: shown once.
	if err := chromedp.Do(ctx, chromedp.Click("#more")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the second page", `document.getElementById("more").hidden && document.getElementById("rows").getAttribute("aria-busy") === "false"`, `document.getElementById("status").textContent`, 20*time.Second)
	if ids := evalJS[[]string](t, ctx, rowsJS); strings.Join(ids, ",") != strings.Join([]string{rowA, rowB, rowC, rowD}, ",") {
		t.Errorf("rows after more: %q", ids)
	}
	if got := evalJS[string](t, ctx, `String(window.__pwned) + "|" + document.title + "|" + document.querySelectorAll("#rows script, #rows svg, #rows i, #rows b, #rows img:not(.thumb), #running script").length`); got != "undefined|Archives · capture-ledger|0" {
		t.Errorf("injected markup ran or was made: %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(asked, " ") != "alice| alice|before=tok&beforeId=" {
		t.Errorf("the list was asked %q", asked)
	}
}

// pagedSearcher answers /api/search from two fixed pages (the second for
// its cursor) and records who asked what; the page builder is what is
// tested.
type pagedSearcher struct {
	cursor string
	mu     sync.Mutex
	asked  []string // subject|orgs|terms|cursor
}

// wellShapedCursor is a token of the shape the API lets through to the
// searcher (archive.CheckCursorToken); it opens nothing.
func wellShapedCursor(t *testing.T) string {
	t.Helper()
	for n := 1; n < 512; n++ {
		c := archive.CursorTokenPrefix + base64.RawURLEncoding.EncodeToString(make([]byte, n))
		if archive.CheckCursorToken(c) == nil {
			return c
		}
	}
	t.Fatal("no cursor shape found")
	return ""
}

const (
	hitA = "00000000-0000-4000-8000-000000000001"
	hitB = "00000000-0000-4000-8000-000000000002"
)

func (p *pagedSearcher) Search(_ context.Context, subject string, orgs []string, req search.Request) (search.Page, error) {
	var terms []string
	for _, tm := range req.Query.Terms {
		terms = append(terms, tm.Text)
	}
	p.mu.Lock()
	p.asked = append(p.asked, subject+"|"+strings.Join(orgs, ",")+"|"+strings.Join(terms, " ")+"|"+req.Cursor)
	p.mu.Unlock()
	at := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	if req.Cursor == p.cursor {
		return search.Page{Hits: []search.Hit{{ArchiveID: hitB, URL: "https://b.test/", Title: "second", TitleHighlight: "second", CapturedAt: at}}}, nil
	}
	withheld := "<b>robots</b>"
	if len(terms) > 0 && terms[0] == "桜" {
		total := 3
		return search.Page{Total: &total, TotalExact: false, Hits: []search.Hit{
			{ArchiveID: hitA, URL: "https://例え.jp/花", Title: "<script>window.__pwned=1</script>桜の季節", TitleHighlight: `&lt;script&gt;window.__pwned=1&lt;/script&gt;<mark>桜</mark>の季節`,
				Highlight: []string{`東京の<mark>桜</mark>は &lt;img src=x onerror=window.__pwned=2&gt; 三月に咲く`}, CapturedAt: at},
			{ArchiveID: hitA, URL: "https://例え.jp/花/2", Title: "", Highlight: []string{`<mark>桜</mark>並木`}, TextWithheld: &withheld, CapturedAt: at},
		}}, nil
	}
	total, next := 2, p.cursor
	return search.Page{Total: &total, TotalExact: true, Next: &next, Hits: []search.Hit{{
		ArchiveID: hitA, URL: "https://a.test/?x=<img>",
		Title:          `<img src=x onerror=alert(1)> plum`,
		TitleHighlight: `&lt;img src=x onerror=alert(1)&gt; <mark>plum</mark>`,
		Highlight:      []string{`a &amp;lt; b &#39;q&#34; <mark>plum</mark> tree <mark>&lt;b&gt;</mark>`},
		CapturedAt:     at,
	}}}, nil
}

// TestSearchInTheBrowser: the search screen asks /api/search as the
// signed-in caller with the words and filters of its address, shows the
// hits' titles and snippets with only the marks as elements (the escaped
// text stays text, decoded once), groups hits by archive, says "at least"
// for a lower-bound total, and "more" follows the cursor. In Japanese, a
// Japanese word is asked as typed and its highlight shown.
func TestSearchInTheBrowser(t *testing.T) {
	t.Parallel()
	searcher := &pagedSearcher{cursor: wellShapedCursor(t)}
	s := &api.Server{Identity: identity.Headers{}, Search: searcher,
		Pages: &web.Console{Config: web.Config{Who: web.WhoNames, Host: "127.0.0.1", Features: web.Features{Search: true}}}}
	// Signing in happens on the home screen, whose list this server
	// answers empty (it has no archives to list).
	h := s.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/archives" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"archives":[],"next":null,"truncated":false}`))
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()

	ctx := testenv.BrowserTab(t, 2*time.Minute, chromedp.WindowSize(1280, 900))
	signIn(t, ctx, srv.URL, "alice", "acme")
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/search"),
		chromedp.WaitVisible("#q"),
		chromedp.SendKeys("#q", "plum"),
		chromedp.Click(`#find button[type="submit"]`),
		chromedp.WaitVisible("#hits-more:not([disabled])"),
	); err != nil {
		t.Fatalf("search: %v", err)
	}
	got := evalJS[[]string](t, ctx, `[
		document.querySelector("#hits li.hit a.name").textContent,
		Array.from(document.querySelectorAll("#hits mark")).map(function (m) { return m.textContent; }).join("|"),
		document.querySelector("#hits .snippet").textContent,
		String(document.querySelectorAll("#hits img, #hits b").length),
		document.getElementById("found").textContent,
		location.search]`)
	titleText, marks, snippet, imgs, found, address := got[0], got[1], got[2], got[3], got[4], got[5]
	if titleText != "<img src=x onerror=alert(1)> plum" {
		t.Errorf("title shows %q", titleText)
	}
	if marks != "plum|plum|<b>" {
		t.Errorf("marks %q, want plum|plum|<b>", marks)
	}
	if snippet != `a &lt; b 'q" plum tree <b>` {
		t.Errorf("snippet shows %q", snippet)
	}
	if imgs != "0" {
		t.Errorf("%s elements made from the server's text", imgs)
	}
	if found != "2 matching pages" {
		t.Errorf("status %q", found)
	}
	if address != "?q=plum" {
		t.Errorf("the address says %q", address)
	}
	if err := chromedp.Do(ctx, chromedp.Click("#hits-more"), chromedp.WaitNotVisible("#hits-more")); err != nil {
		t.Fatalf("more: %v", err)
	}
	if count := evalJS[string](t, ctx, `String(document.querySelectorAll("#hits li.hit").length) + "|" + document.querySelectorAll("#hits section.archive-group").length`); count != "2|2" {
		t.Errorf("hits|archives after more: %s, want 2|2", count)
	}
	shot(t, ctx, "search-en.png")

	// Japanese: the switch, a Japanese word, hits of one archive in one
	// group, "at least", a withheld text said as text. (The filters' part of
	// the address is the archives screen's test; the API takes them once it
	// answers host, crawl, from and to.)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/search?lang=ja"),
		chromedp.WaitVisible("#q"),
		chromedp.SendKeys("#q", "桜"),
		chromedp.Click(`#find button[type="submit"]`),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the Japanese hits", `document.querySelectorAll("#hits li.hit").length === 2`, `document.getElementById("found").textContent`, 20*time.Second)
	got = evalJS[[]string](t, ctx, `[
		document.getElementById("found").textContent,
		String(document.querySelectorAll("#hits section.archive-group").length),
		document.querySelector("#hits li.hit a.name").textContent,
		document.querySelector("#hits .snippet").textContent,
		Array.from(document.querySelectorAll("#hits mark")).map(function (m) { return m.textContent; }).join("|"),
		document.querySelectorAll("#hits li.hit")[1].querySelector("a.name").textContent,
		document.querySelectorAll("#hits li.hit")[1].querySelector(".snippet.muted").textContent,
		String(window.__pwned) + "|" + document.querySelectorAll("#hits script, #hits img, #hits b").length,
		decodeURIComponent(location.search)]`)
	want := []string{"少なくとも 3 ページが一致しました", "1", "<script>window.__pwned=1</script>桜の季節", "東京の桜は <img src=x onerror=window.__pwned=2> 三月に咲く", "桜|桜|桜",
		"https://例え.jp/花/2", "本文はアーカイブに入っていません（<b>robots</b>）", "undefined|0", "?q=桜"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Japanese item %d: %q, want %q", i, got[i], want[i])
		}
	}
	shot(t, ctx, "search-ja.png")
	// 360 px wide: nothing wider than the screen. (Reloading the address
	// searches again: the words are in it.)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 800, chromedp.EmulateScale(1)), chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the hits at 360 px", `document.querySelectorAll("#hits li.hit").length === 2`, `document.getElementById("found").textContent`, 20*time.Second)
	if w := evalJS[int](t, ctx, `document.documentElement.scrollWidth`); w > 360 {
		t.Errorf("at 360 px the search page is %d px wide", w)
	}
	shot(t, ctx, "search-360-ja.png")
	searcher.mu.Lock()
	defer searcher.mu.Unlock()
	if got := strings.Join(searcher.asked, " "); got != "alice|acme|plum| alice|acme|plum|"+searcher.cursor+" alice|acme|桜| alice|acme|桜|" {
		t.Errorf("asked %q", got)
	}
}
