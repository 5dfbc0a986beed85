package archive

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// CaptureQuota bounds the capturing one caller and one organization can
// make a server do: how many captures run at once, per caller and per
// organization, and how many URLs they may ask for per minute. Shared by
// every capture of a process: the direct captures (POST /api/captures and
// `ledgerctl capture`, through Captures) and the pages of the embedded crawl
// runner, which draw from the same per-organization capacity.
//
// A direct capture is admitted whole or not at all (Admit): its request
// holds one place for as long as it runs (its URLs are captured one after
// another) and takes its URLs from both per-minute budgets at once. Over a
// bound it is refused with a *QuotaError before anything is fetched, queued
// or written. A crawl page waits for its organization's place and URL
// instead (Acquire): a crawl is background work, and its pages are paced
// anyway. So that a crawl cannot hold every place of its organization, crawl
// pages together take at most all but one of them (when there are two or
// more).
type CaptureQuota struct {
	bounds CaptureBounds
	now    func() time.Time

	mu      sync.Mutex
	callers slots // direct captures running, per subject
	orgs    slots // direct captures and crawl pages running, per organization
	crawls  slots // crawl pages running, per organization
	callerR rates // URLs per minute, per subject
	orgR    rates // URLs per minute, per organization
	// freed is closed (and replaced) whenever a place is given back, to
	// wake the crawl pages waiting for one.
	freed chan struct{}
}

// CaptureBounds are a CaptureQuota's limits; values below 1 take the
// defaults.
type CaptureBounds struct {
	// PerCaller is how many direct captures one subject runs at once
	// (CAPTURE_LEDGER_CAPTURE_CONCURRENCY_PER_CALLER).
	PerCaller int
	// PerOrg is how many captures, direct or crawl pages, run at once for
	// one organization (CAPTURE_LEDGER_CAPTURE_CONCURRENCY_PER_ORG).
	PerOrg int
	// URLsPerCaller is how many URLs one subject's direct captures ask for
	// per minute (CAPTURE_LEDGER_CAPTURE_URLS_PER_MINUTE_PER_CALLER).
	URLsPerCaller int
	// URLsPerOrg is how many URLs, direct or crawl pages, one organization
	// captures per minute (CAPTURE_LEDGER_CAPTURE_URLS_PER_MINUTE_PER_ORG).
	URLsPerOrg int
}

// DefaultCaptureBounds are the bounds when none is set (the
// configuration's defaults are the same): on a machine of two cores, two
// browser captures of one caller and four of one organization at once.
var DefaultCaptureBounds = CaptureBounds{PerCaller: 2, PerOrg: 4, URLsPerCaller: 60, URLsPerOrg: 120}

// busyRetry is the Retry-After of a refusal for want of a place: a
// capture's length is not known in advance, so this is a polite interval
// rather than a promise.
const busyRetry = 5 * time.Second

// NewCaptureQuota returns a quota with the given bounds (now is the clock;
// time.Now when nil).
func NewCaptureQuota(b CaptureBounds, now func() time.Time) *CaptureQuota {
	d := DefaultCaptureBounds
	if b.PerCaller < 1 {
		b.PerCaller = d.PerCaller
	}
	if b.PerOrg < 1 {
		b.PerOrg = d.PerOrg
	}
	if b.URLsPerCaller < 1 {
		b.URLsPerCaller = d.URLsPerCaller
	}
	if b.URLsPerOrg < 1 {
		b.URLsPerOrg = d.URLsPerOrg
	}
	if now == nil {
		now = time.Now
	}
	return &CaptureQuota{
		bounds: b, now: now,
		callers: newSlots(b.PerCaller), orgs: newSlots(b.PerOrg), crawls: newSlots(max(b.PerOrg-1, 1)),
		callerR: newRates(b.URLsPerCaller), orgR: newRates(b.URLsPerOrg),
		freed: make(chan struct{}),
	}
}

// Bounds returns the quota's bounds.
func (q *CaptureQuota) Bounds() CaptureBounds { return q.bounds }

// The bounds a QuotaError names.
const (
	BoundCallerCaptures = "captures-at-once-per-caller"
	BoundOrgCaptures    = "captures-at-once-per-organization"
	BoundCallerURLs     = "urls-per-minute-per-caller"
	BoundOrgURLs        = "urls-per-minute-per-organization"
)

// QuotaError is a capture refused because one of its bounds is full; the
// API answers it 429 with Retry-After.
type QuotaError struct {
	// Bound is the bound that was full (one of the Bound… constants).
	Bound string
	// Limit is its value.
	Limit int
	// RetryAfter is when the request could be admitted, as far as is
	// known now.
	RetryAfter time.Duration
}

// RetrySeconds is RetryAfter in whole seconds, at least 1.
func (e *QuotaError) RetrySeconds() int {
	return max(int((e.RetryAfter+time.Second-1)/time.Second), 1)
}

func (e *QuotaError) Error() string {
	what := map[string]string{
		BoundCallerCaptures: "of your captures are running at once",
		BoundOrgCaptures:    "captures of this organization are running at once",
		BoundCallerURLs:     "URLs asked for by you in the last minute",
		BoundOrgURLs:        "URLs asked for by this organization in the last minute",
	}[e.Bound]
	return fmt.Sprintf("too many requests: too many %s (limit %d); retry after %d s", what, e.Limit, e.RetrySeconds())
}

// Admit takes a place for a direct capture of urls URLs by subject for
// org, and the URLs from both per-minute budgets, or says which bound is
// full (nothing is taken then). release gives the place back; it may be
// called more than once.
func (q *CaptureQuota) Admit(subject, org string, urls int) (release func(), err *QuotaError) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.now()
	switch {
	case q.callers.Full(subject):
		return nil, &QuotaError{Bound: BoundCallerCaptures, Limit: q.bounds.PerCaller, RetryAfter: busyRetry}
	case q.orgs.Full(org):
		return nil, &QuotaError{Bound: BoundOrgCaptures, Limit: q.bounds.PerOrg, RetryAfter: busyRetry}
	}
	if wait := q.callerR.wait(subject, urls, now); wait > 0 {
		return nil, &QuotaError{Bound: BoundCallerURLs, Limit: q.bounds.URLsPerCaller, RetryAfter: wait}
	}
	if wait := q.orgR.wait(org, urls, now); wait > 0 {
		return nil, &QuotaError{Bound: BoundOrgURLs, Limit: q.bounds.URLsPerOrg, RetryAfter: wait}
	}
	q.callerR.take(subject, urls, now)
	q.orgR.take(org, urls, now)
	q.callers.Take(subject)
	q.orgs.Take(org)
	return q.releaser(func() {
		q.callers.Give(subject)
		q.orgs.Give(org)
	}), nil
}

// Acquire waits for a place and one URL of org's per-minute budget for a
// crawl page, and takes them; it returns ctx's error when ctx ends first.
func (q *CaptureQuota) Acquire(ctx context.Context, org string) (release func(), err error) {
	for {
		q.mu.Lock()
		now := q.now()
		var wait time.Duration
		full := q.orgs.Full(org) || q.crawls.Full(org)
		if !full {
			wait = q.orgR.wait(org, 1, now)
		}
		if !full && wait <= 0 {
			q.orgR.take(org, 1, now)
			q.orgs.Take(org)
			q.crawls.Take(org)
			q.mu.Unlock()
			return q.releaser(func() {
				q.orgs.Give(org)
				q.crawls.Give(org)
			}), nil
		}
		freed := q.freed
		q.mu.Unlock()
		var timer *time.Timer
		var tick <-chan time.Time
		if !full {
			timer = time.NewTimer(wait)
			tick = timer.C
		}
		select {
		case <-freed:
		case <-tick:
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// releaser wraps give (run under the lock, once) and wakes the waiters.
func (q *CaptureQuota) releaser(give func()) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			give()
			close(q.freed)
			q.freed = make(chan struct{})
		})
	}
}

// Running is how many captures (direct and crawl pages) hold a place for
// org now.
func (q *CaptureQuota) Running(org string) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.orgs.Count(org)
}

// rates are token buckets per key: each holds up to perMinute URLs and
// refills at perMinute a minute. A request may take more URLs than a bucket
// holds (a request of 50 URLs against a budget of 30): it is admitted only
// when the bucket is full, and the bucket goes below zero, so the URLs over
// the budget are paid back before the next request is admitted. The rate
// over time stays perMinute.
type rates struct {
	perMinute int
	buckets   map[string]bucket
}

type bucket struct {
	tokens float64
	at     time.Time
}

func newRates(perMinute int) rates { return rates{perMinute: perMinute, buckets: map[string]bucket{}} }

// level is key's bucket refilled up to now.
func (r *rates) level(key string, now time.Time) float64 {
	b, ok := r.buckets[key]
	if !ok {
		return float64(r.perMinute)
	}
	refill := now.Sub(b.at).Seconds() * float64(r.perMinute) / 60
	return min(b.tokens+max(refill, 0), float64(r.perMinute))
}

// wait is how long until key's bucket holds n URLs (or is full, for more
// than it can hold); 0 when it does now.
func (r *rates) wait(key string, n int, now time.Time) time.Duration {
	need := float64(min(n, r.perMinute))
	have := r.level(key, now)
	if have >= need {
		return 0
	}
	return time.Duration((need - have) * 60 / float64(r.perMinute) * float64(time.Second))
}

func (r *rates) take(key string, n int, now time.Time) {
	r.buckets[key] = bucket{tokens: r.level(key, now) - float64(n), at: now}
	if len(r.buckets) > 4096 {
		// Forget the full buckets: they are what an absent key reads as.
		for k := range r.buckets {
			if r.level(k, now) >= float64(r.perMinute) {
				delete(r.buckets, k)
			}
		}
	}
}
