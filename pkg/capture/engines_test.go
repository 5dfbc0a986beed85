package capture

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// forEachEngine runs f against each engine made with cfg; the browser's
// run is skipped without Chromium (failed under CI=true). key names the
// shared browser engine of that configuration; "" gives the test its own.
func forEachEngine(t *testing.T, key string, cfg func() Config, f func(t *testing.T, e Engine)) {
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		e := NewHTTP(cfg())
		t.Cleanup(func() { e.Close() })
		f(t, e)
	})
	t.Run("browser", func(t *testing.T) {
		t.Parallel()
		if key != "" {
			f(t, sharedBrowser(t, key, cfg()))
		} else {
			f(t, newBrowser(t, cfg()))
		}
	})
}

func TestSiteCapture(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	forEachEngine(t, "local", localConfig, func(t *testing.T, e Engine) {
		res := mustCapture(t, e, s.URL+"/")
		if res.Failure != nil {
			t.Fatalf("Failure = %+v", res.Failure)
		}
		if res.Status != 200 || res.FinalURL != s.URL+"/" {
			t.Errorf("Status %d FinalURL %s, want 200 %s/", res.Status, res.FinalURL, s.URL)
		}
		if res.Title != siteTitle {
			t.Errorf("Title = %q, want %q", res.Title, siteTitle)
		}
		// Every engine records the document, both stylesheets, the font,
		// the CSS backgrounds, the script, the 1x image, the <picture>
		// source and the missing image (as its 404).
		want := map[string]int{
			"/": 200, "/style.css": 200, "/more.css": 200, "/fonts/site.woff2": 200, "/img/bg.png": 200,
			"/app.js": 200, "/img/a.png": 200, "/img/b.png": 200, "/img/missing.png": 404,
			"/img/inline.png": 200, "/img/more.png": 200,
		}
		if e.Name() == EngineBrowser {
			want["/data.json"] = 200 // fetched by the script
		} else {
			// All srcset candidates, and <picture>'s fallback, for
			// viewers that pick another.
			want["/img/a2.png"] = 200
			want["/img/c.png"] = 200
			want["/img/icon.png"] = 200
		}
		for path, status := range want {
			i, ok := exchangeFor(res, s.URL+path)
			if !ok {
				t.Errorf("no exchange for %s; recorded:\n%s", path, strings.Join(urlsOf(res), "\n"))
				continue
			}
			x := res.Capture.Exchanges[i]
			if x.Status != status {
				t.Errorf("%s: status %d, want %d", path, x.Status, status)
			}
			if x.Date.IsZero() || x.Header == nil {
				t.Errorf("%s: date %v header %v", path, x.Date, x.Header)
			}
		}
		if i, ok := exchangeFor(res, s.URL+"/img/a.png"); ok {
			if got := res.Capture.Exchanges[i].Body; !bytes.Equal(got, pngBytes(siteImages["/img/a.png"])) {
				t.Errorf("a.png body differs (%d bytes)", len(got))
			}
		}
		if i, ok := exchangeFor(res, s.URL+"/style.css"); ok && string(res.Capture.Exchanges[i].Body) != styleCSS {
			t.Errorf("style.css body = %q", res.Capture.Exchanges[i].Body)
		}
		if _, ok := exchangeFor(res, s.URL+"/img/commented-out.png"); ok {
			t.Errorf("fetched a URL inside a CSS comment")
		}
		if e.Name() == EngineHTTP {
			if _, ok := exchangeFor(res, s.URL+"/data.json"); ok {
				t.Errorf("the http engine ran JavaScript?")
			}
		}

		if !strings.Contains(res.Text, staticText) || !strings.Contains(res.Text, "Welcome") {
			t.Errorf("Text lacks the static text: %q", res.Text)
		}
		hasJS := strings.Contains(res.Text, jsText)
		if want := e.Name() == EngineBrowser; hasJS != want {
			t.Errorf("Text has the script's text: %v, want %v; text %q", hasJS, want, res.Text)
		}
		if strings.Contains(res.Text, "Enable JavaScript") {
			t.Errorf("Text has <noscript> content: %q", res.Text)
		}

		wantLinks := []wacz.Link{
			{Href: s.URL + "/ja", Text: "日本語"},
			{Href: s.URL + "/redirect#top", Text: "Redirect"},
			{Href: "https://example.com/x#frag", Text: "External", Rel: "nofollow noreferrer"},
		}
		if !slices.Equal(res.Links, wantLinks) {
			t.Errorf("Links =\n%+v\nwant\n%+v", res.Links, wantLinks)
		}
		if !res.Complete || len(res.TruncatedURLs) != 0 {
			t.Errorf("Complete %v, truncated %v", res.Complete, res.TruncatedURLs)
		}
		if len(res.Capture.Pages) != 1 || res.Capture.Pages[0].Text != res.Text || res.Capture.Pages[0].URL != s.URL+"/" {
			t.Errorf("Pages = %+v", res.Capture.Pages)
		}
		if e.Name() == EngineBrowser {
			sc := res.Capture.Screenshot
			if sc == nil || !bytes.HasPrefix(sc.PNG, []byte("\x89PNG\r\n\x1a\n")) {
				t.Fatalf("screenshot is not a PNG")
			}
			checkThumbnail(t, res)
		} else if res.Capture.Screenshot != nil || res.Capture.Thumbnail != nil {
			t.Errorf("the http engine took a screenshot?")
		}
		if res.Stats.Recorded != len(res.Capture.Exchanges) || res.Stats.BodyBytes == 0 {
			t.Errorf("Stats = %+v", res.Stats)
		}
	})
}

func TestJapanesePages(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	forEachEngine(t, "local", localConfig, func(t *testing.T, e Engine) {
		for _, tt := range []struct{ path, title, text string }{
			{"/ja", "日本語のタイトル", jaText},
			{"/ja-euc", "EUC-JPのページ", eucText},
		} {
			res := mustCapture(t, e, s.URL+tt.path)
			if res.Failure != nil {
				t.Fatalf("%s: %v", tt.path, res.Failure)
			}
			if res.Title != tt.title || !strings.Contains(res.Text, tt.text) {
				t.Errorf("%s: title %q text %q; want %q containing %q", tt.path, res.Title, res.Text, tt.title, tt.text)
			}
			// The archive keeps the bytes as served, not re-encoded.
			i, _ := exchangeFor(res, s.URL+tt.path)
			if i < 0 || utf8Contains(res.Capture.Exchanges[i].Body, tt.text) {
				t.Errorf("%s: the recorded body should be the original encoding", tt.path)
			}
		}
	})
}

func utf8Contains(b []byte, s string) bool { return bytes.Contains(b, []byte(s)) }

func TestRedirectIsRecordedHopByHop(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	forEachEngine(t, "local", localConfig, func(t *testing.T, e Engine) {
		res := mustCapture(t, e, s.URL+"/redirect")
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		i, ok := exchangeFor(res, s.URL+"/redirect")
		j, ok2 := exchangeFor(res, s.URL+"/final")
		if !ok || !ok2 || i > j {
			t.Fatalf("hops missing or out of order:\n%s", strings.Join(urlsOf(res), "\n"))
		}
		hop := res.Capture.Exchanges[i]
		if hop.Status != http.StatusFound || hop.Header.Get("Location") != "/final" {
			t.Errorf("redirect hop = %d Location %q", hop.Status, hop.Header.Get("Location"))
		}
		if res.FinalURL != s.URL+"/final" || res.Status != 200 || !strings.Contains(res.Text, finalText) {
			t.Errorf("FinalURL %s Status %d Text %q", res.FinalURL, res.Status, res.Text)
		}
		if p := res.Capture.Pages[0]; p.URL != s.URL+"/redirect" || p.FinalURL != s.URL+"/final" {
			t.Errorf("page = %s → %s", p.URL, p.FinalURL)
		}
	})
}

func TestBodyCapMakesCaptureIncomplete(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	const limit = 64 << 10
	capped := func() Config {
		c := localConfig()
		c.MaxBodyBytes = limit
		return c
	}
	forEachEngine(t, "", capped, func(t *testing.T, e Engine) {
		res := mustCapture(t, e, s.URL+"/big")
		if res.Failure != nil {
			t.Fatal(res.Failure)
		}
		i, ok := exchangeFor(res, s.URL+"/big.bin")
		if !ok {
			t.Fatalf("big.bin not recorded:\n%s", strings.Join(urlsOf(res), "\n"))
		}
		x := res.Capture.Exchanges[i]
		if !x.Truncated || len(x.Body) != limit {
			t.Errorf("big.bin: truncated %v, %d bytes; want true, %d", x.Truncated, len(x.Body), limit)
		}
		if !bytes.HasPrefix(bytes.Repeat([]byte("0123456789abcdef"), 16<<10), x.Body) {
			t.Errorf("big.bin body is not the start of the file")
		}
		if res.Complete || !slices.Equal(res.TruncatedURLs, []string{s.URL + "/big.bin"}) {
			t.Errorf("Complete %v TruncatedURLs %v", res.Complete, res.TruncatedURLs)
		}
		if res.Stats.TruncatedTooLarge != 1 {
			t.Errorf("Stats = %+v", res.Stats)
		}
		j, ok := exchangeFor(res, s.URL+"/img/a.png")
		if !ok || res.Capture.Exchanges[j].Truncated {
			t.Errorf("a small image after the big one was not recorded whole")
		}
	})
}

func TestPageCapAndResourceCap(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	t.Run("page bytes", func(t *testing.T) {
		t.Parallel()
		c := localConfig()
		c.MaxPageBytes = 100 << 10 // the document fits, big.bin does not
		res := mustCapture(t, NewHTTP(c), s.URL+"/big")
		if res.Complete || res.Stats.TruncatedPageCap == 0 {
			t.Fatalf("Complete %v Stats %+v", res.Complete, res.Stats)
		}
		if res.Stats.BodyBytes > c.MaxPageBytes {
			t.Errorf("kept %d body bytes, cap %d", res.Stats.BodyBytes, c.MaxPageBytes)
		}
	})
	t.Run("resource count", func(t *testing.T) {
		t.Parallel()
		c := localConfig()
		c.MaxResources = 2
		res := mustCapture(t, NewHTTP(c), s.URL+"/")
		// The document plus two subresources; the rest are listed.
		if got := len(res.Capture.Exchanges); got != 3 {
			t.Errorf("%d exchanges, want 3:\n%s", got, strings.Join(urlsOf(res), "\n"))
		}
		if res.Complete || len(res.TruncatedURLs) == 0 {
			t.Errorf("Complete %v TruncatedURLs %v", res.Complete, res.TruncatedURLs)
		}
	})
}

func TestHTTPErrorFails(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	forEachEngine(t, "local", localConfig, func(t *testing.T, e Engine) {
		res := mustCapture(t, e, s.URL+"/status/429")
		f := res.Failure
		if f == nil || f.Kind != FailHTTP || f.Status != 429 || f.RetryAfter != 7*time.Second {
			t.Fatalf("Failure = %+v, want http 429 retry after 7s", f)
		}
		if f.Message != "HTTP 429: Too Many Requests" || res.Status != 429 {
			t.Errorf("Message %q Status %d", f.Message, res.Status)
		}
		res = mustCapture(t, e, s.URL+"/no-such-page")
		if res.Failure == nil || res.Failure.Kind != FailHTTP || res.Failure.Status != 404 {
			t.Errorf("404 page: Failure = %+v", res.Failure)
		}
		if res.Header.Get("Content-Type") == "" {
			t.Errorf("the main response's header is not kept")
		}
	})
}

func TestConnectionFailure(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	u := s.URL
	s.Close() // nothing listens there now
	forEachEngine(t, "local", localConfig, func(t *testing.T, e Engine) {
		res := mustCapture(t, e, u+"/")
		if res.Failure == nil || res.Failure.Kind != FailConnection {
			t.Fatalf("Failure = %+v, want connection", res.Failure)
		}
		if !strings.Contains(res.Failure.Message, "refused") && !strings.Contains(res.Failure.Message, "ERR_") {
			t.Errorf("Message %q does not say what failed", res.Failure.Message)
		}
	})
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := newSlowServer(t, release)
	short := func() Config {
		c := localConfig()
		c.Timeout = 1500 * time.Millisecond
		return c
	}
	forEachEngine(t, "", short, func(t *testing.T, e Engine) {
		res := mustCapture(t, e, slow+"/")
		if res.Failure == nil || res.Failure.Kind != FailTimeout || res.Failure.Timeout != 1500*time.Millisecond {
			t.Fatalf("Failure = %+v, want timeout", res.Failure)
		}
	})
}

func newPlainServer(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// newSlowServer answers only when release is closed (at cleanup).
func newSlowServer(t *testing.T, release chan struct{}) string {
	srv := newPlainServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release) })
	return srv
}

func TestCancelledByCaller(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	slow := newSlowServer(t, release)
	forEachEngine(t, "local", localConfig, func(t *testing.T, e Engine) {
		ctx, cancel := context.WithTimeout(context.Background(), 800*time.Millisecond)
		defer cancel()
		res, err := e.Capture(ctx, slow+"/")
		if err != nil {
			t.Fatal(err)
		}
		if res.Failure == nil || res.Failure.Kind != FailCancelled {
			t.Fatalf("Failure = %+v, want cancelled", res.Failure)
		}
	})
}

func TestBadURLIsAnError(t *testing.T) {
	t.Parallel()
	forEachEngine(t, "local", localConfig, func(t *testing.T, e Engine) {
		for _, u := range []string{"", "ftp://example.com/", "file:///etc/passwd", "javascript:alert(1)", "/relative", "http://", "http://a\x00b/", "http://user:pw@example.com/"} {
			res, err := e.Capture(context.Background(), u)
			var ue *URLError
			if !errors.As(err, &ue) || res != nil {
				t.Errorf("Capture(%q) = %v, %v; want a *URLError", u, res, err)
			}
		}
	})
}

func TestBrowserScrollsLazyContent(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	res := mustCapture(t, browserFor(t), s.URL+"/long")
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	if _, ok := exchangeFor(res, s.URL+"/img/lazy.png"); !ok {
		t.Errorf("the lazy image below the fold was not loaded:\n%s", strings.Join(urlsOf(res), "\n"))
	}
}

func TestBrowserConcurrentCapturesAndClose(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b := newBrowser(t, localConfig())
	paths := []string{"/", "/ja", "/redirect", "/long"}
	results := make([]*Result, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() { results[i] = mustCapture(t, b, s.URL+p) })
	}
	wg.Wait()
	for i, r := range results {
		if r == nil || r.Failure != nil {
			t.Fatalf("%s: %+v", paths[i], r)
		}
		// Each tab recorded its own page and nothing of the others.
		if r.Capture.Exchanges[0].URL != s.URL+paths[i] {
			t.Errorf("capture of %s starts with %s", paths[i], r.Capture.Exchanges[0].URL)
		}
		for _, x := range r.Capture.Exchanges {
			for j, p := range paths {
				if j != i && x.URL == s.URL+p {
					t.Errorf("capture of %s recorded %s", paths[i], x.URL)
				}
			}
		}
	}
	dir := b.dir
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("profile dir %q: %v", dir, err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("profile dir %s still there after Close: %v", dir, err)
	}
	if _, err := b.Capture(context.Background(), s.URL+"/"); !errors.Is(err, ErrClosed) {
		t.Errorf("Capture after Close = %v, want ErrClosed", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestMissingChromium(t *testing.T) {
	t.Parallel()
	_, err := NewBrowser(Config{ChromiumPath: "/nonexistent/chromium"})
	var ce *ChromiumError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), EnvChromiumPath) || !strings.Contains(err.Error(), "/nonexistent/chromium") {
		t.Errorf("NewBrowser with a bad path = %v", err)
	}
	_, err = New("", Config{ChromiumPath: "/nonexistent/chromium"})
	if !errors.As(err, &ce) {
		t.Errorf("New(default) = %v, want the browser engine's error", err)
	}
	if e, err := New(EngineHTTP, Config{ChromiumPath: "/nonexistent/chromium"}); err != nil || e.Name() != EngineHTTP {
		t.Errorf("New(http) = %v, %v; the http engine needs no Chromium", e, err)
	}
	if _, err := New("curl", Config{}); err == nil || !strings.Contains(err.Error(), "browser, http") {
		t.Errorf("New(curl) = %v", err)
	}
}

func TestNoChromiumOnPath(t *testing.T) {
	// Not parallel: it empties PATH.
	t.Setenv("PATH", t.TempDir())
	_, err := FindChromium("")
	var ce *ChromiumError
	if !errors.As(err, &ce) {
		t.Fatalf("FindChromium = %v", err)
	}
	for _, want := range []string{EnvChromiumPath, "chromium, chromium-browser, google-chrome", "http engine"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}
}

// A document that is not a page (a download) is archived as it came, with
// no text to read.
func TestDownloadIsArchived(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	forEachEngine(t, "local", localConfig, func(t *testing.T, e Engine) {
		res := mustCapture(t, e, s.URL+"/file.zip")
		if res.Failure != nil {
			t.Fatalf("Failure = %v", res.Failure)
		}
		i, ok := exchangeFor(res, s.URL+"/file.zip")
		if !ok || !bytes.HasPrefix(res.Capture.Exchanges[i].Body, []byte("PK")) || res.Status != 200 {
			t.Fatalf("file.zip not recorded with its body:\n%s", strings.Join(urlsOf(res), "\n"))
		}
		if res.Text != "" || res.Title != "" || len(res.Links) != 0 {
			t.Errorf("text %q title %q links %v from a ZIP", res.Text, res.Title, res.Links)
		}
	})
}

func TestBrowserRestartsAfterCrash(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	b := newBrowser(t, localConfig())
	if res := mustCapture(t, b, s.URL+"/final"); res.Failure != nil {
		t.Fatal(res.Failure)
	}
	b.mu.Lock()
	ctx := b.ctx
	proc := chromedp.FromContext(ctx).Browser.Process()
	b.mu.Unlock()
	if proc == nil {
		t.Fatal("no browser process")
	}
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the browser's context did not end after its process was killed")
	}
	res := mustCapture(t, b, s.URL+"/final")
	if res.Failure != nil || !strings.Contains(res.Text, finalText) {
		t.Fatalf("capture after a crash: %v %q", res.Failure, res.Text)
	}
}

// A cross-site iframe's requests are recorded (site isolation is off in the
// capture browser, so the frame runs in the page's process).
func TestBrowserRecordsCrossSiteIframe(t *testing.T) {
	t.Parallel()
	a, b := newSite(t), newSiteOn(t, "127.0.0.2")
	res := mustCapture(t, browserFor(t), a.URL+"/frame?src="+url.QueryEscape(b.URL+"/"))
	if res.Failure != nil {
		t.Fatal(res.Failure)
	}
	for _, p := range []string{"/", "/style.css", "/img/a.png", "/data.json"} {
		if _, ok := exchangeFor(res, b.URL+p); !ok {
			t.Errorf("the iframe's %s was not recorded:\n%s", p, strings.Join(urlsOf(res), "\n"))
		}
	}
}

// checkThumbnail: the browser's thumbnail is a JPEG ThumbnailWidth pixels
// wide in the viewport's proportions, and shows what the screenshot shows
// (the same average colour, within JPEG's error).
func checkThumbnail(t *testing.T, res *Result) {
	t.Helper()
	th := res.Capture.Thumbnail
	if th == nil {
		t.Fatal("no thumbnail")
	}
	img, err := wacz.CheckImage(th.Data, "image/jpeg")
	if err != nil || th.Mime != "image/jpeg" || th.PageURL != res.FinalURL {
		t.Fatalf("thumbnail %s of %s: %v", th.Mime, th.PageURL, err)
	}
	if img.Width != ThumbnailWidth || img.Height != ThumbnailWidth*800/1280 {
		t.Errorf("thumbnail is %d×%d, want %d×%d", img.Width, img.Height, ThumbnailWidth, ThumbnailWidth*800/1280)
	}
	small, err := jpeg.Decode(bytes.NewReader(th.Data))
	if err != nil {
		t.Fatal(err)
	}
	big, err := png.Decode(bytes.NewReader(res.Capture.Screenshot.PNG))
	if err != nil {
		t.Fatal(err)
	}
	a, b := meanColour(small), meanColour(big)
	for i := range a {
		if d := a[i] - b[i]; d > 6 || d < -6 {
			t.Errorf("thumbnail's mean colour %v differs from the screenshot's %v", a, b)
			break
		}
	}
}

func meanColour(img image.Image) [3]float64 {
	var sum [3]float64
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			sum[0] += float64(cr >> 8)
			sum[1] += float64(cg >> 8)
			sum[2] += float64(cb >> 8)
		}
	}
	n := float64(r.Dx() * r.Dy())
	return [3]float64{sum[0] / n, sum[1] / n, sum[2] / n}
}
