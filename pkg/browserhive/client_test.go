package browserhive_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/browserhive"
	"github.com/capture-ledger/ledgerctl/pkg/browserhive/browserhivetest"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

const crawlID = "9072b625-0c1e-4b5e-9d8e-3f1a2b3c4d5e"

// succeed answers every capture with a success whose manifest is in bucket b.
func succeed(b string) browserhivetest.CaptureFunc {
	return func(_ context.Context, req browserhive.Request) (int, any) {
		id := uuid.NewString()
		return 0, browserhivetest.WireResponse{
			TaskID: id,
			Report: browserhivetest.Report(id, req.CorrelationID, req.URL, "", "", 200, map[string]string{
				"wacz":  browserhivetest.Location(b, id, req.CorrelationID, "wacz"),
				"links": browserhivetest.Location(b, id, req.CorrelationID, "links.json"),
			}),
			Manifest: map[string]any{"location": browserhivetest.Location(b, id, req.CorrelationID, "result.json")},
		}
	}
}

func request(url string) browserhive.Request {
	return browserhive.Request{URL: url, CorrelationID: crawlID, CaptureFormats: browserhive.Formats{WACZ: true, Links: true}}
}

// TestCaptureGoesRoundBusyEndpoints: an endpoint that answers 429 is passed
// over for the next one, whichever endpoint a call starts at.
func TestCaptureGoesRoundBusyEndpoints(t *testing.T) {
	t.Parallel()
	busy := browserhivetest.New(t, succeed("bh"))
	busy.Busy.Store(true)
	free := browserhivetest.New(t, succeed("bh"))
	c := &browserhive.Client{Endpoints: []string{busy.URL, free.URL}}
	for i := range 4 {
		resp, err := c.Capture(context.Background(), request("https://example.com/"))
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if resp.Endpoint != free.URL {
			t.Errorf("call %d answered by %s, want the free endpoint %s", i, resp.Endpoint, free.URL)
		}
		if resp.Report.Status != browserhive.StatusSuccess || resp.Manifest.Location == "" {
			t.Errorf("call %d: %+v", i, resp)
		}
	}
	if n := len(free.Requests()); n != 4 {
		t.Errorf("the free endpoint ran %d captures, want 4", n)
	}
	if len(busy.Requests()) != 0 || busy.Answered(http.StatusTooManyRequests) == 0 {
		t.Errorf("the busy endpoint: %d captures, %d busy answers; want 0 and at least 1",
			len(busy.Requests()), busy.Answered(http.StatusTooManyRequests))
	}
	// The calls start at alternating endpoints, so the busy one was asked
	// first in half of them.
	if got := busy.Answered(http.StatusTooManyRequests); got != 2 {
		t.Errorf("the busy endpoint answered 429 %d times over 4 calls, want 2 (round-robin start)", got)
	}
}

// TestCaptureWaitsWhileAllBusy: when every endpoint is busy, the call
// pauses and goes round again.
func TestCaptureWaitsWhileAllBusy(t *testing.T) {
	t.Parallel()
	a := browserhivetest.New(t, succeed("bh"))
	b := browserhivetest.New(t, succeed("bh"))
	a.Busy.Store(true)
	b.Busy.Store(true)
	var pauses atomic.Int32
	c := &browserhive.Client{Endpoints: []string{a.URL, b.URL}, BusyPause: func() time.Duration {
		if pauses.Add(1) == 2 {
			b.Busy.Store(false) // b frees up during the second pause
		}
		return time.Millisecond
	}}
	resp, err := c.Capture(context.Background(), request("https://example.com/"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Endpoint != b.URL {
		t.Errorf("answered by %s, want %s", resp.Endpoint, b.URL)
	}
	if pauses.Load() != 2 || a.Answered(429) != 3 || b.Answered(429) != 2 {
		t.Errorf("pauses %d, 429s a=%d b=%d; want 2 pauses, a busy 3 times and b twice", pauses.Load(), a.Answered(429), b.Answered(429))
	}
}

// TestCaptureDeadlineWhileBusy: a call that never finds a free endpoint
// ends with a DeadlineError saying so, also when the deadline passes while
// a retry is in flight (under load, the likelier moment).
func TestCaptureDeadlineWhileBusy(t *testing.T) {
	t.Parallel()
	a := browserhivetest.New(t, succeed("bh"))
	a.Busy.Store(true)
	c := &browserhive.Client{Endpoints: []string{a.URL}, Deadline: 300 * time.Millisecond, BusyPause: func() time.Duration { return 5 * time.Millisecond }}
	_, err := c.Capture(context.Background(), request("https://example.com/"))
	var de *browserhive.DeadlineError
	if !errors.As(err, &de) || !de.Busy {
		t.Fatalf("got %v, want a DeadlineError while busy", err)
	}
}

// TestCaptureCancelled: a capture the server tore down comes back as a 200
// whose report is failed/cancelled, with the manifest it still wrote.
func TestCaptureCancelled(t *testing.T) {
	t.Parallel()
	var manifest string
	s := browserhivetest.New(t, func(_ context.Context, req browserhive.Request) (int, any) {
		id := uuid.NewString()
		manifest = browserhivetest.Location("bh", id, req.CorrelationID, "result.json")
		return 0, browserhivetest.WireResponse{
			TaskID:   id,
			Report:   browserhivetest.Report(id, req.CorrelationID, req.URL, "cancelled", "the capture was cancelled", 0, nil),
			Manifest: map[string]any{"location": manifest},
		}
	})
	resp, err := (&browserhive.Client{Endpoints: []string{s.URL}}).Capture(context.Background(), request("https://example.com/slow"))
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Report.Cancelled() || resp.Report.Status != browserhive.StatusFailed {
		t.Errorf("report %+v, want failed and cancelled", resp.Report)
	}
	if resp.Manifest.Location != manifest || resp.Manifest.Error != "" {
		t.Errorf("manifest %+v, want the location %s", resp.Manifest, manifest)
	}
	if resp.Report.Artifacts.WACZ != "" {
		t.Errorf("a cancelled capture has no artefacts, got %+v", resp.Report.Artifacts)
	}
}

// TestCaptureManifestError: a capture whose manifest could not be written
// carries the error instead of a location.
func TestCaptureManifestError(t *testing.T) {
	t.Parallel()
	s := browserhivetest.New(t, func(_ context.Context, req browserhive.Request) (int, any) {
		id := uuid.NewString()
		return 0, browserhivetest.WireResponse{
			TaskID:   id,
			Report:   browserhivetest.Report(id, req.CorrelationID, req.URL, "", "", 200, nil),
			Manifest: map[string]any{"error": "S3 PutObject timed out after 10s"},
		}
	})
	resp, err := (&browserhive.Client{Endpoints: []string{s.URL}}).Capture(context.Background(), request("https://example.com/"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Manifest.Error != "S3 PutObject timed out after 10s" || resp.Manifest.Location != "" {
		t.Errorf("manifest %+v, want the error", resp.Manifest)
	}
}

// TestCaptureRefused: a 400 or 500 is a RefusedError with the error type
// and message, and no other endpoint is tried (the request is at fault,
// or a capture may have started).
func TestCaptureRefused(t *testing.T) {
	t.Parallel()
	failing := browserhivetest.New(t, func(context.Context, browserhive.Request) (int, any) { return 500, nil })
	other := browserhivetest.New(t, succeed("bh"))
	c := &browserhive.Client{Endpoints: []string{failing.URL, other.URL}}
	_, err := c.Capture(context.Background(), request("https://example.com/"))
	var re *browserhive.RefusedError
	if !errors.As(err, &re) || re.Status != 500 || re.Type != "InternalFailure" {
		t.Fatalf("got %v, want a RefusedError 500 InternalFailure", err)
	}
	if len(other.Requests()) != 0 {
		t.Errorf("a 500 was retried on another endpoint")
	}

	_, err = (&browserhive.Client{Endpoints: []string{other.URL}}).Capture(context.Background(), request("ftp://example.com/"))
	if !errors.As(err, &re) || re.Status != 400 || re.Type != "ValidationException" || re.Message == "" {
		t.Fatalf("got %v, want a RefusedError 400 ValidationException with its message", err)
	}
}

// TestCaptureUnreachable: an endpoint that cannot be reached is passed
// over; when none can be, the error is ErrUnavailable (and
// ledger.ErrUnreachable).
func TestCaptureUnreachable(t *testing.T) {
	t.Parallel()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	up := browserhivetest.New(t, succeed("bh"))
	c := &browserhive.Client{Endpoints: []string{gone.URL, up.URL}}
	for range 2 {
		if _, err := c.Capture(context.Background(), request("https://example.com/")); err != nil {
			t.Fatal(err)
		}
	}
	_, err := (&browserhive.Client{Endpoints: []string{gone.URL}}).Capture(context.Background(), request("https://example.com/"))
	if !errors.Is(err, browserhive.ErrUnavailable) || !errors.Is(err, ledger.ErrUnreachable) {
		t.Fatalf("got %v, want ErrUnavailable", err)
	}
}

// TestCaptureRequestShape: the body carries all six formats, labels as [],
// the correlation id and signing; the test server refuses anything else.
func TestCaptureRequestShape(t *testing.T) {
	t.Parallel()
	s := browserhivetest.New(t, succeed("bh"))
	req := request("https://example.com/a")
	req.Signing = true
	if _, err := (&browserhive.Client{Endpoints: []string{s.URL + "/"}}).Capture(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	got := s.Requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	if got[0].URL != req.URL || got[0].CorrelationID != crawlID || !got[0].Signing || got[0].Labels == nil ||
		got[0].CaptureFormats != req.CaptureFormats {
		t.Errorf("request %+v, want %+v", got[0], req)
	}
}

// TestCaptureUnreadableAnswer: a 200 that is not a capture response is a
// ProtocolError naming the field.
func TestCaptureUnreadableAnswer(t *testing.T) {
	t.Parallel()
	s := browserhivetest.New(t, func(context.Context, browserhive.Request) (int, any) {
		return 0, map[string]any{"taskId": 7}
	})
	_, err := (&browserhive.Client{Endpoints: []string{s.URL}}).Capture(context.Background(), request("https://example.com/"))
	var pe *browserhive.ProtocolError
	var fe *browserhive.FieldError
	if !errors.As(err, &pe) || !errors.As(err, &fe) || fe.Field != "taskId" {
		t.Fatalf("got %v, want a ProtocolError on taskId", err)
	}
}
