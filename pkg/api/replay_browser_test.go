package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// The pages the test archive holds, and text only their replay can show.
const (
	archivedPage  = "https://www.example.test/garden"
	archivedText  = "The plum tree in the archived garden flowers in February"
	archivedPage2 = "https://www.example.test/orchard"
	archivedText2 = "The archived orchard has eleven pear trees"
)

// needBrowser returns Chromium's path and the folder of ReplayWeb.page's
// files, or stops the test (testenv: fatally under CI).
func needBrowser(t *testing.T) (chromium, viewer string) {
	t.Helper()
	return testenv.Chromium(t), testenv.ReplayViewer(t)
}

// needChromium returns Chromium's path, or stops the test.
func needChromium(t *testing.T) string { return testenv.Chromium(t) }

// browserTab is a headless Chromium tab for the test (path is
// testenv.Chromium's) whose context ends after timeout.
func browserTab(t *testing.T, _ string, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	return testenv.BrowserTab(t, timeout, extra...)
}

// gardenWACZ is a WACZ of two pages as the built-in capturer records them
// (pkg/wacz.Write, the writer both capture engines use). Half a megabyte
// of other content lies between their records, so the viewer reads the
// second page's record only when it shows that page.
func gardenWACZ(t *testing.T) []byte {
	t.Helper()
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	page := func(title, text string) []byte {
		return []byte(`<!doctype html><html><head><meta charset="utf-8"><title>` + title + `</title></head>` +
			`<body><h1>` + title + `</h1><p id="text">` + text + `</p></body></html>`)
	}
	filler := make([]byte, 512<<10)
	_, _ = rand.Read(filler)
	ex := func(u, typ string, d time.Duration, body []byte) wacz.Exchange {
		return wacz.Exchange{URL: u, Date: at.Add(d), Status: 200, Body: body,
			RequestHeader: http.Header{"User-Agent": {"ledgerctl-test"}}, Header: http.Header{"Content-Type": {typ}}}
	}
	c := wacz.Capture{
		Created:  at.Add(2 * time.Second),
		Software: "ledgerctl test",
		Exchanges: []wacz.Exchange{
			ex(archivedPage, "text/html; charset=utf-8", 0, page("The garden", archivedText)),
			ex("https://www.example.test/filler.bin", "application/octet-stream", time.Second, filler),
			ex(archivedPage2, "text/html; charset=utf-8", -time.Minute, page("The orchard", archivedText2)),
		},
		Pages: []wacz.Page{
			{URL: archivedPage, Date: at, Title: "The garden", Text: "The garden\n" + archivedText},
			// Earlier: ReplayWeb.page lists pages newest first, and opens the
			// first it lists.
			{URL: archivedPage2, Date: at.Add(-time.Minute), Title: "The orchard", Text: "The orchard\n" + archivedText2},
		},
	}
	var buf bytes.Buffer
	if _, err := wacz.Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// waczReads records the status of every archive read the server answers.
type waczReads struct {
	mu     sync.Mutex
	status []int
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *waczReads) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, ".wacz") || r.Method == http.MethodOptions {
			h.ServeHTTP(rw, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: rw, status: http.StatusOK}
		defer func() {
			w.mu.Lock()
			w.status = append(w.status, rec.status)
			w.mu.Unlock()
		}()
		h.ServeHTTP(rec, r)
	})
}

// since is the statuses from the n-th read on.
func (w *waczReads) since(n int) []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.status[min(n, len(w.status)):]...)
}

func (w *waczReads) count() int { w.mu.Lock(); defer w.mu.Unlock(); return len(w.status) }

// replayedTextJS reads the text of every archived page ReplayWeb.page shows
// in the tab.
const replayedTextJS = testenv.ReplayedFramesJS + `(function (d) { return d.body.innerText; })`

// poll runs check every 250 ms until it reports done or ctx ends; the
// deadline only bounds a failing test, it asserts no speed.
func poll(ctx context.Context, check func() (bool, error)) error {
	for {
		done, err := check()
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// TestReplayInTheBrowser: in headless Chromium, a member of acme opens the
// console, clicks the archive, and its archived text appears inside
// ReplayWeb.page served on the session's own origin under
// replay.localhost, read range by range there;
// an outsider's console lists nothing; once acme loses the archive, the
// open viewer's next reads are 404s and the page is no longer shown.
func TestReplayInTheBrowser(t *testing.T) {
	// Not parallel: the package's browser tests take turns on two cores.
	chromium, viewer := needBrowser(t)
	reads := &waczReads{}
	f := newReplayFixture(t, replayOptions{content: gardenWACZ(t), sourceURL: archivedPage, viewerDir: viewer, wrap: reads.wrap})

	console := browserTab(t, chromium, 3*time.Minute, chromedp.Flag("disable-quic", true), chromedp.WindowSize(1280, 900))

	// The member's console lists both archives; the first row is the WACZ.
	if err := chromedp.Do(console,
		chromedp.Navigate(f.srv.URL+"/"),
		chromedp.WaitVisible("#subject"),
		chromedp.SendKeys("#subject", "alice"),
		chromedp.SendKeys("#orgs", "acme"),
		chromedp.Click("#who button"),
		chromedp.WaitVisible(`li.archive[data-id="`+f.ids[0]+`"] button.open`),
	); err != nil {
		t.Fatalf("console as alice: %v", err)
	}
	if err := chromedp.Do(console, chromedp.Click(`li.archive[data-id="`+f.ids[0]+`"] button.open`)); err != nil {
		t.Fatal(err)
	}
	// The click asks the API for a link and opens it in a new tab.
	var tab context.Context
	err := poll(console, func() (bool, error) {
		targets, err := chromedp.Targets(console)
		if err != nil {
			return false, err
		}
		for _, ti := range targets {
			if ti.Type == "page" && strings.HasPrefix(ti.URL, "http://") && strings.Contains(ti.URL, ".replay.localhost:") && strings.Contains(ti.URL, "/?source=") {
				var c context.CancelFunc
				tab, c = chromedp.NewContext(console, chromedp.WithTargetID(ti.TargetID))
				t.Cleanup(c)
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		note, _ := chromedp.Run(console, chromedp.Evaluate[string](`Array.from(document.querySelectorAll(".note")).map(function (n) { return n.textContent; }).join("|")`))
		t.Fatalf("no viewer tab opened (%v); the row says %q", err, note)
	}
	text := ""
	shown := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(console, d)
		defer cancel()
		return poll(ctx, func() (bool, error) {
			s, err := chromedp.Run(tab, chromedp.Evaluate[string](replayedTextJS))
			text = s
			return err == nil && strings.Contains(s, archivedText), nil
		})
	}
	// ReplayWeb.page installs its service worker on each new origin; under
	// load its first frame can miss the worker's activation. A person
	// reloads; so does the test, once.
	if err = shown(45 * time.Second); err != nil {
		_ = chromedp.Do(tab, chromedp.Reload())
		err = shown(60 * time.Second)
	}
	if err != nil {
		t.Fatalf("the archived text never appeared in ReplayWeb.page (%v); shown: %q", err, text)
	}
	granted := reads.since(0)
	partial := 0
	for _, s := range granted {
		if s == http.StatusPartialContent {
			partial++
		}
		if s != http.StatusOK && s != http.StatusPartialContent {
			t.Errorf("a granted read answered %d (all: %v)", s, granted)
		}
	}
	if partial == 0 {
		t.Errorf("the viewer read the archive without a range request: %v", granted)
	}
	t.Logf("alice: %d archive reads to show the page (%d ranges)", len(granted), partial)

	// An outsider's console (same browser, another name) shows no archive.
	if err := chromedp.Do(console,
		chromedp.SetValue("#subject", "bob"),
		chromedp.SetValue("#orgs", "globex"),
		chromedp.Click("#who button"),
	); err != nil {
		t.Fatal(err)
	}
	err = poll(console, func() (bool, error) {
		s, err := chromedp.Run(console, chromedp.Evaluate[string](`document.getElementById("status").textContent + "|" + document.querySelectorAll("#rows li.archive").length`))
		return err == nil && s == "No archives you can see|0", err
	})
	if err != nil {
		t.Errorf("bob's console: %v", err)
	}

	// acme loses the archive. Once the check cache has let go of the
	// answer, the open viewer's next reads are refused: asked for the
	// archive's second page, whose record it has not read, ReplayWeb.page
	// reads the archive again and gets 404s. (Reloading the first page
	// reads nothing: the viewer keeps what it has read.)
	viewerURL, err := chromedp.Run(tab, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if err := f.env.FGA.Write(context.Background(), nil, []authz.Tuple{{User: "organization:acme", Relation: "parent", Object: "capture_job:" + f.tasks[0]}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(replay.DefaultCheckCache + 500*time.Millisecond)
	before := reads.count()
	second, err := url.Parse(viewerURL)
	if err != nil {
		t.Fatal(err)
	}
	q := second.Query()
	if q.Get("url") != archivedPage {
		t.Errorf("the console's link opens %q, not the row's page %s", q.Get("url"), archivedPage)
	}
	q.Set("url", archivedPage2)
	second.RawQuery = q.Encode()
	if err := chromedp.Do(tab, chromedp.Navigate(second.String())); err != nil && !errors.Is(err, context.Canceled) {
		t.Logf("navigate: %v", err)
	}
	err = poll(console, func() (bool, error) { return len(reads.since(before)) > 0, nil })
	if err != nil {
		t.Fatalf("the viewer read nothing for the second page: %v", err)
	}
	after := reads.since(before)
	for _, s := range after {
		if s != http.StatusNotFound {
			t.Errorf("a read after the revocation answered %d (all: %v)", s, after)
		}
	}
	if s, err := chromedp.Run(tab, chromedp.Evaluate[string](replayedTextJS)); err == nil && strings.Contains(s, archivedText2) {
		t.Errorf("the second page is shown after the revocation")
	}
	// The viewer page's own read with its link, the way ReplayWeb.page
	// makes them, is refused as well.
	status, err := chromedp.Run(tab, chromedp.Evaluate[int](`(function () {
  var src = new URLSearchParams(location.search).get("source");
  return fetch(src, { headers: { Range: "bytes=0-99" }, cache: "no-store" }).then(function (r) { return r.status; });
})()`, chromedp.EvalAwaitPromise))
	if err != nil || status != http.StatusNotFound {
		t.Errorf("a range read from the viewer page: %d %v", status, err)
	}
	t.Logf("after the revocation: %d reads by the viewer, all 404", len(after))
}
