package capture

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// maxRedirects is how many redirect hops a capture follows, for the page and
// for each subresource (browsers allow 20; pages needing more are broken).
const maxRedirects = 10

// maxCSSDepth bounds @import chains (a stylesheet importing a stylesheet…)
// and frames within frames together.
const maxCSSDepth = 4

// httpWorkers is how many subresources the http engine fetches at once, as
// a browser opens a handful of connections per host.
const httpWorkers = 4

// HTTP is the engine that runs no JavaScript: Go's HTTP client fetches the
// page (following and recording each redirect hop) and the subresources its
// HTML and CSS name — stylesheets and their @imports, url()s (fonts,
// backgrounds), icons, preloads, scripts, images with every srcset
// candidate, media sources — bounded by the Config's caps. Title, text and
// links come from the HTML as served: text a script would write, and
// anything a script would fetch, is not there. Iframes are not followed.
type HTTP struct {
	cfg       Config
	transport *http.Transport
}

var _ Engine = (*HTTP)(nil)

// NewHTTP returns the http engine. Its connections are pooled across
// captures; Close releases them.
func NewHTTP(cfg Config) *HTTP {
	cfg = cfg.withDefaults()
	d := newDialer(cfg)
	return &HTTP{cfg: cfg, transport: newTransport(d)}
}

// newTransport is an http.Transport whose every connection goes through the
// checked dialer and never through an environment proxy (a proxy would be
// the address checked, not the target).
func newTransport(d *dialer) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   15 * time.Second,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   httpWorkers,
		IdleConnTimeout:       30 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
}

// Name returns "http".
func (h *HTTP) Name() string { return EngineHTTP }

// Close closes idle connections.
func (h *HTTP) Close() error {
	h.transport.CloseIdleConnections()
	return nil
}

// Capture fetches the page at raw and what it names.
func (h *HTTP) Capture(ctx context.Context, raw string) (*Result, error) {
	u, err := CheckURL(raw)
	if err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, h.cfg.Timeout)
	defer cancel()
	c := &httpCapture{
		h:      h,
		client: &http.Client{Transport: h.transport, Jar: &lazyJar{}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		budget: newBudget(h.cfg),
		res:    &Result{Engine: EngineHTTP, URL: raw, Started: time.Now(), Complete: true},
		seen:   map[string]bool{},
	}
	c.run(ctx, parent, u)
	return c.res, nil
}

// lazyJar is one capture's cookie jar, made when the first cookie is set:
// until then (most pages) a request asks no jar for cookies, which costs
// as much as parsing its URL again.
type lazyJar struct {
	mu  sync.Mutex
	jar *cookiejar.Jar
}

func (j *lazyJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	if len(cookies) == 0 {
		return
	}
	j.mu.Lock()
	if j.jar == nil {
		j.jar, _ = cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	}
	jar := j.jar
	j.mu.Unlock()
	jar.SetCookies(u, cookies)
}

func (j *lazyJar) Cookies(u *url.URL) []*http.Cookie {
	j.mu.Lock()
	jar := j.jar
	j.mu.Unlock()
	if jar == nil {
		return nil
	}
	return jar.Cookies(u)
}

type httpCapture struct {
	h      *HTTP
	client *http.Client
	budget *budget

	// res and seen belong to the goroutine running the capture; the
	// fetching goroutines only return their hops.
	res  *Result
	seen map[string]bool
}

// fetched is one recorded hop.
type fetched struct {
	ex  wacz.Exchange
	cut cut
}

// fetch GETs target and records every hop up to the final response. The
// returned hops are in order; err is set when a hop got no response.
func (c *httpCapture) fetch(ctx context.Context, target *url.URL, kind resourceKind, referer string) ([]fetched, *url.URL, error) {
	var hops []fetched
	cur := target
	for hop := 0; ; hop++ {
		if hop > maxRedirects {
			return hops, cur, fmt.Errorf("more than %d redirects", maxRedirects)
		}
		f, err := c.get(ctx, cur, kind, referer)
		if err != nil {
			return hops, cur, err
		}
		hops = append(hops, f)
		loc := f.ex.Header.Get("Location")
		if !isRedirect(f.ex.Status) || loc == "" {
			return hops, cur, nil
		}
		next, err := resolve(cur, loc)
		if err != nil {
			return hops, cur, fmt.Errorf("redirect to an unreadable Location %q", loc)
		}
		if !isWebURL(next) {
			return hops, cur, fmt.Errorf("redirect to %q: only http and https URLs are followed", next.Redacted())
		}
		next.Fragment, next.RawFragment = "", ""
		cur = next
	}
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

var accept = map[resourceKind]string{
	kindOther:      "*/*",
	kindStylesheet: "text/css,*/*;q=0.1",
	kindScript:     "*/*",
	kindImage:      "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8",
	kindFont:       "*/*",
	kindMedia:      "*/*",
	kindFrame:      acceptDocument,
}

const acceptDocument = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// get makes one request and reads its body within the caps.
func (c *httpCapture) get(ctx context.Context, u *url.URL, kind resourceKind, referer string) (fetched, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return fetched{}, err
	}
	req.Header.Set("User-Agent", c.h.cfg.UserAgent)
	if referer == "" {
		req.Header.Set("Accept", acceptDocument)
	} else {
		req.Header.Set("Accept", accept[kind])
		req.Header.Set("Referer", referer)
	}
	var ip string
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if host, _, err := net.SplitHostPort(info.Conn.RemoteAddr().String()); err == nil {
				ip = host
			}
		},
	}))
	resp, err := c.client.Do(req)
	if err != nil {
		return fetched{}, err
	}
	defer resp.Body.Close()
	arrived := time.Now()
	body, why, err := c.budget.read(resp.Body, resp.ContentLength)
	if err != nil {
		return fetched{}, fmt.Errorf("reading the body of %s: %w", u.Redacted(), err)
	}
	// What was sent: the transport adds Host and, since it decodes gzip
	// itself, Accept-Encoding.
	sent := req.Header.Clone()
	sent.Set("Host", req.Host)
	if req.Host == "" {
		sent.Set("Host", u.Host)
	}
	if resp.Uncompressed || sent.Get("Accept-Encoding") == "" {
		sent.Set("Accept-Encoding", "gzip")
	}
	return fetched{
		ex: wacz.Exchange{
			Method:        http.MethodGet,
			URL:           u.String(),
			RequestHeader: sent,
			Date:          arrived,
			Status:        resp.StatusCode,
			StatusText:    statusText(resp),
			Header:        resp.Header.Clone(),
			Body:          body,
			Truncated:     why != cutNone,
			IP:            ip,
		},
		cut: why,
	}, nil
}

// statusText is the reason phrase as the server sent it.
func statusText(resp *http.Response) string {
	_, text, ok := strings.Cut(resp.Status, " ")
	if !ok {
		return ""
	}
	return text
}

// record adds hops to the result, noting bodies a cap cut.
func (c *httpCapture) record(hops []fetched) {
	for _, f := range hops {
		c.res.Capture.Exchanges = append(c.res.Capture.Exchanges, f.ex)
		switch f.cut {
		case cutBody:
			c.res.Stats.TruncatedTooLarge++
			c.res.TruncatedURLs = append(c.res.TruncatedURLs, f.ex.URL)
		case cutPage:
			c.res.Stats.TruncatedPageCap++
			c.res.TruncatedURLs = append(c.res.TruncatedURLs, f.ex.URL)
		}
	}
}

func (c *httpCapture) run(ctx, parent context.Context, u *url.URL) {
	res := c.res
	defer func() { res.finish(time.Now()) }()

	hops, final, err := c.fetch(ctx, u, kindOther, "")
	c.record(hops)
	res.Timings.Document = time.Since(res.Started)
	if err != nil {
		res.Failure = c.failure(ctx, parent, final, err)
		return
	}
	last := hops[len(hops)-1].ex
	res.FinalURL = last.URL
	res.Status, res.StatusText, res.Header = last.Status, last.StatusText, last.Header
	for _, f := range hops {
		c.seen[f.ex.URL] = true
	}
	if last.Status >= 400 {
		res.Failure = httpFailure(last.URL, last.Status, last.StatusText, last.Header, time.Now())
		return
	}
	if !isHTML(last.Header.Get("Content-Type"), last.Body) {
		res.Timings.Load = time.Since(res.Started)
		return
	}
	doc := parseHTML(last.Body, last.Header.Get("Content-Type"), final)
	res.Title, res.Text, res.Links = doc.Title, doc.Text, doc.Links
	res.NeedsJS = doc.NeedsJS

	queue := doc.Resources
	for depth := 0; len(queue) > 0 && depth <= maxCSSDepth; depth++ {
		queue = c.fetchAll(ctx, queue, res.FinalURL)
	}
	// A subresource the timeout cut off is a resource error; the page is
	// archived with what arrived in time.
	res.Timings.Load = time.Since(res.Started)
}

// fetchAll fetches the resources (httpWorkers at a time) and records them in
// the order given; it returns what the stylesheets among them name.
func (c *httpCapture) fetchAll(ctx context.Context, list []resource, referer string) []resource {
	type outcome struct {
		hops []fetched
		err  error
	}
	var todo []resource
	for _, r := range list {
		if c.seen[r.URL] {
			continue
		}
		c.seen[r.URL] = true
		if c.budget.exhausted() || !c.budget.takeResource() {
			c.res.Stats.TruncatedPageCap++
			c.res.TruncatedURLs = append(c.res.TruncatedURLs, r.URL)
			continue
		}
		todo = append(todo, r)
	}
	outs := make([]outcome, len(todo))
	sem := make(chan struct{}, httpWorkers)
	var wg sync.WaitGroup
	for i, r := range todo {
		u, err := url.Parse(r.URL)
		if err != nil {
			outs[i].err = err
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			outs[i].hops, _, outs[i].err = c.fetch(ctx, u, r.Kind, referer)
		}()
	}
	wg.Wait()

	var next []resource
	for i, r := range todo {
		o := outs[i]
		c.record(o.hops)
		if o.err != nil {
			c.res.Stats.Failed++
			re := ResourceError{URL: r.URL, Err: o.err.Error(), Refused: errors.Is(o.err, ErrRefused)}
			if re.Refused {
				c.res.Stats.Refused++
			}
			c.res.ResourceErrors = append(c.res.ResourceErrors, re)
			continue
		}
		if len(o.hops) == 0 {
			continue
		}
		last := o.hops[len(o.hops)-1].ex
		if last.Status >= 300 {
			continue
		}
		base, err := url.Parse(last.URL)
		if err != nil {
			continue
		}
		if r.Kind == kindFrame && isHTML(last.Header.Get("Content-Type"), last.Body) {
			// A framed document: what it names, in the same scope.
			next = append(next, parseHTML(last.Body, last.Header.Get("Content-Type"), base).Resources...)
			continue
		}
		if !isCSS(r.Kind, last.Header.Get("Content-Type")) {
			continue
		}
		for _, ref := range CSSURLs(decodeCSS(last.Body)) {
			u, err := resolve(base, ref.URL)
			if err != nil || !isWebURL(u) {
				continue
			}
			u.Fragment, u.RawFragment = "", ""
			next = append(next, resource{URL: u.String(), Kind: ref.kind()})
		}
	}
	return next
}

func isCSS(kind resourceKind, contentType string) bool {
	ct := strings.ToLower(contentType)
	return strings.HasPrefix(ct, "text/css") || (kind == kindStylesheet && (ct == "" || strings.HasPrefix(ct, "text/plain")))
}

// decodeCSS reads a stylesheet as UTF-8; URLs are ASCII in practice, so a
// stylesheet in another charset only risks non-ASCII URLs.
func decodeCSS(b []byte) string {
	return strings.ToValidUTF8(strings.TrimPrefix(string(b), "\ufeff"), "\uFFFD")
}

// failure says why the page got no usable response.
func (c *httpCapture) failure(ctx, parent context.Context, at *url.URL, err error) *Failure {
	where := ""
	if at != nil {
		where = at.Redacted()
	}
	switch {
	case parent.Err() != nil:
		return &Failure{Kind: FailCancelled, URL: where, Message: "capture cancelled: " + parent.Err().Error()}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return &Failure{Kind: FailTimeout, URL: where, Timeout: c.h.cfg.Timeout,
			Message: fmt.Sprintf("Timeout: no complete response from %s within %s", where, c.h.cfg.Timeout)}
	case errors.Is(err, ErrRefused):
		var re *RefusedError
		msg := err.Error()
		if errors.As(err, &re) {
			msg = re.Error()
		}
		return &Failure{Kind: FailRefused, URL: where, Message: msg}
	}
	return &Failure{Kind: FailConnection, URL: where, Message: connectionMessage(where, err)}
}

// connectionMessage says what went wrong at the network level in plain
// words, without Go's `Get "…":` wrapping.
func connectionMessage(where string, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Sprintf("cannot resolve %s: %s", dns.Name, dns.Err)
	}
	return fmt.Sprintf("connection to %s failed: %v", where, err)
}

// NewClient is an HTTP client that holds the capture engines' address
// policy (cfg's AllowPrivate, AllowPrefixes and Resolve), checked on the
// address each connection dials, and never uses an environment proxy: for
// what a capture fetches beside the page, such as robots.txt. timeout
// bounds one request.
func NewClient(cfg Config, timeout time.Duration) *http.Client {
	t := newTransport(newDialer(cfg.withDefaults()))
	t.TLSHandshakeTimeout, t.ResponseHeaderTimeout, t.MaxIdleConnsPerHost = timeout, timeout, 2
	return &http.Client{Timeout: timeout, Transport: t}
}
