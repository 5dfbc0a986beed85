package ledger

import (
	"fmt"
	"time"
)

// Crawl rows: what the crawl use-cases read and write through their store.

// NewCrawl is a crawl to insert with its depth-0 pages.
type NewCrawl struct {
	// Seeds are normalised and distinct; Hosts[i] is the host (with port)
	// of Seeds[i].
	Seeds, Hosts []string
	// Rules is the pinned rule list, as JSON.
	Rules                                               []byte
	MaxDepth, MaxPages, PerHostDelayMs, HostParallelism int
	OrgID, RequestedBy                                  string
	Now                                                 time.Time
	// MaxRunning bounds the organization's running crawls (0: no bound).
	MaxRunning int
}

// PageRef is a crawl page as a level's frontier needs it.
type PageRef struct {
	ID   int64
	URL  string
	Host string
}

// ActiveCrawlError is a crawl refused because its organization already
// runs as many crawls as it may at once (NewCrawl.MaxRunning). CrawlID and
// StartedAt are those of the organization's oldest running crawl; they are
// empty when it could not be read or may not be named to the caller.
// Running and Limit are the organization's running crawls and its bound (0
// when unknown).
type ActiveCrawlError struct {
	CrawlID   string
	StartedAt time.Time
	Running   int
	Limit     int
}

func (e *ActiveCrawlError) Error() string {
	msg := "a crawl is already in progress"
	if e.Limit > 0 {
		msg = fmt.Sprintf("the organization already runs %d of its %d crawls at once", max(e.Running, e.Limit), e.Limit)
	}
	if e.CrawlID == "" {
		return msg
	}
	return msg + ": " + e.CrawlID
}

// Crawl is one crawls row.
type Crawl struct {
	ID              string
	Seeds           []string
	Rules           []byte // JSON
	MaxDepth        int
	MaxPages        int
	PerHostDelayMs  int
	HostParallelism int
	OrgID           string
	RequestedBy     string
	State           string
	StopReason      *string
	StartedAt       time.Time
	FinishedAt      *time.Time
	ProgressedAt    time.Time
	PagesDiscovered int
	PagesCaptured   int
	Error           *string
	LastJobID       *string
	LastJobDepth    *int
}

// CrawlFailure is a crawl page that failed; Reason is its skip_reason.
type CrawlFailure struct {
	URL    string
	Depth  int
	Reason *string
}

// CrawlCursor is a (started_at, id) position in the newest-first crawl list.
type CrawlCursor struct {
	StartedAt time.Time
	ID        string
}

// CrawlRow is a crawl as the list shows it: the row and the number of
// distinct archives its pages produced, and its pages that failed and
// that were skipped.
type CrawlRow struct {
	Crawl
	WaczCount                 int
	PagesFailed, PagesSkipped int
}

// CrawlScope is the part of the crawls a caller may see: those of Orgs
// and those Subject requested.
type CrawlScope struct {
	Orgs    []string
	Subject string
}

// DecisionRecord is one crawl_decisions row.
type DecisionRecord struct {
	Depth    int      `json:"depth"`
	Rule     int      `json:"rule"`
	Action   string   `json:"action"`
	Hostname string   `json:"hostname"`
	Links    int      `json:"links"`
	Samples  []string `json:"samples"`
}

// RobotsRecord is, for one hostname (port stripped), the pages of a crawl
// not captured because of robots.txt, with up to a few samples in the order
// they were found.
type RobotsRecord struct {
	Hostname string
	Pages    int
	Samples  []string
}

// DomainDecision is a decision row of some crawl for a hostname under a
// domain, with the crawl's start, seeds and the pattern of the rule (nil
// for rule 0, no rule matched).
type DomainDecision struct {
	CrawlID   string
	StartedAt time.Time
	Seeds     []string
	Depth     int
	Rule      int
	Action    string
	Pattern   *string
	Hostname  string
	Links     int
}

// LevelRecord is a crawl_levels row: a level report the crawl accepted.
type LevelRecord struct {
	Depth          int
	Digest         []byte
	Results        int
	PagesClosed    int
	PagesCaptured  int
	PagesRecovered int
	// ArchivesAdmitted counts the archives of the level's pages in the
	// ledger once it was accepted, those registered while it ran
	// (AdmitCaptured) included.
	ArchivesAdmitted int
	PagesDiscovered  int
	NextPages        int
	StopReason       *string
	// Refused is the JSON array of the results the report was refused for
	// (the crawl package owns its shape); nil is stored as [].
	Refused    []byte
	ReportedAt time.Time
}

// PageClose is how a level report closes one page.
type PageClose struct {
	URL           string // normalised
	State         string // captured | failed | skipped
	SkipReason    *string
	TaskID        *string
	CorrelationID *string
	SubmittedAt   *time.Time
	FinishedAt    *time.Time
	FinalURL      *string
}

// ClosedPage is a page a report closed.
type ClosedPage struct {
	ID    int64
	URL   string
	State string
}

// NewSubmission is a capture_submissions row.
type NewSubmission struct {
	TaskID        string
	CorrelationID *string
	OrgID         string
	SubmittedBy   *string
	ManifestKey   *string
	ManifestError *string
	SubmittedAt   time.Time
	// Verified says the manifest was read and bound to the reporting crawl
	// (task, correlation, URL). A verified row replaces a row of the same
	// task recorded under another correlation: that one was a claim nobody
	// could check when it was made (its manifest was not there yet).
	Verified bool
}

// NewPage is a page a level discovered.
type NewPage struct {
	URL  string
	Host string
	From *int64 // discovered_from: the page the link was read on
}

// LevelTotals is what an accepted report adds to its crawl.
type LevelTotals struct {
	LevelRecord
	// CrawlStopReason is coalesced into crawls.stop_reason (the first
	// reason sticks); nil leaves it.
	CrawlStopReason *string
	// Done closes the crawl as succeeded.
	Done bool
	Now  time.Time
}

// Target is one capture_targets row.
type Target struct {
	ID        int64     `json:"id"`
	OrgID     string    `json:"orgId"`
	URL       string    `json:"url"`
	Labels    []string  `json:"labels"`
	Enabled   bool      `json:"enabled"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// TargetUpsert is one target AddTargets wrote: Inserted when it is new,
// Reenabled when it existed disabled.
type TargetUpsert struct {
	Target
	Inserted  bool
	Reenabled bool
}

// LevelState is what the level transaction read, under the crawl's row
// lock, for the report of one depth: the use-case decides its plan from it
// alone.
type LevelState struct {
	// Crawl is the crawl's row as locked.
	Crawl Crawl
	// Accepted is the report of this depth the crawl already accepted, nil
	// when there is none (then the other fields are read).
	Accepted *LevelRecord
	// AtDepth is how many pages the crawl has at the depth.
	AtDepth int
	// Pending maps each URL the report names that is a pending page of the
	// crawl at the depth to that page's id.
	Pending map[string]int64
	// Begun is read by AdmitCaptured for a crawl closed (stopped or
	// failed) while the level ran: for each URL it was given that is a
	// pending page at the depth, the task of the capture the runner began
	// there before the crawl was closed (crawl_runner_results). Nil
	// otherwise.
	Begun map[string]string
	// Known holds the url_hash (sha256 of the URL) of every page of the
	// crawl, whatever its state; it is read only when a next level can
	// exist (depth < MaxDepth), and is nil otherwise.
	Known map[[32]byte]bool
	// KnownCount is the number of pages the crawl has.
	KnownCount int
}

// KeepCaptured plans, when a running crawl is closed (stopped, failed,
// stalled), the registration of what its runner kept: results are the
// results kept at depth (each a crawl.PageReport as JSON) for pending
// pages whose status is captured and whose capture is not in the ledger
// yet, and begun the captures the runner began at depth and kept no result
// of (its process may have died after the capturer wrote them), whose
// task is not in the ledger either; cr is the crawl's row. It may read the
// bucket, so the store asks it first outside the transaction that closes
// the crawl, and under that transaction's lock only for what was kept in
// between: it may be asked more than once for one close, each time for
// other captures. A nil plan registers nothing; only its Submissions,
// Archives (with their outbox rows) and Tasks are written.
type KeepCaptured func(cr Crawl, depth int, results [][]byte, begun []BegunCapture) (*LevelPlan, error)

// BegunCapture is a capture a crawl's runner began (its begin is recorded)
// and kept no result of.
type BegunCapture struct {
	URL, TaskID string
	SubmittedAt time.Time
}

// LevelPlan is everything one accepted level report writes, decided from
// a LevelState; the store applies it in the same transaction, in this
// order.
type LevelPlan struct {
	// Closes closes pending pages of the depth (each is in Pending).
	Closes []PageClose
	// Submissions are recorded (see NewSubmission.Verified).
	Submissions []NewSubmission
	// Archives are admitted with the outbox rows carrying Tuples(i, id);
	// they have distinct (bucket, object_key).
	Archives []NewArchive
	Tuples   func(i int, archiveID string) OutboxPayload
	// Tasks name the capture job of pending pages whose archives are
	// registered before their level's report (AdmitCaptured only): the
	// page stays pending and is this crawl's capture from then on.
	Tasks []PageTask
	// Decisions replace the depth's crawl_decisions rows.
	Decisions []DecisionRecord
	// Next are the pages inserted at depth+1: the next level.
	Next []NewPage
	// Totals are added to the crawl and recorded with the level; the store
	// fills in ArchivesAdmitted (the plan's archives in the ledger after it)
	// and NextPages (the pages it inserted).
	Totals LevelTotals
}

// PageTask is a pending page (by its URL) and the capture job whose
// archive was registered for it.
type PageTask struct {
	URL, TaskID string
	// SubmittedAt and FinishedAt, when set, are recorded as the page's
	// capture times: a capture in flight when its crawl was closed, whose
	// result the runner could not keep (the politeness timeline shows it).
	SubmittedAt, FinishedAt *time.Time
}

// LevelApplied is what applying a LevelPlan wrote.
type LevelApplied struct {
	// Admitted are the indexes in LevelPlan.Archives of the archives
	// inserted (the others were in the ledger already), ascending.
	Admitted []int
	// Next are the pages inserted at depth+1, in id order.
	Next []PageRef
	// LastFinished is, for each host of Next, when the crawl last finished
	// a page there (hosts never finished are absent); nil when the crawl
	// is done.
	LastFinished map[string]time.Time
}
