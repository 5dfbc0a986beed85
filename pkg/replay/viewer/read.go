package viewer

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// label is the session label of the origin r came to (the Host the
// handler was chosen by).
func (v *Handler) label(r *http.Request) string {
	l, _, _ := v.Origins.Match(r.Host)
	return l
}

// collectionListing answers the viewer of a collection session with
// ReplayWeb.page's multi-WACZ JSON: the archives of the collection the
// session's person may view now, each read through this origin with a
// read token of the same session.
func (v *Handler) collectionListing(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), v.Timeout)
	defer cancel()
	originHeaders(w, "'none'") // writeJSON adds Cache-Control: no-store
	tokens := r.URL.Query()["t"]
	if len(tokens) != 1 {
		v.Fail(w, r, ledger.ErrNotFound)
		return
	}
	entries, err := v.Service.Collection(ctx, tokens[0], v.label(r))
	if err != nil {
		v.Fail(w, r, err)
		return
	}
	type resource struct {
		Name string `json:"name"`
		Path string `json:"path"`
	}
	out := struct {
		Resources []resource `json:"resources"`
	}{Resources: make([]resource, 0, len(entries))}
	for _, e := range entries {
		// The name is the one a crawl's revisit records name their
		// original's WACZ by (replay.Entry.Name).
		name := e.Name
		if name == "" {
			name = e.ArchiveID + ".wacz"
		}
		out.Resources = append(out.Resources, resource{Name: name, Path: replay.ReadPath(e.ArchiveID, e.Token)})
	}
	writeJSON(w, http.StatusOK, out)
}

// replayRead serves one read of the viewer: the token must verify and its
// identity still view the archive (replay.Service.Authorize), or the answer
// is the 404 every refusal gets. Then the object, or the one range asked
// for, streams from S3. The token is in the query, which nothing here logs.
func (v *Handler) replayRead(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), v.Timeout)
	defer cancel()
	r = r.WithContext(ctx)
	originHeaders(w, "'none'")
	name := r.PathValue("name")
	raw, isWACZ := strings.CutSuffix(name, ".wacz")
	u, err := uuid.Parse(raw)
	if !isWACZ || err != nil || len(raw) != 36 {
		v.Fail(w, r, &ledger.FieldError{Field: "params/name", Reason: "must be an archive id followed by .wacz"})
		return
	}
	id := u.String()
	tokens := r.URL.Query()["t"]
	if len(tokens) != 1 {
		v.Fail(w, r, ledger.ErrNotFound)
		return
	}
	// No identity is read here: the token is it, and a replay origin
	// never holds or accepts any other.
	g, err := v.Service.Authorize(ctx, tokens[0], id, v.label(r))
	if err != nil {
		v.Fail(w, r, err)
		return
	}
	var rng *ledger.Range
	if hs := r.Header.Values("Range"); len(hs) == 1 {
		if parsed, ok := replay.ParseRange(hs[0]); ok {
			rng = &parsed
		}
	}
	if r.Method == http.MethodHead {
		v.replayHead(w, r, g, rng)
		return
	}
	part, err := v.Service.Open(ctx, g, rng)
	if errors.Is(err, ledger.ErrUnsatisfiable) {
		v.unsatisfiable(w, r, g)
		return
	}
	if err == nil && rng != nil && !ifRangeHolds(r.Header.Get("If-Range"), part.ObjectInfo) {
		// The object is not the one the earlier ranges came from: all of
		// it, so the reader does not splice two versions.
		part.Body.Close()
		part, err = v.Service.Open(ctx, g, nil)
	}
	if err != nil {
		v.objectFailed(w, r, id, err)
		return
	}
	defer part.Body.Close()
	objectHeaders(w, id, part.ObjectInfo)
	w.Header().Set("Content-Length", strconv.FormatInt(part.Length(), 10))
	status := http.StatusOK
	if part.Partial {
		status = http.StatusPartialContent
		w.Header().Set("Content-Range", "bytes "+strconv.FormatInt(part.First, 10)+"-"+strconv.FormatInt(part.Last, 10)+"/"+strconv.FormatInt(part.Size, 10))
	}
	w.WriteHeader(status)
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	if _, err := io.CopyBuffer(w, struct{ io.Reader }{part.Body}, *buf); err != nil {
		if ctx.Err() == nil {
			v.logger().Warn("Replay read cut short", "archiveId", id, "error", err.Error())
		}
		// The status and length are sent: end the connection so the
		// reader sees a broken answer, never a short one that looks whole.
		panic(http.ErrAbortHandler)
	}
}

// copyBuffers are the buffers reads stream through (S3 to the client).
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// replayHead answers HEAD from the object's metadata, with or without a
// range.
func (v *Handler) replayHead(w http.ResponseWriter, r *http.Request, g replay.Grant, rng *ledger.Range) {
	info, err := v.Service.Stat(r.Context(), g)
	if err != nil {
		v.objectFailed(w, r, g.ArchiveID, err)
		return
	}
	if rng != nil && ifRangeHolds(r.Header.Get("If-Range"), info) {
		first, last, ok := rng.Resolve(info.Size)
		if !ok {
			v.unsatisfiableSize(w, info.Size)
			return
		}
		objectHeaders(w, g.ArchiveID, info)
		w.Header().Set("Content-Range", "bytes "+strconv.FormatInt(first, 10)+"-"+strconv.FormatInt(last, 10)+"/"+strconv.FormatInt(info.Size, 10))
		w.Header().Set("Content-Length", strconv.FormatInt(last-first+1, 10))
		w.WriteHeader(http.StatusPartialContent)
		return
	}
	objectHeaders(w, g.ArchiveID, info)
	w.Header().Set("Content-Length", strconv.FormatInt(info.Size, 10))
	w.WriteHeader(http.StatusOK)
}

// unsatisfiable answers 416 with the object's size, which a failed range
// GET does not say.
func (v *Handler) unsatisfiable(w http.ResponseWriter, r *http.Request, g replay.Grant) {
	info, err := v.Service.Stat(r.Context(), g)
	if err != nil {
		v.objectFailed(w, r, g.ArchiveID, err)
		return
	}
	v.unsatisfiableSize(w, info.Size)
}

func (v *Handler) unsatisfiableSize(w http.ResponseWriter, size int64) {
	w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
	w.Header().Set("Accept-Ranges", "bytes")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
}

// objectFailed answers a read whose object S3 could not give: a row whose
// object is gone is "not found" like any refusal (and worth a warning).
func (v *Handler) objectFailed(w http.ResponseWriter, r *http.Request, id string, err error) {
	if errors.Is(err, ledger.ErrNoObject) {
		v.logger().Warn("The ledger has an archive whose object S3 does not", "archiveId", id)
		err = ledger.ErrNotFound
	}
	v.Fail(w, r, err)
}

// objectHeaders are the headers of every answer that carries the object:
// its validators, that ranges are served, and that it is data to read,
// never a page to render or a response to keep (a cached copy would
// outlive a revocation).
func objectHeaders(w http.ResponseWriter, id string, info ledger.ObjectInfo) {
	h := w.Header()
	h.Set("Content-Type", "application/wacz")
	h.Set("Content-Disposition", `attachment; filename="`+id+`.wacz"`)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox; frame-ancestors 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "private, no-store")
	h.Set("Accept-Ranges", "bytes")
	if info.ETag != "" {
		h.Set("ETag", info.ETag)
	}
	if !info.LastModified.IsZero() {
		h.Set("Last-Modified", info.LastModified.UTC().Format(http.TimeFormat))
	}
}

// ifRangeHolds says whether a range may be served under If-Range (RFC 9110
// §13.1.5): no header, the object's strong ETag, or exactly its
// Last-Modified date.
func ifRangeHolds(h string, info ledger.ObjectInfo) bool {
	h = strings.TrimSpace(h)
	switch {
	case h == "":
		return true
	case strings.HasPrefix(h, `"`):
		return info.ETag != "" && !strings.HasPrefix(info.ETag, "W/") && h == info.ETag
	case strings.HasPrefix(h, "W/"):
		return false
	}
	t, err := http.ParseTime(h)
	return err == nil && !info.LastModified.IsZero() && t.Equal(info.LastModified.UTC().Truncate(time.Second))
}
