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
	if b := g.Bounds(); b != (GateBounds{Lists: 3, PerCaller: 2, PerOrg: DefaultGateBounds.PerOrg, Checks: DefaultGateBounds.Checks}) {
		t.Fatalf("bounds %+v", b)
	}
	a1, err := g.Enter("alice", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Enter("alice", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Enter("alice", nil); err == nil || !err.PerCaller || err.Limit != 2 {
		t.Errorf("alice's third list: %+v, want her own bound", err)
	}
	if _, err := g.Enter("bob", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Enter("carol", nil); err == nil || err.PerCaller || err.Limit != 3 {
		t.Errorf("a fourth list: %+v, want the server's bound", err)
	}
	a1()
	a1() // leaving twice gives back one place, not two
	if g.Running() != 2 {
		t.Errorf("running %d, want 2", g.Running())
	}
	if _, err := g.Enter("carol", nil); err != nil {
		t.Errorf("carol after alice left: %v", err)
	}
	if _, err := g.Enter("dave", nil); err == nil {
		t.Error("a place was given back twice")
	}
	busy := &BusyError{Limit: 3, RetryAfter: 1500 * time.Millisecond}
	if busy.RetrySeconds() != 2 || busy.Error() != "server busy: too many archive lists are running at once (limit 3); retry after 2 s" {
		t.Errorf("%d %q", busy.RetrySeconds(), busy.Error())
	}
	busy = &BusyError{What: "searches", Limit: 1, PerCaller: true, RetryAfter: time.Second}
	if busy.Error() != "too many of your searches are running at once (limit 1); retry after 1 s" || !busy.Share() {
		t.Errorf("%q", busy.Error())
	}
}

// TestScanGateOrganizations: the callers of one organization together hold
// at most PerOrg places, so they cannot take every place from the others;
// a caller of several organizations takes a place of each (once, however
// often the identity names it), and leaving gives them back.
func TestScanGateOrganizations(t *testing.T) {
	g := NewGate(GateBounds{Lists: 4, PerCaller: 2, PerOrg: 2})
	a, err := g.Enter("alice", []string{"acme"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Enter("bob", []string{"acme", "contoso", "acme"})
	if err != nil {
		t.Fatal(err)
	}
	busy := func(caller string, orgs []string, org string) {
		t.Helper()
		_, err := g.Enter(caller, orgs)
		if err == nil || err.Org != org || err.PerCaller || err.Limit != 2 || !err.Share() {
			t.Errorf("%s of %v: %+v, want the bound of %s", caller, orgs, err, org)
		}
	}
	busy("carol", []string{"acme"}, "acme")
	busy("dave", []string{"contoso", "acme"}, "acme")
	if _, err := g.Enter("erin", []string{"contoso"}); err != nil {
		t.Errorf("contoso's second place: %v", err)
	}
	busy("frank", []string{"contoso"}, "contoso")
	if _, err := g.Enter("grace", nil); err != nil {
		t.Errorf("a caller of no organization, with a place left: %v", err)
	}
	if _, err := g.Enter("heidi", nil); err == nil || err.Share() || err.Limit != 4 {
		t.Errorf("a fifth scan: %+v, want the server's bound", err)
	}
	b()
	a()
	if _, err := g.Enter("carol", []string{"acme"}); err != nil {
		t.Errorf("carol once acme's places were given back: %v", err)
	}
	if got := (&BusyError{Org: "acme", Limit: 2, RetryAfter: time.Second}).Error(); got != "too many archive lists of organization acme are running at once (limit 2); retry after 1 s" {
		t.Errorf("%q", got)
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
