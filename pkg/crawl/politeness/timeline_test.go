package politeness

import (
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// TestTimelines: each capture's gap is measured from the latest end of the
// host's earlier captures (as the report's SQL measures it), so a capture
// that starts inside a long earlier one is an overlap even when the capture
// just before it ended; a gap under the delay is short; hosts start afresh.
func TestTimelines(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := func(host string, s, f, delay int) ledger.TimelineCapture {
		return ledger.TimelineCapture{Host: host, URL: host, SubmittedAt: at(s), FinishedAt: at(f), DelayMs: delay}
	}
	lines, cut := timelines([]ledger.TimelineCapture{
		c("a", 0, 5000, 1000),    // first: no gap
		c("a", 1000, 2000, 1000), // started inside the first: overlap (-4000)
		c("a", 5500, 6000, 1000), // 500 after the latest end (5000): short
		c("a", 7000, 7500, 1000), // 1000 after 6000: fine
		c("b", 100, 200, 1000),   // another host: no gap
		c("b", 1200, 1300, 1000), // exactly the delay: fine
	})
	type want struct {
		gap            *float64
		overlap, short bool
	}
	f := func(v float64) *float64 { return &v }
	for host, ws := range map[string][]want{
		"a": {{nil, false, false}, {f(-4000), true, true}, {f(500), false, true}, {f(1000), false, false}},
		"b": {{nil, false, false}, {f(1000), false, false}},
	} {
		got := lines[host]
		if len(got) != len(ws) || cut[host] {
			t.Fatalf("%s: %d captures (cut %v), want %d", host, len(got), cut[host], len(ws))
		}
		for i, w := range ws {
			g := got[i]
			if (g.GapMs == nil) != (w.gap == nil) || (g.GapMs != nil && *g.GapMs != *w.gap) || g.Overlap != w.overlap || g.Short != w.short {
				t.Errorf("%s[%d]: gap %v overlap %v short %v, want %v %v %v", host, i, g.GapMs, g.Overlap, g.Short, w.gap, w.overlap, w.short)
			}
		}
	}
	many := make([]ledger.TimelineCapture, MaxTimeline+1)
	for i := range many {
		many[i] = c("h", i*10, i*10+5, 0)
	}
	if lines, cut := timelines(many); len(lines["h"]) != MaxTimeline || !cut["h"] {
		t.Errorf("%d captures kept of %d (cut %v)", len(lines["h"]), len(many), cut["h"])
	}
}
