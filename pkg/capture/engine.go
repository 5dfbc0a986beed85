package capture

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// Engine captures one page. Both engines return a *Result for every capture
// they attempted, including failed ones (Result.Failure says why); the error
// is for captures that could not be attempted at all: a URL that is not
// http(s) (*URLError), a missing Chromium (*ChromiumError), a closed engine.
// Engines are safe for concurrent use.
type Engine interface {
	Capture(ctx context.Context, url string) (*Result, error)
	// Name is "browser", "http" or "auto".
	Name() string
	// Close releases what the engine holds (the browser process).
	Close() error
}

// Engine names.
const (
	EngineBrowser = "browser"
	EngineHTTP    = "http"
	// EngineAuto is http first, the browser for a page that needs
	// JavaScript (Auto).
	EngineAuto = "auto"
)

// Engines lists the engine names, the default first.
var Engines = []string{EngineBrowser, EngineHTTP, EngineAuto}

// New returns the engine called name ("" is the default, browser).
func New(name string, cfg Config) (Engine, error) {
	switch name {
	case "", EngineBrowser:
		return NewBrowser(cfg)
	case EngineHTTP:
		return NewHTTP(cfg), nil
	case EngineAuto:
		return NewAuto(cfg)
	}
	return nil, fmt.Errorf("capture: unknown engine %q (known: %s)", name, strings.Join(Engines, ", "))
}

// ErrClosed is returned by Capture after Close.
var ErrClosed = errors.New("capture: engine closed")

// Result is one capture: what to archive and what was read off the page.
type Result struct {
	Engine string
	// URL is the URL asked for; FinalURL the document's after redirects
	// (and, in the browser, after script navigation).
	URL, FinalURL string
	// Status and StatusText are the main document's final response (after
	// redirects); 0 when no response arrived.
	Status     int
	StatusText string
	// Header is that response's header (e.g. Retry-After on 429/503).
	Header http.Header

	Title string
	Text  string
	Links []wacz.Link

	// Capture is what pkg/wacz writes. On failure it holds what was
	// recorded before the failure.
	Capture wacz.Capture

	// Complete is false when a cap cut a body or kept a resource from being
	// recorded; TruncatedURLs lists them, sorted (BrowserHive's
	// completeness.truncatedUrls).
	Complete      bool
	TruncatedURLs []string
	// ResourceErrors are subresources that failed (connection errors,
	// refusals); a failed subresource does not fail the capture.
	ResourceErrors []ResourceError
	Stats          Stats

	Started time.Time
	Timings Timings

	// Failure is non-nil when the page itself could not be captured.
	Failure *Failure

	// NeedsJS, from the http engine, says why the page seems to need
	// JavaScript to show its content (NeedsJSEmpty, NeedsJSNoscript), or
	// is "". The auto engine recaptures such a page with the browser.
	NeedsJS string
	// AutoReason, from the auto engine, is the http capture's NeedsJS
	// that made it capture the page with the browser instead ("" when the
	// http capture was kept or another engine ran).
	AutoReason string

	// Behaviors is what the browser engine did to the page after it loaded
	// (nil for the http engine, or when no time was left for them).
	Behaviors *Behaviors
}

// OK reports whether the page was captured (no Failure).
func (r *Result) OK() bool { return r.Failure == nil }

// Stats counts what a capture recorded (BrowserHive's waczStats).
type Stats struct {
	Recorded          int   // exchanges recorded
	Refused           int   // requests refused by the address policy
	TruncatedTooLarge int   // bodies cut by MaxBodyBytes
	TruncatedPageCap  int   // bodies cut or skipped by MaxPageBytes or MaxResources
	Failed            int   // requests that got no response
	BodyBytes         int64 // body bytes recorded
}

// Timings say where a capture's time went.
type Timings struct {
	Total time.Duration
	// Document is until the main document's final response arrived.
	Document time.Duration
	// Load is until the browser's load event (http: until every
	// subresource was fetched).
	Load time.Duration
	// Settle is the wait for network idle and the scroll (browser only).
	Settle time.Duration
}

// ResourceError is a request of the capture that got no response.
type ResourceError struct {
	URL     string
	Err     string
	Refused bool // refused by the address policy
}

// FailureKind classifies why a page could not be captured. The values are
// those of BrowserHive's errorDetails.type, plus "refused".
type FailureKind string

// The failure kinds.
const (
	FailHTTP       FailureKind = "http"       // the document answered ≥ 400
	FailTimeout    FailureKind = "timeout"    // Config.Timeout passed first
	FailConnection FailureKind = "connection" // DNS, TCP, TLS or protocol error
	FailRefused    FailureKind = "refused"    // the address policy refused it
	FailCancelled  FailureKind = "cancelled"  // the caller's context ended
	FailInternal   FailureKind = "internal"   // the browser failed
	// FailArtifactSink is Run's: an object could not be uploaded.
	FailArtifactSink FailureKind = "artifact_sink"
)

// Failure says plainly why a page could not be captured.
type Failure struct {
	Kind    FailureKind
	Message string
	// URL is the URL that failed (a redirect hop, perhaps).
	URL string
	// Status and StatusText for FailHTTP.
	Status     int
	StatusText string
	// RetryAfter is the server's Retry-After on a 429 or 503, 0 when absent.
	RetryAfter time.Duration
	// Timeout is the limit that passed, for FailTimeout.
	Timeout time.Duration
}

// Error returns the message.
func (f *Failure) Error() string { return f.Message }

// The coarse reasons Failure.Coarse answers.
const (
	CoarseRefused     = "refused by policy"
	CoarseUnreachable = "unreachable"
	CoarseCancelled   = "cancelled"
	CoarseFailed      = "the capture failed"
)

// Coarse is what the person who asked for the capture is told: refused by
// policy, unreachable (no connection, no HTTP answer, or none in time: a
// closed port, another protocol and a silent host read alike), "HTTP <status>"
// or a failure of the capturer itself. The Message — the address a name
// resolved to, the port, the protocol error — is for the server's log only:
// told to the caller, it would make the capturer a scanner of what it can
// reach.
func (f *Failure) Coarse() string {
	switch f.Kind {
	case FailRefused:
		return CoarseRefused
	case FailConnection, FailTimeout:
		return CoarseUnreachable
	case FailHTTP:
		return fmt.Sprintf("HTTP %d", f.Status)
	case FailCancelled:
		return CoarseCancelled
	}
	return CoarseFailed
}

func httpFailure(url string, status int, text string, h http.Header, now time.Time) *Failure {
	if text == "" {
		text = http.StatusText(status)
	}
	f := &Failure{
		Kind: FailHTTP, URL: url, Status: status, StatusText: text,
		Message: fmt.Sprintf("HTTP %d: %s", status, text),
	}
	if status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable {
		f.RetryAfter = ParseRetryAfter(h.Get("Retry-After"), now)
	}
	return f
}

// ParseRetryAfter reads a Retry-After value, delta-seconds or an HTTP date,
// relative to now; 0 when absent, unreadable or in the past. It is capped at
// a day, so a hostile server cannot park a crawl for ever.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > 86400 {
			n = 86400
		}
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	if d <= 0 {
		return 0
	}
	return min(d, 24*time.Hour)
}

// finish fills what both engines derive the same way once recording stops.
func (r *Result) finish(end time.Time) {
	r.Timings.Total = end.Sub(r.Started)
	slices.Sort(r.TruncatedURLs)
	r.TruncatedURLs = slices.Compact(r.TruncatedURLs)
	r.Complete = len(r.TruncatedURLs) == 0
	r.Capture.Created = end
	if r.FinalURL == "" {
		r.FinalURL = r.URL
	}
	r.Stats.Recorded = len(r.Capture.Exchanges)
	var n int64
	for _, e := range r.Capture.Exchanges {
		n += int64(len(e.Body))
	}
	r.Stats.BodyBytes = n
	if r.Failure == nil {
		r.Capture.Pages = []wacz.Page{{
			URL: r.URL, FinalURL: r.FinalURL, Date: r.Started,
			Title: r.Title, Text: r.Text, Links: r.Links,
		}}
		if r.Behaviors != nil {
			r.Capture.Pages[0].Behaviors = r.Behaviors
		}
		r.Capture.Pages[0].NeedsJS = r.NeedsJS
	}
}

// Auto is the auto engine: it captures a page with the http engine, and
// again with the browser engine when the http capture says the page needs
// JavaScript (Result.NeedsJS). The browser's capture is then the result,
// and its AutoReason says why it was made. A page the http engine could not
// capture is not retried. Chromium is started only when a page needs it.
type Auto struct {
	HTTP    *HTTP
	Browser *Browser
}

var _ Engine = (*Auto)(nil)

// NewAuto returns the auto engine; it needs Chromium as the browser engine
// does (a *ChromiumError otherwise).
func NewAuto(cfg Config) (*Auto, error) {
	b, err := NewBrowser(cfg)
	if err != nil {
		return nil, err
	}
	return &Auto{HTTP: NewHTTP(cfg), Browser: b}, nil
}

// Name returns "auto".
func (a *Auto) Name() string { return EngineAuto }

// Capture captures raw with http, then with the browser if needed.
func (a *Auto) Capture(ctx context.Context, raw string) (*Result, error) {
	res, err := a.HTTP.Capture(ctx, raw)
	if err != nil || res.Failure != nil || res.NeedsJS == "" {
		return res, err
	}
	b, err := a.Browser.Capture(ctx, raw)
	if err != nil {
		return nil, err
	}
	b.AutoReason = res.NeedsJS
	if b.Capture.Pages != nil {
		b.Capture.Pages[0].NeedsJS = res.NeedsJS
	}
	return b, nil
}

// Close closes both engines.
func (a *Auto) Close() error { return errors.Join(a.HTTP.Close(), a.Browser.Close()) }
