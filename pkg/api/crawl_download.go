package api

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// ExportTimeout bounds one crawl download: the archives of a crawl's
// first archive.MaxExport captures, each read once.
const ExportTimeout = 30 * time.Minute

// DefaultExportBounds are how many crawl downloads run at once when
// Server.Exports is not set: two in all, one per caller, one per
// organization (the configuration's defaults are the same).
var DefaultExportBounds = visible.GateBounds{Lists: 2, PerCaller: 1, PerOrg: 1, Checks: 1}

// exportRetry is the Retry-After of a crawl download refused for want of a
// place: a download of a crawl of a few hundred pages takes seconds.
const exportRetry = 10 * time.Second

// crawlDownloadRoutes serves a crawl's archives as one WACZ file: POST
// /api/crawls/{id}/download answers a short-lived link, and GET
// /api/crawls/{id}/wacz, followed with it, writes the file as it is merged
// (archive.Access.ExportCrawl). gate bounds the downloads running at once.
func (s *Server) crawlDownloadRoutes(gate *visible.Gate) {
	held := &heldPlaces{}
	s.mux.HandleFunc("POST /api/crawls/{id}/download", s.crawlDownloadLink(gate, held))
	s.mux.HandleFunc("GET /api/crawls/{id}/wacz", func(w http.ResponseWriter, r *http.Request) { s.crawlDownload(w, r, gate, held) })
}

// crawlDownloadLink asks, as the crawl's replay link does, whether the
// caller may view any archive of the crawl (404 when none, or no such
// crawl) and answers a link to the download, bound to this crawl and this
// caller, for DownloadTTL.
//
// The link takes the download's place in gate as it is made, and held
// keeps it for the link until it is followed (or DownloadTTL passes): a
// download that cannot start for want of a place is refused here, where
// the console can show why (429 or 503 with Retry-After), not when the
// browser follows the link, where all a person sees is a failed download.
func (s *Server) crawlDownloadLink(gate *visible.Gate, held *heldPlaces) http.HandlerFunc {
	return s.downloadLinkRoute("/api/crawls/", "crawl-", func(rs *replay.Service, ctx context.Context, who replay.Caller, id string, ttl time.Duration) (replay.Session, error) {
		m, err := rs.MintCrawlDownload(ctx, who, id, ttl)
		if err != nil {
			return replay.Session{}, err
		}
		leave, busy := enterExport(gate, who.Subject, who.Organizations)
		if busy != nil {
			return replay.Session{}, busy
		}
		held.hold(m.Label, leave, ttl)
		return m, nil
	})
}

// enterExport takes a crawl download's place in gate, or says which bound
// is full, with the download's Retry-After.
func enterExport(gate *visible.Gate, subject string, orgs []string) (leave func(), busy *visible.BusyError) {
	leave, busy = gate.Enter(subject, orgs)
	if busy != nil {
		busy.What, busy.RetryAfter = "crawl downloads", exportRetry
	}
	return leave, busy
}

// heldPlaces are the places in the export gate that download links took
// when they were made, by the link's label, each given back when its link
// is followed and the download ends, or when the link expires unfollowed.
// A link followed on another serve process than the one that made it
// takes a place there; the one held here is given back at expiry.
type heldPlaces struct {
	mu sync.Mutex
	m  map[string]func()
}

// hold keeps leave for the link labelled label, and calls it after ttl
// unless the link has been followed by then.
func (h *heldPlaces) hold(label string, leave func(), ttl time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[string]func(){}
	}
	h.m[label] = leave
	time.AfterFunc(ttl, func() {
		if leave := h.take(label); leave != nil {
			leave()
		}
	})
}

// take returns the place held for the link labelled label, which is then
// the caller's to give back, or nil when none is held.
func (h *heldPlaces) take(label string) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	leave := h.m[label]
	delete(h.m, label)
	return leave
}

// crawlDownload writes the crawl's archives its link's caller may view
// now, as one WACZ, to a link of crawlDownloadLink. Nothing is sent until
// the file's first bytes are: a refusal (404, 429, 503) is an ordinary
// answer. A failure once bytes are sent ends the connection, so the
// browser reports a failed download, never a short file that looks whole.
func (s *Server) crawlDownload(w http.ResponseWriter, r *http.Request, gate *visible.Gate, held *heldPlaces) {
	ctx, cancel := context.WithTimeout(r.Context(), ExportTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	id, label, token, ok := s.downloadRequest(w, r)
	if !ok {
		return
	}
	c, err := s.Replay.Service.AuthorizeCrawlDownload(token, id, label)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The place the link took when it was made, or, when it has expired
	// or was made by another process, a place taken now.
	leave := held.take(label)
	if leave == nil {
		var busy *visible.BusyError
		if leave, busy = enterExport(gate, c.Subject, c.Organizations); busy != nil {
			s.fail(w, r, busy)
			return
		}
	}
	defer leave()
	out := &attachment{w: w, name: "crawl-" + id + ".wacz"}
	_, err = s.Access.ExportCrawl(ctx, c.Subject, c.Organizations, id, out, nil)
	switch {
	case err == nil:
	case !out.started && errors.Is(err, wacz.ErrMergeInput):
		// An archive of the crawl this caller may view cannot be merged:
		// the crawl cannot be downloaded whole. Say which, and why.
		s.fail(w, r, &refusal{status: http.StatusConflict, err: err, body: map[string]any{
			"statusCode": http.StatusConflict, "error": "Conflict", "message": "the crawl cannot be written as one WACZ: " + err.Error()}})
	case !out.started:
		s.fail(w, r, err)
	default:
		s.logger().Warn("Crawl download broken off", "crawlId", id, "error", err.Error())
		panic(http.ErrAbortHandler)
	}
}

// downloadRequest sets a download's headers, whatever it answers (never
// sniffed, sandboxed should anything render it: the bytes are archived
// content; no referrer; readable by this origin only), and reads a download
// link: the path's {id} and the link's label and token (l and t, once
// each, the label a session label). Anything else is answered (400 for a
// bad id, 404 for a bad link) and ok is false.
func (s *Server) downloadRequest(w http.ResponseWriter, r *http.Request) (id, label, token string, ok bool) {
	h := w.Header()
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	id, err := UUIDParam(r, "id")
	if err != nil {
		s.fail(w, r, err)
		return "", "", "", false
	}
	q := r.URL.Query()
	labels, tokens := q["l"], q["t"]
	if len(labels) != 1 || len(tokens) != 1 || !replay.ValidLabel(labels[0]) {
		s.fail(w, r, ledger.ErrNotFound)
		return "", "", "", false
	}
	return id, labels[0], tokens[0], true
}

// attachment is a response that becomes a download of name with its first
// byte: until then the handler may still answer an error.
type attachment struct {
	w       http.ResponseWriter
	name    string
	started bool
}

func (a *attachment) Write(p []byte) (int, error) {
	if !a.started {
		a.started = true
		h := a.w.Header()
		h.Set("Content-Type", "application/octet-stream")
		h.Set("Content-Disposition", `attachment; filename="`+a.name+`"`)
		h.Set("Cache-Control", "no-store")
		a.w.WriteHeader(http.StatusOK)
	}
	return a.w.Write(p)
}
