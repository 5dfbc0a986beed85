package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
)

// URLTTL is how long a presigned URL lives. A signed URL cannot be revoked,
// so it is short and the check right before signing is fully consistent.
const URLTTL = 300 * time.Second

// Permissions answers who may view which archive. OpenFGA is the only
// authority; the caller's organizations come only from the verified identity.
type Permissions interface {
	// CanView is one fully consistent check.
	CanView(ctx context.Context, subject string, orgs []string, archiveID string) (bool, error)
	// CanViewMany answers for every id, in order.
	CanViewMany(ctx context.Context, subject string, orgs []string, archiveIDs []string) ([]bool, error)
}

// Explainer confirms the reasons the ledger recorded for a caller (each a
// check of its own relation, authz.ReasonCheck), for the list's --why.
type Explainer interface {
	ConfirmReasons(ctx context.Context, subject string, cands []ledger.Candidate) ([][]bool, error)
}

// Catalog reads ledger rows.
type Catalog interface {
	ArchiveLocation(ctx context.Context, id string) (bucket, key string, err error)
	// ArchivesBefore is every archive after cursor that passes f, newest
	// first (the full scan).
	ArchivesBefore(ctx context.Context, f ledger.ArchiveFilter, cursor *ledger.ArchiveCursor, limit int) ([]ledger.Archive, error)
	// CandidatesBefore is the archives after cursor that pass f, newest
	// first, that the ledger recorded a grantee of for v (its
	// organizations, itself, active shares at now), each with those
	// reasons.
	CandidatesBefore(ctx context.Context, v ledger.Viewer, f ledger.ArchiveFilter, cursor *ledger.ArchiveCursor, limit int, now time.Time) ([]ledger.Candidate, error)
	// ListCursorKey is the key resume tokens are sealed with (32 bytes).
	ListCursorKey(ctx context.Context) ([]byte, error)
}

// CrawlFinder is a Catalog that also knows which crawl captured each
// capture job; the list then names each row's crawl.
type CrawlFinder interface {
	// CrawlsOfJobs maps those of taskIDs a crawl page captured to the
	// crawl's id.
	CrawlsOfJobs(ctx context.Context, taskIDs []string) (map[string]string, error)
}

// crawlsOf fills in the crawl of each row, when the catalog knows it.
func (a *Access) crawlsOf(ctx context.Context, rows []ledger.Archive) error {
	cf, ok := a.Catalog.(CrawlFinder)
	if !ok || len(rows) == 0 {
		return nil
	}
	tasks := make([]string, len(rows))
	for i, r := range rows {
		tasks[i] = r.TaskID
	}
	crawls, err := cf.CrawlsOfJobs(ctx, tasks)
	if err != nil {
		return err
	}
	for i := range rows {
		rows[i].CrawlID = crawls[rows[i].TaskID]
	}
	return nil
}

// Presigner signs GET URLs.
type Presigner interface {
	PresignGet(ctx context.Context, bucket, key string, ttl time.Duration) (string, error)
}

// ListSource is where the list takes the rows it asks OpenFGA about.
type ListSource int

const (
	// SourceCandidates (the default) reads only the archives the ledger
	// recorded a grantee of for the caller: the organizations of its
	// identity, itself as owner, active shares to it or its organizations
	// (migrations/000008_list_sources.up.sql). Its cost follows what the
	// caller may see, not the ledger's size. It relies on one invariant:
	// every tuple granting can_view is written by the ledger through the
	// outbox.
	SourceCandidates ListSource = iota
	// SourceScan reads every archive of the ledger, newest first, and asks
	// OpenFGA about each: nothing is assumed, and a sparse caller pays for
	// everyone else's rows.
	SourceScan
)

// ParseListSource reads CAPTURE_LEDGER_LIST_SOURCE's value.
func ParseListSource(s string) (ListSource, error) {
	switch s {
	case "", "candidates":
		return SourceCandidates, nil
	case "scan":
		return SourceScan, nil
	}
	return 0, fmt.Errorf("must be candidates or scan, not %q", s)
}

func (s ListSource) String() string {
	if s == SourceScan {
		return "scan"
	}
	return "candidates"
}

// Access hands out URLs and lists archives to the people allowed to see them.
type Access struct {
	Perms   Permissions
	Catalog Catalog
	Signer  Presigner
	// Ranges reads archives in place, for their thumbnails and for a
	// crawl's export; nil answers every thumbnail ErrNoThumbnail and
	// refuses every export.
	Ranges RangeObjects
	Log    *slog.Logger
	// PageSize is how many visible rows a page holds (default 50).
	PageSize int
	// ScanLimit is a list request's check budget: how many rows it may ask
	// OpenFGA about (default 5000). A page that hits it is returned short
	// with Truncated set and a token to resume from.
	ScanLimit int
	// TimeBudget bounds one list request's work (default 2 s): once it has
	// passed, the request stops after the chunk of checks in hand, returned
	// short with Truncated set. A request always checks at least one chunk,
	// so resuming always moves forward.
	TimeBudget time.Duration
	// Source is where rows come from (default SourceCandidates).
	Source ListSource
	// Now is the clock shares expire by (default time.Now).
	Now func() time.Time
	// Gate bounds how many lists and searches run at once and how many of
	// their checks are in flight (nil: no bound, checks in chunks of 100).
	// It is shared by every request of a server.
	Gate *ScanGate

	// standIn is what an absent archive's check asks about instead.
	standIn ledger.StandIn
}

// DefaultCheckBudget is how many rows a list request may ask OpenFGA about
// when no ScanLimit is set.
const DefaultCheckBudget = visible.DefaultCheckBudget

// DefaultTimeBudget is a list request's time budget when none is set.
const DefaultTimeBudget = visible.DefaultTimeBudget

// ScanGate is the server-wide guard of lists and searches (visible.Gate).
type ScanGate = visible.Gate

// GateBounds are a ScanGate's limits (visible.GateBounds).
type GateBounds = visible.GateBounds

// BusyError is a list or search refused by the gate (visible.BusyError).
type BusyError = visible.BusyError

// DefaultGateBounds are the gate's bounds when none is set.
var DefaultGateBounds = visible.DefaultGateBounds

// NewScanGate returns a gate with the given bounds.
func NewScanGate(b GateBounds) *ScanGate { return visible.NewGate(b) }

// SignedURL is a presigned GET for one archive.
type SignedURL struct {
	URL       string `json:"url"`
	ExpiresIn int    `json:"expiresIn"`
}

// URL checks can_view with full consistency, then signs a GET of the
// archive's object. Refusal and absence are both ledger.ErrNotFound.
func (a *Access) URL(ctx context.Context, subject string, orgs []string, id string) (SignedURL, error) {
	// "Not allowed" and "absent" take one path: the ledger is read and
	// OpenFGA asked whatever the other answers, and either refusal is the
	// same 404.
	bucket, key, lerr := a.Catalog.ArchiveLocation(ctx, id)
	if err := viewable(ctx, a.Perms, &a.standIn, a.logger(), subject, orgs, id, lerr); err != nil {
		return SignedURL{}, err
	}
	u, err := a.Signer.PresignGet(ctx, bucket, key, URLTTL)
	if err != nil {
		return SignedURL{}, err
	}
	a.logger().Info("Signed URL issued", "archiveId", id)
	return SignedURL{URL: u, ExpiresIn: int(URLTTL / time.Second)}, nil
}

// Cursor is a position in the newest-first list: the (capturedAt, id) of the
// last row a page examined.
type Cursor = ledger.ArchiveCursor

// Page is one page of visible archives.
type Page struct {
	Archives []ledger.Archive `json:"archives"`
	// Next continues after this page; nil when the list is exhausted. It can
	// be a row the caller may not see: only Token leaves the process.
	Next *Cursor `json:"-"`
	// Token is Next sealed for this caller (see SealCursor); "" when Next
	// is nil.
	Token string `json:"-"`
	// Truncated says the check or time budget ended the request before the
	// page filled; Token resumes it.
	Truncated bool `json:"truncated"`
	// Scanned is how many rows were examined (for benchmarks and logs).
	Scanned int `json:"-"`

	// reasons are the visible rows' candidates, kept when the page explains
	// itself.
	reasons []ledger.Candidate
}

// List returns up to PageSize archives the caller may view, newest first,
// after cursor. Rows are read in batches whose size adapts to how many of
// the previous rows were visible, each batch checked in chunks, until the
// page is full, the ledger is exhausted, or the request's check or time
// budget is spent. It first passes the Gate (a *BusyError when full, before
// any check), and seals Next into Token for this caller.
func (a *Access) List(ctx context.Context, subject string, orgs []string, cursor *Cursor) (Page, error) {
	return a.list(ctx, subject, orgs, ledger.ArchiveFilter{}, cursor, false)
}

func (a *Access) list(ctx context.Context, subject string, orgs []string, f ledger.ArchiveFilter, cursor *Cursor, why bool) (Page, error) {
	page, err := a.scan(ctx, subject, orgs, f, cursor, why)
	if err != nil {
		return Page{}, err
	}
	if err := a.crawlsOf(ctx, page.Archives); err != nil {
		return Page{}, err
	}
	if page.Next != nil {
		if page.Token, err = a.sealCursor(ctx, subject, orgs, f.Key(), page.Next); err != nil {
			return Page{}, err
		}
	}
	return page, nil
}

// scan is List's work: the shared filtered pagination (visible.Scan) over
// the rows of Source, one archive per row.
func (a *Access) scan(ctx context.Context, subject string, orgs []string, f ledger.ArchiveFilter, cursor *Cursor, why bool) (Page, error) {
	size := a.PageSize
	if size <= 0 {
		size = 50
	}
	var start *ledger.Candidate
	if cursor != nil {
		start = &ledger.Candidate{Archive: ledger.Archive{ID: cursor.ID, CapturedAt: cursor.CapturedAt}}
	}
	sc := visible.Scan[ledger.Candidate]{
		Caller: subject, Orgs: orgs, What: "archive lists", Start: start,
		Fetch: func(ctx context.Context, after *ledger.Candidate, n int) ([]ledger.Candidate, error) {
			var pos *Cursor
			if after != nil {
				pos = &Cursor{CapturedAt: after.CapturedAt, ID: after.ID}
			}
			return a.rowsBefore(ctx, subject, orgs, f, pos, n)
		},
		Archive: func(c ledger.Candidate) string { return c.ID },
		Check: func(ctx context.Context, ids []string) ([]bool, error) {
			return a.Perms.CanViewMany(ctx, subject, orgs, ids)
		},
		Size: size, OnePerArchive: true,
		CheckBudget: a.ScanLimit, TimeBudget: a.TimeBudget, Gate: a.Gate,
	}
	r, err := sc.Run(ctx)
	if err != nil {
		return Page{}, err
	}
	page := Page{Archives: make([]ledger.Archive, 0, len(r.Chosen)), Truncated: r.Truncated, Scanned: r.Examined}
	for _, c := range r.Chosen {
		page.Archives = append(page.Archives, c.Archive)
		if why {
			page.reasons = append(page.reasons, c)
		}
	}
	var next *ledger.Candidate
	switch {
	case r.Full:
		next = r.LastChosen
	case r.Truncated:
		next = r.Last
	}
	if next != nil {
		page.Next = &Cursor{CapturedAt: next.CapturedAt, ID: next.ID}
	}
	return page, a.explain(ctx, subject, &page)
}

// whyNeedsCandidates is why --why is refused on the full scan, which knows
// no reasons.
const whyNeedsCandidates = "is known only with the candidate list (CAPTURE_LEDGER_LIST_SOURCE=candidates)"

// ErrWhyNeedsCandidates refuses --why on the full scan.
var ErrWhyNeedsCandidates = errors.New(FieldWhy + " " + whyNeedsCandidates)

// rowsBefore is the next rows to ask OpenFGA about, from Source.
func (a *Access) rowsBefore(ctx context.Context, subject string, orgs []string, f ledger.ArchiveFilter, pos *Cursor, limit int) ([]ledger.Candidate, error) {
	if a.Source == SourceScan {
		rows, err := a.Catalog.ArchivesBefore(ctx, f, pos, limit)
		out := make([]ledger.Candidate, len(rows))
		for i, r := range rows {
			out[i].Archive = r
		}
		return out, err
	}
	now := time.Now
	if a.Now != nil {
		now = a.Now
	}
	return a.Catalog.CandidatesBefore(ctx, ledger.Viewer{Subject: subject, Orgs: orgs}, f, pos, limit, now())
}

// explain confirms the recorded reasons of the page's rows, when it keeps
// them, with one BatchCheck (Perms must be an Explainer), and sets each
// row's Why to the reasons that hold.
func (a *Access) explain(ctx context.Context, subject string, page *Page) error {
	if page.reasons == nil {
		return nil
	}
	ex, ok := a.Perms.(Explainer)
	if !ok {
		return errors.New("list: these permissions cannot confirm reasons")
	}
	held, err := ex.ConfirmReasons(ctx, subject, page.reasons)
	if err != nil {
		return fmt.Errorf("confirm reasons: %w", err)
	}
	for i, c := range page.reasons {
		why := []ledger.Reason{}
		for j, r := range c.Reasons {
			if held[i][j] {
				why = append(why, r)
			}
		}
		page.Archives[i].Why = &why
	}
	page.reasons = nil
	return nil
}

func (a *Access) logger() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

// viewable asks can_view of an archive whose ledger read ended with lerr.
// An absent id is asked about as a stand-in (ledger.StandIn), so OpenFGA
// takes as long as for another organization's archive, and a caller who
// may not view it and an absent id are both ledger.ErrNotFound after the
// same work. Any other read error is returned as it is.
func viewable(ctx context.Context, perms Permissions, standIn *ledger.StandIn, log *slog.Logger, subject string, orgs []string, id string, lerr error) error {
	if lerr != nil && !errors.Is(lerr, ledger.ErrNotFound) {
		return lerr
	}
	ok, err := perms.CanView(ctx, subject, orgs, standIn.For(id, lerr == nil))
	if err != nil {
		return fmt.Errorf("check can_view: %w", err)
	}
	if !ok || lerr != nil {
		log.Info("Denied", "archiveId", id)
		return ledger.ErrNotFound
	}
	return nil
}
