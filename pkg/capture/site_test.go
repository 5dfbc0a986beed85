package capture

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/websocket"
	"golang.org/x/text/encoding/japanese"
)

// The texts the local site shows. jsText is written by a script from JSON
// it fetches, so only the browser engine sees it.
const (
	siteTitle  = "Capture test site"
	staticText = "Static paragraph text"
	jsText     = "JavaScript wrote this line"
	jaText     = "日本語のページです。桜が静かに咲いています。"
	eucText    = "こちらはEUC-JPで書かれた文章です。"
	finalText  = "You followed the redirect"
	lazyAlt    = "lazy picture"
)

// site is a local web site with what a capture must record: a stylesheet
// importing another, a web font, srcset images, a script that fetches JSON
// and writes text into the page, Japanese pages in Shift_JIS and EUC-JP, a
// redirect, a missing image, a large file, a lazy image far below the fold,
// and error statuses. It counts requests by path.
type site struct {
	*httptest.Server
	mu   sync.Mutex
	hits map[string]int
}

func pngBytes(c color.Color) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 8, 8))
	for x := 0; x < 8; x++ {
		for y := 0; y < 8; y++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

func sjis(t testing.TB, s string) []byte {
	b, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func eucjp(t testing.TB, s string) []byte {
	b, err := japanese.EUCJP.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const indexHTML = `<!doctype html>
<html lang="en"><head>
<meta charset="utf-8">
<title>  Capture   test site </title>
<link rel="stylesheet" href="/style.css">
<link rel="icon" href="/img/icon.png">
<script src="/app.js" defer></script>
</head>
<body>
<h1>Welcome</h1>
<p>Static paragraph text</p>
<p id="js"></p>
<noscript>Enable JavaScript</noscript>
<img alt="a" src="/img/a.png" srcset="/img/a.png 1x, /img/a2.png 2x">
<picture><source srcset="/img/b.png" type="image/png"><img alt="c" src="/img/c.png"></picture>
<img alt="missing" src="/img/missing.png">
<ul>
<li><a href="/ja">日本語</a></li>
<li><a href="/redirect#top">Redirect</a></li>
<li><a href="https://example.com/x#frag" rel="nofollow noreferrer">  External  </a></li>
<li><a href="mailto:someone@example.com">Mail</a></li>
<li><a href="/ja">Duplicate</a></li>
</ul>
<div style="background-image: url('/img/inline.png')">Inline style</div>
</body></html>`

const styleCSS = `@import "/more.css";
@font-face { font-family: "Site"; src: url(/fonts/site.woff2) format("woff2"); }
body { font-family: "Site", sans-serif; background: #fff url("/img/bg.png") no-repeat; }
/* url(/img/commented-out.png) */
`

const appJS = `fetch('/data.json').then(r => r.json()).then(d => {
	document.getElementById('js').textContent = d.message;
});`

// siteImages are the site's PNGs, each its own colour.
var siteImages = map[string]color.Color{
	"/img/a.png": color.RGBA{200, 0, 0, 255}, "/img/a2.png": color.RGBA{0, 200, 0, 255},
	"/img/b.png": color.RGBA{0, 0, 200, 255}, "/img/c.png": color.RGBA{200, 200, 0, 255},
	"/img/bg.png": color.RGBA{0, 200, 200, 255}, "/img/more.png": color.RGBA{100, 100, 100, 255},
	"/img/icon.png": color.RGBA{50, 50, 50, 255}, "/img/inline.png": color.RGBA{10, 20, 30, 255},
	"/img/lazy.png": color.RGBA{90, 0, 90, 255},
}

func newSite(t testing.TB) *site {
	return newSiteOn(t, "127.0.0.1")
}

// newSiteOn serves the site on addr (127.0.0.2 plays a public host in the
// SSRF tests).
func newSiteOn(t testing.TB, addr string) *site {
	s := &site{hits: map[string]int{}}
	mux := http.NewServeMux()
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			write(w, body)
		}
	}
	for p, c := range siteImages {
		b := pngBytes(c)
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "image/png")
			w.Write(b)
		})
	}
	mux.HandleFunc("GET /{$}", html(indexHTML))
	mux.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		write(w, styleCSS)
	})
	mux.HandleFunc("GET /more.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		write(w, `h1 { background: url(img/more.png) }`)
	})
	mux.HandleFunc("GET /fonts/site.woff2", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "font/woff2")
		w.Write([]byte("wOF2 not really a font, but fetched like one"))
	})
	mux.HandleFunc("GET /app.js", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		write(w, appJS)
	})
	mux.HandleFunc("GET /data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		write(w, `{"message":"`+jsText+`"}`)
	})
	mux.HandleFunc("GET /ja", func(w http.ResponseWriter, r *http.Request) {
		// No charset in the header: the <meta> says it.
		w.Header().Set("Content-Type", "text/html")
		w.Write(sjis(t, `<html><head><meta charset="Shift_JIS"><title>日本語のタイトル</title></head><body><p>`+jaText+`</p><a href="/">トップへ</a></body></html>`))
	})
	mux.HandleFunc("GET /ja-euc", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=EUC-JP")
		w.Write(eucjp(t, `<html><head><title>EUC-JPのページ</title></head><body><div>`+eucText+`</div></body></html>`))
	})
	mux.HandleFunc("GET /redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/final", http.StatusFound)
	})
	mux.HandleFunc("GET /final", html(`<html><head><title>Final</title></head><body><p>`+finalText+`</p></body></html>`))
	mux.HandleFunc("GET /big", html(`<html><head><title>Big</title></head><body><p>A page with a large file</p><img src="/big.bin"><img src="/img/a.png"></body></html>`))
	big := bytes.Repeat([]byte("0123456789abcdef"), 16<<10) // 256 KiB
	mux.HandleFunc("GET /big.bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		w.Write(big)
	})
	mux.HandleFunc("GET /long", html(`<html><head><title>Long</title></head><body><p>Top of a long page</p>
<div style="height: 6000px">spacer</div><img alt="`+lazyAlt+`" loading="lazy" src="/img/lazy.png" width="8" height="8"><p>Bottom</p></body></html>`))
	// /heavy weighs about 2.5 MB: ten 256 KiB images that do not compress.
	noise := make([]byte, 256<<10)
	for i := range noise {
		noise[i] = byte(i*7919 ^ i>>3)
	}
	var heavy strings.Builder
	heavy.WriteString(`<html><head><title>Heavy</title><link rel="stylesheet" href="/style.css"></head><body><p>A heavy page</p>`)
	for i := range 10 {
		fmt.Fprintf(&heavy, `<img src="/heavy/%d.bin" width="10" height="10">`, i)
	}
	heavy.WriteString(`</body></html>`)
	mux.HandleFunc("GET /heavy", html(heavy.String()))
	mux.HandleFunc("GET /heavy/{n}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", fmt.Sprint(len(noise)))
		w.Write(noise)
	})
	mux.HandleFunc("GET /file.zip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Disposition", `attachment; filename="file.zip"`)
		w.Write([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	})
	mux.HandleFunc("GET /status/429", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "7")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	})
	mux.HandleFunc("GET /embed", func(w http.ResponseWriter, r *http.Request) {
		// A page whose image lives at ?img=URL (a private address, in the
		// SSRF tests).
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><head><title>Embed</title></head><body><p>Page with an image elsewhere</p><img src="%s"></body></html>`, template.HTMLEscapeString(r.URL.Query().Get("img")))
	})
	mux.HandleFunc("GET /frame", func(w http.ResponseWriter, r *http.Request) {
		// A page framing ?src=URL (another site, in the iframe test).
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><head><title>Frame</title></head><body><p>Framing page</p><iframe src="%s"></iframe></body></html>`, template.HTMLEscapeString(r.URL.Query().Get("src")))
	})
	mux.HandleFunc("GET /ws-page", func(w http.ResponseWriter, r *http.Request) {
		// A page whose script opens a WebSocket to ?ws=URL and writes what
		// it hears.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><head><title>WS</title></head><body><p id="out">waiting</p><script>
const ws = new WebSocket(%q);
ws.onmessage = e => { document.getElementById('out').textContent = e.data; };
ws.onerror = () => { document.getElementById('out').textContent = 'socket failed'; };
</script></body></html>`, r.URL.Query().Get("ws"))
	})
	mux.Handle("GET /ws", websocket.Handler(func(c *websocket.Conn) {
		websocket.Message.Send(c, "hello over a socket")
		var in string
		websocket.Message.Receive(c, &in) // until the page goes
	}))
	mux.HandleFunc("GET /goto", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})

	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		s.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Fatalf("listening on %s: %v", addr, err)
	}
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func write(w http.ResponseWriter, s string) { w.Write([]byte(s)) }

// count is how many requests path got.
func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *site) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.hits {
		n += c
	}
	return n
}

// localConfig allows the test site's loopback address (through Config, not
// the environment).
func localConfig() Config {
	c := Defaults()
	c.AllowPrivate = true
	return c
}

// chromiumOrSkip skips a browser test where Chromium is missing, and fails
// it under CI=true, where a missing Chromium is a broken machine.
func chromiumOrSkip(t testing.TB) {
	t.Helper()
	if _, err := FindChromium(os.Getenv(EnvChromiumPath)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and the browser engine cannot run: %v", err)
		}
		t.Skipf("no Chromium: %v", err)
	}
}

// shared holds the browser engines tests share, one per configuration
// key, so that the package starts a few Chromium processes, not one per
// test; TestMain closes them.
var shared struct {
	sync.Mutex
	m map[string]*Browser
}

// sharedBrowser returns the shared engine for key, made with cfg the first
// time.
func sharedBrowser(t testing.TB, key string, cfg Config) *Browser {
	t.Helper()
	chromiumOrSkip(t)
	shared.Lock()
	defer shared.Unlock()
	if b, ok := shared.m[key]; ok {
		return b
	}
	cfg.ChromiumPath = os.Getenv(EnvChromiumPath)
	b, err := NewBrowser(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if shared.m == nil {
		shared.m = map[string]*Browser{}
	}
	shared.m[key] = b
	return b
}

// browserFor returns the shared browser engine allowing the test site.
func browserFor(t testing.TB) *Browser { return sharedBrowser(t, "local", localConfig()) }

// newBrowser returns a browser engine of its own, closed with the test.
func newBrowser(t testing.TB, cfg Config) *Browser {
	t.Helper()
	chromiumOrSkip(t)
	cfg.ChromiumPath = os.Getenv(EnvChromiumPath)
	b, err := NewBrowser(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, b := range shared.m {
		b.Close()
	}
	os.Exit(code)
}

// mustCapture captures u and fails the test on an engine error.
func mustCapture(t testing.TB, e Engine, u string) *Result {
	t.Helper()
	res, err := e.Capture(context.Background(), u)
	if err != nil {
		t.Fatalf("%s Capture(%s): %v", e.Name(), u, err)
	}
	return res
}

// exchangeFor returns the first exchange for url.
func exchangeFor(r *Result, url string) (int, bool) {
	for i, x := range r.Capture.Exchanges {
		if x.URL == url {
			return i, true
		}
	}
	return -1, false
}

func urlsOf(r *Result) []string {
	var out []string
	for _, x := range r.Capture.Exchanges {
		out = append(out, fmt.Sprintf("%d %s", x.Status, x.URL))
	}
	return out
}

// resolverFor maps names to addresses, like a DNS that says what a test
// needs (offline, no real name resolves to 127.0.0.2); other names go to the
// system resolver (localhost: /etc/hosts).
func resolverFor(names map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(ctx context.Context, host string) ([]netip.Addr, error) {
		if a, ok := names[strings.ToLower(host)]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
}
