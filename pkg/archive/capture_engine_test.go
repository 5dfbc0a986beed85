package archive_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

type namedCapturer string

func (namedCapturer) CaptureURL(context.Context, archive.CaptureJob) (archive.CaptureDone, error) {
	return archive.CaptureDone{}, errors.New("not reached")
}

// TestCaptureEngineChoice: an engine name that is not an engine, and an
// engine this server does not run, are each a field error on engine,
// before anything is asked or captured (no permissions are set: asking
// would panic); the available engines are listed in a fixed order.
func TestCaptureEngineChoice(t *testing.T) {
	t.Parallel()
	c := &archive.Captures{Capturer: namedCapturer("http"), Engines: map[string]archive.Capturer{"http": namedCapturer("http")}}
	if got := strings.Join(c.Available(), ","); got != "http" {
		t.Fatalf("available: %q", got)
	}
	for engine, want := range map[string]string{
		"gopher":  "must be one of http, browser",
		"browser": "browser is not available on this server (available: http)",
		"HTTP":    "must be one of",
	} {
		_, err := c.Capture(context.Background(), archive.CaptureRequest{URLs: []string{"https://example.com/"}, Org: "acme", Engine: engine, Subject: "alice"})
		var fe *ledger.FieldError
		if !errors.As(err, &fe) || fe.Field != "engine" || !strings.Contains(fe.Reason, want) {
			t.Errorf("engine %q: %v, want a field error on engine saying %q", engine, err, want)
		}
	}
}
