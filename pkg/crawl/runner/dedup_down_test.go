package runner_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// lockedBuffer is a log's destination read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPayloadIndexDownIsLogged: when the crawl's payload index (in
// PostgreSQL) cannot be asked, the capture is still made whole, storing
// every payload, and the capturer's log says why shared files were stored
// again, naming the page and the error.
func TestPayloadIndexDownIsLogged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	site := newHost(t)
	site.handle("/style.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		_, _ = w.Write([]byte(strings.Repeat("p { color: #c00; }\n", 200)))
	})
	site.page("/", "home", `<link rel="stylesheet" href="/style.css"><p>home</p>`)
	// A payload index whose database connections are gone.
	pool, err := postgres.Open(e.ctx, e.app.DSN, 2)
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	var logs lockedBuffer
	eng := capture.NewHTTP(captureConfig())
	t.Cleanup(func() { _ = eng.Close() })
	capt := &capture.CrawlCapturer{Engine: eng, Objects: e.blob, Bucket: e.bucket, Software: "ledgerctl dedup test",
		Payloads: &postgres.Store{Pool: pool}, Log: slog.New(slog.NewTextHandler(&logs, nil))}
	out, err := capt.Capture(context.Background(), runner.CaptureRequest{URL: site.URL + "/", CorrelationID: uuid.NewString(),
		TaskID: uuid.NewString(), Formats: crawl.Formats{WACZ: true}})
	if err != nil || !out.Captured {
		t.Fatalf("capture with the payload index down: %v %+v", err, out)
	}
	got := logs.String()
	if !strings.Contains(got, "payload index could not be used") || !strings.Contains(got, site.URL+"/") ||
		!strings.Contains(got, "asking the crawl's payload index") {
		t.Errorf("the capturer's log does not say the payload index failed for the page:\n%s", got)
	}
}
