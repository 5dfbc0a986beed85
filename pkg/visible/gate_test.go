package visible

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestScanGateBounds(t *testing.T) {
	g := NewGate(GateBounds{Lists: 3, PerCaller: 2})
	if b := g.Bounds(); b != (GateBounds{Lists: 3, PerCaller: 2, Checks: DefaultGateBounds.Checks}) {
		t.Fatalf("bounds %+v", b)
	}
	a1, err := g.Enter("alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Enter("alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Enter("alice"); err == nil || !err.PerCaller || err.Limit != 2 {
		t.Errorf("alice's third list: %+v, want her own bound", err)
	}
	if _, err := g.Enter("bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Enter("carol"); err == nil || err.PerCaller || err.Limit != 3 {
		t.Errorf("a fourth list: %+v, want the server's bound", err)
	}
	a1()
	a1() // leaving twice gives back one place, not two
	if g.Running() != 2 {
		t.Errorf("running %d, want 2", g.Running())
	}
	if _, err := g.Enter("carol"); err != nil {
		t.Errorf("carol after alice left: %v", err)
	}
	if _, err := g.Enter("dave"); err == nil {
		t.Error("a place was given back twice")
	}
	busy := &BusyError{Limit: 3, RetryAfter: 1500 * time.Millisecond}
	if busy.RetrySeconds() != 2 || busy.Error() != "server busy: too many archive lists are running at once (limit 3); retry after 2 s" {
		t.Errorf("%d %q", busy.RetrySeconds(), busy.Error())
	}
	busy = &BusyError{What: "searches", Limit: 1, PerCaller: true, RetryAfter: time.Second}
	if busy.Error() != "server busy: too many of your searches are running at once (limit 1); retry after 1 s" {
		t.Errorf("%q", busy.Error())
	}
}

// TestScanGateLane: however many lists check at once, one chunk is in
// OpenFGA at a time, and a list that gives up waiting leaves the lane.
func TestScanGateLane(t *testing.T) {
	g := NewGate(GateBounds{})
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				_, _ = g.check(context.Background(), func() ([]bool, error) {
					n := inside.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					time.Sleep(100 * time.Microsecond)
					inside.Add(-1)
					return nil, nil
				})
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d chunks were checked at once, want 1", most.Load())
	}
	hold := make(chan struct{})
	go func() { _, _ = g.check(context.Background(), func() ([]bool, error) { <-hold; return nil, nil }) }()
	for len(g.lane) == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.check(ctx, func() ([]bool, error) { t.Error("ran while the lane was held"); return nil, nil }); err == nil {
		t.Error("a cancelled wait got the lane")
	}
	close(hold)
}
