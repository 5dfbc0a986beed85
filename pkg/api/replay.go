package api

import (
	"context"
	"errors"
	"html/template"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// Replay is what the replay routes need: POST /api/archives/{id}/replay
// (a link for the viewer), GET and HEAD /api/archives/{id}/wacz?t=… (the
// viewer's reads, token-bound and re-checked) and the viewer at /replay/.
type Replay struct {
	Service *replay.Service
	// ViewerDir holds ReplayWeb.page's ui.js and sw.js; without them
	// /replay/ says how to install them.
	ViewerDir string
	// Origin is an external ReplayWeb.page deployment the links open in
	// (CAPTURE_LEDGER_REPLAY_ORIGIN); "" is the viewer at /replay/.
	Origin string
	// APIURL is the API's origin as browsers reach it
	// (CAPTURE_LEDGER_API_URL); "" takes the origin each request came to.
	APIURL string
}

// replayRoutes registers the replay routes (Server.Replay is set).
func (s *Server) replayRoutes() {
	s.mux.HandleFunc("POST /api/archives/{id}/replay", s.replayLink())
	// A GET pattern serves HEAD too.
	s.mux.HandleFunc("GET /api/archives/{id}/wacz", s.replayRead)
	s.mux.HandleFunc("OPTIONS /api/archives/{id}/wacz", s.replayPreflight)
	s.mux.HandleFunc("GET /replay/{$}", s.viewerPage)
	s.mux.HandleFunc("GET /replay/ui.js", s.viewerFile("ui.js"))
	// The service worker's scope is the folder it is served from: the
	// viewer's replaybase, below the page that embeds it.
	s.mux.HandleFunc("GET /replay/sw/sw.js", s.viewerFile("sw.js"))
	s.mux.HandleFunc("GET /replay/sw/ui.js", s.viewerFile("ui.js"))
	s.mux.HandleFunc("GET /replay/sw/{$}", viewerFrameBeforeWorker)
}

// ReplayLink is the body of POST /api/archives/{id}/replay.
type ReplayLink = replay.Link

type replayLinkRequest struct {
	id, base, page string
	ttl            time.Duration
}

// replayLink mints a viewer link: the same identity and can_view check as
// minting a presigned URL (404 otherwise). An optional body asks for
// another lifetime than the hour ({"expiresIn": seconds}) and names the
// archived page to open ({"page": url}, the picker sends the row's
// sourceUrl; without it the viewer opens the archive's first page).
func (s *Server) replayLink() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (replayLinkRequest, error) {
			id, err := UUIDParam(r, "id")
			if err != nil {
				return replayLinkRequest{}, err
			}
			var body struct {
				ExpiresIn *int64 `json:"expiresIn"`
				Page      string `json:"page"`
			}
			if err := DecodeBody(r, &body, 2*replay.MaxPageBytes); err != nil {
				return replayLinkRequest{}, err
			}
			if body.Page != "" {
				if err := replay.CheckPage(body.Page); err != nil {
					return replayLinkRequest{}, &BadRequest{Message: "body/page " + err.Error()}
				}
			}
			req := replayLinkRequest{id: id, base: s.apiBase(r), page: body.Page}
			if body.ExpiresIn != nil {
				lo, hi := int64(replay.MinTTL/time.Second), int64(replay.MaxTTL/time.Second)
				if *body.ExpiresIn < lo || *body.ExpiresIn > hi {
					return replayLinkRequest{}, &BadRequest{Message: "body/expiresIn must be between " + strconv.FormatInt(lo, 10) + " and " + strconv.FormatInt(hi, 10) + " (seconds)"}
				}
				req.ttl = time.Duration(*body.ExpiresIn) * time.Second
			}
			return req, nil
		},
		func(ctx context.Context, who identity.Identity, in replayLinkRequest) (any, error) {
			m, err := s.Replay.Service.Mint(ctx, who.Subject, who.Organizations, in.id, in.ttl)
			if err != nil {
				return nil, err
			}
			return ReplayLink{URL: replay.ViewerURL(in.base, s.Replay.Origin, in.id, m.Token, in.page), ExpiresAt: m.ExpiresAt.UTC()}, nil
		})
}

// apiBase is the API's origin as the caller reached it: the configured
// one, else the scheme and Host of r.
func (s *Server) apiBase(r *http.Request) string {
	if s.Replay != nil && s.Replay.APIURL != "" {
		return s.Replay.APIURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// cors lets the configured viewer origin, and the API's own, read the
// answer (status, length and range included), whatever it is.
func (s *Server) cors(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	w.Header().Add("Vary", "Origin")
	if origin == "" || (origin != s.Replay.Origin && origin != s.apiBase(r)) {
		return
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", "Content-Length, Content-Range, Accept-Ranges, ETag, Last-Modified")
}

// replayPreflight answers a viewer on another origin asking whether it may
// send Range and If-Range.
func (s *Server) replayPreflight(w http.ResponseWriter, r *http.Request) {
	s.cors(w, r)
	if w.Header().Get("Access-Control-Allow-Origin") != "" {
		w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD")
		w.Header().Set("Access-Control-Allow-Headers", "Range, If-Range")
		w.Header().Set("Access-Control-Max-Age", "600")
	}
	w.WriteHeader(http.StatusNoContent)
}

// replayRead serves one read of the viewer: the token must verify and its
// identity still view the archive (replay.Service.Authorize), or the answer
// is the 404 every refusal gets. Then the object, or the one range asked
// for, streams from S3. The token is in the query, which nothing here logs.
func (s *Server) replayRead(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	s.cors(w, r)
	id, err := UUIDParam(r, "id")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	tokens := r.URL.Query()["t"]
	if len(tokens) != 1 {
		s.fail(w, r, ledger.ErrNotFound)
		return
	}
	g, err := s.Replay.Service.Authorize(ctx, tokens[0], id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// A token is for the person it was minted for: a request that says who
	// it is (the viewer's own reads carry no identity) must be them.
	if who, err := s.who(r); err == nil && who.Subject != g.Subject {
		s.fail(w, r, ledger.ErrNotFound)
		return
	}
	var rng *blob.Range
	if hs := r.Header.Values("Range"); len(hs) == 1 {
		if parsed, ok := replay.ParseRange(hs[0]); ok {
			rng = &parsed
		}
	}
	if r.Method == http.MethodHead {
		s.replayHead(w, r, g, rng)
		return
	}
	part, err := s.Replay.Service.Open(ctx, g, rng)
	if errors.Is(err, blob.ErrUnsatisfiable) {
		s.unsatisfiable(w, r, g)
		return
	}
	if err == nil && rng != nil && !ifRangeHolds(r.Header.Get("If-Range"), part.ObjectInfo) {
		// The object is not the one the earlier ranges came from: all of
		// it, so the reader does not splice two versions.
		part.Body.Close()
		part, err = s.Replay.Service.Open(ctx, g, nil)
	}
	if err != nil {
		s.objectFailed(w, r, id, err)
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
			s.logger().Warn("Replay read cut short", "archiveId", id, "error", err.Error())
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
func (s *Server) replayHead(w http.ResponseWriter, r *http.Request, g replay.Grant, rng *blob.Range) {
	info, err := s.Replay.Service.Stat(r.Context(), g)
	if err != nil {
		s.objectFailed(w, r, g.ArchiveID, err)
		return
	}
	if rng != nil && ifRangeHolds(r.Header.Get("If-Range"), info) {
		first, last, ok := rng.Resolve(info.Size)
		if !ok {
			s.unsatisfiableSize(w, info.Size)
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
func (s *Server) unsatisfiable(w http.ResponseWriter, r *http.Request, g replay.Grant) {
	info, err := s.Replay.Service.Stat(r.Context(), g)
	if err != nil {
		s.objectFailed(w, r, g.ArchiveID, err)
		return
	}
	s.unsatisfiableSize(w, info.Size)
}

func (s *Server) unsatisfiableSize(w http.ResponseWriter, size int64) {
	w.Header().Set("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
	w.Header().Set("Accept-Ranges", "bytes")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
}

// objectFailed answers a read whose object S3 could not give: a row whose
// object is gone is "not found" like any refusal (and worth a warning).
func (s *Server) objectFailed(w http.ResponseWriter, r *http.Request, id string, err error) {
	if errors.Is(err, blob.ErrNotFound) {
		s.logger().Warn("The ledger has an archive whose object S3 does not", "archiveId", id)
		err = ledger.ErrNotFound
	}
	s.fail(w, r, err)
}

// objectHeaders are the headers of every answer that carries the object:
// its validators, that ranges are served, and that it is data to read,
// never a page to render or a response to keep (a cached copy would
// outlive a revocation).
func objectHeaders(w http.ResponseWriter, id string, info blob.ObjectInfo) {
	h := w.Header()
	h.Set("Content-Type", "application/wacz")
	h.Set("Content-Disposition", `attachment; filename="`+id+`.wacz"`)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
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
func ifRangeHolds(h string, info blob.ObjectInfo) bool {
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

// sourcePattern is the only source the built-in viewer opens: an archive
// read of this API, on its own origin.
var sourcePattern = regexp.MustCompile(`^/api/archives/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/wacz\?t=[A-Za-z0-9_.-]+$`)

// tsPattern is a ReplayWeb.page timestamp (up to 14 digits, or 17 with ms).
var tsPattern = regexp.MustCompile(`^[0-9]{1,17}$`)

// viewerPage is the page that embeds ReplayWeb.page around one archive
// read. It opens only this API's archive reads: a viewer that would open
// any source would run any archive's scripts on this origin.
func (s *Server) viewerPage(w http.ResponseWriter, r *http.Request) {
	lang := pickerLang(r)
	t := viewerTexts[lang]
	q := r.URL.Query()
	d := viewerData{Lang: lang.String(), T: t, URL: "page:0"}
	status := http.StatusOK
	switch {
	case !s.viewerInstalled():
		status, d.Message, d.Install = http.StatusServiceUnavailable, t.NotInstalled, "make replay-viewer"
	case len(q["source"]) == 0:
		d.Message = t.NoSource
	case len(q["source"]) > 1 || len(q["source"][0]) > 100+replay.MaxTokenBytes || !sourcePattern.MatchString(q["source"][0]) || len(q["url"]) > 1 || len(q["ts"]) > 1 ||
		(q.Get("ts") != "" && !tsPattern.MatchString(q.Get("ts"))) || len(q.Get("url")) > 8192:
		status, d.Message = http.StatusBadRequest, t.BadSource
	default:
		d.Source, d.TS = q["source"][0], q.Get("ts")
		if u := q.Get("url"); u != "" {
			d.URL = template.URL(u)
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Language", lang.String())
	h.Add("Vary", "Accept-Language")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// The page's address carries the token: no other origin learns it.
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := viewerTemplate.Execute(w, d); err != nil {
		s.logger().Error("viewer render failed", "error", err.Error())
	}
}

// viewerInstalled says whether ViewerDir holds the viewer's files.
func (s *Server) viewerInstalled() bool { return replay.ViewerInstalled(s.Replay.ViewerDir) }

// viewerFile serves one of ReplayWeb.page's files, unmodified.
func (s *Server) viewerFile(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.Replay.ViewerDir == "" {
			http.NotFound(w, r)
			return
		}
		f, err := os.Open(filepath.Join(s.Replay.ViewerDir, name))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil || !st.Mode().IsRegular() {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, name, st.ModTime(), f)
	}
}

// viewerFrameBeforeWorker answers the viewer's frame when it is loaded
// before the service worker controls it (the first time): ReplayWeb.page
// reloads the frame once the worker is active, and the worker serves it.
func viewerFrameBeforeWorker(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	_, _ = io.WriteString(w, "<!doctype html>\n<meta charset=\"utf-8\"><title>…</title>\n")
}

type viewerText struct {
	Title, NotInstalled, InstallHow, NoSource, BadSource, Picker string
}

var viewerTexts = map[i18n.Lang]viewerText{
	i18n.English: {
		Title:        "Replay — capture-ledger",
		NotInstalled: "The archive viewer (ReplayWeb.page) is not installed on this server.",
		InstallHow:   "In the ledgerctl checkout, run the command below (it fetches the replaywebpage npm package, pinned, into .state/replay), or point CAPTURE_LEDGER_REPLAY_VIEWER_DIR at a folder holding its ui.js and sw.js, then reload this page.",
		NoSource:     "Open an archive from the list: this page shows one archive at a time.",
		BadSource:    "This viewer opens only links from this ledger's list; this one is not. Open the archive from the list again.",
		Picker:       "Back to the list",
	},
	i18n.Japanese: {
		Title:        "リプレイ — capture-ledger",
		NotInstalled: "このサーバにはアーカイブの viewer（ReplayWeb.page）が入っていない。",
		InstallHow:   "ledgerctl の checkout で下のコマンドを走らせる（npm の replaywebpage を版を固定して .state/replay に取ってくる）か、CAPTURE_LEDGER_REPLAY_VIEWER_DIR に ui.js と sw.js のあるフォルダを指定してから、このページを読み直す",
		NoSource:     "一覧からアーカイブを開く。このページは 1 度に 1 つのアーカイブを見せる",
		BadSource:    "この viewer が開くのは、この台帳の一覧から出たリンクだけ。これは違う。一覧からもう一度開く",
		Picker:       "一覧に戻る",
	},
}

type viewerData struct {
	Lang             string
	T                viewerText
	Message, Install string
	Source, TS       string
	// URL is the page to open, "page:0" (the first) unless the link says;
	// an attribute html/template would otherwise filter as a link, which it
	// is not: the viewer looks it up in the archive.
	URL template.URL
}

// viewerTemplate embeds ReplayWeb.page as its embedding guide says
// (https://replayweb.page/docs/embedding, "Self Hosting"), with the
// service worker one folder down so the page is outside its scope.
var viewerTemplate = template.Must(template.New("viewer").Parse(`<!doctype html>
<html lang="{{.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{.T.Title}}</title>
{{if .Source}}<script src="/replay/ui.js"></script>
<style>html, body { margin: 0; height: 100%; } replay-web-page { display: block; width: 100vw; height: 100vh; }</style>
{{else}}<style>body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 50rem; padding: 0 1rem; color: #222; } code { background: #f4f4f4; padding: .1rem .3rem; }</style>
{{end}}</head>
<body>
{{if .Source}}<replay-web-page source="{{.Source}}" url="{{.URL}}"{{if .TS}} ts="{{.TS}}"{{end}} replaybase="/replay/sw/" embed="default"></replay-web-page>
{{else}}<p id="message">{{.Message}}</p>
{{if .Install}}<p>{{.T.InstallHow}}</p>
<pre><code>{{.Install}}</code></pre>
{{end}}<p><a href="/">{{.T.Picker}}</a></p>
{{end}}</body>
</html>
`))
