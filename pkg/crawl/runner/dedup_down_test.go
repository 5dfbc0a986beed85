package runner_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestPayloadIndexDownIsLogged: when the crawl's payload index (in
// PostgreSQL) cannot be asked, the capture is still made whole, storing
// every payload, and the capturer's log says why shared files were stored
// again, naming the page and the error.
func TestPayloadIndexDownIsLogged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	site := newHost(t)
	site.file("/style.css", "text/css", []byte(strings.Repeat("p { color: #c00; }\n", 200)))
	site.page("/", "home", `<link rel="stylesheet" href="/style.css"><p>home</p>`)
	// A payload index whose database connections are gone.
	pool, err := postgres.Open(e.ctx, e.app.DSN, 2)
	if err != nil {
		t.Fatal(err)
	}
	pool.Close()
	var logs testenv.SyncBuffer
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

// TestStoppingRunnerStillShares: a capture fetched before the runner was
// told to stop is written whole after it, and still asks the crawl's
// payload index: a stylesheet an earlier capture of the crawl stored is a
// revisit, not a second copy (and nothing is logged as failing).
func TestStoppingRunnerStillShares(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	site := newHost(t)
	// The same stylesheet under two names: a revisit by payload digest
	// (the same URL within the same second of its original is stored
	// again, docs/replay.md).
	for _, p := range []string{"/a.css", "/b.css"} {
		site.file(p, "text/css", []byte(strings.Repeat("p { color: #c00; }\n", 200)))
	}
	site.page("/one", "one", `<link rel="stylesheet" href="/a.css"><p>one</p>`)
	site.page("/two", "two", `<link rel="stylesheet" href="/b.css"><p>two</p>`)
	var logs testenv.SyncBuffer
	eng := capture.NewHTTP(captureConfig())
	t.Cleanup(func() { _ = eng.Close() })
	capt := &capture.CrawlCapturer{Engine: eng, Objects: e.blob, Bucket: e.bucket, Software: "ledgerctl dedup test",
		Payloads: e.runnerStore(), Log: slog.New(slog.NewTextHandler(&logs, nil))}
	// A crawl of the ledger (the payload index is kept per crawl); its
	// runner is not run: the test captures for it.
	svc, _ := e.service(capt, runner.Config{})
	depth := 0
	crawlID, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{site.URL + "/one"}, MaxDepth: &depth})
	if err != nil {
		t.Fatal(err)
	}
	req := func(path string) runner.CaptureRequest {
		return runner.CaptureRequest{URL: site.URL + path, CorrelationID: crawlID, TaskID: uuid.NewString(), Formats: crawl.Formats{WACZ: true}}
	}
	if out, err := capt.Capture(context.Background(), req("/one")); err != nil || !out.Captured {
		t.Fatalf("the first capture: %v %+v", err, out)
	}
	ctx, stop := context.WithCancel(context.Background())
	second := req("/two")
	f, err := capt.Fetch(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	stop() // the runner is told to stop; the fetched capture is still written
	out, err := f.Store(ctx)
	if err != nil || !out.Captured {
		t.Fatalf("writing the second capture after the stop: %v %+v", err, out)
	}
	data, err := e.blob.Get(context.Background(), e.bucket, second.TaskID+"_"+crawlID+".wacz")
	if err != nil {
		t.Fatal(err)
	}
	if types := warcRecordTypes(t, data); types["revisit"] != 1 || types["response"] != 1 {
		t.Errorf("the second capture holds %v; want its page and a revisit of the stylesheet", types)
	}
	if got := logs.String(); got != "" {
		t.Errorf("the capturer logged: %s", got)
	}
}
