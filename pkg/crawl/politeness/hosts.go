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
	Entries []HostEntry    `json:"captureList"`
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
