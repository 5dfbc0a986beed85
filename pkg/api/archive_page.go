package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
)

// DownloadTTL is how long a download link works: long enough to follow at
// once, short because it is a bearer link (it names no caller).
const DownloadTTL = replay.MinTTL

// archivePageRoutes serves what one archive's console page asks: the
// archive and what the caller may do with it, a download link, the
// download itself, and the engines a capture may choose.
func (s *Server) archivePageRoutes() {
	if s.Details != nil {
		s.mux.HandleFunc("GET /api/archives/{id}", s.archiveDetail())
	}
	if s.Replay != nil {
		s.mux.HandleFunc("POST /api/archives/{id}/download", s.downloadLink())
		s.mux.HandleFunc("GET /api/archives/{id}/wacz", s.download)
		if s.Access != nil {
			gate := s.Exports
			if gate == nil {
				gate = visible.NewGate(DefaultExportBounds)
			}
			s.crawlDownloadRoutes(gate)
		}
	}
	if s.Captures != nil {
		s.mux.HandleFunc("GET /api/captures/engines", s.captureEngines())
	}
}

// archiveDetail answers one archive: its fields, its organization, why the
// caller sees it and may: which actions the caller may take (each is
// checked again when taken). Denied and absent are the same 404.
func (s *Server) archiveDetail() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (string, error) { return UUIDParam(r, "id") },
		func(ctx context.Context, who identity.Identity, id string) (any, error) {
			d, err := s.Details.Get(ctx, who.Subject, who.Organizations, id)
			if err != nil {
				return nil, err
			}
			d.May.Open = d.May.Open && s.Replay != nil
			d.May.Download = d.May.Download && s.Replay != nil
			d.May.Share = d.May.Share && s.Shares != nil
			d.May.Delete = d.May.Delete && s.Deleter != nil
			return d, nil
		})
}

// DownloadLink is the answer of POST /api/archives/{id}/download: a path
// on this origin that reads the archive's WACZ once followed, until
// ExpiresAt.
type DownloadLink struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expiresAt"`
	Filename  string    `json:"filename"`
}

// downloadLink checks can_view with full consistency (through the replay
// service's MintDownload: denied and absent are the same 404) and answers a link
// to the archive's bytes, bound to this archive and this caller, for
// DownloadTTL. No bucket URL reaches the page.
func (s *Server) downloadLink() http.HandlerFunc {
	return s.downloadLinkRoute("/api/archives/", "", (*replay.Service).MintDownload)
}

// downloadLinkRoute answers, for the path's {id}, a link to base+id+"/wacz"
// with the token mint gives the caller (mint decides whether they may), to
// be saved as prefix+id+".wacz".
func (s *Server) downloadLinkRoute(base, prefix string, mint func(*replay.Service, context.Context, replay.Caller, string, time.Duration) (replay.Session, error)) http.HandlerFunc {
	return handle(s, http.StatusOK,
		idAndNoBody,
		func(ctx context.Context, who identity.Identity, id string) (any, error) {
			m, err := mint(s.Replay.Service, ctx, caller(who), id, DownloadTTL)
			if err != nil {
				return nil, err
			}
			q := url.Values{"l": {m.Label}, "t": {m.Token}}
			return DownloadLink{URL: base + id + "/wacz?" + q.Encode(), ExpiresAt: m.ExpiresAt, Filename: prefix + id + ".wacz"}, nil
		})
}

// download answers the archive's exact bytes to a link of downloadLink:
// the token is the identity (a browser following a link sends no other),
// and the replay service asks again whether its caller may view the
// archive. The answer is an attachment of octet-stream, never sniffed, and
// sandboxed should anything render it: the bytes are archived content.
func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	h := w.Header()
	id, label, token, ok := s.downloadRequest(w, r)
	if !ok {
		return
	}
	g, err := s.Replay.Service.AuthorizeDownload(ctx, token, id, label)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	part, err := s.Replay.Service.Open(ctx, g, nil)
	if err != nil {
		s.objectFailed(w, r, id, err)
		return
	}
	defer part.Body.Close()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="`+id+`.wacz"`)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.FormatInt(part.Length(), 10))
	w.WriteHeader(http.StatusOK)
	s.logger().Info("Archive downloaded", "archiveId", id)
	if _, err := io.Copy(w, part.Body); err != nil {
		// The length is sent: end the connection so the reader sees a
		// broken answer, never a short file that looks whole.
		panic(http.ErrAbortHandler)
	}
}

// CaptureEngines is the answer of GET /api/captures/engines.
type CaptureEngines struct {
	Default string   `json:"default"`
	Engines []string `json:"engines"`
}

// captureEngines says which engines a capture may name here and which one
// it gets when it names none.
func (s *Server) captureEngines() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (struct{}, error) { return struct{}{}, nil },
		func(ctx context.Context, _ identity.Identity, _ struct{}) (any, error) {
			out := CaptureEngines{Engines: s.Captures.Available()}
			if n, ok := s.Captures.Capturer.(interface{ EngineName() string }); ok {
				out.Default = n.EngineName()
			}
			if out.Default == "" && len(out.Engines) > 0 {
				out.Default = out.Engines[0]
			}
			return out, nil
		})
}

// objectFailed answers a read whose object S3 could not give: a row whose
// object is gone is "not found" like any refusal (and worth a warning).
func (s *Server) objectFailed(w http.ResponseWriter, r *http.Request, id string, err error) {
	if errors.Is(err, ledger.ErrNoObject) {
		s.logger().Warn("The ledger has an archive whose object S3 does not", "archiveId", id)
		err = ledger.ErrNotFound
	}
	s.fail(w, r, err)
}
