package web_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// addOwned registers an archive alice of acme asked for (its WACZ and
// report in the bucket, its tuples through the outbox serve drains).
func addOwned(t *testing.T, env *apptest.Env, url string) string {
	t.Helper()
	ctx := context.Background()
	task := uuid.NewString()
	stem := "bh/" + task + "_c0ffee00"
	keys := []string{stem + ".wacz", stem + ".result.json", stem + ".links.json"}
	for i, body := range [][]byte{[]byte("PK\x03\x04 evidence"), apptest.Manifest(task, "success", url, env.Bucket, keys[0], time.Now().Add(time.Minute)), []byte(`{"links":[]}`)} {
		if err := env.Blob.Put(ctx, env.Bucket, keys[i], "application/octet-stream", body); err != nil {
			t.Fatal(err)
		}
	}
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&archive.Adder{Store: st, Objects: env.Blob, Bucket: env.Bucket}).Add(ctx, archive.AddRequest{Keys: []string{keys[1]}, Org: "acme", SubmittedBy: "alice"})
	if err != nil || res.Registered != 1 {
		t.Fatalf("add: %+v %v", res, err)
	}
	return res.Results[0].ArchiveID
}

// call makes an API request as subject of orgs and returns the status and
// body.
func call(t *testing.T, method, u, subject, orgs, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader(body))
	req.Header.Set("X-Capture-ledger-Subject", subject)
	req.Header.Set("X-Capture-ledger-Organizations", orgs)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

const (
	hostileURL   = `https://x.test/"><img src=x onerror="window.__pwned=1;document.title='pwned'">`
	hostileJaURL = `https://例え.jp/記事?q=<script>window.__pwned=2</script>&t=桜</title><svg onload=window.__pwned=3>`
	rowsJS       = `Array.from(document.querySelectorAll("#rows li.archive")).map(function (li) { return li.getAttribute("data-id"); })`
)

// TestArchivesHomeInTheBrowser is the console's home in real Chromium on
// a whole serve: alice of acme signs in and sees acme's archives, her own
// first, each with why she sees it ("acme · yours"); hostile URLs show as
// text and run nothing; "load more" walks the whole list without a row
// twice; the filters go into the address and the API's query, and Back
// returns to the list before them; "group by crawl" puts a crawl's rows
// under its heading and link; Open asks the API and opens replay in a
// tab of its own; the keyboard alone reaches the first archive and opens
// it; at 360 px nothing overflows sideways; bob, to whom alice shared her
// archive, reads "shared with you until …".
func TestArchivesHomeInTheBrowser(t *testing.T) {
	t.Parallel()
	// A crawl's replay collection lists its first capture only.
	s := startServe(t, func(c *config.Settings) { c.ReplayCollectionLimit = 1 })
	env := s.Env
	apptest.SeedArchives(t, env, 60, func(int) string { return "acme" })
	hostile := seedArchives(t, env, "acme", time.Now().Add(-time.Hour), hostileURL, hostileJaURL)
	crawled := seedArchives(t, env, "acme", time.Now().Add(-2*time.Hour), "https://crawl.test/", "https://crawl.test/about")
	crawlID := seedCrawl(t, env, "acme", "alice", crawled)
	owned := addOwned(t, env, "https://example.com/evidence")
	total := 60 + len(hostile) + len(crawled) + 1

	// The share to bob reaches OpenFGA with serve's drain.
	var code int
	var body string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if code, body = call(t, "POST", s.URL+"/api/archives/"+owned+"/shares", "alice", "acme", `{"user":"bob","duration":"1h"}`); code == 201 || time.Now().After(deadline) {
			break
		}
	}
	if code != 201 {
		t.Fatalf("share to bob: %d %s", code, body)
	}

	ctx := testenv.BrowserTab(t, 4*time.Minute, chromedp.WindowSize(1280, 900))
	signIn(t, ctx, s.URL, "alice", "acme")
	waitJS(t, ctx, "alice's first page", `document.querySelectorAll("#rows li.archive").length >= 50`, `document.getElementById("status").textContent`, 60*time.Second)

	// Her own archive is the newest: first, with why she sees it.
	first := evalJS[[]string](t, ctx, `(function () { var li = document.querySelector("#rows li.archive"); return [li.getAttribute("data-id"), li.querySelector(".why").textContent, li.querySelector("time").getAttribute("datetime"), li.querySelector("time").textContent, li.querySelector("a.name").getAttribute("href")]; })()`)
	if first[0] != owned || !strings.HasPrefix(first[1], "acme · yours") {
		t.Errorf("first row %q, want alice's %s marked acme · yours", first, owned)
	}
	if first[3] == "" || first[3] == first[2] || !strings.Contains(first[3], "UTC") {
		t.Errorf("captured time shown %q (datetime %q): want it in the reader's locale and zone", first[3], first[2])
	}
	if !evalJS[bool](t, ctx, `!!document.querySelector('nav a[href="/search"]')`) {
		t.Error("no Search in the navigation of a serve with search")
	}
	if first[4] != "/archives/"+owned {
		t.Errorf("the row links to %q", first[4])
	}

	// Hostile URLs: shown literally, nothing ran.
	for _, h := range hostile {
		got := evalJS[string](t, ctx, `(function () { var li = document.querySelector('#rows li.archive[data-id="`+h.ID+`"]'); return li ? li.querySelector("a.name").textContent : "absent"; })()`)
		if got != h.URL {
			t.Errorf("hostile row shows %q, want %q", got, h.URL)
		}
	}
	if got := evalJS[string](t, ctx, `String(window.__pwned) + "|" + document.title + "|" + document.querySelectorAll("#rows img:not(.thumb), #rows svg, #rows script").length`); got != "undefined|Archives · capture-ledger|0" {
		t.Errorf("injected markup ran or was made: %q", got)
	}

	// Load more until the end: every visible archive once.
	for i := 0; i < 10; i++ {
		if evalJS[bool](t, ctx, `document.getElementById("more").hidden`) {
			break
		}
		if err := chromedp.Do(ctx, chromedp.Click("#more")); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, "the next page", `document.getElementById("rows").getAttribute("aria-busy") === "false"`, `document.getElementById("status").textContent`, 30*time.Second)
	}
	ids := evalJS[[]string](t, ctx, rowsJS)
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("row %s shown twice", id)
		}
		seen[id] = true
	}
	if len(ids) != total {
		t.Errorf("%d rows after loading everything, want %d", len(ids), total)
	}
	shot(t, ctx, "archives-en.png")

	// Filters: into the address and the API's query; Back undoes them.
	if err := chromedp.Do(ctx,
		chromedp.SetValue("#f-host", "e.com"),
		chromedp.SetValue("#f-from", "2026-11-01"),
		chromedp.SetValue("#f-q", "桜 <b>"),
		chromedp.Click(`#filters button[type="submit"]`),
	); err != nil {
		t.Fatal(err)
	}
	wantSearch := "?q=%E6%A1%9C+%3Cb%3E&host=e.com&from=2026-11-01"
	waitJS(t, ctx, "the filters in the address", `location.search === "`+wantSearch+`"`, `location.search`, 10*time.Second)
	waitJS(t, ctx, "the filtered request", `performance.getEntriesByType("resource").some(function (e) { return e.name.indexOf("/api/archives`+wantSearch+`&why=1") > 0; })`,
		`performance.getEntriesByType("resource").map(function (e) { return e.name; }).join(" ")`, 10*time.Second)
	before := evalJS[int](t, ctx, `performance.getEntriesByType("resource").filter(function (e) { return /\/api\/archives\?why=1$/.test(e.name); }).length`)
	if err := chromedp.Do(ctx, chromedp.NavigateBack()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "Back to the unfiltered list", `location.search === "" && document.getElementById("f-host").value === "" && document.getElementById("f-q").value === "" && performance.getEntriesByType("resource").filter(function (e) { return /\/api\/archives\?why=1$/.test(e.name); }).length > `+itoa(before),
		`location.search + " " + document.getElementById("f-host").value`, 10*time.Second)

	// Group by crawl: the crawl's two rows under its heading and link.
	if err := chromedp.Do(ctx, chromedp.Click("#f-group")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the crawl's group", `location.search === "?group=crawl" && document.querySelectorAll('section.group[data-crawl="`+crawlID+`"] li.archive').length === 2`,
		`location.search + " " + document.querySelectorAll("section.group").length`, 20*time.Second)
	group := evalJS[[]string](t, ctx, `(function () { var g = document.querySelector('section.group[data-crawl="`+crawlID+`"]'); return [g.querySelector("h2 a").getAttribute("href"), Array.from(g.querySelectorAll("li.archive")).map(function (li) { return li.getAttribute("data-id"); }).sort().join(","), String(document.querySelectorAll("section.group").length)]; })()`)
	wantGroup := []string{crawled[0].ID, crawled[1].ID}
	if wantGroup[0] > wantGroup[1] {
		wantGroup[0], wantGroup[1] = wantGroup[1], wantGroup[0]
	}
	if group[0] != "/crawls/"+crawlID || group[1] != strings.Join(wantGroup, ",") || group[2] != "2" {
		t.Errorf("crawl group %q, want link /crawls/%s, rows %v, and two groups (the crawl, the rest)", group, crawlID, wantGroup)
	}
	shot(t, ctx, "archives-grouped-en.png")

	// Replay this crawl, from a row: its collection lists the crawl's
	// first capture only (the limit is 1 here), and the row says so.
	n := len(replayTabs(t, ctx))
	if err := chromedp.Do(ctx, chromedp.Click(`li.archive[data-id="`+crawled[0].ID+`"] button.crawl`)); err != nil {
		t.Fatal(err)
	}
	waitReplayTab(t, ctx, n, "Replay this crawl")
	waitJS(t, ctx, "the collection's limit on the row", `document.querySelector('li.archive[data-id="`+crawled[0].ID+`"] .note').textContent === "This crawl has more than one capture, and its collection holds only the first. Download as one WACZ holds every one."`,
		`document.querySelector('li.archive[data-id="`+crawled[0].ID+`"] .note').textContent`, 20*time.Second)
	// Said in the text's colour: it is not a failure.
	if c := evalJS[string](t, ctx, `getComputedStyle(document.querySelector('li.archive[data-id="`+crawled[0].ID+`"] .note')).color`); c != "rgb(31, 35, 40)" {
		t.Errorf("the collection's limit on the row is coloured %s, want the text's (not the failures' red)", c)
	}
	shot(t, ctx, "archives-replay-limit-en.png")

	// Open: the API's link, in a tab of its own on a replay origin.
	n = len(replayTabs(t, ctx))
	if err := chromedp.Do(ctx, chromedp.Click(`li.archive[data-id="`+owned+`"] button.open`)); err != nil {
		t.Fatal(err)
	}
	waitReplayTab(t, ctx, n, "Open")

	// The keyboard alone: Tab to the first archive's Open, Enter.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the list again", `document.querySelectorAll("#rows li.archive").length >= 50`, `document.getElementById("status").textContent`, 30*time.Second)
	reached := false
	for i := 0; i < 40 && !reached; i++ {
		if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Tab)); err != nil {
			t.Fatal(err)
		}
		reached = evalJS[bool](t, ctx, `document.activeElement === document.querySelector("#rows li.archive button.open")`)
	}
	if !reached {
		t.Fatalf("Tab never reached the first archive; focus is on %s", evalJS[string](t, ctx, `document.activeElement.outerHTML.slice(0, 120)`))
	}
	n = len(replayTabs(t, ctx))
	if err := chromedp.Do(ctx, chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	waitReplayTab(t, ctx, n, "Enter on the first archive")

	// 360 px wide: nothing wider than the screen.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(360, 800, chromedp.EmulateScale(1)), chromedp.Navigate(s.URL+"/?group=crawl")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the list at 360 px", `document.querySelectorAll("#rows li.archive").length >= 50`, `document.getElementById("status").textContent`, 30*time.Second)
	if w := evalJS[int](t, ctx, `document.documentElement.scrollWidth`); w > 360 {
		t.Errorf("at 360 px the page is %d px wide", w)
	}
	shot(t, ctx, "archives-360-en.png")
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// In Japanese (the switch), grouped.
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+"/?lang=ja")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the Japanese list", `document.documentElement.lang === "ja" && document.querySelectorAll("#rows li.archive").length >= 50`, `document.getElementById("status").textContent`, 30*time.Second)
	if got := evalJS[string](t, ctx, `document.querySelector("#rows li.archive .why").textContent + "|" + document.querySelector("#rows li.archive button.open").textContent`); !strings.HasPrefix(got, "acme のメンバー · 自分の取得|開く") {
		t.Errorf("the Japanese row reads %q", got)
	}
	shot(t, ctx, "archives-ja.png")

	// bob sees alice's archive because she shared it.
	bob := testenv.BrowserTab(t, 2*time.Minute, chromedp.WindowSize(1280, 900))
	signIn(t, bob, s.URL, "bob", "partner")
	waitJS(t, bob, "bob's shared row", `(function () { var w = document.querySelector('#rows li.archive[data-id="`+owned+`"] .why'); return w && w.textContent.indexOf("shared with you until ") === 0; })()`,
		`document.getElementById("status").textContent + " " + document.querySelectorAll("#rows li.archive").length`, 30*time.Second)
	if got := evalJS[[]string](t, bob, rowsJS); len(got) != 1 {
		t.Errorf("bob sees %d archives, want the one shared", len(got))
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }
