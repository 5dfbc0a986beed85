package runner_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/browserhive"
	"github.com/capture-ledger/ledgerctl/pkg/browserhive/browserhivetest"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// bhServer is a BrowserHive endpoint whose captures are made by the
// built-in capturer (real http engine, real bucket), answering the era-D
// wire format. A URL ending in /cancel is answered as a capture cut off
// (a cancelled manifest written, no archive); one ending in /merr as a
// capture whose manifest could not be written.
func bhServer(t *testing.T, e *env, inner *capture.CrawlCapturer) *browserhivetest.Server {
	return browserhivetest.New(t, func(ctx context.Context, req browserhive.Request) (int, any) {
		task := uuid.NewString()
		if strings.HasSuffix(req.URL, "/cancel") {
			key := task + "_" + req.CorrelationID + ".result.json"
			rep := browserhivetest.Report(task, req.CorrelationID, req.URL, "cancelled", "the capture was cancelled: deadline", 0, nil)
			body, _ := json.Marshal(rep)
			if err := e.blob.Put(ctx, e.bucket, key, "application/json", body); err != nil {
				return 500, nil
			}
			return 0, browserhivetest.WireResponse{TaskID: task, Report: rep, Manifest: map[string]any{"location": "s3://" + e.bucket + "/" + key}}
		}
		f := req.CaptureFormats
		out, err := inner.Capture(ctx, runner.CaptureRequest{URL: req.URL, CorrelationID: req.CorrelationID, TaskID: task,
			Formats: crawl.Formats{PNG: f.PNG, WebP: f.WebP, HTML: f.HTML, Links: f.Links, MHTML: f.MHTML, WACZ: f.WACZ}})
		if err != nil {
			return 500, nil
		}
		var rep map[string]any
		if out.Captured {
			arts := map[string]string{"wacz": strings.TrimSuffix(out.ManifestLocation, ".result.json") + ".wacz"}
			if out.LinksLocation != "" {
				arts["links"] = out.LinksLocation
			}
			rep = browserhivetest.Report(task, req.CorrelationID, req.URL, "", "", out.HTTPStatus, arts)
		} else {
			rep = browserhivetest.Report(task, req.CorrelationID, req.URL, "http", out.Failure, out.HTTPStatus, nil)
		}
		man := map[string]any{"location": out.ManifestLocation}
		if strings.HasSuffix(req.URL, "/merr") {
			man = map[string]any{"error": "S3 PutObject timed out after 10s"}
		}
		return 0, browserhivetest.WireResponse{TaskID: task, Report: rep, Manifest: man}
	})
}

// TestCrawlThroughBrowserHive: with BrowserHive as the capture backend,
// the runner goes round two endpoints (one busy throughout), at most one
// capture per endpoint; a cancelled capture fails its page with no archive
// and a manifest error is reported as such; the captures that wrote a
// success manifest are registered.
func TestCrawlThroughBrowserHive(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a, b := newHost(t), newHost(t)
	a.page("/", "home", `<a href="/ok">ok</a> <a href="/cancel">c</a> <a href="/merr">m</a> <a href="`+b.URL+`/">b</a>`)
	a.page("/ok", "ok", "")
	a.page("/merr", "merr", "")
	a.page("/cancel", "cancel", "")
	b.page("/", "b", "")
	inner := newCounter(e).inner
	busy, free := bhServer(t, e, inner), bhServer(t, e, inner)
	busy.Busy.Store(true)
	client := &browserhive.Client{Endpoints: []string{busy.URL, free.URL}, BusyPause: func() time.Duration { return 20 * time.Millisecond }}
	levels := make(chan runner.LevelEvent, 4)
	svc, r := e.service(browserhive.CrawlCapturer{Client: client}, runner.Config{OnLevel: func(ev runner.LevelEvent) { levels <- ev }})
	rs := (&mixedSite{c: a}).rules(t)[1:] // follow same-origin, capture same-site
	maxDepth, delay, par := 1, 0, 4
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{a.URL + "/"}, Rules: rs, MaxDepth: &maxDepth, PerHostDelayMs: &delay, HostParallelism: &par})
	if err != nil {
		t.Fatal(err)
	}
	runUntilDone(t, r, levels, time.Minute)

	if len(busy.Requests()) != 0 || busy.Answered(http.StatusTooManyRequests) == 0 {
		t.Errorf("the busy endpoint: %d captures, %d busy answers", len(busy.Requests()), busy.Answered(http.StatusTooManyRequests))
	}
	reqs := free.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d captures on the free endpoint, want 5", len(reqs))
	}
	for _, q := range reqs {
		depth0 := q.URL == a.URL+"/"
		if q.CorrelationID != id || q.CaptureFormats.Links != depth0 || !q.CaptureFormats.WACZ {
			t.Errorf("request %+v: want correlationId %s, links only on the followed level", q, id)
		}
	}
	states := map[string]string{}
	rows, err := e.store.Pool.Query(e.ctx, `SELECT url, state || ':' || coalesce(skip_reason, '') FROM crawl_pages WHERE crawl_id = $1`, id)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u, s string
		if err := rows.Scan(&u, &s); err != nil {
			t.Fatal(err)
		}
		states[u] = s
	}
	if !strings.HasPrefix(states[a.URL+"/cancel"], "failed:failed: the capture was cancelled") {
		t.Errorf("the cancelled page: %q", states[a.URL+"/cancel"])
	}
	for _, u := range []string{a.URL + "/", a.URL + "/ok", a.URL + "/merr", b.URL + "/"} {
		if states[u] != "captured:" {
			t.Errorf("%s: %q, want captured", u, states[u])
		}
	}
	var sources []string
	rows, err = e.store.Pool.Query(e.ctx, `SELECT source_url FROM archives ORDER BY source_url`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		sources = append(sources, s)
	}
	wantSources := []string{a.URL + "/", a.URL + "/ok", b.URL + "/"}
	slices.Sort(wantSources)
	if !slices.Equal(sources, wantSources) {
		t.Errorf("archives %v: want the three captures whose manifest was written", sources)
	}
	var withError, cancelled int
	if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(*) FILTER (WHERE manifest_error IS NOT NULL),
		count(*) FILTER (WHERE manifest_key LIKE '%.result.json' AND task_id::text IN (SELECT task_id FROM crawl_pages WHERE url = $1))
		FROM capture_submissions`, a.URL+"/cancel").Scan(&withError, &cancelled); err != nil {
		t.Fatal(err)
	}
	if withError != 1 || cancelled != 1 {
		t.Errorf("submissions: %d with a manifest error, %d for the cancelled capture; want 1 and 1", withError, cancelled)
	}
}
