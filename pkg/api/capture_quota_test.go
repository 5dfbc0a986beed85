package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// TestCaptureQuotaSixteenAtOnce: sixteen POST /api/captures from one
// caller at the same moment, against a site that holds every page until
// the refusals are in. The caller's bound (two at once) holds: exactly two
// fetch, the fourteen others are answered 429 with Retry-After and a body
// naming the bound, before anything was fetched or written; once the site
// answers, the two are captured whole, and the ledger and the bucket hold
// those two and nothing else.
func TestCaptureQuotaSixteenAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	env := apptest.New(t)
	var hits atomic.Int64
	hold := make(chan struct{})
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		hits.Add(1)
		select {
		case <-hold:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><head><title>quota</title></head><body><p>held</p></body></html>")
	}))
	defer site.Close()
	cfg := capture.Defaults()
	cfg.AllowPrivate = true
	eng := capture.NewHTTP(cfg)
	defer eng.Close()
	st, err := env.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	perms := app.Permissions{Client: env.FGA}
	quota := archive.NewCaptureQuota(archive.DefaultCaptureBounds, nil)
	svc := &archive.Captures{
		Capturer:    app.BuiltinCapturer{Engine: eng, Uploader: blob.Uploader{Client: env.Blob, Bucket: env.Bucket}, Software: "ledgerctl test"},
		Adder:       &archive.Adder{Store: st, Objects: env.Blob, Bucket: env.Bucket},
		Permissions: perms,
		Quota:       quota,
	}
	s := &api.Server{
		Access:   &archive.Access{Perms: perms, Catalog: st, Signer: env.Blob},
		Identity: identity.Headers{}, Submitters: perms, Captures: svc,
	}
	srv := serve(t, s)
	if err := env.FGA.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "submitter", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}

	type answer struct {
		status int
		retry  string
		body   string
	}
	const n = 16
	answers := make(chan answer, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			body := fmt.Sprintf(`{"urls":[%q],"organization":"acme"}`, fmt.Sprintf("%s/?n=%d", site.URL, i))
			req, _ := http.NewRequest("POST", srv.URL+"/api/captures", strings.NewReader(body))
			req.Header.Set("X-Capture-ledger-Subject", "alice")
			req.Header.Set("X-Capture-ledger-Organizations", "acme")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			answers <- answer{res.StatusCode, res.Header.Get("Retry-After"), strings.TrimSpace(string(b))}
		})
	}
	close(start)

	// The refusals come while the admitted two are held by the site.
	limit := archive.DefaultCaptureBounds.PerCaller
	var got []answer
	deadline := time.After(60 * time.Second)
	for len(got) < n-limit {
		select {
		case a := <-answers:
			got = append(got, a)
		case <-deadline:
			t.Fatalf("only %d answers while the site holds its pages: %+v", len(got), got)
		}
	}
	for _, a := range got {
		var e struct {
			Error string `json:"error"`
			Bound string `json:"bound"`
			Limit int    `json:"limit"`
		}
		secs, err := strconv.Atoi(a.retry)
		if a.status != http.StatusTooManyRequests || err != nil || secs < 1 || json.Unmarshal([]byte(a.body), &e) != nil ||
			e.Bound != archive.BoundCallerCaptures || e.Limit != limit {
			t.Errorf("a request over the bound: %d Retry-After %q %s", a.status, a.retry, a.body)
		}
	}
	// Let any admitted request that had not reached the site yet get there.
	for i := 0; hits.Load() < int64(limit) && i < 200; i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if h := hits.Load(); h != int64(limit) {
		t.Errorf("the site was asked for %d pages at once, want %d (the caller's bound)", h, limit)
	}
	if r := quota.Running("acme"); r != limit {
		t.Errorf("%d captures hold a place, want %d", r, limit)
	}
	close(hold)
	wg.Wait()
	close(answers)
	captured := map[string]bool{}
	for a := range answers {
		var res archive.CaptureResult
		if a.status != 200 || json.Unmarshal([]byte(a.body), &res) != nil || len(res.Pages) != 1 || res.Pages[0].Status != archive.Captured {
			t.Errorf("an admitted capture: %d %s", a.status, a.body)
			continue
		}
		captured[res.Pages[0].ArchiveID] = true
	}
	if len(captured) != limit {
		t.Errorf("%d archives captured, want %d", len(captured), limit)
	}
	if r := quota.Running("acme"); r != 0 {
		t.Errorf("%d places still held after every capture ended", r)
	}

	// Nothing half-captured: the ledger and the bucket hold the admitted
	// captures whole (a WACZ, a links file and a manifest each) and
	// nothing of the refused ones.
	var archives, submissions int
	if err := st.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM archives), (SELECT count(*) FROM capture_submissions)`).Scan(&archives, &submissions); err != nil {
		t.Fatal(err)
	}
	if archives != limit || submissions != limit {
		t.Errorf("the ledger holds %d archives and %d submissions, want %d of each", archives, submissions, limit)
	}
	keys, err := env.Blob.List(ctx, env.Bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3*limit {
		t.Errorf("the bucket holds %d objects, want %d: %v", len(keys), 3*limit, keys)
	}
}
