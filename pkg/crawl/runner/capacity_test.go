package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// TestCrawlDrawsFromTheOrganizationsCaptureCapacity: a crawl of six hosts
// at a host parallelism of six takes its places from the capture quota its
// organization's direct captures use. With three places for acme and one
// held by a direct capture for the whole crawl, no more than two pages are
// captured at once, every capture holds a place while it runs, and the
// crawl still ends.
func TestCrawlDrawsFromTheOrganizationsCaptureCapacity(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	quota := archive.NewCaptureQuota(archive.CaptureBounds{PerCaller: 2, PerOrg: 3, URLsPerCaller: 100, URLsPerOrg: 100}, nil)
	direct, qerr := quota.Admit("bob", "acme", 1)
	if qerr != nil {
		t.Fatal(qerr)
	}
	defer direct()

	var seeds []string
	for range 6 {
		h := newHost(t)
		h.page("/", "page", "<p>slow</p>")
		seeds = append(seeds, h.URL+"/")
	}
	capt := newCounter(e)
	var (
		mu             sync.Mutex
		now, most      int
		placesUnheld   int
		placesObserved int
	)
	capt.before = func(ctx context.Context, url string) error {
		mu.Lock()
		now++
		most = max(most, now)
		placesObserved = max(placesObserved, quota.Running("acme"))
		if quota.Running("acme") < 1+now {
			placesUnheld++
		}
		mu.Unlock()
		time.Sleep(150 * time.Millisecond) // long enough for the others to pile up
		mu.Lock()
		now--
		mu.Unlock()
		return nil
	}
	levels := make(chan runner.LevelEvent, 4)
	svc, r := e.service(capt, runner.Config{
		Capacity: quota,
		OnLevel:  func(ev runner.LevelEvent) { levels <- ev },
	})
	var rs []rules.Rule
	for _, spec := range []string{"follow:any"} {
		rule, err := rules.ParseSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, rule)
	}
	maxDepth, delay, par := 0, 0, 6
	if _, err := svc.Start(e.ctx, alice, crawl.StartRequest{
		Seeds: seeds, Rules: rs, MaxDepth: &maxDepth, PerHostDelayMs: &delay, HostParallelism: &par,
	}); err != nil {
		t.Fatal(err)
	}
	runUntilDone(t, r, levels, 2*time.Minute)
	if got := len(e.successes()); got != len(seeds) {
		t.Errorf("%d pages captured, want %d", got, len(seeds))
	}
	if most != 2 {
		t.Errorf("at most %d pages were captured at once, want 2 (three places, one held by a direct capture)", most)
	}
	if placesUnheld != 0 || placesObserved != 3 {
		t.Errorf("%d captures ran without their place; the organization held at most %d places, want 3", placesUnheld, placesObserved)
	}
	if quota.Running("acme") != 1 {
		t.Errorf("%d places held after the crawl, want the direct capture's 1", quota.Running("acme"))
	}
}
