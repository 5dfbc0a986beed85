// Package politeness answers, for one crawl, the lag(finished_at)
// question of docs/crawling.md host by host: how many captures, the gaps between one capture's
// end and the next one's start (min, median), overlaps and gaps shorter
// than the delay (both must be 0), the delay and where it came from, and
// what robots.txt said (GET /api/crawls/{id}/politeness, `ledgerctl crawl
// politeness`). The evidence is crawl_pages' submitted_at and finished_at;
// the embedded runner adds its per-host pacing records.
package politeness

import (
	"context"
	"math"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Store reads a crawl's pacing evidence; *postgres.Store implements it.
type Store interface {
	Politeness(ctx context.Context, crawlID string) ([]ledger.PolitenessHost, error)
}

// CrawlReader reads a crawl for a caller; *crawl.Service implements it. It
// is the politeness report's gate: an absent crawl and one the caller may
// not touch are both ledger.ErrNotFound, as for GET /api/crawls/{id}.
type CrawlReader interface {
	Get(ctx context.Context, c crawl.Caller, id string) (crawl.CrawlView, error)
}

// Service answers GET /api/crawls/{id}/politeness and
// `ledgerctl crawl politeness`.
type Service struct {
	Crawls CrawlReader
	Store  Store
}

// SourceSetting is the delay source of a host the runner kept no record
// of: the crawl's perHostDelayMs.
const SourceSetting = "setting"

// Report is the lag(finished_at) question answered for one
// crawl, host by host.
type Report struct {
	CrawlID        string `json:"crawlId"`
	State          string `json:"state"`
	PerHostDelayMs int    `json:"perHostDelayMs"`
	// OK says no host had an overlap or a gap shorter than its delay.
	OK    bool             `json:"ok"`
	Hosts []HostPoliteness `json:"hosts"`
}

// HostPoliteness is one host's pacing. A gap is the time between the end of
// one capture on the host and the start of the next (ordered by start);
// it is measured on the attempt each page reports (a page retried after a
// 429 reports its retry).
type HostPoliteness struct {
	Host string `json:"host"`
	// Captures counts pages with a recorded capture, Captured those
	// captured, Retries the second attempts.
	Captures int `json:"captures"`
	Captured int `json:"captured"`
	Retries  int `json:"retries"`
	Gaps     int `json:"gaps"`
	// MinGapMs and MedianGapMs are nil without gaps (fewer than two
	// captures).
	MinGapMs    *float64 `json:"minGapMs"`
	MedianGapMs *float64 `json:"medianGapMs"`
	// Overlaps counts captures that started before an earlier one on the
	// host had finished (must be 0); ShortGaps those that started sooner
	// than the delay after the previous end (must be 0).
	Overlaps  int `json:"overlaps"`
	ShortGaps int `json:"shortGaps"`
	// DelayMs is the delay gaps are held to and DelaySource where it came
	// from: setting, crawl-delay (robots.txt's, longer than the setting)
	// or cap (a Crawl-delay cut to the runner's maximum). CrawlDelayMs is
	// robots.txt's value, when it gave one.
	DelayMs      int    `json:"delayMs"`
	DelaySource  string `json:"delaySource"`
	CrawlDelayMs *int   `json:"crawlDelayMs"`
	// Backoff is present when a 429 or 503 backed the host off: the
	// host's later pages in that level waited the longer time.
	Backoff *Backoffs   `json:"backoff,omitempty"`
	Robots  RobotsState `json:"robots"`
	// Timeline is the host's captures in the order they started, with the
	// gap before each and the delay it was held to (present when the
	// store can read capture times; the first MaxTimeline of them).
	Timeline []Capture `json:"timeline,omitempty"`
	// TimelineCut says the host had more captures than Timeline holds.
	TimelineCut bool `json:"timelineCut,omitempty"`
}

// MaxTimeline is how many captures of one host a report's timeline holds.
const MaxTimeline = 2000

// Capture is one capture on a host: when it started and ended, the gap
// since the latest end of an earlier capture on the host (nil for the
// first), the delay of its level, and whether the gap was an overlap
// (negative) or shorter than the delay.
type Capture struct {
	URL         string    `json:"url"`
	Depth       int       `json:"depth"`
	State       string    `json:"state"`
	SubmittedAt time.Time `json:"submittedAt"`
	FinishedAt  time.Time `json:"finishedAt"`
	GapMs       *float64  `json:"gapMs"`
	DelayMs     int       `json:"delayMs"`
	Overlap     bool      `json:"overlap"`
	Short       bool      `json:"short"`
}

// TimelineStore reads every capture's times; *postgres.Store implements
// it.
type TimelineStore interface {
	PolitenessTimeline(ctx context.Context, crawlID string) ([]ledger.TimelineCapture, error)
}

// timelines groups captures (ordered by host and start) by host, with
// each one's gap measured as the report's SQL measures it: from the latest
// end of the host's earlier captures.
func timelines(rows []ledger.TimelineCapture) (map[string][]Capture, map[string]bool) {
	out, cut := map[string][]Capture{}, map[string]bool{}
	var host string
	var latest time.Time
	for i, r := range rows {
		c := Capture{URL: r.URL, Depth: r.Depth, State: r.State, SubmittedAt: r.SubmittedAt.UTC(), FinishedAt: r.FinishedAt.UTC(), DelayMs: r.DelayMs}
		if i == 0 || r.Host != host {
			host, latest = r.Host, r.FinishedAt
		} else {
			gap := float64(r.SubmittedAt.Sub(latest).Microseconds()) / 1000
			c.GapMs = &gap
			c.Overlap = gap < 0
			c.Short = gap < float64(r.DelayMs)
			if r.FinishedAt.After(latest) {
				latest = r.FinishedAt
			}
		}
		if len(out[r.Host]) >= MaxTimeline {
			cut[r.Host] = true
			continue
		}
		out[r.Host] = append(out[r.Host], c)
	}
	return out, cut
}

// Backoffs summarises a host's back-offs.
type Backoffs struct {
	Count int `json:"count"`
	MaxMs int `json:"maxMs"`
}

// RobotsState is what robots.txt said at the host's last level.
type RobotsState struct {
	// Outcome is fetched, absent, unreachable, unparsable, or unknown
	// (the crawl was not run by this runner: the Windmill flow keeps no
	// record of it).
	Outcome string  `json:"outcome"`
	Status  *int    `json:"status"`
	Error   *string `json:"error"`
	// Skipped counts the host's pages robots.txt kept out.
	Skipped int `json:"skipped"`
}

// Report returns the crawl's politeness report for the caller.
func (p *Service) Report(ctx context.Context, c crawl.Caller, crawlID string) (Report, error) {
	v, err := p.Crawls.Get(ctx, c, crawlID)
	if err != nil {
		return Report{}, err
	}
	rows, err := p.Store.Politeness(ctx, v.CrawlID)
	if err != nil {
		return Report{}, err
	}
	out := Report{CrawlID: v.CrawlID, State: v.State, PerHostDelayMs: v.PerHostDelayMs, OK: true, Hosts: make([]HostPoliteness, len(rows))}
	var lines map[string][]Capture
	var cut map[string]bool
	if ts, ok := p.Store.(TimelineStore); ok {
		caps, err := ts.PolitenessTimeline(ctx, v.CrawlID)
		if err != nil {
			return Report{}, err
		}
		lines, cut = timelines(caps)
	}
	for i, r := range rows {
		h := HostPoliteness{
			Host: r.Host, Captures: r.Captures, Captured: r.Captured, Retries: r.Retries, Gaps: r.Gaps,
			MinGapMs: roundMs(r.MinGapMs), MedianGapMs: roundMs(r.MedianGapMs), Overlaps: r.Overlaps, ShortGaps: r.ShortGaps,
			DelayMs: v.PerHostDelayMs, DelaySource: SourceSetting, CrawlDelayMs: r.CrawlDelayMs,
			Robots: RobotsState{Outcome: "unknown", Status: r.RobotsStatus, Error: r.RobotsError, Skipped: r.RobotsSkipped},
		}
		if r.DelayMs != nil && r.DelaySource != nil {
			h.DelayMs, h.DelaySource = *r.DelayMs, *r.DelaySource
		}
		if r.Robots != nil {
			h.Robots.Outcome = *r.Robots
		}
		if r.Backoffs > 0 {
			h.Backoff = &Backoffs{Count: r.Backoffs, MaxMs: r.BackoffMs}
		}
		h.Timeline, h.TimelineCut = lines[r.Host], cut[r.Host]
		if h.Overlaps > 0 || h.ShortGaps > 0 {
			out.OK = false
		}
		out.Hosts[i] = h
	}
	return out, nil
}

// roundMs keeps milliseconds to the microsecond the database holds.
func roundMs(p *float64) *float64 {
	if p == nil {
		return nil
	}
	v := math.Round(*p*1000) / 1000
	return &v
}
