package runner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// readCounter is the ledger's bucket, counting the objects the level
// admission reads from it.
type readCounter struct {
	inner crawl.Objects
	mu    sync.Mutex
	keys  []string
}

func (c *readCounter) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	c.mu.Lock()
	c.keys = append(c.keys, key)
	c.mu.Unlock()
	return c.inner.Get(ctx, bucket, key)
}

func (c *readCounter) read() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.keys...)
}

// forger hands the runner another task's manifest for one URL, as a
// capturer that got its captures mixed up would.
type forger struct {
	runner.Capturer
	url string
}

func (f forger) Capture(ctx context.Context, req runner.CaptureRequest) (runner.CaptureOutcome, error) {
	out, err := f.Capturer.Capture(ctx, req)
	if err == nil && req.URL == f.url && out.Manifest != nil {
		m := *out.Manifest
		m.TaskID = uuid.NewString()
		out.Manifest = &m
	}
	return out, err
}

// TestLevelAdmittedFromWhatTheRunnerHolds: the embedded runner hands each
// level to the ledger in memory. A two-level crawl with the built-in
// capturer is admitted (archives registered, links followed) without the
// ledger reading one manifest or links file back from the bucket; and a
// manifest held in memory is judged exactly as one read from the bucket:
// one that names another task is refused, nothing of it admitted.
func TestLevelAdmittedFromWhatTheRunnerHolds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	h := newHost(t)
	var links strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&links, `<a href="/p%d">%d</a> `, i, i)
		h.page(fmt.Sprintf("/p%d", i), fmt.Sprintf("page %d", i), "<p>text</p>")
	}
	h.page("/", "home", links.String())
	forged := h.URL + "/p3"
	levels := make(chan runner.LevelEvent, 8)
	svc, r := e.service(forger{Capturer: newCounter(e), url: forged}, runner.Config{OnLevel: func(ev runner.LevelEvent) { levels <- ev }})
	reads := &readCounter{inner: svc.Objects}
	svc.Objects = reads
	follow, err := rules.ParseSpec("follow:same-origin")
	if err != nil {
		t.Fatal(err)
	}
	maxDepth, delay, par := 1, 0, 1
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{h.URL + "/"}, Rules: []rules.Rule{follow},
		MaxDepth: &maxDepth, PerHostDelayMs: &delay, HostParallelism: &par})
	if err != nil {
		t.Fatal(err)
	}
	ran := runUntilDone(t, r, levels, time.Minute)
	if len(ran) != 2 {
		t.Fatalf("ran %d levels, want 2: %+v", len(ran), ran)
	}
	if got := reads.read(); len(got) != 0 {
		t.Errorf("the admission read %d objects back from the bucket, want none: %v", len(got), got)
	}
	last := ran[len(ran)-1].Result
	if len(last.Refused) != 1 || last.Refused[0].URL != forged || last.Refused[0].Reason != crawl.RefuseManifestTask {
		t.Errorf("refused at depth 1 = %+v, want %s refused: %s", last.Refused, forged, crawl.RefuseManifestTask)
	}
	v, err := svc.Get(e.ctx, alice, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != crawl.StateSucceeded || v.PagesCaptured != 5 {
		t.Errorf("crawl ended %s with %d pages captured, want succeeded with 5 (the seed and four of its five links)", v.State, v.PagesCaptured)
	}
	var archives int
	var refusedState, refusedWhy string
	if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(*) FROM archives WHERE correlation_id = $1`, id).Scan(&archives); err != nil {
		t.Fatal(err)
	}
	if err := e.store.Pool.QueryRow(e.ctx, `SELECT state, coalesce(skip_reason, '') FROM crawl_pages WHERE crawl_id = $1 AND url = $2`,
		id, forged).Scan(&refusedState, &refusedWhy); err != nil {
		t.Fatal(err)
	}
	if archives != 5 {
		t.Errorf("%d archives registered, want 5 (none for the forged manifest)", archives)
	}
	if refusedState != "failed" || refusedWhy != "refused: "+crawl.RefuseManifestTask {
		t.Errorf("the forged page closed %s (%q), want failed with the refusal", refusedState, refusedWhy)
	}
	// Links files only where links are followed: the seed's (level 0),
	// none for the last level's pages, whose manifests and WACZs are all
	// there.
	keys, err := e.blob.List(e.ctx, e.bucket, "")
	if err != nil {
		t.Fatal(err)
	}
	var linksFiles, manifests int
	for _, k := range keys {
		if !strings.Contains(k, id) {
			continue
		}
		switch {
		case strings.HasSuffix(k, ".links.json"):
			linksFiles++
		case strings.HasSuffix(k, ".result.json"):
			manifests++
		}
	}
	if linksFiles != 1 || manifests != 6 {
		t.Errorf("the crawl wrote %d links files and %d manifests, want 1 (the seed's) and 6", linksFiles, manifests)
	}
}
