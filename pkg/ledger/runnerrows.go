package ledger

import "time"

// The rows of the embedded crawl runner's port (crawl/runner.Store): the
// levels it runs, the results it keeps as each capture ends (so a stopped
// runner resumes without capturing a page twice) and how it paced each
// host. The PostgreSQL adapter stores them.

// RunnerLevel is a running crawl's deepest level that has no accepted
// report: the level a runner has to run (or finish).
type RunnerLevel struct {
	CrawlID         string
	Depth           int
	MaxDepth        int
	OrgID           string
	PerHostDelayMs  int
	HostParallelism int
	Pages           []RunnerPage
}

// RunnerPage is one page of a RunnerLevel, with when the crawl last
// finished a page on its host (nil when never).
type RunnerPage struct {
	URL            string
	Host           string
	LastFinishedAt *time.Time
}

// RunnerResult is what the runner kept of one page of a level: the attempt
// in flight (Result nil) or the page's result (a crawl.PageReport as JSON).
type RunnerResult struct {
	URL         string
	Host        string
	TaskID      *string
	SubmittedAt *time.Time
	FinishedAt  *time.Time
	Result      []byte
	Attempts    int
}

// RunnerPageResult is one page's result to keep.
type RunnerPageResult struct {
	URL, Host string
	Depth     int
	TaskID    string
	// SubmittedAt and FinishedAt are those of the attempt reported (zero
	// for a page not captured, e.g. one robots.txt disallows).
	SubmittedAt, FinishedAt time.Time
	// Result is the crawl.PageReport as JSON.
	Result []byte
	// Attempts is how many captures were made (0 for a page not captured);
	// BackoffMs the wait before the retry after a 429/503 (0 when none).
	Attempts, BackoffMs int
}

// RunnerHost is how the runner paced one host at one level.
type RunnerHost struct {
	CrawlID string
	Depth   int
	Host    string
	// Robots is fetched (a 2xx robots.txt was read), absent (another
	// status: no rules), unreachable (no answer: no rules) or unparsable
	// (a 2xx that could not be read: no rules).
	Robots       string
	RobotsStatus *int
	RobotsError  *string
	// CrawlDelayMs is the Crawl-delay robots.txt gave our group (nil when
	// none); DelayMs the delay applied and DelaySource why: setting,
	// crawl-delay, or cap (a Crawl-delay above the maximum, cut to it).
	CrawlDelayMs *int
	DelayMs      int
	DelaySource  string
	// Backoffs counts the 429/503 answers that backed the host off;
	// BackoffMs is the longest wait they caused.
	Backoffs, BackoffMs int
}
