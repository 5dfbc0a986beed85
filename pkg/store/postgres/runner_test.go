package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestRunnerLockAndSave: one runner at a time holds a crawl; a result is
// kept (and counted as progress) only while the crawl runs.
func TestRunnerLockAndSave(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := postgres.Open(ctx, testenv.Database(t), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := &postgres.Store{Pool: pool}
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	id, _, err := st.InsertCrawl(ctx, ledger.NewCrawl{
		Seeds: []string{"https://example.com/"}, Hosts: []string{"example.com"}, Rules: []byte(`[{"follow":"same-origin"}]`),
		MaxDepth: 1, MaxPages: 10, PerHostDelayMs: 0, HostParallelism: 1, OrgID: "acme", RequestedBy: "alice", Now: t0,
	})
	if err != nil {
		t.Fatal(err)
	}

	unlock, ok, err := st.RunnerLock(ctx, id)
	if err != nil || !ok {
		t.Fatalf("first lock: %v %v", ok, err)
	}
	if _, ok, err := st.RunnerLock(ctx, id); err != nil || ok {
		t.Fatalf("a second runner got the lock (%v, %v)", ok, err)
	}
	unlock()
	unlock2, ok, err := st.RunnerLock(ctx, id)
	if err != nil || !ok {
		t.Fatalf("lock after unlock: %v %v", ok, err)
	}
	unlock2()

	levels, err := st.RunnerOpenLevels(ctx)
	if err != nil || len(levels) != 1 || levels[0].CrawlID != id || levels[0].Depth != 0 || len(levels[0].Pages) != 1 {
		t.Fatalf("open levels %+v %v", levels, err)
	}
	res := ledger.RunnerPageResult{URL: "https://example.com/", Host: "example.com", Result: []byte(`{"url":"https://example.com/","status":"failed"}`),
		SubmittedAt: t0.Add(time.Minute), FinishedAt: t0.Add(2 * time.Minute), Attempts: 1}
	if running, err := st.RunnerSave(ctx, id, res, t0.Add(2*time.Minute)); err != nil || !running {
		t.Fatalf("save while running: %v %v", running, err)
	}
	c, err := st.Crawl(ctx, id)
	if err != nil || !c.ProgressedAt.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("progressed_at %v (%v), want the save's time", c.ProgressedAt, err)
	}
	if _, err := st.FailCrawl(ctx, id, "closed", t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	res.URL = "https://example.com/other"
	if running, err := st.RunnerSave(ctx, id, res, t0.Add(4*time.Minute)); err != nil || running {
		t.Fatalf("save after the crawl closed: running %v, %v", running, err)
	}
	kept, err := st.RunnerResults(ctx, id, 0)
	if err != nil || len(kept) != 1 {
		t.Errorf("kept %d results (%v), want only the one saved while running", len(kept), err)
	}
	if levels, err := st.RunnerOpenLevels(ctx); err != nil || len(levels) != 0 {
		t.Errorf("a closed crawl still has open levels: %+v %v", levels, err)
	}
}
