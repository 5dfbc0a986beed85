package crawl_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/windmill"
)

// webhook is a stand-in for the Windmill webhook endpoint: it records each
// call and answers with status and body.
type webhook struct {
	mu     sync.Mutex
	calls  []map[string]any
	auth   []string
	ctype  []string
	status int
	body   string
}

func (w *webhook) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	data, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	w.mu.Lock()
	w.calls = append(w.calls, m)
	w.auth = append(w.auth, r.Header.Get("Authorization"))
	w.ctype = append(w.ctype, r.Header.Get("Content-Type"))
	status, body := w.status, w.body
	w.mu.Unlock()
	rw.WriteHeader(status)
	_, _ = io.WriteString(rw, body)
}

func TestWindmillDispatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	hook := &webhook{status: 200, body: `"0192f0c4-5d7e-7a3b-9c1d-2e3f4a5b6c7d"` + "\n"}
	srv := httptest.NewServer(hook)
	defer srv.Close()
	e.svc.Dispatcher = &windmill.Dispatcher{URL: srv.URL + "/api/w/waggle/jobs/run/f/f/waggle/crawl_level", Token: "s3cret", Timeout: 5 * time.Second}
	e.svc.CaptureFormats = map[string]bool{"wacz": true, "png": true}
	e.svc.Signing = true

	id := e.start(crawl.StartRequest{Seeds: []string{www, "https://www.example.com:8080/x"}, MaxDepth: ptr(1), PerHostDelayMs: ptr(1500), HostParallelism: ptr(2)})
	if len(hook.calls) != 1 {
		t.Fatalf("%d webhook calls", len(hook.calls))
	}
	got := hook.calls[0]
	want := map[string]any{
		"crawl_id": id, "depth": 0.0, "per_host_delay_ms": 1500.0, "host_parallelism": 2.0, "signing": true,
		"capture_formats": map[string]any{"png": true, "webp": false, "html": false, "links": true, "mhtml": false, "wacz": true},
		"frontier": []any{
			map[string]any{"url": www, "host": "www.example.com", "lastFinishedAt": nil},
			map[string]any{"url": "https://www.example.com:8080/x", "host": "www.example.com:8080", "lastFinishedAt": nil},
		},
		"scripts": []any{},
	}
	if mustJSON(got) != mustJSON(want) {
		t.Errorf("payload =\n%s\nwant\n%s", mustJSON(got), mustJSON(want))
	}
	if hook.auth[0] != "Bearer s3cret" || !strings.HasPrefix(hook.ctype[0], "application/json") {
		t.Errorf("headers: %q %q", hook.auth[0], hook.ctype[0])
	}
	v := e.get(id)
	if v.LastJob == nil || v.LastJob.ID != "0192f0c4-5d7e-7a3b-9c1d-2e3f4a5b6c7d" || v.LastJob.Depth != 0 {
		t.Errorf("lastJob = %+v", v.LastJob)
	}

	// Level 1: the last one, so links are not forced; its job id is
	// recorded; a body that is not a UUID records nothing.
	hook.body = "0192f0c4-5d7e-7a3b-9c1d-000000000001"
	e.clock.Advance(time.Minute)
	res := e.report(id, crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{
		e.write(capture{url: www, linksInReport: true, links: links("https://www.example.com/next")}),
		{URL: "https://www.example.com:8080/x", Status: crawl.StatusSkipped, SkipReason: crawl.SkipRobots},
	}})
	if len(res.Next) != 1 || len(hook.calls) != 2 {
		t.Fatalf("answer %s, %d calls", mustJSON(res), len(hook.calls))
	}
	l1 := hook.calls[1]
	if l1["depth"] != 1.0 || l1["capture_formats"].(map[string]any)["links"] != false {
		t.Errorf("level 1 payload = %s", mustJSON(l1))
	}
	fr := l1["frontier"].([]any)[0].(map[string]any)
	if fr["lastFinishedAt"] == nil {
		t.Errorf("level 1 frontier has no lastFinishedAt: %s", mustJSON(fr))
	}
	if v := e.get(id); v.LastJob == nil || v.LastJob.Depth != 1 || v.LastJob.ID != "0192f0c4-5d7e-7a3b-9c1d-000000000001" {
		t.Errorf("lastJob = %+v", v.LastJob)
	}
	// The recorded depth never goes backwards.
	if err := e.store.RecordCrawlJob(e.ctx, id, "0192f0c4-5d7e-7a3b-9c1d-000000000002", 0); err != nil {
		t.Fatal(err)
	}
	if v := e.get(id); v.LastJob.Depth != 1 {
		t.Errorf("lastJob went back to %+v", v.LastJob)
	}
	if _, err := e.svc.Fail(e.ctx, alice, id, crawl.FailRequest{}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		status int
		body   string
		reason string // "" = the crawl keeps running
	}{
		{"webhook refuses", 503, "windmill is down " + strings.Repeat("x", 300), "crawl webhook → 503 windmill is down " + strings.Repeat("x", 183)},
		{"not a job id", 200, "queued", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hook.status, hook.body = tc.status, tc.body
			id := e.start(crawl.StartRequest{Seeds: []string{www}})
			v := e.get(id)
			if tc.reason == "" {
				if v.State != crawl.StateRunning || v.LastJob != nil {
					t.Fatalf("crawl = %s lastJob %+v", v.State, v.LastJob)
				}
				_, _ = e.svc.Fail(e.ctx, alice, id, crawl.FailRequest{})
				return
			}
			if v.State != crawl.StateFailed || str(v.StopReason) != rules.StopFailed || str(v.Error) != tc.reason || v.FinishedAt == nil {
				t.Fatalf("after a failed dispatch: state %s stop %s error %q", v.State, str(v.StopReason), str(v.Error))
			}
			if strings.Contains(str(v.Error), "s3cret") {
				t.Errorf("the token leaked into the error")
			}
		})
	}

	t.Run("unreachable", func(t *testing.T) {
		dead := httptest.NewServer(http.NotFoundHandler())
		dead.Close()
		e.svc.Dispatcher = &windmill.Dispatcher{URL: dead.URL + "/hook?token=s3cret", Token: "s3cret", Timeout: time.Second}
		id := e.start(crawl.StartRequest{Seeds: []string{www}})
		v := e.get(id)
		if v.State != crawl.StateFailed || !strings.HasPrefix(str(v.Error), "crawl webhook: ") || strings.Contains(str(v.Error), "s3cret") {
			t.Errorf("state %s error %q", v.State, str(v.Error))
		}
	})
}

// TestFailedDispatchLeavesFinishedCrawls: a dispatch that fails after the
// crawl stopped running does not overwrite its state.
func TestFailedDispatchOnlyClosesRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var id string
	e.disp.job = func(l crawl.Level) (string, error) {
		if l.Depth == 1 {
			// The crawl is closed while its level is being handed over.
			if _, _, err := e.store.FailCrawl(e.ctx, l.CrawlID, "closed by hand", e.clock.Now(), keepNothing); err != nil {
				t.Error(err)
			}
			return "", io.ErrUnexpectedEOF
		}
		return "", nil
	}
	id = e.start(crawl.StartRequest{Seeds: []string{www}})
	e.report(id, crawl.LevelReport{Depth: 0, Results: []crawl.PageReport{e.write(capture{url: www, linksInReport: true, links: links("https://www.example.com/n")})}})
	if v := e.get(id); v.State != crawl.StateFailed || str(v.Error) != "closed by hand" {
		t.Errorf("crawl = %s %q, want the first closing kept", v.State, str(v.Error))
	}
}

// keepNothing registers nothing of what a runner kept (there is no runner
// here).
func keepNothing(ledger.Crawl, int, [][]byte, []ledger.BegunCapture) (*ledger.LevelPlan, error) {
	return nil, nil
}
