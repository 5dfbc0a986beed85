// Package browserhive is a client of BrowserHive's capture API, era D
// (v12+): one synchronous POST /captures per
// page, answered 200 with {taskId, report, manifest} once the capture and
// its manifest are written. A server runs one capture at a time and answers
// 429 while busy, so a client holds several endpoints and goes round them.
package browserhive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Formats are BrowserHive's six capture formats; all six are always sent
// (the server requires every key).
type Formats struct {
	PNG   bool `json:"png"`
	WebP  bool `json:"webp"`
	HTML  bool `json:"html"`
	Links bool `json:"links"`
	MHTML bool `json:"mhtml"`
	WACZ  bool `json:"wacz"`
}

// Request is the body of POST /captures, limited to what the ledger sends
// (the capture-scheduler's flow sends the same keys).
type Request struct {
	URL string `json:"url"`
	// Labels are always sent, as [] when there are none.
	Labels []string `json:"labels"`
	// CorrelationID is the crawl id for a crawl's captures.
	CorrelationID  string  `json:"correlationId,omitempty"`
	CaptureFormats Formats `json:"captureFormats"`
	Signing        bool    `json:"signing"`
}

// DefaultDeadline bounds one capture call, busy rounds included (the
// capture-scheduler's flow uses the same 145 s).
const DefaultDeadline = 145 * time.Second

// Client calls BrowserHive endpoints. It is safe for concurrent use.
type Client struct {
	// Endpoints are the servers' base URLs (http(s)://host:port); one
	// capture runs on one of them.
	Endpoints []string
	// HTTP is the client used for every call (http.DefaultClient when nil);
	// its own Timeout should be zero or above Deadline.
	HTTP *http.Client
	// Deadline bounds one Capture call (DefaultDeadline when zero).
	Deadline time.Duration
	// BusyPause is how long to wait when every endpoint answered busy
	// before going round again (0.5–1.5 s at random when nil).
	BusyPause func() time.Duration

	next atomic.Uint64 // where the next call starts going round
}

// ErrUnavailable is what every call fails with when no endpoint could be
// reached at all; it matches ledger.ErrUnreachable too.
var ErrUnavailable = errors.New("browserhive: no endpoint could be reached")

// UnavailableError says why each endpoint could not be reached.
type UnavailableError struct {
	// Causes are "<endpoint>: <error>", one per endpoint.
	Causes []string
}

func (e *UnavailableError) Error() string {
	return "no BrowserHive endpoint could be reached (" + strings.Join(e.Causes, "; ") + ")"
}

// Is makes errors.Is match ErrUnavailable and ledger.ErrUnreachable.
func (e *UnavailableError) Is(target error) bool {
	return target == ErrUnavailable || target == ledger.ErrUnreachable
}

// RefusedError is an answer other than 200 or 429: the request was refused
// (400 ValidationException) or failed on the server (500 InternalFailure).
// No capture was made, so there is no task id.
type RefusedError struct {
	Endpoint string
	Status   int
	// Type is the x-amzn-errortype header ("ValidationException", …), or "".
	Type string
	// Message is the body's message (at most 300 characters), or "".
	Message string
}

func (e *RefusedError) Error() string {
	s := fmt.Sprintf("%d", e.Status)
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// DeadlineError is a call that ran out of time (busy rounds included). A
// capture in flight was torn down by the server when the call was cut; its
// task id is unknown here.
type DeadlineError struct {
	After time.Duration
	// Busy says every endpoint was still busy when time ran out.
	Busy bool
}

func (e *DeadlineError) Error() string {
	if e.Busy {
		return fmt.Sprintf("deadline %dms passed while every BrowserHive endpoint was busy", e.After.Milliseconds())
	}
	return fmt.Sprintf("deadline %dms passed", e.After.Milliseconds())
}

// ProtocolError is a 200 whose body is not a capture response: the capture
// may have happened, but its task id could not be read.
type ProtocolError struct {
	Endpoint string
	Err      error
}

func (e *ProtocolError) Error() string {
	return "BrowserHive answered 200 with a body that is not a capture response: " + e.Err.Error()
}

func (e *ProtocolError) Unwrap() error { return e.Err }

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

func (c *Client) deadline() time.Duration {
	if c.Deadline > 0 {
		return c.Deadline
	}
	return DefaultDeadline
}

func (c *Client) busyPause() time.Duration {
	if c.BusyPause != nil {
		return c.BusyPause()
	}
	return 500*time.Millisecond + rand.N(time.Second)
}

// Slots is how many captures the endpoints can run at once (one each).
func (c *Client) Slots() int { return len(c.Endpoints) }

// maxAnswer bounds the body read from one answer.
const maxAnswer = 4 << 20

// Capture asks for one capture and returns BrowserHive's answer. It goes
// round the endpoints starting at a different one each call: 429 (busy)
// moves on to the next; an endpoint that cannot be reached is left out for
// the rest of the call; when every endpoint left is busy it waits
// BusyPause and goes round again. It returns
//   - the Response for a 200 (whatever the capture's own status);
//   - *RefusedError for any other answer;
//   - *UnavailableError when no endpoint can be reached;
//   - *DeadlineError when Deadline passes (or ctx's error when ctx ends
//     first);
//   - *ProtocolError for a 200 whose body cannot be read.
func (c *Client) Capture(ctx context.Context, req Request) (Response, error) {
	if len(c.Endpoints) == 0 {
		return Response{}, &UnavailableError{Causes: []string{"no endpoint is configured"}}
	}
	if req.Labels == nil {
		req.Labels = []string{}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Response{}, fmt.Errorf("encode capture request: %w", err)
	}
	limit := c.deadline()
	callCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	timedOut := func(busy bool) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &DeadlineError{After: limit, Busy: busy}
	}

	n := len(c.Endpoints)
	start := int(c.next.Add(1)-1) % n
	down := make([]string, n) // why an endpoint was left out ("" = still in)
	// sawBusy: an earlier round found every endpoint left busy, so a
	// deadline that passes while a retry is in flight still ends a call
	// that never found a free endpoint.
	sawBusy := false
	for {
		busy := 0
		for i := range n {
			ep := c.Endpoints[(start+i)%n]
			if down[(start+i)%n] != "" {
				continue
			}
			resp, status, err := c.post(callCtx, ep, body)
			switch {
			case callCtx.Err() != nil:
				return Response{}, timedOut(sawBusy)
			case err != nil && status == 0:
				down[(start+i)%n] = ep + ": " + err.Error()
			case status == http.StatusTooManyRequests:
				busy++
			case err != nil:
				return Response{}, err
			default:
				return resp, nil
			}
		}
		if busy == 0 {
			causes := make([]string, 0, n)
			for _, d := range down {
				causes = append(causes, d)
			}
			return Response{}, &UnavailableError{Causes: causes}
		}
		sawBusy = true
		t := time.NewTimer(c.busyPause())
		select {
		case <-callCtx.Done():
			t.Stop()
			return Response{}, timedOut(true)
		case <-t.C:
		}
	}
}

// post sends one request to one endpoint. status is 0 when nothing
// answered (err then says why).
func (c *Client) post(ctx context.Context, endpoint string, body []byte) (Response, int, error) {
	u := strings.TrimRight(endpoint, "/") + "/captures"
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return Response{}, 0, fmt.Errorf("not a usable endpoint URL")
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, err := c.httpClient().Do(hreq)
	if err != nil {
		return Response{}, 0, describe(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		if ctx.Err() != nil {
			return Response{}, 0, ctx.Err()
		}
		// The server answered and then the body broke off: a capture may
		// have run, so this is not "unreachable".
		return Response{}, resp.StatusCode, &ProtocolError{Endpoint: endpoint, Err: fmt.Errorf("the answer broke off: %w", describe(err))}
	}
	switch resp.StatusCode {
	case http.StatusOK:
		if len(data) > maxAnswer {
			return Response{}, resp.StatusCode, &ProtocolError{Endpoint: endpoint, Err: fmt.Errorf("the answer is larger than %d bytes", maxAnswer)}
		}
		r, err := DecodeResponse(data)
		if err != nil {
			return Response{}, resp.StatusCode, &ProtocolError{Endpoint: endpoint, Err: err}
		}
		r.Endpoint = endpoint
		return r, resp.StatusCode, nil
	case http.StatusTooManyRequests:
		return Response{}, resp.StatusCode, nil
	}
	return Response{}, resp.StatusCode, &RefusedError{
		Endpoint: endpoint, Status: resp.StatusCode,
		Type: clean(errorType(resp.Header.Get("x-amzn-errortype")), 100), Message: clean(problemMessage(data), 300),
	}
}

// errorType keeps the name of an x-amzn-errortype value, which may carry a
// ":<namespace URL>" suffix.
func errorType(h string) string {
	if i := strings.IndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	return strings.TrimSpace(h)
}

// problemMessage reads the "message" of an error body, else the body's
// first characters.
func problemMessage(data []byte) string {
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &m) == nil && m.Message != "" {
		return m.Message
	}
	return strings.TrimSpace(string(data))
}

// describe keeps the transport's reason without the request URL.
func describe(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) && uerr.Err != nil {
		return uerr.Err
	}
	return err
}
