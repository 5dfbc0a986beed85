package politeness

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The politeness of one host across every crawl and direct capture, in
// every process (`ledgerctl hosts politeness`): the host's captures as the
// host lease table recorded them, on PostgreSQL's clock.

// HostStore reads a host's captures; *postgres.Store implements it.
type HostStore interface {
	HostCaptures(ctx context.Context, host string, since time.Time) ([]ledger.HostCapture, error)
	// HostsWithPort lists, in order, at most limit hosts recorded as name
	// with a port that have a capture started at or after since.
	HostsWithPort(ctx context.Context, name string, since time.Time, limit int) ([]string, error)
}

// HostReport answers, for one host, whether every party kept its promises:
// no more than AtOnce captures at once, and every capture started no sooner
// than the largest delay any party asked for after the previous end.
type HostReport struct {
	Host   string     `json:"host"`
	Since  *time.Time `json:"since"`
	AtOnce int        `json:"atOnce"`
	// OK says there was no overlap and no short gap.
	OK       bool `json:"ok"`
	Captures int  `json:"captures"`
	// Crawls counts the distinct crawls, Direct the direct captures,
	// Organizations the distinct organizations, Running the captures not
	// ended yet, Expired those whose process stopped holding the lease.
	Crawls        int      `json:"crawls"`
	Direct        int      `json:"direct"`
	Organizations []string `json:"organizations"`
	Running       int      `json:"running"`
	Expired       int      `json:"expired"`
	Gaps          int      `json:"gaps"`
	MinGapMs      *float64 `json:"minGapMs"`
	MedianGapMs   *float64 `json:"medianGapMs"`
	Overlaps      int      `json:"overlaps"`
	ShortGaps     int      `json:"shortGaps"`
	// Sources counts the captures by the source of the delay they kept
	// (setting, crawl-delay, cap, backoff, host).
	Sources map[string]int `json:"sources"`
	// MostTurnsWhileWaiting is the fairness between organizations: the
	// most captures one other organization started while a party of an
	// organization stood in the host's line, ready (its delay kept), for
	// its organization's next turn. The round robin makes it at most 1;
	// TurnsWaiter is the organization that waited them and TurnsTaker
	// the one that took them (both empty at 0). Captures recorded without
	// the time they asked are left out.
	MostTurnsWhileWaiting int    `json:"mostTurnsWhileWaiting"`
	TurnsWaiter           string `json:"turnsWaiter,omitempty"`
	TurnsTaker            string `json:"turnsTaker,omitempty"`
	// LongestWaitMs is the longest time a party stood in the line (nil
	// when no capture recorded when it asked).
	LongestWaitMs *float64    `json:"longestWaitMs"`
	Entries       []HostEntry `json:"captureList"`
}

// HostEntry is one capture of the host.
type HostEntry struct {
	Kind      string     `json:"kind"`
	Org       string     `json:"organization"`
	CrawlID   *string    `json:"crawlId"`
	URL       string     `json:"url"`
	StartedAt time.Time  `json:"startedAt"`
	EndedAt   *time.Time `json:"endedAt"`
	Expired   bool       `json:"expired,omitempty"`
	// GapMs is the time since the latest earlier end (nil: the first
	// capture, or one that started while others ran); RequiredMs the
	// least gap any party asked for (this capture's delay, or an earlier
	// party's hold), RequiredSource why.
	GapMs          *float64 `json:"gapMs"`
	RequiredMs     int      `json:"requiredMs"`
	RequiredSource string   `json:"requiredSource"`
	Overlap        bool     `json:"overlap,omitempty"`
	ShortGap       bool     `json:"shortGap,omitempty"`
	// AskedAt is when the party first asked for the host (nil: not
	// recorded) and WaitedMs how long it stood in line.
	AskedAt  *time.Time `json:"askedAt,omitempty"`
	WaitedMs *float64   `json:"waitedMs,omitempty"`
}

// HostService answers `ledgerctl hosts politeness`.
type HostService struct {
	Store HostStore
	// AtOnce is CAPTURE_LEDGER_HOST_CAPTURES_AT_ONCE (1 when zero).
	AtOnce int
}

// ErrNoHost: the host named is empty.
var ErrNoHost = errors.New("a host is required")

// Report reads host's captures since since (every one when zero) and
// checks them.
func (s *HostService) Report(ctx context.Context, host string, since time.Time) (HostReport, error) {
	if host == "" {
		return HostReport{}, ErrNoHost
	}
	caps, err := s.Store.HostCaptures(ctx, host, since)
	if err != nil {
		return HostReport{}, err
	}
	rep := CheckHost(host, caps, max(s.AtOnce, 1))
	if !since.IsZero() {
		t := since.UTC()
		rep.Since = &t
	}
	return rep, nil
}

// WithPort lists, in order, at most limit hosts with captures since since
// that are name with a port: what a HOST given without its port may have
// meant, since hosts are recorded with theirs (www.example.com:8080).
func (s *HostService) WithPort(ctx context.Context, name string, since time.Time, limit int) ([]string, error) {
	if name == "" {
		return nil, ErrNoHost
	}
	return s.Store.HostsWithPort(ctx, name, since, limit)
}

// CheckHost checks captures (in start order) with no more than atOnce at
// once. A capture overlaps when atOnce earlier ones had not ended at its
// start; it starts short when no earlier capture ran then and its start
// is sooner than the latest earlier end plus its own delay, or than any
// earlier capture's end plus the hold that party asked for.
func CheckHost(host string, caps []ledger.HostCapture, atOnce int) HostReport {
	rep := HostReport{Host: host, AtOnce: atOnce, OK: true, Captures: len(caps), Sources: map[string]int{},
		Organizations: []string{}, Entries: make([]HostEntry, 0, len(caps))}
	crawls := map[string]bool{}
	orgs := map[string]bool{}
	lastOfOrg := map[string]time.Time{} // start of each organization's latest capture so far
	var (
		gaps      []float64
		lastEnd   time.Time // latest end of an earlier capture
		holdUntil time.Time // latest end + hold of an earlier capture
		holdSrc   string
	)
	for i, c := range caps {
		e := HostEntry{Kind: c.Kind, Org: c.Org, CrawlID: c.CrawlID, URL: c.URL, StartedAt: c.StartedAt.UTC(),
			Expired: c.Expired, RequiredMs: int(c.Delay / time.Millisecond), RequiredSource: c.Source}
		if c.EndedAt != nil {
			t := c.EndedAt.UTC()
			e.EndedAt = &t
		} else {
			rep.Running++
		}
		if c.Expired {
			rep.Expired++
		}
		if c.Kind == ledger.HostKindCapture {
			rep.Direct++
		}
		if c.CrawlID != nil {
			crawls[*c.CrawlID] = true
		}
		orgs[c.Org] = true
		rep.Sources[c.Source]++

		running := 0
		for _, p := range caps[:i] {
			if p.EndedAt == nil || p.EndedAt.After(c.StartedAt) {
				running++
			}
		}
		switch {
		case running >= atOnce:
			e.Overlap = true
			rep.Overlaps++
		case running == 0 && !lastEnd.IsZero():
			gap := c.StartedAt.Sub(lastEnd)
			ms := float64(gap) / float64(time.Millisecond)
			e.GapMs = &ms
			gaps = append(gaps, ms)
			need := lastEnd.Add(c.Delay)
			if holdUntil.After(need) {
				need = holdUntil
				e.RequiredMs = int(holdUntil.Sub(lastEnd) / time.Millisecond)
				e.RequiredSource = holdSrc
			}
			if c.StartedAt.Before(need) {
				e.ShortGap = true
				rep.ShortGaps++
			}
		}
		if c.EndedAt != nil {
			if c.EndedAt.After(lastEnd) {
				lastEnd = *c.EndedAt
			}
			if h := c.EndedAt.Add(c.Hold); c.Hold > 0 && h.After(holdUntil) {
				holdUntil, holdSrc = h, c.HoldSource
			}
		}
		if c.AskedAt != nil {
			t := c.AskedAt.UTC()
			w := float64(c.StartedAt.Sub(t)) / float64(time.Millisecond)
			e.AskedAt, e.WaitedMs = &t, &w
			if rep.LongestWaitMs == nil || w > *rep.LongestWaitMs {
				rep.LongestWaitMs = &w
			}
			if n, taker := turnsWhileWaiting(caps, i, lastOfOrg); n > rep.MostTurnsWhileWaiting {
				rep.MostTurnsWhileWaiting, rep.TurnsWaiter, rep.TurnsTaker = n, c.Org, taker
			}
		}
		lastOfOrg[c.Org] = c.StartedAt
		rep.Entries = append(rep.Entries, e)
	}
	rep.Crawls = len(crawls)
	for o := range orgs {
		rep.Organizations = append(rep.Organizations, o)
	}
	slices.Sort(rep.Organizations)
	rep.Gaps = len(gaps)
	if len(gaps) > 0 {
		slices.Sort(gaps)
		lo := math.Round(gaps[0]*1000) / 1000
		med := gaps[len(gaps)/2]
		if len(gaps)%2 == 0 {
			med = (gaps[len(gaps)/2-1] + gaps[len(gaps)/2]) / 2
		}
		med = math.Round(med*1000) / 1000
		rep.MinGapMs, rep.MedianGapMs = &lo, &med
	}
	rep.OK = rep.Overlaps == 0 && rep.ShortGaps == 0
	return rep
}

// turnsWhileWaiting counts, for capture i (which recorded when its party
// asked), the captures each other organization started after the party
// asked and after its organization's previous turn (lastOfOrg), at a
// moment the party was ready too: its own delay had passed since the end
// the other capture's gap was counted from. It returns the largest count
// and the organization that took those turns. Captures are in start order.
func turnsWhileWaiting(caps []ledger.HostCapture, i int, lastOfOrg map[string]time.Time) (int, string) {
	c := caps[i]
	from := *c.AskedAt
	if t, ok := lastOfOrg[c.Org]; ok && t.After(from) {
		from = t
	}
	turns := map[string]int{}
	most, who := 0, ""
	for j := i - 1; j >= 0 && caps[j].StartedAt.After(from); j-- {
		y := caps[j]
		if y.Org == c.Org || (y.PrevEnd != nil && y.StartedAt.Before(y.PrevEnd.Add(c.Delay))) {
			continue
		}
		turns[y.Org]++
		if turns[y.Org] > most {
			most, who = turns[y.Org], y.Org
		}
	}
	return most, who
}
