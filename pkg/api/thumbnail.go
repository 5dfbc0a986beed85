package api

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// ThumbnailMaxAge is how long a browser may keep a thumbnail (private
// caches only): a revoked share hides the picture again at most this late.
const ThumbnailMaxAge = 300

// thumbnail answers GET /api/archives/{id}/thumbnail: the picture of an
// archive the caller may view (archive.Access.Thumbnail). Not allowed and
// absent are the same 404 {"error":"not found"}, on the same path; a caller
// who may view the archive but whose WACZ holds no readable picture gets
// 404 {"error":"no thumbnail"}. The picture is archived content: it is
// checked to be a whole PNG or JPEG before it is sent, its type is the one
// its bytes have, and the headers forbid sniffing, scripts and embedding
// by other origins.
func (s *Server) thumbnail() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		id, err := UUIDParam(r, "id")
		if err != nil {
			s.fail(w, r, err)
			return
		}
		who, err := s.who(r)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		img, err := s.Access.Thumbnail(ctx, who.Subject, who.Organizations, id)
		if err == nil {
			// The use-case checked it; checked again here, where it leaves.
			_, err = wacz.CheckImage(img.Data, img.Mime)
			if err != nil {
				s.logger().Error("thumbnail failed its check at the edge", "archiveId", id, "error", err.Error())
				err = archive.ErrNoThumbnail
			}
		}
		if errors.Is(err, archive.ErrNoThumbnail) {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no thumbnail"})
			return
		}
		if err != nil {
			s.fail(w, r, err)
			return
		}
		h := w.Header()
		h.Set("Content-Type", img.Mime)
		h.Set("Content-Length", strconv.Itoa(len(img.Data)))
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cache-Control", "private, max-age="+strconv.Itoa(ThumbnailMaxAge))
		h.Set("Vary", "Authorization, Cookie, X-Capture-Ledger-Subject, X-Capture-Ledger-Organizations")
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(img.Data)
		}
	}
}
