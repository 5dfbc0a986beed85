package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// ExportTimeout bounds one crawl download: the archives of a crawl's
// first archive.MaxExport captures, each read twice.
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
	s.mux.HandleFunc("POST /api/crawls/{id}/download", s.crawlDownloadLink())
	s.mux.HandleFunc("GET /api/crawls/{id}/wacz", func(w http.ResponseWriter, r *http.Request) { s.crawlDownload(w, r, gate) })
}

// crawlDownloadLink asks, as the crawl's replay link does, whether the
// caller may view any archive of the crawl (404 when none, or no such
// crawl) and answers a link to the download, bound to this crawl and this
// caller, for DownloadTTL.
func (s *Server) crawlDownloadLink() http.HandlerFunc {
	return s.downloadLinkRoute("/api/crawls/", "crawl-", (*replay.Service).MintCrawlDownload)
}

// crawlDownload writes the crawl's archives its link's caller may view
// now, as one WACZ, to a link of crawlDownloadLink. Nothing is sent until
// the file's first bytes are: a refusal (404, 429, 503) is an ordinary
// answer. A failure once bytes are sent ends the connection, so the
// browser reports a failed download, never a short file that looks whole.
func (s *Server) crawlDownload(w http.ResponseWriter, r *http.Request, gate *visible.Gate) {
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
	leave, busy := gate.Enter(c.Subject, c.Organizations)
	if busy != nil {
		busy.What, busy.RetryAfter = "crawl downloads", exportRetry
		s.fail(w, r, busy)
		return
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
