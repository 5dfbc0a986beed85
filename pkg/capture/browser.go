package capture

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// chromiumNames are looked up on PATH, in order, when
// CAPTURE_LEDGER_CHROMIUM_PATH is not set.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome"}

// ChromiumError is a browser engine without a Chromium to run.
type ChromiumError struct {
	Path string // the configured path, "" when none was configured
	Err  error
}

// Error names the variable that sets the path.
func (e *ChromiumError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("capture: the browser engine cannot run %s=%s: %v", EnvChromiumPath, e.Path, e.Err)
	}
	return fmt.Sprintf("capture: the browser engine needs Chromium and found none of %s on PATH: install chromium or set %s to its path (the http engine works without it)",
		strings.Join(chromiumNames, ", "), EnvChromiumPath)
}

func (e *ChromiumError) Unwrap() error { return e.Err }

// FindChromium returns the Chromium the browser engine runs: path when set
// (it must be an executable file), else the first of chromium,
// chromium-browser, google-chrome on PATH. The error is a *ChromiumError.
func FindChromium(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", &ChromiumError{Path: path, Err: err}
		}
		return p, nil
	}
	for _, name := range chromiumNames {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", &ChromiumError{}
}

// Browser is the default engine: headless Chromium driven over the Chrome
// DevTools Protocol. It records every response the page's tab receives —
// the document and its redirect hops, stylesheets, scripts, images (the
// srcset candidate Chromium picks), fonts, XHR and fetch — with their
// bodies, waits for the load event and for the network to go quiet (both
// bounded), runs its behaviours (scrolls until the page stops growing,
// fetches every srcset candidate, lazy-loading URL and media source; see
// Behaviors), then reads
// document.title, document.body.innerText and the links, and takes a PNG
// screenshot of the viewport.
//
// Responses are recorded with the Fetch domain at the response stage: the
// browser pauses each response once its headers arrive, the engine takes
// the body (Fetch.getResponseBody, or a bounded read of the body stream
// when Content-Length already exceeds the cap) and lets it go on. Unlike
// Network.getResponseBody after loadingFinished, a paused body cannot be
// evicted from Chromium's buffers or lost to a navigation before it is read,
// redirect hops are paused too, and an oversized body is cut before it is
// downloaded whole.
//
// Chromium reaches the network only through an in-process proxy that dials
// with the same address policy as the http engine (loopback included, so
// nothing bypasses it). Cross-site iframes run in the page's process (site
// isolation is off for this browser) so that their requests are recorded
// too; requests of service workers are not recorded.
//
// One Chromium process, with a temporary profile removed by Close, serves
// every capture; each capture gets its own tab in a fresh browser context
// (no cookies or cache shared between captures). Safe for concurrent use.
type Browser struct {
	cfg  Config
	path string

	mu        sync.Mutex
	started   bool
	closed    bool
	proxy     *proxy
	dir       string
	ctx       context.Context // the browser's chromedp context
	cancelCtx context.CancelFunc
	cancelAll context.CancelFunc
	running   sync.WaitGroup
}

var _ Engine = (*Browser)(nil)

// NewBrowser returns the browser engine. It finds Chromium now (see
// FindChromium) and starts it at the first capture.
func NewBrowser(cfg Config) (*Browser, error) {
	cfg = cfg.withDefaults()
	path, err := FindChromium(cfg.ChromiumPath)
	if err != nil {
		return nil, err
	}
	return &Browser{cfg: cfg, path: path}, nil
}

// Name returns "browser".
func (b *Browser) Name() string { return EngineBrowser }

// start runs Chromium once; b.mu is held.
func (b *Browser) start() error {
	if b.started {
		return nil
	}
	dir, err := os.MkdirTemp("", "ledgerctl-chromium-")
	if err != nil {
		return fmt.Errorf("capture: profile directory: %w", err)
	}
	// Everything Chromium writes (its singleton socket, shared memory
	// files, caches, a denied download's placeholder) stays inside dir, so
	// Close removes it and the user's home is never touched.
	var env []string
	for _, sub := range []string{"tmp", "home", "home/.config", "home/.cache"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			os.RemoveAll(dir)
			return fmt.Errorf("capture: profile directory: %w", err)
		}
	}
	env = append(env, "TMPDIR="+filepath.Join(dir, "tmp"), "HOME="+filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "home/.config"), "XDG_CACHE_HOME="+filepath.Join(dir, "home/.cache"))
	p, err := startProxy(newDialer(b.cfg))
	if err != nil {
		os.RemoveAll(dir)
		return fmt.Errorf("capture: starting the browser's proxy: %w", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(b.path),
		chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Env(env...),
		chromedp.ProxyServer("http://"+p.addr()),
		// Without this Chromium connects to loopback itself.
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.Flag("disable-quic", true),
		// WebRTC may not open UDP around the proxy.
		chromedp.Flag("force-webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		chromedp.Flag("webrtc-ip-handling-policy", "disable_non_proxied_udp"),
		// HttpsUpgrades would fetch https:// first for an http:// URL.
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,HttpsUpgrades,HttpsFirstBalancedModeAutoEnable,site-per-process,IsolateOrigins,MediaRouter,OptimizationHints,AutofillServerCommunication"),
		chromedp.Flag("disable-site-isolation-trials", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(b.cfg.ViewportWidth, b.cfg.ViewportHeight),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	if err := chromedp.Do(ctx); err != nil {
		cancelCtx()
		cancelAlloc()
		p.close()
		os.RemoveAll(dir)
		return fmt.Errorf("capture: starting %s: %w", b.path, err)
	}
	b.started, b.proxy, b.dir, b.ctx = true, p, dir, ctx
	b.cancelCtx, b.cancelAll = cancelCtx, cancelAlloc
	return nil
}

// Close stops Chromium (captures still running fail), stops the proxy and
// removes the profile directory.
func (b *Browser) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	return b.teardown()
}

// teardown stops a started browser and forgets it; b.mu is held. Captures
// on it fail without needing b.mu, so waiting for them cannot deadlock.
func (b *Browser) teardown() error {
	if !b.started {
		return nil
	}
	b.started = false
	b.cancelCtx()
	b.cancelAll() // waits for the process to exit
	b.running.Wait()
	err := b.proxy.close()
	if rmErr := os.RemoveAll(b.dir); rmErr != nil {
		err = errors.Join(err, rmErr)
	}
	return err
}

// Capture loads raw in a new tab and records it.
func (b *Browser) Capture(ctx context.Context, raw string) (*Result, error) {
	u, err := CheckURL(raw)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, ErrClosed
	}
	if b.started && b.ctx.Err() != nil {
		// Chromium died (crashed, killed): start a new one.
		b.teardown()
	}
	if err := b.start(); err != nil {
		b.mu.Unlock()
		return nil, err
	}
	b.running.Add(1)
	bctx, p := b.ctx, b.proxy
	b.mu.Unlock()
	defer b.running.Done()

	res := &Result{Engine: EngineBrowser, URL: raw, Started: time.Now(), Complete: true}
	proxyURL := "http://" + p.addr()
	tabCtx, closeTab := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext(func(cp *target.CreateBrowserContextParams) {
		// A new browser context would otherwise take its own proxy
		// settings; hold it to the same proxy explicitly.
		cp.ProxyServer = proxyURL
		cp.ProxyBypassList = "<-loopback>"
	}))
	defer closeTab()
	stop := context.AfterFunc(ctx, closeTab)
	defer stop()

	c := &browserCapture{b: b, proxy: p, res: res, budget: newBudget(b.cfg), parent: ctx, tab: tabCtx}
	c.run(u)
	res.finish(time.Now())
	return res, nil
}

// recorded is one exchange and where it belongs.
type recorded struct {
	seq       int
	networkID network.RequestID
	mainDoc   bool // a document of the tab's main frame
	ex        wacz.Exchange
}

type browserCapture struct {
	b      *Browser
	proxy  *proxy
	res    *Result
	budget *budget
	parent context.Context
	tab    context.Context

	mainFrame string
	main      network.RequestID // the page's loader, once known

	mu        sync.Mutex
	stopped   bool
	seq       int
	exchanges []recorded
	handlers  sync.WaitGroup
	refused   map[network.RequestID]error // requests the proxy refused or failed
	truncated []string
	stats     Stats

	// network activity, for the idle wait and for failures
	inflight     map[network.RequestID]string // → current URL
	urls         map[network.RequestID]string
	failed       map[network.RequestID]string // → errorText
	lastActivity time.Time
	loaded       chan struct{}
	loadedOnce   sync.Once
}

// extractJS reads the page as BrowserHive does: title, body innerText, and
// a[href] links of the main frame (href resolved with its fragment, http(s)
// only, first of each href, text trimmed and cut at 200 UTF-16 units, rel
// verbatim).
const extractJS = `(() => {
	const seen = new Set(), links = [];
	for (const a of document.querySelectorAll('a[href]')) {
		const href = a.href;
		if (typeof href !== 'string' || !/^https?:/i.test(href) || seen.has(href)) continue;
		seen.add(href);
		links.push({href, text: (a.textContent || '').trim().slice(0, 200), rel: a.getAttribute('rel') || ''});
	}
	return {url: location.href, title: document.title || '', text: document.body ? document.body.innerText : '', links};
})()`

type extracted struct {
	URL   string      `json:"url"`
	Title string      `json:"title"`
	Text  string      `json:"text"`
	Links []wacz.Link `json:"links"`
}

func (c *browserCapture) run(u *url.URL) {
	res, cfg := c.res, c.b.cfg
	c.inflight, c.urls, c.failed = map[network.RequestID]string{}, map[network.RequestID]string{}, map[network.RequestID]string{}
	c.refused = map[network.RequestID]error{}
	c.loaded = make(chan struct{})
	c.lastActivity = time.Now()

	end := res.Started.Add(cfg.Timeout)
	// Keep time at the end to read the page and take the screenshot.
	reserve := min(5*time.Second, cfg.Timeout/4)
	navEnd := end.Add(-reserve)
	capCtx, cancel := context.WithDeadline(c.tab, end)
	defer cancel()

	defer c.stop()
	if err := chromedp.Listen(c.tab, c.onEvent); err != nil {
		res.Failure = c.failure(err, "")
		return
	}
	c.mainFrame = string(chromedp.FromContext(c.tab).Target.TargetID)
	// Downloads are recorded like any response, never saved to disk.
	if _, err := chromedp.CallBrowser(capCtx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
		Behavior: cdpbrowser.SetDownloadBehaviorBehaviorDeny, BrowserContextID: chromedp.FromContext(c.tab).BrowserContextID,
	}); err != nil {
		res.Failure = c.failure(err, "")
		return
	}
	if err := c.setup(capCtx); err != nil {
		res.Failure = c.failure(err, "")
		return
	}

	navCtx, cancelNav := context.WithDeadline(capCtx, navEnd)
	defer cancelNav()
	nav, err := chromedp.Call(navCtx, page.Navigate, page.NavigateParams{URL: u.String()})
	res.Timings.Document = time.Since(res.Started)
	if err != nil {
		res.Failure = c.failure(err, "")
		return
	}
	main := network.RequestID(nav.LoaderID)
	c.mu.Lock()
	c.main = main
	c.mu.Unlock()
	last, ok := c.mainResponse(main)
	if nav.ErrorText != "" {
		if ok && last.Status < 300 && (nav.IsDownload || strings.Contains(nav.ErrorText, "ERR_ABORTED")) {
			// A document Chromium downloads instead of showing (a PDF, a
			// ZIP): its response is recorded; there is no page to read.
			res.FinalURL = last.URL
			res.Status, res.StatusText, res.Header = last.Status, last.StatusText, last.Header
			return
		}
		res.Failure = c.navFailure(main, u.String(), nav.ErrorText)
		return
	}
	if !ok {
		res.Failure = c.navFailure(main, u.String(), "no response recorded for the page")
		return
	}
	res.FinalURL = last.URL
	res.Status, res.StatusText, res.Header = last.Status, last.StatusText, last.Header
	if last.Status >= 400 {
		res.Failure = httpFailure(last.URL, last.Status, last.StatusText, last.Header, time.Now())
		return
	}

	select {
	case <-c.loaded:
	case <-navCtx.Done():
		if c.parent.Err() != nil {
			res.Failure = c.failure(c.parent.Err(), "")
			return
		}
		// The document arrived but the load event did not come in time
		// (a resource hangs): archive what loaded.
	}
	res.Timings.Load = time.Since(res.Started)

	settleStart := time.Now()
	c.waitIdle(navCtx, cfg.IdleTime, cfg.SettleTimeout)
	if left := time.Until(navEnd); left > 2*time.Second {
		// The behaviours (behaviors.go) keep to their budget and to what
		// is left before the time reserved for reading the page.
		res.Behaviors = c.behave(navCtx, min(cfg.ScrollTimeout, left-2*time.Second))
	}
	res.Timings.Settle = time.Since(settleStart)

	x, err := chromedp.Run(capCtx, chromedp.Evaluate[extracted](extractJS))
	if err != nil {
		res.Failure = c.failure(err, "reading the page")
		return
	}
	res.Title, res.Text = x.Title, x.Text
	res.Links = x.Links
	if res.Links == nil {
		res.Links = []wacz.Link{}
	}
	if x.URL != "" && x.URL != "about:blank" {
		res.FinalURL = x.URL
	}
	png, err := chromedp.Run(capCtx, chromedp.CaptureScreenshot())
	if err == nil && len(png) > 0 {
		res.Capture.Screenshot = &wacz.Screenshot{PageURL: res.FinalURL, Date: time.Now(), PNG: png}
	}
	if th := c.thumbnail(capCtx); th != nil {
		th.PageURL = res.FinalURL
		res.Capture.Thumbnail = th
	}
}

// ThumbnailWidth is the width of the thumbnail the browser engine stores
// with each page (its height keeps the viewport's proportions).
const ThumbnailWidth = 400

// thumbnail has Chromium render the viewport again at ThumbnailWidth
// pixels wide as a JPEG (its own scaling: no image code of ours touches
// the page's pixels). nil when it fails or is not a valid JPEG.
func (c *browserCapture) thumbnail(ctx context.Context) *wacz.Thumbnail {
	cfg := c.b.cfg
	scale := min(1, float64(ThumbnailWidth)/float64(cfg.ViewportWidth))
	shot, err := chromedp.Call(ctx, page.CaptureScreenshot, page.CaptureScreenshotParams{
		Format: page.CaptureScreenshotFormatJpeg, Quality: new(int64(75)),
		Clip: &page.Viewport{Width: float64(cfg.ViewportWidth), Height: float64(cfg.ViewportHeight), Scale: scale},
	})
	if err != nil {
		return nil
	}
	data := shot.Data
	if _, err := wacz.CheckImage(data, "image/jpeg"); err != nil {
		return nil
	}
	return &wacz.Thumbnail{Date: time.Now(), Mime: "image/jpeg", Data: data}
}

// setup turns on what the capture listens to.
func (c *browserCapture) setup(ctx context.Context) error {
	cfg := c.b.cfg
	if _, err := chromedp.Call(ctx, emulation.SetDeviceMetricsOverride, emulation.SetDeviceMetricsOverrideParams{
		Width: int64(cfg.ViewportWidth), Height: int64(cfg.ViewportHeight), DeviceScaleFactor: 1,
	}); err != nil {
		return err
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		return err
	}
	if _, err := chromedp.Call(ctx, page.Enable, page.EnableParams{}); err != nil {
		return err
	}
	_, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{
		Patterns: []*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageResponse}},
	})
	return err
}

// onEvent runs in the tab's read loop: it must not block or call the
// browser, so paused responses are handled on their own goroutines.
func (c *browserCapture) onEvent(ev any) {
	switch ev := ev.(type) {
	case *fetch.EventRequestPaused:
		c.mu.Lock()
		if c.stopped {
			// Not recorded; onPaused only lets it go. Not counted in
			// handlers: stop may already be waiting on them.
			c.mu.Unlock()
			go c.onPaused(0, ev)
			return
		}
		c.seq++
		seq := c.seq
		c.handlers.Add(1)
		c.mu.Unlock()
		go func() {
			defer c.handlers.Done()
			c.onPaused(seq, ev)
		}()
	case *network.EventRequestWillBeSent:
		c.mu.Lock()
		c.lastActivity = time.Now()
		if ev.Type != network.ResourceTypeEventSource {
			c.inflight[ev.RequestID] = ev.Request.URL
		}
		c.urls[ev.RequestID] = ev.Request.URL
		c.mu.Unlock()
	case *network.EventLoadingFinished:
		c.mu.Lock()
		c.lastActivity = time.Now()
		delete(c.inflight, ev.RequestID)
		c.mu.Unlock()
	case *network.EventLoadingFailed:
		c.mu.Lock()
		c.lastActivity = time.Now()
		delete(c.inflight, ev.RequestID)
		if !ev.Canceled {
			c.failed[ev.RequestID] = ev.ErrorText
		}
		c.mu.Unlock()
	case *page.EventLoadEventFired:
		c.loadedOnce.Do(func() { close(c.loaded) })
	}
}

// activity says whether a request of the page is in flight, and when the
// page's network was last active.
func (c *browserCapture) activity() (busy bool, last time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight) > 0, c.lastActivity
}

// waitIdle returns once no request has been in flight for quiet, or after
// max, or when ctx ends.
func (c *browserCapture) waitIdle(ctx context.Context, quiet, max time.Duration) {
	deadline := time.Now().Add(max)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		c.mu.Lock()
		idle := len(c.inflight) == 0 && time.Since(c.lastActivity) >= quiet
		c.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// stop ends recording and waits (bounded) for responses being handled.
func (c *browserCapture) stop() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	done := make(chan struct{})
	go func() { c.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ex := slices.Clone(c.exchanges)
	slices.SortFunc(ex, func(a, b recorded) int { return cmp.Compare(a.seq, b.seq) })
	for _, r := range ex {
		c.res.Capture.Exchanges = append(c.res.Capture.Exchanges, r.ex)
	}
	c.res.TruncatedURLs = append(c.res.TruncatedURLs, c.truncated...)
	c.res.Stats.TruncatedTooLarge += c.stats.TruncatedTooLarge
	c.res.Stats.TruncatedPageCap += c.stats.TruncatedPageCap
	c.res.Stats.Refused += c.stats.Refused
	for id, text := range c.failed {
		if id == c.main {
			continue // the page's own failure is res.Failure
		}
		re := ResourceError{URL: c.urls[id], Err: text}
		err, ok := c.refused[id]
		if !ok && strings.Contains(text, "ERR_TUNNEL_CONNECTION_FAILED") {
			// An https request the proxy would not tunnel: it says why.
			if u, perr := url.Parse(re.URL); perr == nil {
				err = c.proxy.lastFailure(hostPort(u.Host, defaultPort(u.Scheme)))
				ok = err != nil
				if ok && errors.Is(err, ErrRefused) {
					c.res.Stats.Refused++
				}
			}
		}
		if ok {
			re.Err, re.Refused = err.Error(), errors.Is(err, ErrRefused)
		}
		c.res.ResourceErrors = append(c.res.ResourceErrors, re)
		c.res.Stats.Failed++
	}
	slices.SortFunc(c.res.ResourceErrors, func(a, b ResourceError) int { return strings.Compare(a.URL, b.URL) })
}
