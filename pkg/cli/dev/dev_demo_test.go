package dev_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	crawlcmd "github.com/capture-ledger/ledgerctl/pkg/cli/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestDevDemo: `dev demo` serves the bundled site, grants the dev user,
// starts the crawl with mixed rules and runs serve, whose embedded runner
// (browser engine, as `make run` has it) crawls the site to its end. The
// console the banner names shows the crawl running (the strip of running
// crawls, linking to the crawl) and then, in the same tab without a reload,
// its archives with their titles and the pictures the capturer took; the
// list API gives them to the dev user, and the crawl's decisions explain
// what was left out.
func TestDevDemo(t *testing.T) {
	t.Parallel()
	dir, env := clitest.DeployedStack(t)
	env["CAPTURE_LEDGER_CAPTURE_ENGINE"] = "browser"
	env["CAPTURE_LEDGER_CHROMIUM_PATH"] = testenv.Chromium(t)
	env["CAPTURE_LEDGER_API_HOST"], env["CAPTURE_LEDGER_API_PORT"] = "127.0.0.1", fmt.Sprint(clitest.FreePort(t))
	env["CAPTURE_LEDGER_DEV_IDENTITY"] = "1"
	_, viewer := needReplayBrowser(t)
	env["CAPTURE_LEDGER_REPLAY_VIEWER_DIR"] = viewer

	// Loopback stays refused unless allowed.
	if _, errs, code := clitest.Run(t, dir, env, "dev", "demo", "--as", "alice"); code != cmdutil.ExitUsage || !strings.Contains(errs, "CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE=1") {
		t.Fatalf("without ALLOW_PRIVATE: exit %d %s", code, errs)
	}
	env["CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE"] = "1"

	// The browser a newcomer opens the console in, started before the
	// demo so it is ready when the banner names the console.
	home := testenv.BrowserTab(t, 5*time.Minute, chromedp.WindowSize(1280, 900))
	if err := chromedp.Do(home, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &testenv.SyncBuffer{}
	done := make(chan int, 1)
	go func() {
		_, _, code := clitest.RunCtx(ctx, t, dir, env, func(f *cmdutil.Factory) { f.Streams.Out, f.Streams.Err = out, io.Discard }, "dev", "demo", "--as", "alice")
		done <- code
	}()

	watch := regexp.MustCompile(`ledgerctl crawl status ([0-9a-f-]{36}) --as alice --org demo --watch`)
	consoleLine := regexp.MustCompile(`Console +(http://127\.0\.0\.1:\d+/)`)
	var id, base string
	for deadline := time.Now().Add(60 * time.Second); id == ""; {
		if m := watch.FindStringSubmatch(out.String()); m != nil {
			id = m[1]
			if p := consoleLine.FindStringSubmatch(out.String()); p != nil {
				base = p[1]
			}
		}
		select {
		case code := <-done:
			t.Fatalf("dev demo exited %d before printing the watch command: %s", code, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no watch command printed: %s", out)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if base == "" || !strings.Contains(out.String(), "alice may now start crawls for demo") {
		t.Fatalf("the demo's summary: %s", out)
	}
	if n := len(regexp.MustCompile(`https?://127\.0\.0\.1:\d+/`).FindAllString(out.String(), -1)); n != 1 {
		t.Errorf("the banner names %d addresses of serve, want one:\n%s", n, out)
	}
	demoConsoleWhileRunning(t, home, base, id)

	f := cmdutil.NewFactory(cmdutil.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	f.Dir = dir
	f.Env = func(name string) (string, bool) { v, ok := env[name]; return v, ok }
	t.Cleanup(f.Close)
	svc, err := crawlcmd.Service(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	alice := crawl.Caller{Subject: "alice", Orgs: []string{"demo"}}
	var v crawl.CrawlView
	for deadline := time.Now().Add(2 * time.Minute); ; {
		if v, err = svc.Get(context.Background(), alice, id); err != nil {
			t.Fatal(err)
		}
		if v.State != crawl.StateRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the demo crawl still runs after two minutes: %+v", v)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// www: /, /ja, /about (not /private/notes: robots.txt; not /login:
	// nofollow); blog: its index and /2026/hello (found from /ja), not
	// /2026/kyoto (only linked from the blog, whose links are not
	// followed); ads: nothing (skip rule).
	if v.State != crawl.StateSucceeded || v.PagesCaptured != 5 {
		t.Errorf("demo crawl: %s with %d captured, want succeeded with 5", v.State, v.PagesCaptured)
	}
	// The banner comes again once the crawl ends, below the log lines
	// that pushed it up: the outcome, then the console and watch lines.
	ended := regexp.MustCompile(`Crawl +` + regexp.QuoteMeta(id) + ` succeeded: 5 page\(s\) captured of \d+ discovered\nConsole +` + regexp.QuoteMeta(base) + ` [^\n]*\nWatch +[^\n]* crawl status ` + regexp.QuoteMeta(id) + ` --as alice --org demo --watch\n`)
	for deadline := time.Now().Add(30 * time.Second); !ended.MatchString(out.String()); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the banner was not printed again when the crawl ended:\n%s", out)
		}
	}

	// The console's list API, as the newcomer typing alice / demo: the archives
	// appear once serve's drain has written their tuples to OpenFGA.
	var got []string
	for deadline := time.Now().Add(time.Minute); ; {
		got = demoArchivePaths(t, base)
		if len(got) >= 5 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if want := []string{"/", "/", "/2026/hello", "/about", "/ja"}; !slices.Equal(got, want) {
		t.Errorf("archives' paths %q, want %q", got, want)
	}

	// The console opened while the crawl ran now shows its archives,
	// without a reload (it asks again when the running crawl changes).
	rows := ""
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		rows, _ = chromedp.Run(home, chromedp.Evaluate[string](`String(document.querySelectorAll("#rows li.archive").length) + "|" + document.getElementById("running").hidden`))
		if rows == "5|true" || time.Now().After(deadline) {
			break
		}
	}
	if rows != "5|true" {
		t.Errorf("the console opened during the crawl shows rows|strip hidden %q, want the 5 archives and no running crawl", rows)
	}
	// Each row shows its page's title and the thumbnail the browser
	// engine wrote into the WACZ (read back through the API).
	shown := ""
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		shown, _ = chromedp.Run(home, chromedp.Evaluate[string](`String(document.querySelectorAll("#rows li.archive img.thumb.loaded").length) + "|" + Array.prototype.map.call(document.querySelectorAll("#rows li.archive .title"), function (e) { return e.textContent; }).join(",")`))
		if strings.HasPrefix(shown, "5|") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.HasPrefix(shown, "5|") || !strings.Contains(shown, "Demo Works") {
		t.Errorf("the console's rows: %q, want 5 thumbnails and the pages' titles", shown)
	}
	screenshot(t, home, "console-demo-archives-en.png")

	demoReplaysAsOneCollection(t, base, id, out.String())

	dec, err := svc.Decisions(context.Background(), alice, id)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(dec)
	for _, want := range []string{`"robots":[{`, "/private/notes", `"action":"skip"`, site(out.String(), "ads")} {
		if !strings.Contains(string(b), want) {
			t.Errorf("decisions do not mention %q: %s", want, b)
		}
	}

	cancel()
	if code := <-done; code != cmdutil.ExitOK {
		t.Errorf("dev demo exited %d after Ctrl-C", code)
	}
}

// demoArchivePaths is the sorted paths of the archives GET /api/archives
// lists to alice of demo.
func demoArchivePaths(t *testing.T, base string) []string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"api/archives", nil)
	req.Header.Set("X-Capture-ledger-Subject", "alice")
	req.Header.Set("X-Capture-ledger-Organizations", "demo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Archives []struct {
			SourceURL string `json:"sourceUrl"`
		} `json:"archives"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/archives: %d %v", resp.StatusCode, err)
	}
	var got []string
	for _, a := range list.Archives {
		u, err := url.Parse(a.SourceURL)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, u.Path)
	}
	slices.Sort(got)
	return got
}

// site is the address the demo's summary gives the named host.
func site(summary, host string) string {
	m := regexp.MustCompile(host + ` +(http://` + host + `\.demo\.localhost:\d+/)`).FindStringSubmatch(summary)
	if m == nil {
		return "no " + host + " address in the summary"
	}
	return m[1]
}

// needReplayBrowser returns Chromium's path and the folder of
// ReplayWeb.page's files, or stops the test (testenv: fatally under CI).
func needReplayBrowser(t *testing.T) (chromium, viewer string) {
	t.Helper()
	return testenv.Chromium(t), testenv.ReplayViewer(t)
}

// replayedFramesJS runs a function on each archived page the viewer shows.
const replayedFramesJS = testenv.ReplayedFramesJS

// demoConsoleWhileRunning opens the console at base as alice of demo, as
// a newcomer does on reading the banner, and checks it shows the crawl
// running: the strip names it and links to its page. (Only if the crawl
// ended before the page could ask is there nothing to check; the test says
// so.)
func demoConsoleWhileRunning(t *testing.T, tab context.Context, base, crawlID string) {
	t.Helper()
	if err := chromedp.Do(tab,
		chromedp.Navigate(base),
		chromedp.WaitVisible("#subject"),
		chromedp.SendKeys("#subject", "alice"),
		chromedp.SendKeys("#orgs", "demo"),
		chromedp.Click("#who button"),
	); err != nil {
		t.Fatalf("the console as alice of demo: %v", err)
	}
	link := `#running:not([hidden]) a[href="/crawls/` + crawlID + `"]`
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		shown, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`!!document.querySelector('`+link+`')`))
		if shown {
			screenshot(t, tab, "console-demo-running-en.png")
			return
		}
		if demoCrawlState(t, base, crawlID) != crawl.StateRunning {
			t.Logf("the demo crawl ended before the console could show it running")
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the console never showed the running crawl %s", crawlID)
		}
	}
}

// demoCrawlState is the crawl's state as GET /api/crawls/{id} tells alice.
func demoCrawlState(t *testing.T, base, id string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"api/crawls/"+id, nil)
	req.Header.Set("X-Capture-ledger-Subject", "alice")
	req.Header.Set("X-Capture-ledger-Organizations", "demo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct{ State string }
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return v.State
}

// demoReplaysAsOneCollection: in Chromium, alice opens the console, asks to
// replay the demo crawl, and the collection opens on a replay origin of
// its own; inside the replayed home page she clicks "About this site",
// and the archived About page (another archive of the crawl) appears.
// Then a share of one archive to bob gives bob a collection of that one,
// and someone with nothing gets the 404 of an absent crawl.
func demoReplaysAsOneCollection(t *testing.T, base, crawlID, summary string) {
	t.Helper()
	chromium, _ := needReplayBrowser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.UserDataDir(t.TempDir()), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelTime := context.WithTimeout(alloc, 4*time.Minute)
	defer cancelTime()
	console, cancelTab := chromedp.NewContext(bctx)
	defer cancelTab()
	crawlButton := `button.crawl[data-crawl="` + crawlID + `"]`
	// signIn types the names into the console, as a newcomer does, until
	// the crawl's rows show.
	signIn := func(tab context.Context) error {
		return chromedp.Do(tab,
			chromedp.Navigate(base),
			chromedp.WaitVisible("#subject"),
			chromedp.SendKeys("#subject", "alice"),
			chromedp.SendKeys("#orgs", "demo"),
			chromedp.Click("#who button"),
			chromedp.WaitVisible(crawlButton),
		)
	}
	err := signIn(console)
	if err == nil {
		err = chromedp.Do(console, chromedp.Click(crawlButton))
	}
	if err != nil {
		t.Fatalf("the console's replay-this-crawl button: %v", err)
	}
	var tab context.Context
	for deadline := time.Now().Add(30 * time.Second); tab == nil; time.Sleep(200 * time.Millisecond) {
		targets, err := chromedp.Targets(console)
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range targets {
			if ti.Type == "page" && strings.Contains(ti.URL, ".replay.localhost:") && strings.Contains(ti.URL, "collection.json") {
				c, cancel := chromedp.NewContext(console, chromedp.WithTargetID(ti.TargetID))
				defer cancel()
				tab = c
			}
		}
		if tab == nil && time.Now().After(deadline) {
			t.Fatal("no collection tab opened")
		}
	}
	viewerURL, err := chromedp.Run(tab, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	// Open the collection at the site's home page, as a link naming it
	// would, and wait until it shows.
	home := site(summary, "www")
	wait := func(want string, d time.Duration) (string, error) {
		shown := ""
		for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
			s, err := chromedp.Run(tab, chromedp.Evaluate[string](replayedFramesJS+`(function (d) { return d.body.innerText; })`))
			if err == nil {
				shown = s
			}
			if strings.Contains(shown, want) {
				return shown, nil
			}
		}
		return shown, fmt.Errorf("%q never shown", want)
	}
	homeText := "About this site"
	if err := chromedp.Do(tab, chromedp.Navigate(viewerURL+"&url="+url.QueryEscape(home))); err != nil {
		t.Fatal(err)
	}
	shown, err := wait(homeText, 45*time.Second)
	if err != nil {
		// ReplayWeb.page installs its worker on each new origin; under
		// load its first frame can miss the activation. Reload once.
		_ = chromedp.Do(tab, chromedp.Reload())
		shown, err = wait(homeText, 60*time.Second)
	}
	if err != nil {
		t.Fatalf("the collection never showed the home page: %v; shown: %q", err, shown)
	}
	// Click the link inside the replayed page, as a person does.
	clicked, err := chromedp.Run(tab, chromedp.Evaluate[string](replayedFramesJS+`(function (d) {
  var as = d.querySelectorAll("a");
  for (var i = 0; i < as.length; i++) { if (as[i].textContent === "About this site") { as[i].click(); return "clicked"; } }
  return "";
})`))
	if err != nil || !strings.Contains(clicked, "clicked") {
		t.Fatalf("no About link in the replayed home page: %q %v", clicked, err)
	}
	if shown, err := wait("Demo Works makes nothing at all", 60*time.Second); err != nil {
		t.Fatalf("the archived About page did not appear after the click: %v; shown: %q", err, shown)
	}
	screenshot(t, tab, "replay-collection-about.png")
	screenshot(t, console, "console-replay-crawl-en.png")
	if dir := os.Getenv("LEDGER_TEST_SCREENSHOTS"); dir != "" {
		// The same console in a browser asking for Japanese.
		jaAlloc, cancelJA := chromedp.NewExecAllocator(context.Background(), append(opts[:len(opts):len(opts)], chromedp.UserDataDir(t.TempDir()), chromedp.Flag("accept-lang", "ja"), chromedp.Flag("lang", "ja"))...)
		defer cancelJA()
		ja, cancel := chromedp.NewContext(jaAlloc)
		defer cancel()
		if err := signIn(ja); err != nil {
			t.Errorf("the console in Japanese: %v", err)
		}
		screenshot(t, ja, "console-replay-crawl-ja.png")
	}

	// A share of the About archive to bob: bob's collection of the crawl
	// is that one archive; eve, with nothing, gets what an absent crawl
	// gets.
	var about string
	req, _ := http.NewRequest(http.MethodGet, base+"api/archives", nil)
	req.Header.Set("X-Capture-ledger-Subject", "alice")
	req.Header.Set("X-Capture-ledger-Organizations", "demo")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Archives []struct{ ID, SourceURL, CrawlID string } `json:"archives"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&list)
	resp.Body.Close()
	for _, a := range list.Archives {
		if strings.HasSuffix(a.SourceURL, "/about") && a.CrawlID == crawlID {
			about = a.ID
		}
	}
	if about == "" {
		t.Fatalf("no About archive of the crawl in alice's list: %+v", list)
	}
	post := func(who, path, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+strings.TrimPrefix(path, "/"), strings.NewReader(body))
		req.Header.Set("X-Capture-ledger-Subject", who)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	req, _ = http.NewRequest(http.MethodPost, base+"api/archives/"+about+"/shares", strings.NewReader(`{"user":"bob","duration":"1h"}`))
	req.Header.Set("X-Capture-ledger-Subject", "alice")
	req.Header.Set("X-Capture-ledger-Organizations", "demo")
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("share the About archive to bob: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	var bob struct {
		URL      string `json:"url"`
		Archives int    `json:"archives"`
	}
	var status int
	var body string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(300 * time.Millisecond) {
		// The share reaches OpenFGA with serve's next drain.
		if status, body = post("bob", "/api/crawls/"+crawlID+"/replay", ""); status == http.StatusOK || time.Now().After(deadline) {
			break
		}
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &bob) != nil || bob.Archives != 1 {
		t.Fatalf("bob's collection of the crawl: %d %s", status, body)
	}
	u, _ := url.Parse(bob.URL)
	src, _ := url.Parse(u.Query().Get("source"))
	listing, _ := http.NewRequest(http.MethodGet, base+strings.TrimPrefix(src.RequestURI(), "/"), nil)
	listing.Host = src.Host
	resp, err = http.DefaultClient.Do(listing)
	if err != nil {
		t.Fatal(err)
	}
	var coll struct {
		Resources []struct{ Name, Path string } `json:"resources"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&coll)
	resp.Body.Close()
	// The listing reads the archive by its id, and names it by its
	// object's name (<taskId>_<crawlId>.wacz), which a crawl's revisit
	// records name their original's WACZ by.
	if resp.StatusCode != http.StatusOK || len(coll.Resources) != 1 || !strings.HasPrefix(coll.Resources[0].Path, "/wacz/"+about+".wacz?t=") ||
		!strings.HasSuffix(coll.Resources[0].Name, "_"+crawlID+".wacz") {
		t.Errorf("bob's collection lists %d %+v, want the About archive alone", resp.StatusCode, coll.Resources)
	}
	eveStatus, eveBody := post("eve", "/api/crawls/"+crawlID+"/replay", "")
	absentStatus, absentBody := post("eve", "/api/crawls/"+uuid.NewString()+"/replay", "")
	if eveStatus != http.StatusNotFound || eveStatus != absentStatus || eveBody != absentBody {
		t.Errorf("eve: %d %s; an absent crawl: %d %s", eveStatus, eveBody, absentStatus, absentBody)
	}
}

// screenshot saves what tab shows as name under LEDGER_TEST_SCREENSHOTS,
// when it is set (to look at; nothing compares them).
func screenshot(t *testing.T, tab context.Context, name string) {
	dir := os.Getenv("LEDGER_TEST_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(tab, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), png, 0o644)
	}
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
	}
}
