package archive

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ScanGate is the archive list's guard against callers who see little
// (docs/security.md): it bounds how many lists run at once, in total and per
// caller, and how many of their can_view checks are in flight together,
// server-wide. Shared by every request of a server.
//
// Whether a list is expensive is only known once OpenFGA has answered for
// its rows, so every list passes the gate before it asks OpenFGA anything: a
// refusal costs no check at all, which keeps it cheap however often a
// refused caller comes back. A list that fills its page quickly holds its
// place for that long only.
//
// The check lane is what keeps URL minting at its speed: a list asks
// OpenFGA about its rows a few at a time (OpenFGA runs a batch's checks
// concurrently), and all lists together have at most Checks of them in
// flight, so they never take more than that share of the machine however
// many run — a mint's single Check waits behind a few checks, not behind
// hundreds.
type ScanGate struct {
	bounds GateBounds
	lane   chan struct{}

	// lists counts the places of every list under one key (""), callers
	// those of each caller.
	mu      sync.Mutex
	lists   slots
	callers slots
}

// GateBounds are a ScanGate's limits; values below 1 take the defaults.
type GateBounds struct {
	// Lists is how many lists run at once (CAPTURE_LEDGER_LIST_CONCURRENCY).
	Lists int
	// PerCaller is how many of one caller's lists run at once
	// (CAPTURE_LEDGER_LIST_CONCURRENCY_PER_CALLER).
	PerCaller int
	// Checks is how many can_view checks all lists together have in flight
	// (CAPTURE_LEDGER_LIST_CHECK_CONCURRENCY).
	Checks int
}

// DefaultGateBounds are the bounds when none is set (the configuration's
// defaults are the same).
var DefaultGateBounds = GateBounds{Lists: 4, PerCaller: 2, Checks: 2}

// NewScanGate returns a gate with the given bounds.
func NewScanGate(b GateBounds) *ScanGate {
	if b.Lists < 1 {
		b.Lists = DefaultGateBounds.Lists
	}
	if b.PerCaller < 1 {
		b.PerCaller = DefaultGateBounds.PerCaller
	}
	if b.Checks < 1 {
		b.Checks = DefaultGateBounds.Checks
	}
	b.Checks = min(b.Checks, checkChunk)
	return &ScanGate{bounds: b, lane: make(chan struct{}, 1), lists: newSlots(b.Lists), callers: newSlots(b.PerCaller)}
}

// Bounds returns the gate's bounds.
func (g *ScanGate) Bounds() GateBounds { return g.bounds }

// Running is how many lists hold a place now.
func (g *ScanGate) Running() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.lists.count("")
}

// enter takes a place for caller, or says which bound is full.
func (g *ScanGate) enter(caller string) (leave func(), err *BusyError) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.callers.full(caller):
		return nil, &BusyError{Limit: g.bounds.PerCaller, PerCaller: true}
	case g.lists.full(""):
		return nil, &BusyError{Limit: g.bounds.Lists}
	}
	g.lists.take("")
	g.callers.take(caller)
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.lists.give("")
			g.callers.give(caller)
		})
	}, nil
}

// check runs ask — one chunk of at most Checks ids — in the lane: one chunk
// at a time, server-wide, waiting in line (first come, first served).
func (g *ScanGate) check(ctx context.Context, ask func() ([]bool, error)) ([]bool, error) {
	select {
	case g.lane <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-g.lane }()
	return ask()
}

// BusyError is a list refused because the gate is full; the API answers it
// 503 with Retry-After.
type BusyError struct {
	// Limit is the bound that was full.
	Limit int
	// PerCaller says it was the caller's own bound, not the server's.
	PerCaller bool
	// RetryAfter is when a place is expected to be free: a list holds one
	// for at most its time budget.
	RetryAfter time.Duration
}

// RetrySeconds is RetryAfter in whole seconds, at least 1 (Retry-After's
// unit).
func (e *BusyError) RetrySeconds() int {
	return max(int((e.RetryAfter+time.Second-1)/time.Second), 1)
}

func (e *BusyError) Error() string {
	who := "archive lists"
	if e.PerCaller {
		who = "of your archive lists"
	}
	return fmt.Sprintf("server busy: too many %s are running at once (limit %d); retry after %d s", who, e.Limit, e.RetrySeconds())
}
