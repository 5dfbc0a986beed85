package politeness

import (
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// TestTurnsWhileWaiting: the report counts, for each capture whose party
// recorded when it asked, the turns each other organization took while that
// party stood ready in line after its organization's previous turn. Round
// robin gives at most 1; a line served first come, first served by crawl
// lets an organization with two crawls take two turns; a party still
// keeping its own longer delay (a back-off) was not ready, so the turns
// taken meanwhile are not counted against the round robin.
func TestTurnsWhileWaiting(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) *time.Time { v := t0.Add(time.Duration(ms) * time.Millisecond); return &v }
	// Captures of 10 ms each, 100 ms apart; asked is when the party asked.
	capture := func(org string, start, asked, delay int) ledger.HostCapture {
		c := ledger.HostCapture{Host: "h", Kind: ledger.HostKindCrawl, Org: org, URL: "u", StartedAt: *at(start), EndedAt: at(start + 10),
			Delay: time.Duration(delay) * time.Millisecond, Source: "setting", AskedAt: at(asked)}
		if start > 0 {
			c.PrevEnd = at(start - 90)
		}
		return c
	}
	// acme asked at 15 ms but keeps 1 s after the host's last end.
	backoff := capture("acme", 1310, 15, 1000)
	backoff.PrevEnd = at(310)
	for _, tc := range []struct {
		name        string
		caps        []ledger.HostCapture
		most        int
		waiter, who string
	}{
		{"round robin", []ledger.HostCapture{
			capture("acme", 0, 0, 90), capture("globex", 100, 0, 90), capture("initech", 200, 0, 90),
			capture("acme", 300, 15, 90), capture("globex", 400, 115, 90), capture("initech", 500, 215, 90),
		}, 1, "initech", "globex"},
		{"first come first served by crawl", []ledger.HostCapture{
			capture("acme", 0, 0, 90), capture("globex", 100, 0, 90), capture("globex", 200, 0, 90),
			capture("initech", 300, 0, 90), capture("acme", 400, 15, 90),
		}, 2, "initech", "globex"},
		{"a party keeping its own back-off", []ledger.HostCapture{
			capture("acme", 0, 0, 90), capture("globex", 100, 0, 90), capture("globex", 200, 115, 90),
			capture("globex", 300, 215, 90), backoff,
		}, 0, "", ""},
	} {
		rep := CheckHost("h", tc.caps, 1)
		if !rep.OK || rep.MostTurnsWhileWaiting != tc.most || rep.TurnsWaiter != tc.waiter || rep.TurnsTaker != tc.who {
			t.Errorf("%s: ok %v, most turns while waiting %d (%s waited, %s took), want %d (%s, %s)",
				tc.name, rep.OK, rep.MostTurnsWhileWaiting, rep.TurnsWaiter, rep.TurnsTaker, tc.most, tc.waiter, tc.who)
		}
		if rep.LongestWaitMs == nil || rep.Entries[len(rep.Entries)-1].WaitedMs == nil {
			t.Errorf("%s: waits not reported", tc.name)
		}
	}
}
