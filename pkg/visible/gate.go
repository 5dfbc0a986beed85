package visible

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Gate is the guard of filtered scans (the archive list and search) against
// callers who see little (docs/security.md): it bounds how many scans run
// at once, in total, per caller and per organization, and how many of their
// can_view checks are in flight together, server-wide. One Gate is shared
// by every list and every search of a server. (The replay service bounds
// the archive reads in flight with a Gate of its own, without the lane.)
//
// Whether a scan is expensive is only known once OpenFGA has answered for
// its candidates, so every scan passes the gate before it asks OpenFGA
// anything: a refusal costs no check at all, which keeps it cheap however
// often a refused caller comes back. A scan that fills its page quickly
// holds its place for that long only.
//
// The check lane is what keeps URL minting at its speed: a scan asks
// OpenFGA about its candidates a few at a time (OpenFGA runs a batch's
// checks concurrently), and all scans together have at most Checks of them
// in flight, so they never take more than that share of the machine however
// many run — a mint's single Check waits behind a few checks, not behind
// hundreds.
type Gate struct {
	bounds GateBounds
	lane   chan struct{}

	// lists counts the places of every scan under one key (""), callers
	// those of each caller, orgs those of each organization (a scan takes
	// a place of each of its caller's organizations).
	mu      sync.Mutex
	lists   Slots
	callers Slots
	orgs    Slots
}

// GateBounds are a Gate's limits; values below 1 take the defaults.
type GateBounds struct {
	// Lists is how many scans (lists and searches) run at once
	// (CAPTURE_LEDGER_LIST_CONCURRENCY).
	Lists int
	// PerCaller is how many of one caller's scans run at once
	// (CAPTURE_LEDGER_LIST_CONCURRENCY_PER_CALLER).
	PerCaller int
	// PerOrg is how many scans of callers of one organization run at once
	// (CAPTURE_LEDGER_LIST_CONCURRENCY_PER_ORG): one organization's people
	// together cannot take every place.
	PerOrg int
	// Checks is how many can_view checks all scans together have in flight
	// (CAPTURE_LEDGER_LIST_CHECK_CONCURRENCY).
	Checks int
}

// DefaultGateBounds are the bounds when none is set (the configuration's
// defaults are the same).
var DefaultGateBounds = GateBounds{Lists: 4, PerCaller: 2, PerOrg: 3, Checks: 2}

// Or is b with each bound below 1 taken from d.
func (b GateBounds) Or(d GateBounds) GateBounds {
	for _, f := range []struct {
		v *int
		d int
	}{{&b.Lists, d.Lists}, {&b.PerCaller, d.PerCaller}, {&b.PerOrg, d.PerOrg}, {&b.Checks, d.Checks}} {
		if *f.v < 1 {
			*f.v = f.d
		}
	}
	return b
}

// NewGate returns a gate with the given bounds (DefaultGateBounds' for
// those below 1).
func NewGate(b GateBounds) *Gate {
	b = b.Or(DefaultGateBounds)
	b.Checks = min(b.Checks, CheckChunk)
	return &Gate{bounds: b, lane: make(chan struct{}, 1), lists: NewSlots(b.Lists), callers: NewSlots(b.PerCaller), orgs: NewSlots(b.PerOrg)}
}

// Bounds returns the gate's bounds.
func (g *Gate) Bounds() GateBounds { return g.bounds }

// Running is how many scans hold a place now.
func (g *Gate) Running() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lists.Count("")
}

// Enter takes a place for caller, a member of orgs, or says which bound
// is full: the caller's own, one of its organizations', or the server's.
func (g *Gate) Enter(caller string, orgs []string) (leave func(), err *BusyError) {
	orgs = slices.Compact(slices.Sorted(slices.Values(orgs)))
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.callers.Full(caller) {
		return nil, &BusyError{Limit: g.bounds.PerCaller, PerCaller: true}
	}
	for _, o := range orgs {
		if g.orgs.Full(o) {
			return nil, &BusyError{Limit: g.bounds.PerOrg, Org: o}
		}
	}
	if g.lists.Full("") {
		return nil, &BusyError{Limit: g.bounds.Lists}
	}
	g.lists.Take("")
	g.callers.Take(caller)
	for _, o := range orgs {
		g.orgs.Take(o)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.lists.Give("")
			g.callers.Give(caller)
			for _, o := range orgs {
				g.orgs.Give(o)
			}
		})
	}, nil
}

// Check runs ask in the lane (directly when g is nil): for checks made
// outside a Scan, such as a search's other captures.
func (g *Gate) Check(ctx context.Context, ask func() ([]bool, error)) ([]bool, error) {
	if g == nil {
		return ask()
	}
	return g.check(ctx, ask)
}

// check runs ask — one chunk of at most Checks ids — in the lane: one chunk
// at a time, server-wide, waiting in line (first come, first served).
func (g *Gate) check(ctx context.Context, ask func() ([]bool, error)) ([]bool, error) {
	select {
	case g.lane <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-g.lane }()
	return ask()
}

// BusyError is a scan refused because the gate is full. The API answers
// it with Retry-After: 429 when the caller's or its organization's share
// was full (Share), 503 when the server's was.
type BusyError struct {
	// What names the refused scans in the message ("archive lists" when
	// empty, "searches").
	What string
	// Limit is the bound that was full.
	Limit int
	// PerCaller says it was the caller's own bound, not the server's.
	PerCaller bool
	// Org, when set, is the caller's organization whose bound was full.
	Org string
	// RetryAfter is when a place is expected to be free: a scan holds one
	// for at most its time budget.
	RetryAfter time.Duration
}

// RetrySeconds is RetryAfter in whole seconds, at least 1 (Retry-After's
// unit).
func (e *BusyError) RetrySeconds() int {
	return max(int((e.RetryAfter+time.Second-1)/time.Second), 1)
}

// Share says the bound that was full is the caller's own or its
// organization's (a 429), not the server's (a 503).
func (e *BusyError) Share() bool { return e.PerCaller || e.Org != "" }

func (e *BusyError) Error() string {
	what := e.What
	if what == "" {
		what = "archive lists"
	}
	switch {
	case e.PerCaller:
		return fmt.Sprintf("too many of your %s are running at once (limit %d); retry after %d s", what, e.Limit, e.RetrySeconds())
	case e.Org != "":
		return fmt.Sprintf("too many %s of organization %s are running at once (limit %d); retry after %d s", what, e.Org, e.Limit, e.RetrySeconds())
	}
	return fmt.Sprintf("server busy: too many %s are running at once (limit %d); retry after %d s", what, e.Limit, e.RetrySeconds())
}
