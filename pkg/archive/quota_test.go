package archive

import (
	"context"
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func TestCaptureQuotaBounds(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	q := NewCaptureQuota(CaptureBounds{PerCaller: 1, PerOrg: 2, URLsPerCaller: 10, URLsPerOrg: 15}, clock.now)
	refused := func(err *QuotaError, bound string, retry time.Duration) {
		t.Helper()
		if err == nil || err.Bound != bound || (retry > 0 && err.RetryAfter != retry) {
			t.Fatalf("got %+v, want a refusal by %s (retry %s)", err, bound, retry)
		}
	}

	// Places: one per caller, two per organization.
	r1, err := q.Admit("alice", "acme", 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.Admit("alice", "acme", 1)
	refused(err, BoundCallerCaptures, busyRetry)
	_, err = q.Admit("alice", "contoso", 1)
	refused(err, BoundCallerCaptures, 0) // the caller's bound spans organizations
	r2, err := q.Admit("bob", "acme", 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = q.Admit("carol", "acme", 1)
	refused(err, BoundOrgCaptures, busyRetry)
	r1()
	r1() // twice is once
	r2()
	if q.Running("acme") != 0 {
		t.Fatalf("%d places held after release", q.Running("acme"))
	}

	// URLs per minute: alice has used 1 of 10 and takes 8 more; 2 more wait
	// for one URL's refill (6 s at 10 a minute); a refusal takes nothing.
	release, err := q.Admit("alice", "acme", 8)
	if err != nil {
		t.Fatal(err)
	}
	release()
	_, err = q.Admit("alice", "acme", 2)
	refused(err, BoundCallerURLs, 6*time.Second)
	if err.RetrySeconds() != 6 {
		t.Fatalf("Retry-After %d", err.RetrySeconds())
	}
	// bob may: he has used 1 of his own, and acme has 15-10 = 5 left.
	release, err = q.Admit("bob", "acme", 5)
	if err != nil {
		t.Fatal(err)
	}
	release()
	_, err = q.Admit("dave", "acme", 1)
	refused(err, BoundOrgURLs, 4*time.Second)
	clock.add(time.Minute)
	// A request larger than a budget is taken when the budget is full, and
	// the excess is paid back before the next.
	release, err = q.Admit("alice", "acme", 12)
	if err != nil {
		t.Fatal(err)
	}
	release()
	clock.add(12 * time.Second) // +2 of -2: 0 left
	_, err = q.Admit("alice", "acme", 1)
	refused(err, BoundCallerURLs, 6*time.Second)
}

// TestCaptureQuotaCrawlPagesShareTheOrganization: crawl pages take the
// organization's places and URLs, wait rather than fail, and leave one place
// to direct captures.
func TestCaptureQuotaCrawlPagesShareTheOrganization(t *testing.T) {
	q := NewCaptureQuota(CaptureBounds{PerCaller: 2, PerOrg: 3, URLsPerCaller: 100, URLsPerOrg: 100}, nil)
	ctx := context.Background()
	a, err := q.Acquire(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	b, err := q.Acquire(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	// Crawl pages hold two of three: a third waits...
	got := make(chan func(), 1)
	go func() {
		r, err := q.Acquire(ctx, "acme")
		if err != nil {
			t.Error(err)
			close(got)
			return
		}
		got <- r
	}()
	select {
	case <-got:
		t.Fatal("a third crawl page took the organization's last place")
	case <-time.After(100 * time.Millisecond):
	}
	// ...while a direct capture still gets in, and then the organization is
	// full for everyone.
	d, qerr := q.Admit("alice", "acme", 1)
	if qerr != nil {
		t.Fatal(qerr)
	}
	if _, qerr := q.Admit("bob", "acme", 1); qerr == nil || qerr.Bound != BoundOrgCaptures {
		t.Fatalf("a direct capture over the organization's places: %v", qerr)
	}
	// Another organization is not affected.
	if o, err := q.Acquire(ctx, "contoso"); err != nil {
		t.Fatal(err)
	} else {
		o()
	}
	a()
	select {
	case r := <-got:
		r()
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting crawl page was not woken when a place came free")
	}
	b()
	d()
	// A wait ends with its context.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	full := NewCaptureQuota(CaptureBounds{PerOrg: 1, URLsPerOrg: 1}, nil)
	r, err := full.Acquire(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	defer r()
	if _, err := full.Acquire(cctx, "acme"); err == nil {
		t.Fatal("a wait outlived its context")
	}
	if q.Running("acme") != 0 {
		t.Fatalf("%d places held", q.Running("acme"))
	}
}
