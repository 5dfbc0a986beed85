package web_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// Hostile strings the page must show as text: each would set
// window.__pwned if it ran as markup.
const (
	xssURLQuery = `<img/src=x/onerror=window.__pwned=1>「取得」`
	xssUser     = `<img/src=x/onerror=window.__pwned=2>`
	xssOrg      = `組織<svg/onload=window.__pwned=3>`
)

// allowPrivateCaptures lets the served capturer reach the test's loopback site.
func allowPrivateCaptures(s *config.Settings) {
	s.Lookup = func(name string) string {
		if name == "CAPTURE_LEDGER_CAPTURE_ALLOW_PRIVATE" {
			return "1"
		}
		return os.Getenv(name)
	}
}

// pollJS polls js in tab until ok accepts its answer, or fails the test
// after 30 s saying what it last read.
func pollJS(t *testing.T, tab context.Context, what, js string, ok func(string) bool) string {
	t.Helper()
	var got string
	var err error
	for deadline := time.Now().Add(30 * time.Second); ; {
		got, err = chromedp.Run(tab, chromedp.Evaluate[string](js))
		if err == nil && ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: last read %q (%v)", what, got, err)
		}
		time.Sleep(150 * time.Millisecond)
	}
}

func containing(s string) func(string) bool {
	return func(got string) bool { return strings.Contains(got, s) }
}

// pageState is what the archive page shows: its status line, whether the
// archive is shown, and which actions are offered.
const pageState = `(function () {
  function vis(id) { var e = document.getElementById(id); return e && !e.hidden && !(e.closest("[hidden]")) ? "1" : "0"; }
  return JSON.stringify({status: document.getElementById("status").textContent, shown: vis("archive"),
    open: vis("open"), download: vis("download"), share: vis("share"), del: vis("delete"),
    url: (document.querySelector("#facts .url") || {}).textContent || "",
    shares: Array.from(document.querySelectorAll("#shares tbody tr")).map(function (r) { return r.textContent; }).join("|"),
    pwned: String(window.__pwned)});
})()`

type archiveView struct {
	Status, Shown, Open, Download, Share, Del, URL, Shares, Pwned string
}

// openDialog clicks the button sel until the dialog id is open and shown
// (a click is tried again after 2 s without it: the page may still have
// been moving), for at most 30 s.
func openDialog(t *testing.T, tab context.Context, sel, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		click, cancel := context.WithTimeout(tab, 5*time.Second)
		err := chromedp.Do(click, chromedp.Click(sel))
		cancel()
		for wait := time.Now().Add(2 * time.Second); err == nil && time.Now().Before(wait); time.Sleep(50 * time.Millisecond) {
			if open, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`(function () { var d = document.getElementById(`+jsQuote(id)+`); return d.open && d.getClientRects().length > 0; })()`)); open {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not open %s: %v (the page shows %+v)", sel, id, err, readPage(t, tab))
		}
	}
}

func readPage(t *testing.T, tab context.Context) archiveView {
	t.Helper()
	raw, err := chromedp.Run(tab, chromedp.Evaluate[string](pageState))
	if err != nil {
		t.Fatal(err)
	}
	var s archiveView
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// waitPage opens the archive page as the tab's identity (reloading until
// cond holds: grants reach OpenFGA through the outbox) and returns what it
// shows.
func waitPage(t *testing.T, tab context.Context, u, what string, cond func(archiveView) bool) archiveView {
	t.Helper()
	var s archiveView
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := chromedp.Do(tab, chromedp.Navigate(u)); err != nil {
			t.Fatal(err)
		}
		for settle := time.Now().Add(5 * time.Second); time.Now().Before(settle); time.Sleep(100 * time.Millisecond) {
			if s = readPage(t, tab); s.Shown == "1" || strings.Contains(s.Status, "Not found") {
				break
			}
		}
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the page shows %+v", what, s)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestArchivePageInTheBrowser walks one archive's life in real Chromium
// against a whole serve: alice captures a loopback page from the capture
// form (a URL carrying markup) and opens the new archive's page; she
// shares it with bob, who then sees it without share or delete (and the
// API refuses both to him anyway); she revokes, and bob no longer sees
// it; she downloads it (the exact bytes of the bucket's object, with the
// attachment headers); she shares it with bob's organization and deletes
// it, and it is gone for her, for bob and from the bucket. Grantee names
// and the URL are markup and Japanese: shown as text, no script runs.
func TestArchivePageInTheBrowser(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><html><head><title>A page &lt;b&gt;「テスト」</title></head><body><h1>Archived</h1><p>本文 text.</p></body></html>`)
	}))
	defer site.Close()
	srv := startServe(t, allowPrivateCaptures)
	ctx := context.Background()
	if _, err := authz.Grant(ctx, srv.Env.FGA, "submitter", "alice", "acme"); err != nil {
		t.Fatal(err)
	}
	tab := testenv.BrowserTab(t, 4*time.Minute)
	// The identity form is on every console page; "/" may be another
	// screen's, so the capture page is where signIn finds it here.
	console := srv.URL + "/capture?at="

	// Capture from the form.
	signIn(t, tab, console, "alice", "acme")
	target := site.URL + "/page?q=" + xssURLQuery
	if err := chromedp.Do(tab,
		chromedp.Navigate(srv.URL+"/capture"),
		chromedp.WaitVisible("#capture-url"),
	); err != nil {
		t.Fatal(err)
	}
	pollJS(t, tab, "the engines and organizations load", `document.getElementById("capture-engine").options.length + "," + document.getElementById("capture-org").value`, containing(",acme"))
	if err := chromedp.Do(tab,
		chromedp.SetValue("#capture-engine", "http"),
		chromedp.SetValue("#capture-url", target),
		chromedp.Click("#capture-go"),
	); err != nil {
		t.Fatal(err)
	}
	href := pollJS(t, tab, "the captured archive's link", `(document.getElementById("capture-archive") || {}).href || document.getElementById("capture-status").textContent`, containing("/archives/"))
	archiveShot(t, tab, "capture-done-en.png")
	id := href[strings.LastIndex(href, "/")+1:]
	page := srv.URL + "/archives/" + id

	// Alice's page: everything offered; the URL shown as typed.
	s := waitPage(t, tab, page, "alice sees her archive", func(s archiveView) bool { return s.Shown == "1" && s.Share == "1" })
	if s.Open != "1" || s.Download != "1" || s.Del != "1" {
		t.Fatalf("alice, the owner, is not offered every action: %+v", s)
	}
	if !strings.Contains(s.URL, "q=") || !strings.Contains(s.URL, "onerror") {
		t.Errorf("the URL is not shown as text: %q", s.URL)
	}
	if s.Pwned != "undefined" {
		t.Fatalf("markup in the URL ran: __pwned=%s", s.Pwned)
	}
	stranger := srv.URL + "/archives/00000000-0000-4000-8000-000000000000"

	// Share with bob (a user), and with a hostile user name.
	share := func(kind, name string) {
		t.Helper()
		if err := chromedp.Do(tab,
			chromedp.SetValue("#share-kind", kind),
			chromedp.SetValue("#share-name", name),
			chromedp.Click(`#share-form button[type="submit"]`),
		); err != nil {
			t.Fatal(err)
		}
		pollJS(t, tab, "the share with "+name+" is listed", `Array.from(document.querySelectorAll("#shares tbody tr")).map(function (r) { return r.textContent; }).join("|")`, containing(name))
	}
	share("user", "bob")
	share("user", xssUser)
	s = readPage(t, tab)
	if !strings.Contains(s.Shares, xssUser) || s.Pwned != "undefined" {
		t.Fatalf("a grantee's name is not shown as text (or ran): %+v", s)
	}
	archiveShot(t, tab, "archive-en.png")
	if err := chromedp.Do(tab, chromedp.Navigate(page+"?lang=ja")); err == nil {
		pollJS(t, tab, "the Japanese page", `document.getElementById("archive-name").textContent + "|" + document.querySelectorAll("#shares tbody tr").length`, containing("|2"))
		archiveShot(t, tab, "archive-ja.png")
	}
	if err := chromedp.Do(tab, chromedp.EmulateViewport(360, 800), chromedp.Navigate(page+"?lang=en")); err == nil {
		pollJS(t, tab, "the page at 360 px", `document.getElementById("archive-name").textContent + "|" + document.querySelectorAll("#shares tbody tr").length`, containing("|2"))
		archiveShot(t, tab, "archive-360.png")
	}
	if err := chromedp.Do(tab, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}

	// Bob sees it, with nothing to manage, and the API refuses him both.
	signIn(t, tab, console, "bob", "partner")
	s = waitPage(t, tab, page, "bob sees the archive shared with him", func(s archiveView) bool { return s.Shown == "1" })
	if s.Share != "0" || s.Del != "0" || s.Open != "1" || s.Download != "1" {
		t.Fatalf("bob (a viewer) is offered: %+v", s)
	}
	refused, err := chromedp.Run(tab, chromedp.Evaluate[string](`Promise.all([
		L.api("DELETE", "/api/archives/`+id+`"), L.api("POST", "/api/archives/`+id+`/shares", {user: "mallory", duration: "1d"}),
		L.api("GET", "/api/archives/`+id+`/shares")]).then(function (rs) { return rs.map(function (r) { return r.status; }).join(","); })`, chromedp.EvalAwaitPromise))
	if err != nil || refused != "404,404,404" {
		t.Fatalf("the API let bob manage the archive: %s %v", refused, err)
	}
	archiveShot(t, tab, "archive-viewer-en.png")
	// A stranger's page and an absent id read alike.
	carol := func() (archiveView, archiveView) {
		signIn(t, tab, console, "carol", "elsewhere")
		a := waitPage(t, tab, page, "carol's page", func(archiveView) bool { return true })
		b := waitPage(t, tab, stranger, "an absent archive", func(archiveView) bool { return true })
		return a, b
	}
	if a, b := carol(); a.Shown != "0" || a.Status != b.Status || !strings.Contains(a.Status, "Not found") {
		t.Fatalf("a stranger's page %+v differs from an absent one %+v", a, b)
	}

	// Alice revokes bob's share: bob no longer sees it.
	signIn(t, tab, console, "alice", "acme")
	waitPage(t, tab, page, "alice's page", func(s archiveView) bool { return s.Shown == "1" && strings.Contains(s.Shares, "bob") })
	if err := chromedp.Do(tab, chromedp.Click(`button.revoke[aria-label$="bob"]`)); err != nil {
		t.Fatal(err)
	}
	pollJS(t, tab, "the share is revoked", `document.getElementById("share-status").textContent`, containing("revoked"))
	signIn(t, tab, console, "bob", "partner")
	waitPage(t, tab, page, "bob no longer sees it", func(s archiveView) bool { return s.Shown == "0" && strings.Contains(s.Status, "Not found") })

	// Alice downloads it: the exact bytes of the bucket's object.
	signIn(t, tab, console, "alice", "acme")
	waitPage(t, tab, page, "alice's page", func(s archiveView) bool { return s.Shown == "1" })
	got, err := chromedp.Run(tab, chromedp.Evaluate[string](`L.api("POST", "/api/archives/`+id+`/download", {}).then(function (r) {
		if (!r.ok) { return "link " + r.status; }
		if (r.body.url.indexOf("/api/archives/") !== 0) { return "not this origin: " + r.body.url; }
		return fetch(r.body.url, {credentials: "omit"}).then(function (res) {
			var h = ["content-type", "content-disposition", "x-content-type-options", "content-security-policy"].map(function (k) { return res.headers.get(k); }).join("\n");
			return res.arrayBuffer().then(function (b) { return crypto.subtle.digest("SHA-256", b); }).then(function (d) {
				return res.status + "\n" + h + "\n" + Array.from(new Uint8Array(d)).map(function (x) { return ("0" + x.toString(16)).slice(-2); }).join("");
			});
		});
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	detail := srv.Env.Bucket
	keyJSON, err := chromedp.Run(tab, chromedp.Evaluate[string](`L.api("GET", "/api/archives/`+id+`").then(function (r) { return r.body.objectKey; })`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := srv.Env.Blob.Get(ctx, detail, keyJSON)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(obj)
	lines := strings.Split(got, "\n")
	if len(lines) != 6 || lines[0] != "200" || lines[1] != "application/octet-stream" || !strings.HasPrefix(lines[2], "attachment;") ||
		lines[3] != "nosniff" || !strings.HasPrefix(lines[4], "sandbox") || lines[5] != hex.EncodeToString(sum[:]) {
		t.Fatalf("download answered:\n%s\nwant 200, octet-stream, attachment, nosniff, sandbox and sha256 %x (%d bytes)", got, sum, len(obj))
	}
	if err := chromedp.Do(tab, chromedp.Click("#download")); err != nil {
		t.Fatal(err)
	}
	pollJS(t, tab, "the download button", `document.getElementById("action-status").textContent`, containing("Download started"))

	// Shared with bob's organization, then deleted: gone for everyone.
	share("organization", "partner")
	share("organization", xssOrg)
	if s = readPage(t, tab); s.Pwned != "undefined" || !strings.Contains(s.Shares, xssOrg) {
		t.Fatalf("an organization's name is not shown as text (or ran): %+v", s)
	}
	signIn(t, tab, console, "bob", "partner")
	waitPage(t, tab, page, "bob sees it through partner", func(s archiveView) bool { return s.Shown == "1" && s.Del == "0" })
	signIn(t, tab, console, "alice", "acme")
	// Her page with its Delete section and its shares listed: a click on a
	// hidden button would wait for it without end, and one made while the
	// shares table is still filling lands where the button was (a
	// fresh-clone CI run clicked, and the dialog never opened).
	waitPage(t, tab, page, "alice's page with Delete and its shares", func(s archiveView) bool {
		return s.Shown == "1" && s.Del == "1" && strings.Contains(s.Shares, "partner") && strings.Contains(s.Shares, xssOrg)
	})
	openDialog(t, tab, "#delete-open", "delete-dialog")
	if dis, _ := chromedp.Run(tab, chromedp.Evaluate[bool](`document.getElementById("delete-now").disabled`)); !dis {
		t.Fatal("delete is possible before the word is typed")
	}
	archiveShot(t, tab, "archive-delete-en.png")
	confirm, cancelConfirm := context.WithTimeout(tab, 30*time.Second)
	defer cancelConfirm()
	if err := chromedp.Do(confirm,
		chromedp.SendKeys("#delete-word", "delete"),
		chromedp.Click("#delete-now"),
	); err != nil {
		t.Fatalf("typing the word and confirming: %v (the page shows %+v)", err, readPage(t, tab))
	}
	pollJS(t, tab, "deleted", `document.getElementById("status").textContent`, containing("Deleted"))
	waitPage(t, tab, page, "alice no longer sees it", func(s archiveView) bool { return s.Shown == "0" && strings.Contains(s.Status, "Not found") })
	signIn(t, tab, console, "bob", "partner")
	waitPage(t, tab, page, "bob no longer sees it", func(s archiveView) bool { return s.Shown == "0" && strings.Contains(s.Status, "Not found") })
	if _, err := srv.Env.Blob.Get(ctx, detail, keyJSON); err == nil {
		t.Error("the WACZ is still in the bucket after the delete")
	}
	if p, _ := chromedp.Run(tab, chromedp.Evaluate[string](`String(window.__pwned)`)); p != "undefined" {
		t.Fatalf("injected markup ran: %s", p)
	}
}

// TestCaptureFormScreens: the capture form in English, Japanese and at
// 360 px, and a 429 with Retry-After said in words.
func TestCaptureFormScreens(t *testing.T) {
	t.Parallel()
	srv := startServe(t, func(s *config.Settings) { allowPrivateCaptures(s); s.CapturePerCaller = 1 })
	ctx := context.Background()
	if _, err := authz.Grant(ctx, srv.Env.FGA, "submitter", "alice", "acme"); err != nil {
		t.Fatal(err)
	}
	hold := make(chan struct{})
	var release sync.Once
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/held" {
			<-hold
		} else {
			time.Sleep(2 * time.Second)
		}
		fmt.Fprint(w, `<!doctype html><title>slow</title>`)
	}))
	defer site.Close()
	defer release.Do(func() { close(hold) })
	tab := testenv.BrowserTab(t, 2*time.Minute)
	signIn(t, tab, srv.URL+"/capture?at=", "alice", "acme")
	for _, lang := range []string{"en", "ja"} {
		if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/capture?lang="+lang)); err != nil {
			t.Fatal(err)
		}
		pollJS(t, tab, "the form loads", `document.getElementById("capture-org").value`, containing("acme"))
		archiveShot(t, tab, "capture-"+lang+".png")
	}
	if err := chromedp.Do(tab, chromedp.Navigate(srv.URL+"/capture?lang=en")); err != nil {
		t.Fatal(err)
	}
	pollJS(t, tab, "the form loads", `document.getElementById("capture-org").value`, containing("acme"))
	// One capture held open by the site; the second is over the caller's
	// bound of one at a time.
	first, err := chromedp.Run(tab, chromedp.Evaluate[string](`(function () {
		window.__first = L.api("POST", "/api/captures", {urls: [`+jsQuote(site.URL+"/held")+`], organization: "acme", engine: "http"});
		return "sent";
	})()`))
	if err != nil || first != "sent" {
		t.Fatal(first, err)
	}
	time.Sleep(500 * time.Millisecond)
	if err := chromedp.Do(tab,
		chromedp.EmulateViewport(360, 800),
		chromedp.SetValue("#capture-url", site.URL+"/second"),
		chromedp.Click("#capture-go"),
	); err != nil {
		t.Fatal(err)
	}
	msg := pollJS(t, tab, "the 429 is said", `document.getElementById("capture-status").textContent`, containing("try again in"))
	if !strings.Contains(msg, "Too many at once") {
		t.Errorf("a 429 reads %q", msg)
	}
	archiveShot(t, tab, "capture-429-360.png")

	// Once the first is done, a capture runs from the form: the page says
	// how long it has been running, then links the new archive.
	release.Do(func() { close(hold) })
	if done, err := chromedp.Run(tab, chromedp.Evaluate[int](`window.__first.then(function (r) { return r.status; })`, chromedp.EvalAwaitPromise)); err != nil || done != 200 {
		t.Fatalf("the held capture: %d %v", done, err)
	}
	if err := chromedp.Do(tab,
		chromedp.EmulateViewport(800, 600),
		chromedp.SetValue("#capture-url", site.URL+"/slow"),
		chromedp.Click("#capture-go"),
	); err != nil {
		t.Fatal(err)
	}
	pollJS(t, tab, "the elapsed time", `document.getElementById("capture-status").textContent + (document.getElementById("capture-progress").hidden ? "" : " [progress]")`, containing("… 1 s [progress]"))
	archiveShot(t, tab, "capture-running-en.png")
	pollJS(t, tab, "the new archive", `(document.getElementById("capture-archive") || {}).href || ""`, containing("/archives/"))
}

func jsQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// archiveShot saves what tab shows as name under LEDGER_TEST_SCREENSHOTS,
// when it is set (to look at; nothing compares them).
func archiveShot(t *testing.T, tab context.Context, name string) {
	t.Helper()
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

// TestArchivePageOfACrawlsCapture: the page of an archive a crawl captured
// says, under Download, that its shared files may be stored once for the
// whole crawl, and offers the crawl as one WACZ: the button asks for the
// crawl's download link (the person may view this archive of it) and the
// browser starts it. An archive no crawl captured offers neither. In
// English and Japanese.
func TestArchivePageOfACrawlsCapture(t *testing.T) {
	t.Parallel()
	s := startServe(t, nil)
	crawled := seedArchives(t, s.Env, "acme", time.Now().Add(-time.Hour), "https://crawl.test/", "https://crawl.test/about")
	crawlID := seedCrawl(t, s.Env, "acme", "alice", crawled)
	plain := seedArchives(t, s.Env, "acme", time.Now().Add(-2*time.Hour), "https://plain.test/")
	ctx := testenv.BrowserTab(t, 2*time.Minute, chromedp.WindowSize(1200, 900))
	signIn(t, ctx, s.URL, "alice", "acme")
	offer := `(function () { var p = document.getElementById("crawl-hint"), b = document.getElementById("crawl-download"); return (p.hidden ? "hidden" : p.textContent) + "|" + (b.hidden ? "hidden" : b.textContent); })()`
	open := func(path string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+path)); err != nil {
			t.Fatal(err)
		}
		waitJS(t, ctx, path, `!document.getElementById("archive").hidden && !document.getElementById("download").hidden`, `document.getElementById("status").textContent`, 30*time.Second)
	}
	open("/archives/" + crawled[1].ID)
	if got, want := evalJS[string](t, ctx, offer), "Captured by a crawl: a file its pages share (a stylesheet, a logo) may be stored once for the whole crawl, so this WACZ alone may replay without it. The crawl as one WACZ holds every page with its files.|Download the crawl as one WACZ"; got != want {
		t.Errorf("the crawl's capture:\n got %q\nwant %q", got, want)
	}
	// The button asks for the crawl's link (this page's archive is one
	// the person may view) and starts the download.
	dir := t.TempDir()
	if _, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir,
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click("#crawl-download")); err != nil {
		t.Fatal(err)
	}
	pollJS(t, ctx, "the crawl's download", `document.getElementById("action-status").textContent`, containing("Download started: the archives of this crawl you may view, in one WACZ file."))
	archiveShot(t, ctx, "archive-crawl-en.png")
	// A link made and not followed holds alice's place (the download the
	// button started gives its place back as it ends, so ask until then).
	var link string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var err error
		link, err = chromedp.Run(ctx, chromedp.Evaluate[string](`L.api("POST", "/api/crawls/`+crawlID+`/download", {}).then(function (r) { return r.status + " " + (r.body.url || r.body.message); })`, chromedp.EvalAwaitPromise))
		if err != nil || !strings.HasPrefix(link, "429 ") || time.Now().After(deadline) {
			break
		}
	}
	if !strings.HasPrefix(link, "200 /api/crawls/"+crawlID+"/wacz?") {
		t.Errorf("the crawl's download link: %q", link)
	}
	open("/archives/" + crawled[1].ID + "?lang=ja")
	if got, want := evalJS[string](t, ctx, offer), "クロールで取得されました。ページ間で共有されるファイル（スタイルシートやロゴなど）はクロール全体で一度だけ保存されることがあるため、この WACZ だけではそれらなしでリプレイされることがあります。クロールを 1 つの WACZ にすると、すべてのページがファイルとともに入ります。|クロールを 1 つの WACZ としてダウンロード"; got != want {
		t.Errorf("ja, the crawl's capture:\n got %q\nwant %q", got, want)
	}
	// So the button says, in Japanese, why nothing starts.
	if err := chromedp.Do(ctx, chromedp.Click("#crawl-download")); err != nil {
		t.Fatal(err)
	}
	pollJS(t, ctx, "the crawl's download refused", `document.getElementById("action-status").textContent`, containing("あなたか組織の別のクロールのダウンロードが実行中です。10 秒後に再試行してください。"))
	archiveShot(t, ctx, "archive-crawl-ja.png")
	open("/archives/" + plain[0].ID + "?lang=en")
	if got := evalJS[string](t, ctx, offer); got != "hidden|hidden" {
		t.Errorf("an archive no crawl captured: %q", got)
	}
}
