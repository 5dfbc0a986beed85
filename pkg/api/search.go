package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// Searcher runs full-text searches for a caller (search.Searcher).
type Searcher interface {
	Search(ctx context.Context, subject string, orgs []string, req search.Request) (search.Page, error)
}

// CrawlIndexer indexes the archives of a crawl the caller may touch; a
// crawl that is absent or not theirs is ledger.ErrNotFound.
type CrawlIndexer interface {
	IndexCrawl(ctx context.Context, subject string, orgs []string, crawlID string) (search.Result, error)
}

func (s *Server) searchRoutes() {
	if s.Search != nil {
		s.mux.HandleFunc("GET /api/search", s.searchPages())
	}
	if s.CrawlIndex != nil {
		s.mux.HandleFunc("POST /api/crawls/{id}/index", s.indexCrawl())
	}
}

// searchParams are the query parameters GET /api/search reads; any other
// is refused, like the original's schema (additionalProperties: false).
var searchParams = []string{"q", "limit", "cursor", ledger.FieldCrawl, ledger.FieldHost, ledger.FieldFrom, ledger.FieldTo}

// ParseSearchRequest reads ?q=&limit=&cursor= and the filters
// crawl=&host=&from=&to= (ledger.ParseArchiveFilter): q is required (see
// search.ParseQuery), limit is 1–100 (default 20), cursor is a next value a
// previous page handed out (its shape is checked here, before identity;
// whose it is, by the search). Each at most once; nothing else.
func ParseSearchRequest(q url.Values) (search.Request, error) {
	for name, v := range q {
		if !slices.Contains(searchParams, name) {
			return search.Request{}, &BadRequest{Message: fmt.Sprintf("querystring must NOT have additional properties (%q)", name)}
		}
		if len(v) > 1 {
			return search.Request{}, &BadRequest{Message: "querystring/" + name + " must be a single value"}
		}
	}
	if _, ok := q["q"]; !ok {
		return search.Request{}, &BadRequest{Message: "querystring must have required property 'q'"}
	}
	limit := 0
	if raw, ok := q["limit"]; ok {
		n, err := strconv.Atoi(raw[0])
		if err != nil || n < 1 {
			return search.Request{}, &BadRequest{Message: fmt.Sprintf("querystring/limit must be an integer between 1 and %d", search.MaxLimit)}
		}
		limit = n
	}
	if raw, ok := q["cursor"]; ok && raw[0] == "" {
		return search.Request{}, &BadRequest{Message: "querystring/cursor must not be empty"}
	}
	req, err := search.NewRequest(q.Get("q"), limit, q.Get("cursor"))
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		return search.Request{}, &BadRequest{Message: "querystring/" + fe.Field + " " + fe.Reason}
	}
	if err != nil {
		return search.Request{}, err
	}
	filters := url.Values{}
	for _, name := range []string{ledger.FieldCrawl, ledger.FieldHost, ledger.FieldFrom, ledger.FieldTo} {
		if v, ok := q[name]; ok {
			filters[name] = v
		}
	}
	if req.Filter, err = ledger.ParseArchiveFilter(filters, false); err != nil {
		return search.Request{}, inQuery(err)
	}
	return req, nil
}

func (s *Server) searchPages() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (search.Request, error) { return ParseSearchRequest(r.URL.Query()) },
		func(ctx context.Context, who identity.Identity, req search.Request) (any, error) {
			page, err := s.Search.Search(ctx, who.Subject, who.Organizations, req)
			if errors.Is(err, search.ErrBadCursor) {
				return nil, &BadRequest{Message: "querystring/cursor " + err.Error()}
			}
			return page, err
		})
}

// IndexAnswer is the body of POST /api/crawls/{id}/index: archives indexed
// and their pages, and archives that could not be indexed (their reasons
// are in `ledgerctl search status`).
type IndexAnswer struct {
	Indexed int `json:"indexed"`
	Pages   int `json:"pages"`
	Failed  int `json:"failed"`
}

func (s *Server) indexCrawl() http.HandlerFunc {
	return handle(s, http.StatusAccepted,
		idAndNoBody,
		func(ctx context.Context, who identity.Identity, id string) (any, error) {
			res, err := s.CrawlIndex.IndexCrawl(ctx, who.Subject, who.Organizations, id)
			return IndexAnswer{Indexed: res.Indexed, Pages: res.Pages, Failed: res.Failed}, err
		})
}
