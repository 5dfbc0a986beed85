package api

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// crawlConsoleRoutes serves what the console's crawl pages need besides
// the crawl routes: stopping a crawl (POST /api/crawls/{id}/stop), its
// progress by level and host (GET /api/crawls/{id}/progress), its pages
// with what decided each (GET /api/crawls/{id}/pages?after=&limit=&state=) and
// what it did with one URL, and why (GET /api/crawls/{id}/why?url=). Each
// is gated like GET /api/crawls/{id}: an absent crawl and one the caller
// may not touch are the same 404.
func (s *Server) crawlConsoleRoutes() {
	svc := s.Crawls
	s.mux.HandleFunc("POST /api/crawls/{id}/stop", handle(s, http.StatusOK,
		idAndNoBody,
		func(ctx context.Context, who identity.Identity, id string) (any, error) {
			res, err := svc.Stop(ctx, crawlCaller(who), id)
			return res, crawlRefusal(err, inParams)
		}))
	if st, ok := svc.Store.(politeness.ProgressStore); ok {
		prog := &politeness.ProgressService{Crawls: svc, Store: st}
		s.mux.HandleFunc("GET /api/crawls/{id}/progress", handle(s, http.StatusOK, crawlID,
			func(ctx context.Context, who identity.Identity, id string) (any, error) {
				p, err := prog.Progress(ctx, crawlCaller(who), id)
				return p, crawlRefusal(err, inParams)
			}))
	}
	if st, ok := svc.Store.(politeness.PagesStore); ok {
		pages := &politeness.PagesService{Crawls: svc, Store: st}
		s.mux.HandleFunc("GET /api/crawls/{id}/pages", handle(s, http.StatusOK,
			func(r *http.Request) (PagesQuery, error) {
				id, err := crawlID(r)
				if err != nil {
					return PagesQuery{}, err
				}
				q, err := ParsePagesQuery(r.URL.Query())
				q.id = id
				return q, err
			},
			func(ctx context.Context, who identity.Identity, q PagesQuery) (any, error) {
				p, err := pages.Pages(ctx, crawlCaller(who), q.id, q.After, q.Limit, q.State)
				return p, crawlRefusal(err, inParams)
			}))
	}
	if st, ok := svc.Store.(politeness.WhyStore); ok {
		why := &politeness.WhyService{Crawls: svc, Store: st}
		s.mux.HandleFunc("GET /api/crawls/{id}/why", handle(s, http.StatusOK,
			func(r *http.Request) (whyQuery, error) {
				id, err := crawlID(r)
				if err != nil {
					return whyQuery{}, err
				}
				u, err := ParseWhyQuery(r.URL.Query())
				return whyQuery{id: id, url: u}, err
			},
			func(ctx context.Context, who identity.Identity, q whyQuery) (any, error) {
				w, err := why.Why(ctx, crawlCaller(who), q.id, q.url)
				return w, crawlRefusal(err, inParams)
			}))
	}
}

type whyQuery struct {
	id  string
	url rules.URL
}

// ParseWhyQuery reads ?url= (given once, an absolute http(s) URL the ledger
// can hold); any other parameter is a 400 naming it.
func ParseWhyQuery(v url.Values) (rules.URL, error) {
	for name := range v {
		if name != politeness.FieldURL {
			return rules.URL{}, &BadRequest{Message: fmt.Sprintf("querystring must NOT have additional properties (%q)", name)}
		}
	}
	raw := v[politeness.FieldURL]
	if len(raw) != 1 {
		return rules.URL{}, &BadRequest{Message: "querystring/url must be given once: the URL to explain"}
	}
	u, err := politeness.ParseWhyURL(raw[0])
	return u, inQuery(err)
}

// PagesQuery is where a page of the pages table starts, how long it is and
// which pages it shows.
type PagesQuery struct {
	id    string
	After int64
	Limit int
	// State narrows the table to the pages in one state ("": all).
	State string
}

// ParsePagesQuery reads ?after= (a non-negative row id, 0 when absent),
// ?limit= (1 to politeness.MaxPageRows, politeness.DefaultPageRows when
// absent) and ?state= (one of politeness.PageStates, all when absent),
// each at most once; anything else is a 400 naming the parameter.
func ParsePagesQuery(v url.Values) (PagesQuery, error) {
	q := PagesQuery{Limit: politeness.DefaultPageRows}
	if a := v["after"]; len(a) > 0 {
		n, err := strconv.ParseInt(a[0], 10, 64)
		if len(a) > 1 || err != nil || n < 0 {
			return PagesQuery{}, &BadRequest{Message: "querystring/after must be a non-negative integer, given once"}
		}
		q.After = n
	}
	if l := v["limit"]; len(l) > 0 {
		n, err := strconv.Atoi(l[0])
		if len(l) > 1 || err != nil || n < 1 || n > politeness.MaxPageRows {
			return PagesQuery{}, &BadRequest{Message: "querystring/limit must be an integer from 1 to " + strconv.Itoa(politeness.MaxPageRows) + ", given once"}
		}
		q.Limit = n
	}
	if st := v["state"]; len(st) > 0 {
		if len(st) > 1 || !slices.Contains(politeness.PageStates, st[0]) {
			return PagesQuery{}, &BadRequest{Message: "querystring/state must be equal to one of the allowed values (" + strings.Join(politeness.PageStates, ", ") + "), given once"}
		}
		q.State = st[0]
	}
	return q, nil
}

// crawlCaller is the crawl use-cases' view of an identity.
func crawlCaller(who identity.Identity) crawl.Caller {
	return crawl.Caller{Subject: who.Subject, Orgs: who.Organizations}
}
