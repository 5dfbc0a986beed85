package ledger

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Host politeness across every crawl, direct capture and process
// (docs/crawling.md). Before a capture of a host, the capturing party takes
// the host's lease (HostLeases, held in PostgreSQL); it may start only when
// no more than AtOnce captures of the host run and the host's last capture
// ended at least the largest delay any party asks for ago. Releasing the
// lease records the end and the delay the releasing party keeps after it.

// Capture kinds of a host lease.
const (
	HostKindCrawl   = "crawl"
	HostKindCapture = "capture"
)

// Delay sources besides the crawl runner's setting, crawl-delay and cap.
const (
	// HostSourceBackoff: a 429 or 503 made a party wait longer.
	HostSourceBackoff = "backoff"
	// HostSourceHost: the deployment's least gap between captures of a
	// host (CAPTURE_LEDGER_HOST_DELAY_MS).
	HostSourceHost = "host"
)

// HostLeaseRequest asks for one host's lease.
type HostLeaseRequest struct {
	Host    string
	Holder  string // a UUID naming this party while it waits and holds
	Kind    string // HostKindCrawl or HostKindCapture
	Org     string
	CrawlID string // empty for a direct capture
	URL     string
	// Delay is the gap this party keeps after the host's last capture
	// ended, and Source why.
	Delay  time.Duration
	Source string
	// RobotsRead says this party read the host's robots.txt, whose
	// Crawl-delay (capped; 0 when none) every party keeps from then on.
	RobotsRead bool
	CrawlDelay time.Duration
	// AtOnce is the most captures of the host at once (at least 1); TTL
	// how long the lease holds without being renewed.
	AtOnce int
	TTL    time.Duration
}

// HostLease is a lease taken: the capture's start on the database's clock,
// the gap it kept and why (possibly another party's delay).
type HostLease struct {
	Holder    string
	StartedAt time.Time
	Delay     time.Duration
	Source    string
}

// HostLeases is the host lease table; *postgres.Store implements it.
type HostLeases interface {
	// TryHost takes the lease when the host is free, ready and it is the
	// caller's turn (ok); otherwise it leaves the caller waiting in line
	// and says how long to wait before asking again.
	TryHost(ctx context.Context, req HostLeaseRequest) (lease HostLease, ok bool, wait time.Duration, err error)
	// RenewHost keeps a held lease from expiring for another ttl.
	RenewHost(ctx context.Context, holder string, ttl time.Duration) error
	// ReleaseHost ends the capture now and asks every next party to keep at
	// least hold after it (source says why).
	ReleaseHost(ctx context.Context, holder string, hold time.Duration, source string) error
	// LeaveHost takes a waiter that gave up out of the line.
	LeaveHost(ctx context.Context, host, holder string) error
}

// HostPoll is the longest wait between two asks for a host's lease.
const HostPoll = 250 * time.Millisecond

// HeldHost is a taken lease: Release ends it.
type HeldHost struct {
	Lease  HostLease
	leases HostLeases
	stop   context.CancelFunc
	done   chan struct{}
}

// Release ends the capture, asking the next party to keep hold after it.
// It outlives a cancelled ctx (the capture did happen).
func (h *HeldHost) Release(ctx context.Context, hold time.Duration, source string) error {
	h.stop()
	<-h.done
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return h.leases.ReleaseHost(rctx, h.Lease.Holder, hold, source)
}

// AcquireHost waits for req.Host's lease (asking again as TryHost says, at
// least every HostPoll) and keeps it renewed until Release. A ctx that ends
// while waiting takes the caller out of the line.
func AcquireHost(ctx context.Context, leases HostLeases, req HostLeaseRequest) (*HeldHost, error) {
	if req.Holder == "" {
		var b [16]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		x := hex.EncodeToString(b[:])
		req.Holder = x[:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
	}
	req.AtOnce = max(req.AtOnce, 1)
	if req.TTL <= 0 {
		req.TTL = 30 * time.Second
	}
	if req.Delay < 0 {
		return nil, errors.New("host lease: negative delay")
	}
	for {
		lease, ok, wait, err := leases.TryHost(ctx, req)
		if err != nil {
			if ctx.Err() == nil {
				leave(ctx, leases, req)
			}
			return nil, fmt.Errorf("host lease of %s: %w", req.Host, err)
		}
		if ok {
			rctx, stop := context.WithCancel(context.WithoutCancel(ctx))
			h := &HeldHost{Lease: lease, leases: leases, stop: stop, done: make(chan struct{})}
			go h.renew(rctx, req.TTL)
			return h, nil
		}
		wait = min(max(wait, time.Millisecond), HostPoll)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			leave(ctx, leases, req)
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func leave(ctx context.Context, leases HostLeases, req HostLeaseRequest) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = leases.LeaveHost(lctx, req.Host, req.Holder)
}

// renew extends the lease every third of its TTL until stopped.
func (h *HeldHost) renew(ctx context.Context, ttl time.Duration) {
	defer close(h.done)
	t := time.NewTicker(max(ttl/3, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = h.leases.RenewHost(ctx, h.Lease.Holder, ttl)
		}
	}
}

// HostCapture is one capture of a host as the lease table recorded it: the
// evidence of `ledgerctl hosts politeness`.
type HostCapture struct {
	ID        int64
	Host      string
	Kind      string
	Org       string
	CrawlID   *string
	URL       string
	StartedAt time.Time
	// EndedAt is nil while the capture runs; Expired when its process
	// stopped renewing the lease and the end is the lease's expiry.
	EndedAt *time.Time
	Expired bool
	// PrevEnd is the end the gap was counted from (nil: none), Delay the
	// gap it had to keep and Source why.
	PrevEnd *time.Time
	Delay   time.Duration
	Source  string
	// Hold is what the party asked every next capture to keep after this
	// one's end, and HoldSource why (zero while it runs, or expired).
	Hold       time.Duration
	HoldSource string
	// AskedAt is when the party first asked for the lease (nil for
	// captures recorded before it was kept).
	AskedAt *time.Time
}
