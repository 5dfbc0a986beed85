package runner_test

import (
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// TestNextLevelStartsWithoutARescan: the level a report dispatches starts
// as soon as the level before it has let go of the crawl, not at the next
// rescan of open levels (here an hour away). Each crawl runs one level at
// a time: no level of it is started while another of its levels runs in
// this runner (which would find the crawl locked and be dropped until the
// rescan).
func TestNextLevelStartsWithoutARescan(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	site := newMixedSite(t)
	levels := make(chan runner.LevelEvent, 16)
	svc, r := e.service(newCounter(e), runner.Config{
		Rescan:  time.Hour,
		OnLevel: func(ev runner.LevelEvent) { levels <- ev },
	})
	maxDepth, delay, par := 2, 0, 4
	if _, err := svc.Start(e.ctx, alice, crawl.StartRequest{
		Seeds: []string{site.a.URL + "/"}, Rules: site.rules(t), MaxDepth: &maxDepth, PerHostDelayMs: &delay, HostParallelism: &par,
	}); err != nil {
		t.Fatal(err)
	}
	ran := runUntilDone(t, r, levels, time.Minute)
	if len(ran) != 3 {
		t.Errorf("ran %d levels, want 3 (one per depth): %+v", len(ran), ran)
	}
	for _, ev := range ran {
		if ev.Err != nil {
			t.Errorf("level %d: %v", ev.Depth, ev.Err)
		}
	}
}
