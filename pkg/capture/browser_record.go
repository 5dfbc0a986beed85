package capture

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/fetch"
	cdpio "github.com/chromedp/cdproto/io"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// commandTimeout bounds one protocol command of the recorder, so that a
// stuck command cannot hold a paused response for ever.
const commandTimeout = 30 * time.Second

// onPaused records one response paused at the response stage and lets it
// go on. Every path ends the pause (continue, fulfil or fail): a response
// left paused would hang the page.
func (c *browserCapture) onPaused(seq int, ev *fetch.EventRequestPaused) {
	ctx, cancel := context.WithTimeout(c.tab, commandTimeout)
	defer cancel()
	resume := func() {
		chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
	}
	if ev.ResponseErrorReason != "" || ev.ResponseStatusCode == 0 || ev.Request == nil {
		resume()
		return
	}
	hdr := make(http.Header, len(ev.ResponseHeaders))
	for _, h := range ev.ResponseHeaders {
		if h != nil {
			hdr.Add(h.Name, h.Value)
		}
	}
	if kind, own := c.proxy.isOwn(hdr); own {
		c.proxyFailed(ctx, ev, kind)
		return
	}
	c.mu.Lock()
	stopped := c.stopped
	c.mu.Unlock()
	if stopped {
		resume()
		return
	}

	status := int(ev.ResponseStatusCode)
	rec := recorded{
		seq:       seq,
		networkID: ev.NetworkID,
		mainDoc:   ev.ResourceType == network.ResourceTypeDocument && string(ev.FrameID) == c.mainFrame,
		ex: wacz.Exchange{
			Method:        ev.Request.Method,
			URL:           ev.Request.URL,
			RequestHeader: requestHeader(ev.Request),
			Date:          time.Now(),
			Status:        status,
			StatusText:    ev.ResponseStatusText,
			Header:        hdr,
		},
	}
	if isRedirect(status) || status == http.StatusNoContent || status == http.StatusNotModified || ev.Request.Method == http.MethodHead {
		c.add(rec, cutNone)
		resume()
		return
	}
	if !rec.mainDoc && !c.budget.takeResource() {
		// Past the count cap: the page gets it, the archive does not.
		c.noteCut(rec.ex.URL, cutPage)
		resume()
		return
	}
	if c.budget.exhausted() {
		rec.ex.Truncated = true
		c.add(rec, cutPage)
		resume()
		return
	}
	cl := contentLength(hdr)
	if cl > c.budget.maxBody || (cl < 0 && ev.ResourceType == network.ResourceTypeMedia) {
		c.streamed(ctx, ev, rec)
		return
	}
	var why cut
	body, err := chromedp.Call(ctx, fetch.GetResponseBody, fetch.GetResponseBodyParams{RequestID: ev.RequestID})
	if err == nil {
		rec.ex.Body, why = c.budget.keep(body.Body)
		rec.ex.Truncated = why != cutNone
	}
	// A body Chromium cannot hand over (an empty response, one it
	// aborted) is recorded empty.
	c.add(rec, why)
	resume()
}

// streamed reads a body known to be over the cap (or of unknown length for
// media) from its stream up to the cap, records what was read and fulfils
// the request with those bytes, so neither the archive nor the download
// holds more than the cap.
func (c *browserCapture) streamed(ctx context.Context, ev *fetch.EventRequestPaused, rec recorded) {
	st, err := chromedp.Call(ctx, fetch.TakeResponseBodyAsStream, fetch.TakeResponseBodyAsStreamParams{RequestID: ev.RequestID})
	if err != nil {
		c.add(rec, cutNone)
		chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		return
	}
	defer chromedp.Call(ctx, cdpio.Close, cdpio.CloseParams{Handle: st.Stream})
	var body []byte
	why := cutNone
	for {
		r, err := chromedp.Call(ctx, cdpio.Read, cdpio.ReadParams{Handle: st.Stream, Size: 256 << 10})
		if err != nil {
			rec.ex.Body = body
			c.add(rec, cutNone)
			chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonFailed})
			return
		}
		keep, w := c.budget.grant(int64(len(body)), int64(len(r.Data)))
		body = append(body, r.Data[:keep]...)
		if w != cutNone {
			why = w
			break
		}
		if r.EOF {
			break
		}
	}
	rec.ex.Body, rec.ex.Truncated = body, why != cutNone
	c.add(rec, why)
	var out []*fetch.HeaderEntry
	for name, vs := range rec.ex.Header {
		switch strings.ToLower(name) {
		case "content-length", "content-encoding", "transfer-encoding":
			continue
		}
		for _, v := range vs {
			out = append(out, &fetch.HeaderEntry{Name: name, Value: v})
		}
	}
	out = append(out, &fetch.HeaderEntry{Name: "Content-Length", Value: strconv.Itoa(len(body))})
	chromedp.Call(ctx, fetch.FulfillRequest, fetch.FulfillRequestParams{
		RequestID: ev.RequestID, ResponseCode: ev.ResponseStatusCode, ResponsePhrase: ev.ResponseStatusText,
		ResponseHeaders: out, Body: body,
	})
}

// proxyFailed handles a response the proxy made because it could not or
// would not connect: it is not the site's, so it is not recorded, and the
// page sees a network error as it would without a proxy.
func (c *browserCapture) proxyFailed(ctx context.Context, ev *fetch.EventRequestPaused, kind string) {
	reason := network.ErrorReasonConnectionFailed
	if kind == "refused" {
		reason = network.ErrorReasonAddressUnreachable
	}
	err := errors.New("connection failed")
	if u, perr := url.Parse(ev.Request.URL); perr == nil {
		if e := c.proxy.lastFailure(hostPort(u.Host, defaultPort(u.Scheme))); e != nil {
			err = e
		}
	}
	c.mu.Lock()
	c.refused[ev.NetworkID] = err
	if errors.Is(err, ErrRefused) {
		c.stats.Refused++
	}
	c.mu.Unlock()
	chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: reason})
}

func defaultPort(scheme string) string {
	if scheme == "https" || scheme == "wss" {
		return "443"
	}
	return "80"
}

// add records an exchange, noting a cut.
func (c *browserCapture) add(rec recorded, why cut) {
	c.mu.Lock()
	c.exchanges = append(c.exchanges, rec)
	c.mu.Unlock()
	if why != cutNone {
		c.noteCut(rec.ex.URL, why)
	}
}

func (c *browserCapture) noteCut(u string, why cut) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.truncated = append(c.truncated, u)
	if why == cutBody {
		c.stats.TruncatedTooLarge++
	} else {
		c.stats.TruncatedPageCap++
	}
}

// mainResponse is the page's final response: the last non-redirect hop of
// the navigation's request (or, failing that, the last document of the main
// frame).
func (c *browserCapture) mainResponse(main network.RequestID) (wacz.Exchange, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *recorded
	for _, byID := range []bool{true, false} {
		for i := range c.exchanges {
			r := &c.exchanges[i]
			if byID && (main == "" || r.networkID != main) || !byID && !r.mainDoc {
				continue
			}
			if best == nil || r.seq > best.seq {
				best = r
			}
		}
		if best != nil {
			return best.ex, true
		}
	}
	return wacz.Exchange{}, false
}

func contentLength(h http.Header) int64 {
	v := h.Get("Content-Length")
	if v == "" {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 0 {
		return -1
	}
	return n
}

// requestHeader is the request as Chromium reports it (without the headers
// the network stack adds, such as Cookie), plus Host.
func requestHeader(r *network.Request) http.Header {
	h := http.Header{}
	for name, v := range r.Headers {
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			h.Add(name, line)
		}
	}
	if h.Get("Host") == "" {
		if u, err := url.Parse(r.URL); err == nil {
			h.Set("Host", u.Host)
		}
	}
	return h
}

// failure says why the browser could not go on.
func (c *browserCapture) failure(err error, doing string) *Failure {
	if c.parent.Err() != nil {
		return &Failure{Kind: FailCancelled, URL: c.res.URL, Message: "capture cancelled: " + c.parent.Err().Error()}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		msg := fmt.Sprintf("Timeout: the page did not load within %s", c.b.cfg.Timeout)
		if doing != "" {
			msg = fmt.Sprintf("Timeout: %s did not finish within %s", doing, c.b.cfg.Timeout)
		}
		return &Failure{Kind: FailTimeout, URL: c.res.URL, Timeout: c.b.cfg.Timeout, Message: msg}
	}
	var exit *exec.ExitError
	what := "the browser failed"
	if doing != "" {
		what = "the browser failed " + doing
	}
	if errors.As(err, &exit) {
		what = "the browser process ended"
	}
	return &Failure{Kind: FailInternal, URL: c.res.URL, Message: fmt.Sprintf("%s: %v", what, err)}
}

// navFailure says why the navigation got no page: the proxy's reason when it
// refused or failed a hop, else Chromium's error.
func (c *browserCapture) navFailure(main network.RequestID, asked, errorText string) *Failure {
	c.mu.Lock()
	err, byProxy := c.refused[main]
	at := c.urls[main]
	c.mu.Unlock()
	if at == "" {
		at = asked
	}
	if !byProxy {
		if u, perr := url.Parse(at); perr == nil {
			err = c.proxy.lastFailure(hostPort(u.Host, defaultPort(u.Scheme)))
		}
	}
	if err != nil {
		var re *RefusedError
		if errors.As(err, &re) {
			return &Failure{Kind: FailRefused, URL: at, Message: re.Error()}
		}
		return &Failure{Kind: FailConnection, URL: at, Message: connectionMessage(at, err)}
	}
	if c.parent.Err() != nil {
		return c.failure(c.parent.Err(), "")
	}
	if strings.Contains(errorText, "ERR_TIMED_OUT") {
		return &Failure{Kind: FailTimeout, URL: at, Timeout: c.b.cfg.Timeout, Message: "Timeout: " + errorText + " at " + at}
	}
	return &Failure{Kind: FailConnection, URL: at, Message: fmt.Sprintf("%s at %s", errorText, at)}
}
