package search

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
)

// Permissions answers can_view for many archives at once (one OpenFGA
// BatchCheck per call).
type Permissions interface {
	CanViewMany(ctx context.Context, subject string, orgs []string, archiveIDs []string) ([]bool, error)
}

// CursorKeys gives the key resume tokens are sealed with: the archive
// list's key (visible.Seal derives a key per purpose from it).
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
	// Gate is the server's guard of lists and searches (nil: none): a
	// search passes it before asking anything, and its checks wait their
	// turn in its lane.
	Gate *visible.Gate
	// Matching applies a request's Filter (required for one).
	Matching Matching
	// Captures, when set, collapses the captures of one URL across the
	// whole result set (collapse.go) and finds each hit's other captures
	// in the ledger; nil collapses nothing.
	Captures Captures
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

// Request is one search: a parsed query, how many hits a page holds, and
// where to resume (a Next a previous page handed out, or "").
type Request struct {
	Query  Query
	Limit  int
	Cursor string
	// Filter keeps the hits of some archives only (crawl, host, capture
	// time; its Text is not used here). A cursor opens only for the filter
	// it was handed out with.
	Filter ledger.ArchiveFilter
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
	// OtherCaptures are the other captures of the hit's source URL the
	// caller may view, newest first (at most MaxOtherCaptures); the hit is
	// the newest capture of its URL that the caller may view and that
	// matches (collapse.go), so an older matching capture shows only here.
	// OtherCapturesMore says there may be more than those listed.
	OtherCaptures     []Capture `json:"otherCaptures"`
	OtherCapturesMore bool      `json:"otherCapturesMore"`
}

// Capture is one capture of a URL: its archive and when.
type Capture struct {
	ArchiveID  string    `json:"archiveId"`
	CapturedAt time.Time `json:"capturedAt"`
}

// MaxOtherCaptures is how many other captures a hit lists at most.
const MaxOtherCaptures = 10

// Captures finds the captures of URLs in the ledger: CapturesOf those
// whose source URL is one of urls and that pass f, newest first, at most
// limit per URL; LaterCaptures those captured after an archive (the
// collapse, collapse.go).
type Captures interface {
	CapturesOf(ctx context.Context, urls []string, f ledger.ArchiveFilter, limit int) (map[string][]ledger.ArchiveRef, error)
	LaterCaptures
}

// Matching says which archives pass a filter (the ledger's facts: crawl,
// host, capture time).
type Matching interface {
	MatchingArchives(ctx context.Context, f ledger.ArchiveFilter, ids []string) (map[string]bool, error)
}

// Page is one page of visible hits, best first.
type Page struct {
	Hits []Hit `json:"hits"`
	// Total is, on the first page only (no cursor), how many of the
	// matches the request examined the caller may see, after the collapse
	// (one per URL): all that filling the page took, and at least the best
	// CountFloor matches (all of them when fewer) when a floor applies. It
	// never counts a hit the caller may not see. TotalExact
	// says every match was examined, so Total is the whole count; when
	// false, Total is a lower bound. Later pages have no total (null).
	Total      *int `json:"total"`
	TotalExact bool `json:"totalExact"`
	// TotalIsLowerBound says, on the first page, that Total is "at least"
	// (the opposite of TotalExact; false on later pages).
	TotalIsLowerBound bool `json:"totalIsLowerBound"`
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
// req.Cursor. It passes the Gate (a *visible.BusyError when full), then
// candidates come from the index in batches sized by the visibility seen so
// far (visible.Scan, the archive list's pagination); each chunk of up to
// 100 is confirmed with one BatchCheck of can_view for the archives not
// asked about yet in this request.
func (s *Searcher) Search(ctx context.Context, subject string, orgs []string, req Request) (Page, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	var after *Position
	if req.Cursor != "" {
		p, err := s.openCursor(ctx, subject, orgs, req.scope(), req.Cursor)
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
	sc := visible.Scan[Position]{
		Caller: subject, Orgs: orgs, What: "searches", Start: after,
		Fetch: func(ctx context.Context, after *Position, n int) ([]Position, error) {
			cands, _, err := s.Backend.Candidates(ctx, req.Query, filter, after, n)
			return cands, err
		},
		Archive: func(p Position) string { return p.ArchiveID },
		Check: func(ctx context.Context, ids []string) ([]bool, error) {
			return s.Perms.CanViewMany(ctx, subject, orgs, ids)
		},
		Size: limit, Floor: floor, Chunk: visible.CheckChunk, WholeChunks: true,
		CheckBudget: s.CheckBudget, TimeBudget: s.TimeBudget, Gate: s.Gate,
	}
	var narrow []func(ctx context.Context, ids []string) (map[string]bool, error)
	if filter == nil && s.Recorded != nil {
		// The index did not narrow: drop what the ledger recorded no
		// grantee of for the caller before asking OpenFGA.
		narrow = append(narrow, func(ctx context.Context, ids []string) (map[string]bool, error) {
			return s.Recorded.RecordedFor(ctx, ledger.Viewer{Subject: subject, Orgs: orgs}, ids, s.now())
		})
	}
	if !req.Filter.IsZero() {
		if s.Matching == nil {
			return Page{}, errors.New("search: filters need the ledger (Searcher.Matching)")
		}
		// Archives the filter leaves out are not asked about.
		narrow = append(narrow, func(ctx context.Context, ids []string) (map[string]bool, error) {
			return s.Matching.MatchingArchives(ctx, req.Filter, ids)
		})
	}
	if len(narrow) > 0 {
		sc.Recorded = func(ctx context.Context, ids []string) (map[string]bool, error) {
			var keep map[string]bool
			for _, n := range narrow {
				got, err := n(ctx, ids)
				if err != nil {
					return nil, err
				}
				ids = ids[:0:0]
				for id, ok := range got {
					if ok && (keep == nil || keep[id]) {
						ids = append(ids, id)
					}
				}
				keep = got
				if len(ids) == 0 {
					break
				}
			}
			out := make(map[string]bool, len(ids))
			for _, id := range ids {
				out[id] = true
			}
			return out, nil
		}
	}
	docs := map[string]Document{}
	if s.Captures != nil {
		col := &collapser{s: s, later: s.Captures, q: req.Query, filter: filter, lf: req.Filter, docs: docs}
		sc.Keep = col.keep
	}
	r, err := sc.Run(ctx)
	if err != nil {
		return Page{}, err
	}
	page := Page{Hits: []Hit{}, Truncated: r.Truncated, Examined: r.Examined, Checked: r.Checked}
	if first {
		n := r.Visible
		page.Total = &n
		page.TotalExact = r.All
		page.TotalIsLowerBound = !r.All
	}
	var next *Position
	switch {
	case r.Truncated:
		next = r.Last
	case r.Full && (!r.All || r.Visible > len(r.Chosen)):
		next = r.LastChosen
	}
	if next != nil {
		token, err := s.sealCursor(ctx, subject, orgs, req.scope(), *next)
		if err != nil {
			return Page{}, err
		}
		page.Next = &token
	}
	if err := s.fill(ctx, req.Query, r.Chosen, docs, &page); err != nil {
		return Page{}, err
	}
	return page, s.others(ctx, subject, orgs, req.Filter, &page)
}

// scope is what a cursor of the request is sealed with beside its caller:
// the query and the filter.
func (r Request) scope() string { return r.Query.String() + "\x00" + r.Filter.Key() }

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

// fill loads the chosen documents (those not read already, in docs) and
// shapes them as hits with snippets. A document gone from the index since
// it was found is left out.
func (s *Searcher) fill(ctx context.Context, q Query, chosen []Position, docs map[string]Document, page *Page) error {
	if len(chosen) == 0 {
		return nil
	}
	ids := make([]string, len(chosen))
	var missing []string
	for i, c := range chosen {
		ids[i] = c.DocID()
		if _, ok := docs[ids[i]]; !ok {
			missing = append(missing, ids[i])
		}
	}
	if len(missing) > 0 {
		got, err := s.Backend.Documents(ctx, missing)
		if err != nil {
			return err
		}
		for id, d := range got {
			docs[id] = d
		}
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
			OtherCaptures: []Capture{},
		})
	}
	return nil
}

func sortCaptures(cs []Capture) {
	slices.SortFunc(cs, func(a, b Capture) int {
		if c := b.CapturedAt.Compare(a.CapturedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ArchiveID, b.ArchiveID)
	})
}

// others adds to each hit the other captures of its URL the ledger holds
// and the caller may view (each confirmed with can_view, like the hits), up
// to MaxOtherCaptures, newest first; a filtered search lists only those
// that pass its filter.
func (s *Searcher) others(ctx context.Context, subject string, orgs []string, f ledger.ArchiveFilter, page *Page) error {
	if s.Captures == nil || len(page.Hits) == 0 {
		return nil
	}
	urls := make([]string, 0, len(page.Hits))
	shown := map[string]bool{}
	for _, h := range page.Hits {
		urls = append(urls, h.SourceURL)
		shown[h.ArchiveID] = true
	}
	limit := MaxOtherCaptures + 1
	found, err := s.Captures.CapturesOf(ctx, urls, f, limit)
	if err != nil {
		return fmt.Errorf("other captures: %w", err)
	}
	var ids []string
	for _, refs := range found {
		for _, r := range refs {
			if !shown[r.ID] {
				shown[r.ID] = true
				ids = append(ids, r.ID)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	allowed := map[string]bool{}
	if s.Recorded != nil {
		rec, err := s.Recorded.RecordedFor(ctx, ledger.Viewer{Subject: subject, Orgs: orgs}, ids, s.now())
		if err != nil {
			return err
		}
		ids = slices.DeleteFunc(ids, func(id string) bool { return !rec[id] })
	}
	for start := 0; start < len(ids); start += visible.CheckChunk {
		part := ids[start:min(start+visible.CheckChunk, len(ids))]
		ok, err := s.Gate.Check(ctx, func() ([]bool, error) { return s.Perms.CanViewMany(ctx, subject, orgs, part) })
		if err != nil {
			return fmt.Errorf("batch check can_view: %w", err)
		}
		if len(ok) != len(part) {
			return fmt.Errorf("batch check can_view: %d answers for %d archives", len(ok), len(part))
		}
		for i, id := range part {
			allowed[id] = ok[i]
		}
	}
	for i := range page.Hits {
		h := &page.Hits[i]
		for _, r := range found[h.SourceURL] {
			if allowed[r.ID] {
				h.OtherCaptures = append(h.OtherCaptures, Capture{ArchiveID: r.ID, CapturedAt: r.CapturedAt})
			}
		}
		sortCaptures(h.OtherCaptures)
		if len(h.OtherCaptures) > MaxOtherCaptures {
			h.OtherCaptures, h.OtherCapturesMore = h.OtherCaptures[:MaxOtherCaptures], true
		}
		if len(found[h.SourceURL]) == limit {
			h.OtherCapturesMore = true
		}
	}
	return nil
}

// A search position is sealed for its caller and query (visible.Seal:
// AES-GCM under the ledger's cursor key, with a key of its own derived for
// search), so a cursor reveals nothing (not the archive, not the score) and
// cannot be forged. The query is the seal's scope, so one query's cursor
// never opens for another, and the purpose differs from the archive list's,
// so neither kind opens as the other.
//
//	token = "s1." + base64url( nonce[12] || AES-GCM(score bits[8] || page[4] || archive id[16]) )

// CursorTokenPrefix starts every search cursor.
const CursorTokenPrefix = "s1."

var cursorKind = visible.Kind{Purpose: "capture-ledger search cursor v1", Prefix: CursorTokenPrefix, Size: 8 + 4 + 16}

func encodePosition(p Position) ([]byte, error) {
	id, err := uuid.Parse(p.ArchiveID)
	if err != nil {
		return nil, fmt.Errorf("seal cursor: archive id %q: %w", p.ArchiveID, err)
	}
	out := make([]byte, 0, cursorKind.Size)
	out = binary.BigEndian.AppendUint64(out, math.Float64bits(p.Score))
	out = binary.BigEndian.AppendUint32(out, uint32(p.Page))
	return append(out, id[:]...), nil
}

func decodePosition(b []byte) Position {
	id, _ := uuid.FromBytes(b[12:])
	return Position{
		Score:     math.Float64frombits(binary.BigEndian.Uint64(b[:8])),
		Page:      int(binary.BigEndian.Uint32(b[8:12])),
		ArchiveID: id.String(),
	}
}

func (s *Searcher) seal(ctx context.Context) (*visible.Seal, error) {
	key, err := s.Keys.ListCursorKey(ctx)
	if err != nil {
		return nil, err
	}
	return visible.NewSeal(key, cursorKind)
}

func (s *Searcher) sealCursor(ctx context.Context, subject string, orgs []string, scope string, p Position) (string, error) {
	plain, err := encodePosition(p)
	if err != nil {
		return "", err
	}
	seal, err := s.seal(ctx)
	if err != nil {
		return "", err
	}
	return seal.Seal(subject, orgs, scope, plain)
}

func (s *Searcher) openCursor(ctx context.Context, subject string, orgs []string, scope string, token string) (*Position, error) {
	if err := CheckCursor(token); err != nil {
		return nil, err
	}
	seal, err := s.seal(ctx)
	if err != nil {
		return nil, err
	}
	plain, err := seal.Open(subject, orgs, scope, token)
	if err != nil {
		return nil, ErrBadCursor
	}
	p := decodePosition(plain)
	if math.IsNaN(p.Score) || math.IsInf(p.Score, 0) || p.Page < 0 || p.Page >= MaxPagesPerArchive {
		return nil, ErrBadCursor
	}
	return &p, nil
}

// CheckCursor checks a cursor's shape without any key, so a malformed one
// is refused before the caller is identified.
func CheckCursor(token string) error {
	if cursorKind.Check(token) != nil {
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
