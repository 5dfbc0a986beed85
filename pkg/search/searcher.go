package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// Permissions answers can_view for many archives at once (one OpenFGA
// BatchCheck per call).
type Permissions interface {
	CanViewMany(ctx context.Context, subject string, orgs []string, archiveIDs []string) ([]bool, error)
}

// CursorKeys gives the key resume tokens are sealed with: the archive
// list's key (archive.CursorSeal derives a key per purpose from it).
type CursorKeys interface {
	ListCursorKey(ctx context.Context) ([]byte, error)
}

// Recorded narrows archive ids to the ones the ledger recorded a grantee
// of for the caller (the archive list's candidates, asked by id; see
// archive.SourceCandidates for the invariant this relies on).
type Recorded interface {
	RecordedFor(ctx context.Context, v ledger.Viewer, ids []string, now time.Time) (map[string]bool, error)
}

// Scope gives what narrows a caller's search inside the index besides its
// grantee keys: the archives shared with the caller (active shares, as
// RecordedFor counts them) and the archives recorded for the caller that
// wait to be indexed (again), whose pages may lack the caller's grantee
// key. ok is false when those are more than max, or when more than max
// archives wait to be indexed at all (a rebuild in progress): the search
// then narrows after the index, as with Recorded alone.
type Scope interface {
	SearchScope(ctx context.Context, v ledger.Viewer, now time.Time, max int) (ids []string, ok bool, err error)
}

// MaxScopeArchives is the most archive ids a search's filter carries.
const MaxScopeArchives = 1000

// Searcher runs a search for one caller: it asks the index for candidates
// and keeps only those of archives OpenFGA says the caller may view, the
// way the archive list does. The API and `ledgerctl search` call Search.
type Searcher struct {
	Backend Backend
	Perms   Permissions
	Keys    CursorKeys
	Log     *slog.Logger
	// CheckBudget is how many archives one request may ask OpenFGA about
	// (default 5,000); a page that reaches it is answered short with
	// Truncated and a cursor to resume.
	CheckBudget int
	// TimeBudget bounds one request's work the same way (default 2 s). A
	// request always checks at least one chunk, so resuming moves forward.
	TimeBudget time.Duration
	// CountFloor is how many matches, best first, the first page of a
	// search always examines to count Total, even when the page fills
	// sooner (negative: none). Unset, it is DefaultCountFloor when the
	// index does not narrow the query to the caller's recorded archives,
	// and NarrowedCountFloor when it does: then nearly every match examined
	// is visible and costs a check, so counting 100 would cost five times
	// a default page's own BatchCheck.
	CountFloor int
	// Recorded, when set, keeps OpenFGA from being asked about archives
	// the ledger recorded no grantee of for the caller: they are not
	// visible without a check (CAPTURE_LEDGER_LIST_SOURCE=candidates). Nil
	// asks OpenFGA about every archive a hit comes from.
	Recorded Recorded
	// Scope, when set, narrows the index query itself to the pages of
	// archives the ledger recorded for the caller (grantee keys stored with
	// each page, plus Scope's archive ids), so matches in archives the
	// caller cannot see cost nothing but the index's own work. It relies on
	// the same invariant as Recorded. Hits are still confirmed with
	// can_view.
	Scope Scope
	// Now is the clock shares end by (default time.Now).
	Now func() time.Time
}

// Limits of Request.Limit.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// DefaultCountFloor is Searcher.CountFloor when unset and the index does
// not narrow the query; NarrowedCountFloor (one default page) when it
// does.
const (
	DefaultCountFloor  = 100
	NarrowedCountFloor = DefaultLimit
)

// checkChunk is how many candidates one BatchCheck covers at most.
const checkChunk = 100

// Request is one search: a parsed query, how many hits a page holds, and
// where to resume (a Next a previous page handed out, or "").
type Request struct {
	Query  Query
	Limit  int
	Cursor string
}

// Hit is one visible page that matches.
type Hit struct {
	ArchiveID string `json:"archiveId"`
	URL       string `json:"url"`
	// Title is the page's title as written; TitleHighlight is the same,
	// HTML-escaped, with the matches in <mark>.
	Title          string `json:"title"`
	TitleHighlight string `json:"titleHighlight"`
	// Highlight is up to three fragments of the text around the matches,
	// HTML-escaped, with the matches in <mark> (the text's start when only
	// the title matched; none for an empty or withheld text).
	Highlight     []string  `json:"highlight"`
	TextTruncated bool      `json:"textTruncated"`
	TextWithheld  *string   `json:"textWithheld"`
	ObjectKey     string    `json:"objectKey"`
	SourceURL     string    `json:"sourceUrl"`
	Labels        []string  `json:"labels"`
	CapturedAt    time.Time `json:"capturedAt"`
}

// Page is one page of visible hits, best first.
type Page struct {
	Hits []Hit `json:"hits"`
	// Total is, on the first page only (no cursor), how many of the
	// matches the request examined the caller may see: all that filling the
	// page took, and at least the best CountFloor matches (all of them when
	// fewer) when a floor applies. It never counts a hit the caller may not see. TotalExact
	// says every match was examined, so Total is the whole count; when
	// false, Total is a lower bound. Later pages have no total (null).
	Total      *int `json:"total"`
	TotalExact bool `json:"totalExact"`
	// Next resumes after this page (sealed for this caller and this
	// query); nil when nothing visible is left.
	Next *string `json:"next"`
	// Truncated says the check or time budget ended the request before the
	// page filled; Next resumes it.
	Truncated bool `json:"truncated"`

	// Examined and Checked are how many candidates were looked at and how
	// many archives OpenFGA was asked about (benchmarks and logs).
	Examined int `json:"-"`
	Checked  int `json:"-"`
}

// ErrBadCursor is a cursor that does not open for this caller and query.
var ErrBadCursor = errors.New("is not a cursor this server handed to you for this query (changed, cut short, another caller's or another query's): start again without it")

// Search returns up to req.Limit hits the caller may view, after
// req.Cursor. Candidates come from the index in batches sized by the
// visibility seen so far; each chunk of up to 100 is confirmed with one
// BatchCheck of can_view for the archives not asked about yet in this
// request.
func (s *Searcher) Search(ctx context.Context, subject string, orgs []string, req Request) (Page, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	var after *Position
	if req.Cursor != "" {
		p, err := s.openCursor(ctx, subject, orgs, req.Query, req.Cursor)
		if err != nil {
			return Page{}, err
		}
		after = p
	}
	filter, err := s.filter(ctx, subject, orgs)
	if err != nil {
		return Page{}, err
	}
	first := after == nil
	floor := 0
	if first {
		floor = s.countFloor(filter != nil)
	}
	deadline := time.Now().Add(s.timeBudget())
	budget := s.checkBudget()

	visible := map[string]bool{} // archive id → may view, for this request
	var chosen []Position
	var lastChosen *Position
	page := Page{Hits: []Hit{}}
	seen := 0    // visible candidates examined
	pos := after // the last candidate examined
	exhausted, stopped := false, false
	fetched := 0 // candidates the index returned
	for !exhausted && !stopped {
		need := limit - len(chosen)
		batch := max(need, 1)
		if page.Examined > 0 {
			// Expect the visibility seen so far; never below 1/64 so a
			// batch stays bounded, and a quarter extra to avoid a short tail.
			ratio := max(float64(seen)/float64(page.Examined), 1.0/64)
			batch = int(float64(need)/ratio*1.25) + 1
		}
		batch = min(max(batch, floor-page.Examined), 1000)
		cands, _, err := s.Backend.Candidates(ctx, req.Query, filter, pos, batch)
		if err != nil {
			return Page{}, err
		}
		fetched += len(cands)
		if len(cands) < batch {
			exhausted = true
		}
		if filter == nil {
			// The index did not narrow: drop what the ledger recorded no
			// grantee of for the caller before asking OpenFGA.
			if err := s.recorded(ctx, subject, orgs, cands, visible, &page.Checked); err != nil {
				return Page{}, err
			}
		}
		for start := 0; start < len(cands) && !stopped; start += checkChunk {
			chunk := cands[start:min(start+checkChunk, len(cands))]
			if err := s.check(ctx, subject, orgs, chunk, visible, &page.Checked); err != nil {
				return Page{}, err
			}
			for i := range chunk {
				c := chunk[i]
				page.Examined++
				pos = &c
				if !visible[c.ArchiveID] {
					continue
				}
				seen++
				if len(chosen) < limit {
					chosen = append(chosen, c)
					lastChosen = &c
				}
			}
			full := len(chosen) == limit
			switch {
			case full && page.Examined >= floor:
				stopped = true
			case start+checkChunk >= len(cands) && exhausted:
			case page.Checked >= budget || !time.Now().Before(deadline):
				// Out of budget: a page still filling is cut short and
				// resumes after the last candidate examined; a full page
				// only stops counting.
				stopped, page.Truncated = true, !full
			}
		}
	}
	// Every match was examined: the index ran out and no fetched
	// candidate was left unchecked.
	all := exhausted && page.Examined == fetched
	if first {
		n := seen
		page.Total = &n
		page.TotalExact = all
	}
	var next *Position
	switch {
	case page.Truncated:
		next = pos
	case len(chosen) == limit && (!all || seen > len(chosen)):
		next = lastChosen
	}
	if next != nil {
		token, err := s.sealCursor(ctx, subject, orgs, req.Query, *next)
		if err != nil {
			return Page{}, err
		}
		page.Next = &token
	}
	return page, s.fill(ctx, req.Query, chosen, &page)
}

// filter is the index filter of a request: the caller's grantee keys and
// Scope's archive ids; nil (no narrowing in the index) without Scope, when
// Scope has too many, or when the index cannot filter.
func (s *Searcher) filter(ctx context.Context, subject string, orgs []string) (*Filter, error) {
	if s.Scope == nil || !s.Backend.Filters() {
		return nil, nil
	}
	ids, ok, err := s.Scope.SearchScope(ctx, ledger.Viewer{Subject: subject, Orgs: orgs}, s.now(), MaxScopeArchives)
	if err != nil {
		return nil, fmt.Errorf("search scope: %w", err)
	}
	if !ok {
		return nil, nil
	}
	return &Filter{Grantees: CallerKeys(subject, orgs), Archives: ids}, nil
}

func (s *Searcher) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// recorded settles, with one ledger query and one BatchCheck for the whole
// batch, the archives of cands not known yet in this request (nothing
// without Recorded): those the ledger recorded no grantee of for the caller
// are not visible without asking; OpenFGA is asked about the others, which
// are few and nearly all visible, so the batch costs one call however
// sparse the caller. check then finds them all known.
func (s *Searcher) recorded(ctx context.Context, subject string, orgs []string, cands []Position, visible map[string]bool, checked *int) error {
	if s.Recorded == nil {
		return nil
	}
	ids := unknown(cands, visible)
	if len(ids) == 0 {
		return nil
	}
	rec, err := s.Recorded.RecordedFor(ctx, ledger.Viewer{Subject: subject, Orgs: orgs}, ids, s.now())
	if err != nil {
		return err
	}
	var ask []string
	for _, id := range ids {
		if !rec[id] {
			visible[id] = false
		} else {
			ask = append(ask, id)
		}
	}
	return s.ask(ctx, subject, orgs, ask, visible, checked)
}

// unknown is the distinct archives of cands not settled yet in this
// request, in order.
func unknown(cands []Position, visible map[string]bool) []string {
	var ids []string
	seen := map[string]bool{}
	for _, c := range cands {
		if _, known := visible[c.ArchiveID]; !known && !seen[c.ArchiveID] {
			seen[c.ArchiveID] = true
			ids = append(ids, c.ArchiveID)
		}
	}
	return ids
}

// check asks OpenFGA, in one BatchCheck, about the archives of chunk not
// asked about yet in this request (with Recorded, recorded settled them all
// for the batch).
func (s *Searcher) check(ctx context.Context, subject string, orgs []string, chunk []Position, visible map[string]bool, checked *int) error {
	return s.ask(ctx, subject, orgs, unknown(chunk, visible), visible, checked)
}

// ask settles ids with one BatchCheck of can_view.
func (s *Searcher) ask(ctx context.Context, subject string, orgs []string, ids []string, visible map[string]bool, checked *int) error {
	if len(ids) == 0 {
		return nil
	}
	allowed, err := s.Perms.CanViewMany(ctx, subject, orgs, ids)
	if err != nil {
		return fmt.Errorf("batch check can_view: %w", err)
	}
	if len(allowed) != len(ids) {
		return fmt.Errorf("batch check can_view: %d answers for %d archives", len(allowed), len(ids))
	}
	for i, id := range ids {
		visible[id] = allowed[i]
	}
	*checked += len(ids)
	return nil
}

// fill loads the chosen documents and shapes them as hits with snippets.
// A document gone from the index since it was found is left out.
func (s *Searcher) fill(ctx context.Context, q Query, chosen []Position, page *Page) error {
	if len(chosen) == 0 {
		return nil
	}
	ids := make([]string, len(chosen))
	for i, c := range chosen {
		ids[i] = c.DocID()
	}
	docs, err := s.Backend.Documents(ctx, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		d, ok := docs[id]
		if !ok {
			continue
		}
		labels := d.Labels
		if labels == nil {
			labels = []string{}
		}
		hl := Highlight(d.Text, q, 3)
		if hl == nil {
			hl = []string{}
		}
		page.Hits = append(page.Hits, Hit{
			ArchiveID: d.ArchiveID, URL: d.URL, Title: d.Title, TitleHighlight: HighlightTitle(d.Title, q),
			Highlight: hl, TextTruncated: d.TextTruncated, TextWithheld: d.TextWithheld,
			ObjectKey: d.ObjectKey, SourceURL: d.SourceURL, Labels: labels, CapturedAt: d.CapturedAt,
		})
	}
	return nil
}

// A search position is sealed with the archive list's cursor sealing
// (archive.CursorSeal: AES-GCM under the ledger's key, bound to the caller),
// so a cursor reveals nothing (not the archive, not the score) and cannot be
// forged. A position has the list cursor's shape — 8 bytes, 4 bytes and an
// id of 16 — so it travels in one: the score's IEEE 754 bits as the
// seconds, the page number as the nanoseconds, the archive id as the id.
// The caller slot of the additional data carries "search", the subject and
// the query, so a list cursor never opens as a search cursor, nor one
// query's cursor for another query.

func positionAsCursor(p Position) *archive.Cursor {
	return &archive.Cursor{CapturedAt: time.Unix(int64(math.Float64bits(p.Score)), int64(p.Page)), ID: p.ArchiveID}
}

func cursorAsPosition(c *archive.Cursor) Position {
	return Position{Score: math.Float64frombits(uint64(c.CapturedAt.Unix())), Page: c.CapturedAt.Nanosecond(), ArchiveID: c.ID}
}

func searchAAD(subject string, q Query) string { return "search\x00" + subject + "\x00" + q.String() }

func (s *Searcher) seal(ctx context.Context) (*archive.CursorSeal, error) {
	key, err := s.Keys.ListCursorKey(ctx)
	if err != nil {
		return nil, err
	}
	return archive.NewCursorSeal(key)
}

func (s *Searcher) sealCursor(ctx context.Context, subject string, orgs []string, q Query, p Position) (string, error) {
	seal, err := s.seal(ctx)
	if err != nil {
		return "", err
	}
	return seal.Seal(searchAAD(subject, q), orgs, positionAsCursor(p))
}

func (s *Searcher) openCursor(ctx context.Context, subject string, orgs []string, q Query, token string) (*Position, error) {
	if err := archive.CheckCursorToken(token); err != nil {
		return nil, ErrBadCursor
	}
	seal, err := s.seal(ctx)
	if err != nil {
		return nil, err
	}
	c, err := seal.Open(searchAAD(subject, q), orgs, token)
	if err != nil {
		return nil, ErrBadCursor
	}
	p := cursorAsPosition(c)
	if math.IsNaN(p.Score) || math.IsInf(p.Score, 0) || p.Page < 0 || p.Page >= MaxPagesPerArchive {
		return nil, ErrBadCursor
	}
	return &p, nil
}

// CheckCursor checks a cursor's shape without any key, so a malformed one
// is refused before the caller is identified.
func CheckCursor(token string) error {
	if archive.CheckCursorToken(token) != nil {
		return ErrBadCursor
	}
	return nil
}

func (s *Searcher) countFloor(narrowed bool) int {
	switch {
	case s.CountFloor < 0:
		return 0
	case s.CountFloor == 0 && narrowed:
		return NarrowedCountFloor
	case s.CountFloor == 0:
		return DefaultCountFloor
	}
	return s.CountFloor
}

func (s *Searcher) checkBudget() int {
	if s.CheckBudget > 0 {
		return s.CheckBudget
	}
	return archive.DefaultCheckBudget
}

func (s *Searcher) timeBudget() time.Duration {
	if s.TimeBudget > 0 {
		return s.TimeBudget
	}
	return archive.DefaultTimeBudget
}
