package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/strictjson"
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
			req, err := DecodeStartRequest(body)
			return req, crawlRefusal(err, inBody)
		},
		func(ctx context.Context, who identity.Identity, req crawl.StartRequest) (any, error) {
			id, err := svc.Start(ctx, caller(who), req)
			return map[string]string{"crawlId": id}, crawlRefusal(err, inBody)
		}))
	s.mux.HandleFunc("GET /api/crawls", handle(s, http.StatusOK,
		func(r *http.Request) (crawlListQuery, error) {
			q := r.URL.Query()
			state := first(q["state"])
			if err := crawl.CheckState(state); err != nil {
				return crawlListQuery{}, crawlRefusal(err, inQuerystring)
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
				return nil, crawlRefusal(err, inQuerystring)
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
			v, err := svc.Get(ctx, caller(who), id)
			return v, crawlRefusal(err, inParams)
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
			req, err := DecodeFailRequest(body)
			return failInput{id, req}, crawlRefusal(err, inBody)
		},
		func(ctx context.Context, who identity.Identity, in failInput) (any, error) {
			res, err := svc.Fail(ctx, caller(who), in.id, in.req)
			return res, crawlRefusal(err, inBody)
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
			// Read and checked whole here, before identity, and not again.
			rep, err := DecodeLevelReport(body)
			if err != nil {
				return reportInput{}, crawlRefusal(err, inBody)
			}
			norm, err := rep.Normalize()
			return reportInput{id, norm}, crawlRefusal(err, inBody)
		},
		func(ctx context.Context, who identity.Identity, in reportInput) (any, error) {
			res, err := svc.ReportLevel(ctx, caller(who), in.id, in.rep)
			return res, crawlRefusal(err, inBody)
		}))
	s.mux.HandleFunc("GET /api/crawls/{id}/decisions", handle(s, http.StatusOK, crawlID,
		func(ctx context.Context, who identity.Identity, id string) (any, error) {
			v, err := svc.Decisions(ctx, caller(who), id)
			return v, crawlRefusal(err, inParams)
		}))
	s.mux.HandleFunc("GET /api/decisions", handle(s, http.StatusOK,
		func(r *http.Request) (crawl.DomainQuery, error) {
			q, err := ParseDomainQuery(r.URL.Query())
			return q, crawlRefusal(err, inQuerystring)
		},
		func(ctx context.Context, who identity.Identity, q crawl.DomainQuery) (any, error) {
			d, err := svc.DecisionsByDomain(ctx, caller(who), q.Domain, q.Days, q.Action)
			return d, crawlRefusal(err, inQuerystring)
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
	rep crawl.Report
}

func crawlID(r *http.Request) (string, error) { return UUIDParam(r, "id") }

// readBody reads at most limit bytes of the request body
// (strictjson.Read): a body over the limit is a *strictjson.TooLarge (413),
// whether its Content-Length says so (refused unread) or its bytes do; one
// that cannot be read is a 400.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	data, err := strictjson.Read(r, limit)
	return data, asBody(err)
}

// Where a route read the fields a *ledger.FieldError names: the first
// segment of the place in the API's validation messages.
const (
	inBody        = "body"
	inQuerystring = "querystring"
	inParams      = "params"
)

// refusal is an answer other than 2xx with its body, decided where the
// error is understood; fail writes it as it is.
type refusal struct {
	status int
	body   any
	err    error
}

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// validationBody is the 400 of a request field that is refused, in the
// reference API's words and key order.
type validationBody struct {
	StatusCode int    `json:"statusCode"`
	Code       string `json:"code"`
	Error      string `json:"error"`
	Message    string `json:"message"`
}

// errorBody is a body holding only an error message.
type errorBody struct {
	Error string `json:"error"`
}

// activeCrawlBody is the 409 of a start while the organization runs as
// many crawls as it may (limit, CAPTURE_LEDGER_CRAWLS_PER_ORG); its oldest
// running crawl is named only to a caller who may touch it.
type activeCrawlBody struct {
	Error     string     `json:"error"`
	CrawlID   string     `json:"crawlId,omitempty"`
	StartedAt *time.Time `json:"startedAt,omitempty"`
	Limit     int        `json:"limit,omitempty"`
}

// stateBody is a 409 naming the crawl's state.
type stateBody struct {
	Error string `json:"error"`
	State string `json:"state"`
}

// levelBody is a 409 naming the level.
type levelBody struct {
	Error string `json:"error"`
	Depth int    `json:"depth"`
}

// crawlRefusal words a refusal of the crawl use-cases (or of the crawl
// bodies' decoders) as the API answers it; place is where the route read
// the fields a *ledger.FieldError names (the crawl id is always a path
// parameter). Other errors, nil included, are returned as they are.
func crawlRefusal(err error, place string) error {
	var (
		field   *ledger.FieldError
		request *crawl.RequestError
		active  *crawl.ActiveCrawlError
		stopped *crawl.NotRunningError
		level   *crawl.LevelConflictError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &field):
		return &refusal{http.StatusBadRequest, validationBody{
			StatusCode: http.StatusBadRequest, Code: "FST_ERR_VALIDATION", Error: "Bad Request", Message: fieldMessage(field, place),
		}, err}
	case errors.As(err, &request):
		var named rules.BodyError
		if errors.As(request.Err, &named) {
			return &refusal{http.StatusBadRequest, named.Body(), err}
		}
		return &refusal{http.StatusBadRequest, errorBody{Error: request.Message}, err}
	case errors.As(err, &active):
		b := activeCrawlBody{Error: "a crawl is already in progress", CrawlID: active.CrawlID, Limit: active.Limit}
		if active.CrawlID != "" {
			t := active.StartedAt.UTC()
			b.StartedAt = &t
		}
		return &refusal{http.StatusConflict, b, err}
	case errors.As(err, &stopped):
		return &refusal{http.StatusConflict, stateBody{Error: "the crawl is not running", State: stopped.State}, err}
	case errors.As(err, &level):
		msg := "this level was already reported with different results"
		if level.NoSuchLevel {
			msg = "the crawl has no such level"
		}
		return &refusal{http.StatusConflict, levelBody{Error: msg, Depth: level.Depth}, err}
	}
	return err
}

// fieldMessage is "<place>/<field> <reason>" ("body/results/3/taskId must
// match format \"uuid\""); a field of "" is the place itself.
func fieldMessage(fe *ledger.FieldError, place string) string {
	at := func(field string) string {
		switch field {
		case "":
			return place
		case crawl.FieldID:
			return inParams + "/" + crawl.FieldID
		}
		return place + "/" + field
	}
	reason := fe.Reason
	var repeated *crawl.RepeatedPageError
	if errors.As(fe.Err, &repeated) {
		reason = fmt.Sprintf("repeats %s (%s): a page is reported once", at(fmt.Sprintf("%s/%d/url", crawl.FieldResults, repeated.First)), repeated.URL)
	}
	return at(fe.Field) + " " + reason
}
