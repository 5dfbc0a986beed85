package runner_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// TestStopRegistersEveryKeptCapture: a person stops a crawl in the middle
// of a level while captures whose results the runner kept are not yet
// registered (the early registrations wait an hour here, where serve waits
// a quarter of a second). The stop registers them, and the runner
// registers the capture in flight at the stop when it ends (its result is
// not kept): every WACZ the crawl wrote is an archive of the crawl.
func TestStopRegistersEveryKeptCapture(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := newHost(t)
	links := ""
	for i := range 8 {
		links += fmt.Sprintf(`<a href="/p%d">p%d</a> `, i, i)
		a.page(fmt.Sprintf("/p%d", i), fmt.Sprintf("p%d", i), "<p>page text</p>")
	}
	a.page("/", "home", links)
	capt := newCounter(e)
	levels := make(chan runner.LevelEvent, 4)
	svc, r := e.service(capt, runner.Config{AdmitEvery: time.Hour, OnLevel: func(ev runner.LevelEvent) { levels <- ev }})
	maxDepth, delay := 1, 0
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{a.URL + "/"}, MaxDepth: &maxDepth, PerHostDelayMs: &delay})
	if err != nil {
		t.Fatal(err)
	}
	// The person stops the crawl when three pages of level 1 are kept,
	// as the fourth is being captured.
	var depth1 atomic.Int32
	stopped := make(chan error, 1)
	capt.before = func(ctx context.Context, u string) error {
		if u == a.URL+"/" || depth1.Add(1) != 4 {
			return nil
		}
		for deadline := time.Now().Add(30 * time.Second); e.keptResults(id, 1) < 3 && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
		}
		res, err := svc.Stop(ctx, alice, id)
		if err == nil && !res.Stopped {
			err = fmt.Errorf("the stop answered %+v", res)
		}
		stopped <- err
		return nil
	}
	levels1 := runUntil(t, r, levels, time.Minute, "level 1 did not end", func(ev runner.LevelEvent) bool { return ev.Depth == 1 })
	if ev := levels1[len(levels1)-1]; ev.Err == nil {
		t.Fatalf("level 1 ended %+v, want it closed by the stop", ev.Result)
	}
	select {
	case err := <-stopped:
		if err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatal("the crawl was not stopped")
	}

	if n := e.keptResults(id, 1); n != 3 {
		t.Fatalf("%d results kept at level 1, want the 3 before the stop", n)
	}
	var registered, ofCrawl int
	if err := e.store.Pool.QueryRow(e.ctx, `
		SELECT (SELECT count(*) FROM crawl_runner_results r JOIN archives a ON a.task_id::text = r.task_id
		        WHERE r.crawl_id = $1 AND r.depth = 1 AND r.result IS NOT NULL),
		       (SELECT count(*) FROM archives a JOIN crawl_pages p ON p.task_id = a.task_id::text WHERE p.crawl_id = $1)`,
		id).Scan(&registered, &ofCrawl); err != nil {
		t.Fatal(err)
	}
	if registered != 3 || ofCrawl != 5 {
		t.Errorf("%d of the 3 captures kept before the stop registered, %d archives of the crawl; want 3 and 5 (the seed's and the one in flight too)", registered, ofCrawl)
	}
	inLedger := map[string]bool{}
	rows, err := e.store.Pool.Query(e.ctx, `SELECT object_key FROM archives`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		inLedger[k] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var outside []string
	for _, k := range e.objects(".wacz") {
		if !inLedger[k] {
			outside = append(outside, k)
		}
	}
	if len(outside) > 0 {
		t.Errorf("WACZs the crawl wrote that are not in the ledger: %v; want none", outside)
	}
}
