package api

import (
	"context"
	"io"
	"net/http"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// maxReportBytes bounds a level report (1,000 pages with every field fit
// comfortably).
const maxReportBytes = 32 << 20

func (s *Server) crawlRoutes() {
	svc := s.Crawls
	caller := func(who identity.Identity) crawl.Caller {
		return crawl.Caller{Subject: who.Subject, Orgs: who.Organizations}
	}
	s.mux.HandleFunc("POST /api/crawls", handle(s, http.StatusAccepted,
		func(r *http.Request) (crawl.StartRequest, error) {
			body, err := readBody(r, 1<<20)
			if err != nil {
				return crawl.StartRequest{}, err
			}
			return crawl.DecodeStartRequest(body)
		},
		func(ctx context.Context, who identity.Identity, req crawl.StartRequest) (any, error) {
			id, err := svc.Start(ctx, caller(who), req)
			return map[string]string{"crawlId": id}, err
		}))
	s.mux.HandleFunc("GET /api/crawls", handle(s, http.StatusOK,
		func(r *http.Request) (crawlListQuery, error) {
			q := r.URL.Query()
			state := first(q["state"])
			if err := crawl.CheckState(state); err != nil {
				return crawlListQuery{}, err
			}
			t, id, ok, err := parseBefore(q)
			if err != nil || !ok {
				return crawlListQuery{state: state}, err
			}
			return crawlListQuery{state: state, cursor: &crawl.Cursor{StartedAt: t, ID: id}}, nil
		},
		func(ctx context.Context, who identity.Identity, q crawlListQuery) (any, error) {
			list, err := svc.List(ctx, caller(who), q.state, q.cursor)
			if err != nil {
				return nil, err
			}
			out := struct {
				crawl.CrawlList
				Next *CursorJSON `json:"next"`
			}{CrawlList: list}
			if list.Next != nil {
				out.Next = nextCursor(list.Next.StartedAt, list.Next.ID)
			}
			return out, nil
		}))
	s.mux.HandleFunc("GET /api/crawls/{id}", handle(s, http.StatusOK, crawlID,
		func(ctx context.Context, who identity.Identity, id string) (any, error) {
			return svc.Get(ctx, caller(who), id)
		}))
	s.mux.HandleFunc("POST /api/crawls/{id}/failed", handle(s, http.StatusOK,
		func(r *http.Request) (failInput, error) {
			id, err := crawlID(r)
			if err != nil {
				return failInput{}, err
			}
			body, err := readBody(r, 64<<10)
			if err != nil {
				return failInput{}, err
			}
			req, err := crawl.DecodeFailRequest(body)
			return failInput{id, req}, err
		},
		func(ctx context.Context, who identity.Identity, in failInput) (any, error) {
			return svc.Fail(ctx, caller(who), in.id, in.req)
		}))
	s.mux.HandleFunc("POST /api/crawls/{id}/pages", handle(s, http.StatusOK,
		func(r *http.Request) (reportInput, error) {
			id, err := crawlID(r)
			if err != nil {
				return reportInput{}, err
			}
			body, err := readBody(r, maxReportBytes)
			if err != nil {
				return reportInput{}, err
			}
			rep, err := crawl.DecodeLevelReport(body)
			if err == nil {
				err = rep.Validate()
			}
			return reportInput{id, rep}, err
		},
		func(ctx context.Context, who identity.Identity, in reportInput) (any, error) {
			return svc.ReportLevel(ctx, caller(who), in.id, in.rep)
		}))
	s.mux.HandleFunc("GET /api/crawls/{id}/decisions", handle(s, http.StatusOK, crawlID,
		func(ctx context.Context, who identity.Identity, id string) (any, error) {
			return svc.Decisions(ctx, caller(who), id)
		}))
	s.mux.HandleFunc("GET /api/decisions", handle(s, http.StatusOK,
		func(r *http.Request) (crawl.DomainQuery, error) { return crawl.ParseDomainQuery(r.URL.Query()) },
		func(ctx context.Context, who identity.Identity, q crawl.DomainQuery) (any, error) {
			return svc.DecisionsByDomain(ctx, caller(who), q.Domain, q.Days, q.Action)
		}))
}

type crawlListQuery struct {
	state  string
	cursor *crawl.Cursor
}

type failInput struct {
	id  string
	req crawl.FailRequest
}

type reportInput struct {
	id  string
	rep crawl.LevelReport
}

func crawlID(r *http.Request) (string, error) { return UUIDParam(r, "id") }

// readBody reads at most limit bytes of the request body: a body over the
// limit is a *TooLarge (413), whether its Content-Length says so (refused
// unread) or its bytes do; one that cannot be read is a 400.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &TooLarge{Limit: limit}
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, &BadRequest{Message: "body could not be read"}
	}
	if int64(len(data)) > limit {
		return nil, &TooLarge{Limit: limit}
	}
	return data, nil
}
