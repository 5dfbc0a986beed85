// Package api is ledgerctl's HTTP surface: the JSON API (the web console,
// package web, adds its pages through Pages; a request to a replay
// origin goes to package viewer, which holds no identity) and the health
// checks. Handlers validate input before identity, resolve the caller,
// call the same use-case functions the CLI calls, and map errors to status
// codes in one place. "Not allowed" is always 404, never 403.
package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay/viewer"
	"github.com/capture-ledger/ledgerctl/pkg/strictjson"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
)

// Submitters answers whether a caller may start crawls (can_submit on any of
// their organizations).
type Submitters interface {
	MaySubmit(ctx context.Context, subject string, orgs []string) (bool, error)
}

// Pages is the web console: it adds its routes (pages and assets, never
// under /api/) and says whether it serves "/".
type Pages interface {
	Register(mux Mux) (home bool)
}

// Mux is where routes are added.
type Mux = interface {
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}

// routeMux is the API's mux, remembering every pattern it was given so
// that the routes can be listed (Routes): the CSRF test walks every
// state-changing one, so none can be forgotten.
type routeMux struct {
	*http.ServeMux
	patterns []string
}

func (m *routeMux) HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, handler)
}

func (m *routeMux) Handle(pattern string, handler http.Handler) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.Handle(pattern, handler)
}

// Routes lists the patterns of every route the handler serves on the
// API's origin (the console's included), in the order they were added.
func (s *Server) Routes() []string {
	s.Handler()
	return append([]string(nil), s.mux.patterns...)
}

// Server holds what the handlers need.
type Server struct {
	Access *archive.Access
	// Crawls serves the crawl routes; nil leaves them unserved (404 route).
	Crawls     *crawl.Service
	Identity   identity.Resolver
	Submitters Submitters
	// Pages, when set, adds the web console's routes (its home is "/").
	Pages Pages
	Log   *slog.Logger

	// Readiness answers /readyz; nil answers 503 (not ready).
	Readiness Readiness
	// Search serves GET /api/search, CrawlIndex POST
	// /api/crawls/{id}/index; nil leaves them unserved (404 route).
	Search     Searcher
	CrawlIndex CrawlIndexer
	// Replay serves viewer links on the API's origin, and everything of
	// replay origins (the viewer, its worker, archive reads: package
	// viewer); nil leaves them unserved (404 route).
	Replay *Replay
	// Shares serves /api/archives/{id}/shares, Deleter DELETE
	// /api/archives/{id}; nil leaves them unserved (404 route).
	Shares  *archive.Shares
	Deleter *archive.Deleter
	// Captures serves POST /api/captures; nil leaves it unserved (404
	// route).
	Captures *archive.Captures
	// Details serves GET /api/archives/{id}; nil leaves it unserved (404
	// route).
	Details *archive.Details
	// Exports bounds the crawl downloads running at once (GET
	// /api/crawls/{id}/wacz, served with Replay); nil takes
	// DefaultExportBounds.
	Exports *visible.Gate
	// AllowedHosts, when not nil, are the only host names (of the Host
	// header, any port) the API and the console answer for; any other gets
	// 421. Serve sets it with the dev identity, which trusts whoever can
	// reach it: a page on another name resolving to this machine (DNS
	// rebinding) must not be able to. Replay origins are apart from it.
	AllowedHosts []string
	// CSRF, when set, is asked about every request on the API's origin
	// before it is routed; an error refuses it: 403 with the error's
	// sentence (the console's sessions: state-changing requests resolved
	// by a cookie must come from this origin with the session's token).
	CSRF func(r *http.Request) error

	mux *routeMux
	// replay answers the replay origins (package viewer).
	replay *viewer.Handler
}

// Handler returns the routed handler.
func (s *Server) Handler() http.Handler {
	if s.mux == nil {
		s.mux = &routeMux{ServeMux: http.NewServeMux()}
		s.mux.HandleFunc("GET /healthz", s.healthz)
		s.mux.HandleFunc("GET /readyz", s.readyz)
		s.mux.HandleFunc("GET /api/me", s.me)
		s.mux.HandleFunc("POST /api/archives/{id}/url", s.archiveURL())
		s.mux.HandleFunc("GET /api/archives/{id}/thumbnail", s.thumbnail())
		s.mux.HandleFunc("GET /api/archives", s.listArchives())
		s.mux.HandleFunc("GET /api/crawl-rules/check", s.rulesCheck())
		if s.Crawls != nil {
			s.crawlRoutes()
			s.politenessRoutes()
			s.crawlConsoleRoutes()
		}
		s.searchRoutes()
		if s.Replay != nil {
			s.replayRoutes()
		}
		s.shareRoutes()
		s.archivePageRoutes()
		if s.Captures != nil {
			s.captureRoutes()
		}
		if s.Pages != nil {
			s.Pages.Register(s.mux)
		}
		if s.Replay != nil {
			s.replay = s.replayOrigin()
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A replay origin is answered by the replay handler alone, and a
		// name under the replay domain never reaches the API: archived
		// pages run there.
		if s.Replay != nil {
			if _, under, _ := s.Replay.Origins.Match(r.Host); under {
				s.replay.ServeHTTP(w, r)
				return
			}
		}
		if s.AllowedHosts != nil && !hostAllowed(s.AllowedHosts, r.Host) {
			writeJSON(w, http.StatusMisdirectedRequest, map[string]string{"error": "misdirected request: with the dev identity this server answers only for " + strings.Join(s.AllowedHosts, ", ") + " (reach it by one of them, or set CAPTURE_LEDGER_API_URL to the address you use)"})
			return
		}
		if s.CSRF != nil {
			if err := s.CSRF(r); err != nil {
				writeJSON(w, http.StatusForbidden, map[string]string{"error": err.Error()})
				return
			}
		}
		if _, pattern := s.mux.Handler(r); pattern == "" {
			routeNotFound(w, r)
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// hostAllowed says whether the host of a request's Host header (any port)
// is one of allowed.
func hostAllowed(allowed []string, host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	for _, a := range allowed {
		if strings.EqualFold(a, host) {
			return true
		}
	}
	return false
}

// routeNotFound answers a path no route serves, with a body unlike
// {"error":"not found"} so callers can tell "not configured" from "not
// allowed".
func routeNotFound(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusNotFound, map[string]any{
		"message": fmt.Sprintf("Route %s:%s not found", r.Method, r.URL.Path), "error": "Not Found", "statusCode": 404,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// BadRequest is a validation failure, answered 400 before identity.
type BadRequest struct{ Message string }

func (e *BadRequest) Error() string { return e.Message }

var errUnauthenticated = errors.New("unauthenticated")

// UnreachableRetrySeconds is the Retry-After of a 503 answered because a
// dependency did not answer.
const UnreachableRetrySeconds = 5

// fail maps an error to its answer. This is the one table from errors to
// status codes; anything unknown is a 500 whose details stay in the log.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var bad *BadRequest
	var large *strictjson.TooLarge
	var refused *refusal
	var busy *archive.BusyError
	var quota *archive.QuotaError
	switch {
	case errors.As(err, &bad):
		writeJSON(w, http.StatusBadRequest, map[string]any{"statusCode": 400, "code": "FST_ERR_VALIDATION", "error": "Bad Request", "message": bad.Message})
	case errors.As(err, &large):
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"statusCode": 413, "code": "FST_ERR_CTP_BODY_TOO_LARGE", "error": "Payload Too Large", "message": "Request body is too large: " + large.Error()})
	case errors.As(err, &refused):
		writeJSON(w, refused.status, refused.body)
	case errors.Is(err, errUnauthenticated):
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthenticated"})
	case errors.Is(err, ledger.ErrNotFound):
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
	case errors.As(err, &busy):
		// The caller's or its organization's share: 429; the server's
		// own bound: 503. Both say when to come back.
		w.Header().Set("Retry-After", strconv.Itoa(busy.RetrySeconds()))
		status := http.StatusServiceUnavailable
		if busy.Share() {
			status = http.StatusTooManyRequests
		}
		writeJSON(w, status, map[string]string{"error": busy.Error()})
	case errors.Is(err, ledger.ErrUnreachable):
		// A dependency (OpenFGA or its datastore, PostgreSQL, S3) did not
		// answer: an outage, not a fault of the request. Nothing was
		// decided; the caller may ask again.
		s.logger().Warn("request failed: a dependency is unreachable", "method", r.Method, "path", r.URL.Path, "error", err.Error())
		w.Header().Set("Retry-After", strconv.Itoa(UnreachableRetrySeconds))
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily unavailable"})
	case errors.As(err, &quota):
		w.Header().Set("Retry-After", strconv.Itoa(quota.RetrySeconds()))
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": quota.Error(), "bound": quota.Bound, "limit": quota.Limit, "retryAfter": quota.RetrySeconds()})
	default:
		s.logger().Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err.Error())
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "internal error"})
	}
}

func (s *Server) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// who resolves the caller or returns errUnauthenticated. An identity whose
// subject or organizations OpenFGA could not hold (identity.CheckIdentity)
// is no identity either, whatever resolver produced it: a 401, never a 500
// from the question it would make.
func (s *Server) who(r *http.Request) (identity.Identity, error) {
	if s.Identity == nil {
		return identity.Identity{}, errUnauthenticated
	}
	id, ok := s.Identity.Resolve(r)
	if !ok || identity.CheckIdentity(id) != nil {
		return identity.Identity{}, errUnauthenticated
	}
	return id, nil
}

// UUIDParam validates a path parameter as a UUID (400 otherwise), returning
// its canonical lower-case form.
func UUIDParam(r *http.Request, name string) (string, error) {
	raw := r.PathValue(name)
	u, err := uuid.Parse(raw)
	if err != nil || len(raw) != 36 {
		return "", &BadRequest{Message: fmt.Sprintf("params/%s must match format \"uuid\"", name)}
	}
	return u.String(), nil
}

// DecodeBody reads an optional JSON object body into dst through the strict
// decoder (strictjson.Decode: every string checked, unknown keys and
// trailing data refused, 400 naming the place) and refuses bodies over
// limit bytes (413, see readBody). An absent body is {}.
func DecodeBody(r *http.Request, dst any, limit int64) error {
	data, err := readBody(r, limit)
	if err != nil {
		return err
	}
	return asBody(strictjson.Decode(data, dst))
}

// checkBody is the strict decoder's check of a body a route then decodes
// its own way (strictjson.Check), as a 400 naming the place.
func checkBody(data []byte) error { return asBody(strictjson.Check(data)) }

// asBody renders a refusal of the strict decoder, a *ledger.FieldError
// whose Field is the place inside the body, as the 400 of a request body:
// "body/urls/0 must be valid UTF-8", or "body <reason>" for the body
// itself. Other errors (a *strictjson.TooLarge) pass unchanged.
func asBody(err error) error {
	var fe *ledger.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	if fe.Field == "" {
		return &BadRequest{Message: "body " + fe.Reason}
	}
	return &BadRequest{Message: "body/" + fe.Field + " " + fe.Reason}
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	id, err := s.who(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	can := false
	if len(id.Organizations) > 0 && s.Submitters != nil {
		if can, err = s.Submitters.MaySubmit(r.Context(), id.Subject, id.Organizations); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	orgs := id.Organizations
	if orgs == nil {
		orgs = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"subject": id.Subject, "organizations": orgs, "canSubmit": can})
}

// RequestTimeout bounds one API request (a level report of 1,000 pages
// takes about 2 s).
const RequestTimeout = 60 * time.Second

// handle is the shape of every API route: parse validates the request and
// answers 400 before anyone is identified; then the caller is resolved (401
// without one); then run calls the use-case and its result is written with
// status ok. Errors go through fail.
func handle[In any](s *Server, ok int, parse func(*http.Request) (In, error), run func(context.Context, identity.Identity, In) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// No request holds the server's resources for longer than this,
		// whatever a dependency does.
		ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		in, err := parse(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		who, err := s.who(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		out, err := run(r.Context(), who, in)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		writeJSON(w, ok, out)
	}
}

// idAndNoBody is the parse step of a POST on one thing: the path's {id}
// as a UUID, and a body that is empty or an empty JSON object (anything
// else is a 400 naming it).
func idAndNoBody(r *http.Request) (string, error) {
	id, err := UUIDParam(r, "id")
	if err == nil {
		err = DecodeBody(r, &struct{}{}, 1024)
	}
	return id, err
}

func (s *Server) archiveURL() http.HandlerFunc {
	return handle(s, http.StatusOK,
		idAndNoBody,
		func(ctx context.Context, who identity.Identity, id string) (any, error) {
			return s.Access.URL(ctx, who.Subject, who.Organizations, id)
		})
}

// parseBefore reads ?before=<date-time>[&beforeId=<uuid>], each at most
// once (archive.ParseBefore: the crawl list's position has the same shape).
// Without beforeId, rows strictly older than before follow.
func parseBefore(q map[string][]string) (time.Time, string, bool, error) {
	at, err := archive.ParseBefore(q["before"], q["beforeId"])
	if err != nil || at == nil {
		return time.Time{}, "", false, inQuery(err)
	}
	return at.CapturedAt, at.ID, true, nil
}

// inQuery renders a use-case's *ledger.FieldError as the 400 of a query
// parameter: querystring/<field> <reason>. Other errors pass unchanged.
func inQuery(err error) error {
	var fe *ledger.FieldError
	if errors.As(err, &fe) {
		return &BadRequest{Message: "querystring/" + fe.Error()}
	}
	return err
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// CursorJSON is how the API shows the next page's position.
type CursorJSON = archive.PageCursor

// nextCursor is the position a list's next page starts after, in the form
// parseBefore reads back.
func nextCursor(at time.Time, id string) *CursorJSON {
	return &CursorJSON{Before: at.UTC().Format(time.RFC3339Nano), BeforeID: id}
}

// ArchivePage is the body of GET /api/archives (archive.Page.Body).
type ArchivePage = archive.PageBody

// listArchives reads where the list starts (a token's shape is checked
// before identity; whose it is, by ListFrom) and answers the page.
func (s *Server) listArchives() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (archive.ListStart, error) {
			q := r.URL.Query()
			start, err := archive.ParseListStart(q["before"], q["beforeId"])
			if err == nil {
				start.Why, err = archive.ParseWhy(q["why"])
			}
			if err == nil {
				start.Filter, err = ledger.ParseArchiveFilter(q, true)
			}
			return start, inQuery(err)
		},
		func(ctx context.Context, who identity.Identity, start archive.ListStart) (any, error) {
			page, err := s.Access.ListFrom(ctx, who.Subject, who.Organizations, start)
			if err != nil {
				return nil, inQuery(err)
			}
			return page.Body(), nil
		})
}
