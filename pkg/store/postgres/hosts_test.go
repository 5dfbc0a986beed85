package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// TestHostLeases: twelve parties of three organizations capture one host
// at once through the lease: no two captures overlap, every gap is at
// least the delay, checked by the report and by SQL over every start and
// end; and the organizations take turns.
func TestHostLeases(t *testing.T) {
	t.Parallel()
	s, _, ctx := crawlStore(t)
	host := "lease-" + uuid.NewString()[:8] + ".example:8080"
	const delay = 30 * time.Millisecond
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		order []string
	)
	for _, org := range []string{"acme", "globex", "initech"} {
		parties := 1
		if org == "acme" {
			parties = 6 // the busy organization
		}
		for p := range parties {
			wg.Go(func() {
				for i := range 3 {
					h, err := ledger.AcquireHost(ctx, s, ledger.HostLeaseRequest{
						Host: host, Kind: ledger.HostKindCapture, Org: org, URL: fmt.Sprintf("https://%s/%s/%d/%d", host, org, p, i),
						Delay: delay, Source: "setting", AtOnce: 1, TTL: 10 * time.Second,
					})
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					order = append(order, org)
					mu.Unlock()
					time.Sleep(5 * time.Millisecond)
					if err := h.Release(ctx, delay, "setting"); err != nil {
						t.Error(err)
					}
				}
			})
		}
	}
	wg.Wait()
	caps, err := s.HostCaptures(ctx, host, time.Time{})
	if err != nil || len(caps) != 24 {
		t.Fatalf("%d captures, %v", len(caps), err)
	}
	rep := politeness.CheckHost(host, caps, 1)
	if !rep.OK || rep.Gaps != 23 || *rep.MinGapMs < 30 || len(rep.Organizations) != 3 {
		t.Errorf("report: ok %v gaps %d min %v orgs %v overlaps %d short %d", rep.OK, rep.Gaps, *rep.MinGapMs, rep.Organizations, rep.Overlaps, rep.ShortGaps)
	}
	var overlaps, short int
	if err := s.Pool.QueryRow(ctx, `
		SELECT count(*) FROM host_captures a JOIN host_captures b ON a.host = b.host AND a.id <> b.id
		WHERE a.host = $1 AND b.started_at >= a.started_at AND b.started_at < a.ended_at`, host).Scan(&overlaps); err != nil {
		t.Fatal(err)
	}
	if err := s.Pool.QueryRow(ctx, `
		SELECT count(*) FROM (
			SELECT started_at, lag(ended_at) OVER (ORDER BY started_at, id) AS prev FROM host_captures WHERE host = $1) x
		WHERE started_at < prev + interval '30 milliseconds'`, host).Scan(&short); err != nil {
		t.Fatal(err)
	}
	if overlaps != 0 || short != 0 {
		t.Errorf("SQL over every start and end: %d overlaps, %d short gaps", overlaps, short)
	}
	// Round robin between organizations: while globex and initech wait,
	// acme does not get two turns in a row among the first captures.
	firstOther := -1
	for i, o := range order {
		if o != "acme" {
			firstOther = i
			break
		}
	}
	if firstOther < 0 || firstOther > 2 {
		t.Errorf("the first captures went %v: another organization waited while acme held the host", order[:min(len(order), 8)])
	}
	seen := map[string]int{}
	for _, o := range order[:9] {
		seen[o]++
	}
	if seen["globex"] < 2 || seen["initech"] < 2 {
		t.Errorf("in the first nine captures: %v (order %v); want each organization served in turn", seen, order[:9])
	}
}

// TestHostLeaseHoldAndExpiry: a party that backs off after a 429 makes the
// next party, whatever its own delay, wait the back-off, recorded as its
// source; a lease whose process stopped renewing it ends at its expiry,
// and the next capture waits its delay after that.
func TestHostLeaseHoldAndExpiry(t *testing.T) {
	t.Parallel()
	s, _, ctx := crawlStore(t)
	host := "hold-" + uuid.NewString()[:8] + ".example"
	req := func(org string, delay time.Duration) ledger.HostLeaseRequest {
		return ledger.HostLeaseRequest{Host: host, Kind: ledger.HostKindCrawl, Org: org, URL: "https://" + host + "/",
			Delay: delay, Source: "setting", AtOnce: 1, TTL: 10 * time.Second}
	}
	h, err := ledger.AcquireHost(ctx, s, req("acme", 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Release(ctx, 300*time.Millisecond, ledger.HostSourceBackoff); err != nil {
		t.Fatal(err)
	}
	h2, err := ledger.AcquireHost(ctx, s, req("globex", 10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if h2.Lease.Source != ledger.HostSourceBackoff || h2.Lease.Delay < 299*time.Millisecond {
		t.Errorf("after another party's back-off: %+v", h2.Lease)
	}
	// A dead holder: TryHost directly, never renewed, never released.
	if err := h2.Release(ctx, 0, "setting"); err != nil {
		t.Fatal(err)
	}
	dead := req("acme", 0)
	dead.Holder, dead.TTL = uuid.NewString(), 200*time.Millisecond
	var ok bool
	for !ok {
		if _, ok, _, err = s.TryHost(ctx, dead); err != nil {
			t.Fatal(err)
		}
	}
	h3, err := ledger.AcquireHost(ctx, s, req("globex", 50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_ = h3.Release(ctx, 0, "setting")
	caps, err := s.HostCaptures(ctx, host, time.Time{})
	if err != nil || len(caps) != 4 {
		t.Fatalf("%d captures, %v", len(caps), err)
	}
	d := caps[2]
	if !d.Expired || d.EndedAt == nil || d.EndedAt.Sub(d.StartedAt) < 200*time.Millisecond {
		t.Errorf("the dead holder's capture: %+v", d)
	}
	if gap := caps[3].StartedAt.Sub(*d.EndedAt); gap < 50*time.Millisecond {
		t.Errorf("the capture after an expired lease started %s after its end, want ≥ 50ms", gap)
	}
	if rep := politeness.CheckHost(host, caps, 1); !rep.OK || rep.Expired != 1 || rep.Sources[ledger.HostSourceBackoff] != 1 {
		t.Errorf("report: %+v", rep)
	}
	// The report finds a gap shorter than an earlier party's hold.
	bad := append([]ledger.HostCapture(nil), caps...)
	early := bad[1].StartedAt.Add(-250 * time.Millisecond)
	bad[1].StartedAt = early
	if rep := politeness.CheckHost(host, bad, 1); rep.OK || rep.ShortGaps != 1 {
		t.Errorf("a start 50ms after an end held for 300ms: %+v", rep)
	}
	// And an overlap.
	bad = append([]ledger.HostCapture(nil), caps...)
	bad[1].StartedAt = bad[0].StartedAt
	if rep := politeness.CheckHost(host, bad, 1); rep.OK || rep.Overlaps != 1 {
		t.Errorf("two captures at once: %+v", rep)
	}
}
