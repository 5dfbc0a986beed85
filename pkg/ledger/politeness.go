package ledger

import "time"

// The politeness and progress read models: what the crawl politeness and
// progress reports (pkg/crawl/politeness) read of a crawl, and the store
// (*postgres.Store) returns.

// CrawlPageRow is one page of a crawl as the console's pages table shows
// it. State and Reason count the runner's kept result while the level is
// not reported yet; ArchiveID is the archive its capture was admitted as.
type CrawlPageRow struct {
	ID                      int64
	URL                     string
	Depth                   int
	Host                    string
	State                   string
	Reason                  *string
	ArchiveID               *string
	SubmittedAt, FinishedAt *time.Time
	// FinalURL is where the page's capture ended after redirects, when
	// reported.
	FinalURL *string
}

// TimelineCapture is one capture on a host of a crawl, with the delay its
// level held the host to.
type TimelineCapture struct {
	Host                    string
	Depth                   int
	URL                     string
	State                   string
	SubmittedAt, FinishedAt time.Time
	DelayMs                 int
}

// PolitenessHost is one host's pacing evidence in a crawl.
type PolitenessHost struct {
	Host string
	// Captures counts the pages with a recorded submission; Captured those
	// captured; RobotsSkipped those robots.txt kept out; Retries the
	// second attempts after a 429/503 or a transient failure.
	Captures, Captured, RobotsSkipped, Retries int
	// Gaps counts the intervals between one capture's end and the next
	// one's start; MinGapMs and MedianGapMs are nil when there are none.
	Gaps                  int
	MinGapMs, MedianGapMs *float64
	// Overlaps counts captures that started before an earlier one on the
	// host had finished; ShortGaps those that started sooner after the
	// previous end than the delay of their level.
	Overlaps, ShortGaps int
	// The pacing of the host's last level the runner recorded (nil
	// Robots when none was: a crawl run by the Windmill flow).
	Depth        *int
	Robots       *string
	RobotsStatus *int
	RobotsError  *string
	CrawlDelayMs *int
	DelayMs      *int
	DelaySource  *string
	// Backoffs and BackoffMs over all levels.
	Backoffs, BackoffMs int
}

// HostProgress is one host of a crawl's current (deepest) level: its pages
// by state, a page the runner has a result for counting as that result
// until the level is reported, and the delay the runner applies there.
type HostProgress struct {
	Host                               string
	Depth                              int
	Captured, Failed, Skipped, Pending int
	Robots, DelaySource                *string
	DelayMs, Backoffs, BackoffMs       *int
}

// LevelProgress is one level of a crawl, its pages by state.
type LevelProgress struct {
	Depth                              int
	Captured, Failed, Skipped, Pending int
}

// FailureCount is one reason pages of a crawl failed for, and how many.
type FailureCount struct {
	Reason string
	Pages  int
}
