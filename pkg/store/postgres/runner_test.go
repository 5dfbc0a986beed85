package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// TestRunnerLockAndSave: one runner at a time holds a crawl; a result is
// kept (and counted as progress) only while the crawl runs.
func TestRunnerLockAndSave(t *testing.T) {
	t.Parallel()
	st, _, ctx := crawlStore(t)
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	id := runningCrawl(t, ctx, st, t0)

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
	if _, _, err := st.FailCrawl(ctx, id, "closed", t0.Add(3*time.Minute), nil); err != nil {
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

// TestRunnerBeginsAndSavesTogether: many begins and saves at once, of a
// running crawl and of a closed one, written in shared statements: each
// is answered for its own crawl, a result the table refuses fails only its
// own save, and two saves of one page at once both succeed.
func TestRunnerBeginsAndSavesTogether(t *testing.T) {
	t.Parallel()
	st, _, ctx := crawlStore(t)
	t0 := time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)
	live, closed := runningCrawl(t, ctx, st, t0), runningCrawl(t, ctx, st, t0)
	if _, _, err := st.FailCrawl(ctx, closed, "closed", t0.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	const pages = 40
	var wg sync.WaitGroup
	errs := make(chan error, 4*pages)
	for _, id := range []string{live, closed} {
		for i := range pages {
			wg.Go(func() {
				u := fmt.Sprintf("https://example.com/p%d", i)
				sub := t0.Add(2 * time.Minute)
				running, err := st.RunnerBegin(ctx, id, 0, u, "example.com", fmt.Sprintf("task-%d", i), sub)
				if err != nil || running != (id == live) {
					errs <- fmt.Errorf("begin %s of crawl %s: running %v, %v", u, id, running, err)
					return
				}
				res := ledger.RunnerPageResult{URL: u, Host: "example.com", Result: []byte(`{"url":"` + u + `","status":"captured"}`),
					SubmittedAt: sub, FinishedAt: sub.Add(time.Second), Attempts: 1, TaskID: fmt.Sprintf("task-%d", i)}
				if i == 7 {
					res.Result = []byte(`[]`) // not an object: the table refuses it
				}
				running, err = st.RunnerSave(ctx, id, res, sub.Add(time.Second))
				switch {
				case i == 7 && id == live && err == nil:
					errs <- fmt.Errorf("save of a result that is not an object: no error")
				case i != 7 && (err != nil || running != (id == live)):
					errs <- fmt.Errorf("save %s of crawl %s: running %v, %v", u, id, running, err)
				}
			})
		}
	}
	// Two saves of one page at the same moment.
	for k := range 2 {
		wg.Go(func() {
			u := "https://example.com/twice"
			res := ledger.RunnerPageResult{URL: u, Host: "example.com", Result: []byte(fmt.Sprintf(`{"url":"%s","k":%d}`, u, k))}
			if running, err := st.RunnerSave(ctx, live, res, t0.Add(3*time.Minute)); err != nil || !running {
				errs <- fmt.Errorf("save %d of one page: running %v, %v", k, running, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	kept, err := st.RunnerResults(ctx, live, 0)
	if err != nil {
		t.Fatal(err)
	}
	withResult, begun := 0, 0
	for _, k := range kept {
		if k.Result != nil {
			withResult++
		} else if k.URL == "https://example.com/p7" && k.TaskID != nil && *k.TaskID == "task-7" {
			begun++
		}
	}
	if len(kept) != pages+1 || withResult != pages || begun != 1 {
		t.Errorf("running crawl: %d rows, %d with a result, p7 begun %d; want %d rows, %d results (p7 begun only)", len(kept), withResult, begun, pages+1, pages)
	}
	if kept, err := st.RunnerResults(ctx, closed, 0); err != nil || len(kept) != 0 {
		t.Errorf("closed crawl: %d rows kept (%v), want none", len(kept), err)
	}
	if c, err := st.Crawl(ctx, live); err != nil || !c.ProgressedAt.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("progressed_at %v (%v), want the latest save's time", c.ProgressedAt, err)
	}
	if _, err := st.RunnerBegin(ctx, "not-a-uuid", 0, "https://example.com/", "example.com", "", t0); err == nil {
		t.Error("a begin for a crawl id that is not a UUID: no error")
	}
}
