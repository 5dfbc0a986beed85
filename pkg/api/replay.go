package api

import (
	"context"
	"errors"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// Replay is what the replay routes need. On the API's origin: POST
// /api/archives/{id}/replay, /api/crawls/{id}/replay and /api/replay
// (viewer links, each for a replay session of its own). On each session's
// origin, <label>.<replay domain>, and nowhere else: the viewer
// (ReplayWeb.page), its service worker, the archive reads and a
// collection's listing. The API's origin serves none of them: archived
// pages may carry hostile script, which must never run where identities,
// tokens or other sessions' data live.
type Replay struct {
	Service *replay.Service
	// ViewerDir holds ReplayWeb.page's ui.js and sw.js; without them the
	// viewer says how to install them.
	ViewerDir string
	// Origins is where sessions are served (CAPTURE_LEDGER_REPLAY_DOMAIN);
	// links are built from it, never from a request's Host.
	Origins replay.Origins
}

// replayRoutes registers the routes of the API's origin that mint replay
// sessions (Server.Replay is set).
func (s *Server) replayRoutes() {
	s.mux.HandleFunc("POST /api/archives/{id}/replay", s.replayLink())
	s.mux.HandleFunc("POST /api/crawls/{id}/replay", s.crawlReplayLink())
	s.mux.HandleFunc("POST /api/replay", s.setReplayLink())
}

// replayOriginHandler is everything a session's origin answers; any other
// path is a 404.
func (s *Server) replayOriginHandler() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", s.viewerPage)
	m.HandleFunc("GET /ui.js", s.viewerFile("ui.js"))
	// The service worker's scope is the folder it is served from: the
	// viewer's replaybase, below the page that embeds it.
	m.HandleFunc("GET /sw/sw.js", s.viewerFile("sw.js"))
	m.HandleFunc("GET /sw/ui.js", s.viewerFile("ui.js"))
	m.HandleFunc("GET /sw/{$}", s.viewerFrameBeforeWorker)
	// A GET pattern serves HEAD too.
	m.HandleFunc("GET /wacz/{name}", s.replayRead)
	m.HandleFunc("GET /collection.json", s.collectionListing)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		replayOriginHeaders(w, "'none'")
		s.fail(w, r, ledger.ErrNotFound)
	})
	return m
}

// replayCSP is the policy of what the replay origin itself serves: the
// viewer's page and files, and nothing reaches past the origin. The
// service worker gets it too (a worker's policy comes with its script),
// so neither it nor a page that escaped the viewer's rewriting can fetch
// from anywhere else — another server's archive included.
const replayCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'"

// replayOriginHeaders are on every answer of a session's origin: its
// policy with frame-ancestors (who may embed it), no sniffing, no
// referrer (addresses carry tokens). No answer grants CORS.
func replayOriginHeaders(w http.ResponseWriter, ancestors string) {
	h := w.Header()
	h.Set("Content-Security-Policy", replayCSP+"; frame-ancestors "+ancestors)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// ReplayLink is the body of the replay routes.
type ReplayLink = replay.Link

type replayLinkRequest struct {
	id, page string
	ids      []string
	ttl      time.Duration
}

// replayTTL reads the optional expiresIn (seconds) of a replay route's
// body.
func replayTTL(expiresIn *int64) (time.Duration, error) {
	if expiresIn == nil {
		return 0, nil
	}
	lo, hi := int64(replay.MinTTL/time.Second), int64(replay.MaxTTL/time.Second)
	if *expiresIn < lo || *expiresIn > hi {
		return 0, &BadRequest{Message: "body/expiresIn must be between " + strconv.FormatInt(lo, 10) + " and " + strconv.FormatInt(hi, 10) + " (seconds)"}
	}
	return time.Duration(*expiresIn) * time.Second, nil
}

// caller is who asks for a session, and until when their credential holds.
func caller(who identity.Identity) replay.Caller {
	return replay.Caller{Subject: who.Subject, Organizations: who.Organizations, Expires: who.Expires}
}

// parseReplayOf reads a replay route of one thing ({id}: an archive, or a
// crawl): the id, and a body with an optional expiresIn and, for an
// archive (withPage), the page to open first.
func parseReplayOf(r *http.Request, withPage bool) (replayLinkRequest, error) {
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
	switch {
	case body.Page != "" && !withPage:
		return replayLinkRequest{}, &BadRequest{Message: "body must NOT have additional properties: page (a collection opens at its first page)"}
	case body.Page != "":
		if err := replay.CheckPage(body.Page); err != nil {
			return replayLinkRequest{}, &BadRequest{Message: "body/page " + err.Error()}
		}
	}
	ttl, err := replayTTL(body.ExpiresIn)
	return replayLinkRequest{id: id, page: body.Page, ttl: ttl}, err
}

// replayLink opens a session on one archive: the same identity and
// can_view check as minting a presigned URL (404 otherwise). An optional
// body asks for another lifetime than the hour ({"expiresIn": seconds},
// never past the caller's credential) and names the archived page to open
// ({"page": url}, the console sends the row's sourceUrl; without it the
// viewer opens the archive's first page).
func (s *Server) replayLink() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (replayLinkRequest, error) { return parseReplayOf(r, true) },
		func(ctx context.Context, who identity.Identity, in replayLinkRequest) (any, error) {
			m, err := s.Replay.Service.Mint(ctx, caller(who), in.id, in.ttl)
			if err != nil {
				return nil, err
			}
			o := s.Replay.Origins
			return ReplayLink{URL: replay.ViewerURL(o, m, replay.Source(o, m, in.id), in.page), ExpiresAt: m.ExpiresAt.UTC()}, nil
		})
}

// crawlReplayLink opens a session replaying a crawl's archives as one
// collection: those the caller may view (404 when none, or no such crawl).
func (s *Server) crawlReplayLink() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (replayLinkRequest, error) { return parseReplayOf(r, false) },
		func(ctx context.Context, who identity.Identity, in replayLinkRequest) (any, error) {
			m, err := s.Replay.Service.MintCrawl(ctx, caller(who), in.id, in.ttl)
			return s.collectionLink(m, err)
		})
}

// setReplayLink opens a session replaying chosen archives as one
// collection ({"archives": [ids]}, 1 to replay.MaxSet): those the caller
// may view (404 when none).
func (s *Server) setReplayLink() http.HandlerFunc {
	return handle(s, http.StatusOK,
		func(r *http.Request) (replayLinkRequest, error) {
			var body struct {
				Archives  []string `json:"archives"`
				ExpiresIn *int64   `json:"expiresIn"`
			}
			if err := DecodeBody(r, &body, 64*1024); err != nil {
				return replayLinkRequest{}, err
			}
			if len(body.Archives) == 0 || len(body.Archives) > replay.MaxSet {
				return replayLinkRequest{}, &BadRequest{Message: "body/archives must hold 1 to " + strconv.Itoa(replay.MaxSet) + " archive ids"}
			}
			seen := map[string]bool{}
			var ids []string
			for i, raw := range body.Archives {
				u, err := uuid.Parse(raw)
				if err != nil || len(raw) != 36 {
					return replayLinkRequest{}, &BadRequest{Message: "body/archives/" + strconv.Itoa(i) + " must match format \"uuid\""}
				}
				if id := u.String(); !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
			ttl, err := replayTTL(body.ExpiresIn)
			return replayLinkRequest{ids: ids, ttl: ttl}, err
		},
		func(ctx context.Context, who identity.Identity, in replayLinkRequest) (any, error) {
			m, err := s.Replay.Service.MintSet(ctx, caller(who), in.ids, in.ttl)
			return s.collectionLink(m, err)
		})
}

func (s *Server) collectionLink(m replay.Session, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	o := s.Replay.Origins
	return ReplayLink{URL: replay.ViewerURL(o, m, replay.Source(o, m, ""), ""), ExpiresAt: m.ExpiresAt.UTC(), Archives: m.Archives}, nil
}

// label is the session label of the origin r came to (the Host the
// handler was chosen by).
func (s *Server) label(r *http.Request) string {
	l, _, _ := s.Replay.Origins.Match(r.Host)
	return l
}

// collectionListing answers the viewer of a collection session with
// ReplayWeb.page's multi-WACZ JSON: the archives of the collection the
// session's person may view now, each read through this origin with a
// read token of the same session.
func (s *Server) collectionListing(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
	defer cancel()
	replayOriginHeaders(w, "'none'") // writeJSON adds Cache-Control: no-store
	tokens := r.URL.Query()["t"]
	if len(tokens) != 1 {
		s.fail(w, r, ledger.ErrNotFound)
		return
	}
	entries, err := s.Replay.Service.Collection(ctx, tokens[0], s.label(r))
	if err != nil {
		s.fail(w, r, err)
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
func (s *Server) replayRead(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
	defer cancel()
	r = r.WithContext(ctx)
	replayOriginHeaders(w, "'none'")
	name := r.PathValue("name")
	raw, isWACZ := strings.CutSuffix(name, ".wacz")
	u, err := uuid.Parse(raw)
	if !isWACZ || err != nil || len(raw) != 36 {
		s.fail(w, r, &BadRequest{Message: "params/name must be an archive id followed by .wacz"})
		return
	}
	id := u.String()
	tokens := r.URL.Query()["t"]
	if len(tokens) != 1 {
		s.fail(w, r, ledger.ErrNotFound)
		return
	}
	// No identity is read here: the token is it, and a replay origin
	// never holds or accepts any other.
	g, err := s.Replay.Service.Authorize(ctx, tokens[0], id, s.label(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var rng *ledger.Range
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
	if errors.Is(err, ledger.ErrUnsatisfiable) {
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
func (s *Server) replayHead(w http.ResponseWriter, r *http.Request, g replay.Grant, rng *ledger.Range) {
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
	if errors.Is(err, ledger.ErrNoObject) {
		s.logger().Warn("The ledger has an archive whose object S3 does not", "archiveId", id)
		err = ledger.ErrNotFound
	}
	s.fail(w, r, err)
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

// tsPattern is a ReplayWeb.page timestamp (up to 14 digits, or 17 with ms).
var tsPattern = regexp.MustCompile(`^[0-9]{1,17}$`)

// sessionSource says whether source is the one thing the session labelled
// label may open: its archive's read route or its collection's listing, on
// its own origin, with a token of that session that opens it. Anything
// else — another server, another session's route, a token of another
// origin — would let the viewer run someone else's archive here.
func (s *Server) sessionSource(label, source string) bool {
	if label == "" || len(source) > 1024+replay.MaxTokenBytes*3 {
		return false
	}
	u, err := url.Parse(source)
	if err != nil || u.Scheme+"://"+u.Host != s.Replay.Origins.Origin(label) || u.User != nil || u.Fragment != "" {
		return false
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil || len(q) != 1 || len(q["t"]) != 1 {
		return false
	}
	c, err := s.Replay.Service.Verify(q["t"][0], label)
	if err != nil {
		return false
	}
	if u.Path == "/collection.json" {
		return c.Collection() && u.String() == s.Replay.Origins.Origin(label)+replay.CollectionPath(q["t"][0])
	}
	return !c.Collection() && u.String() == s.Replay.Origins.Origin(label)+replay.ReadPath(c.ArchiveID, q["t"][0])
}

// viewerPage is the page that embeds ReplayWeb.page around the session's
// source, at the root of the session's origin. It opens nothing but that
// source (sessionSource).
func (s *Server) viewerPage(w http.ResponseWriter, r *http.Request) {
	lang := i18n.FromAcceptLanguage(strings.Join(r.Header.Values("Accept-Language"), ","))
	t := viewerTexts[lang]
	q := r.URL.Query()
	d := viewerData{Lang: lang.String(), T: t, URL: "page:0"}
	status := http.StatusOK
	switch {
	case !s.viewerInstalled():
		status, d.Message, d.Install = http.StatusServiceUnavailable, t.NotInstalled, "make replay-viewer"
	case len(q["source"]) == 0:
		status, d.Message = http.StatusNotFound, t.NoSource
	case len(q["source"]) > 1 || !s.sessionSource(s.label(r), q["source"][0]) || len(q["url"]) > 1 || len(q["ts"]) > 1 ||
		(q.Get("ts") != "" && !tsPattern.MatchString(q.Get("ts"))) || len(q.Get("url")) > replay.MaxPageBytes:
		status, d.Message = http.StatusBadRequest, t.BadSource
	default:
		d.Source, d.TS = q["source"][0], q.Get("ts")
		if u := q.Get("url"); u != "" {
			d.URL = template.URL(u)
		}
	}
	h := w.Header()
	replayOriginHeaders(w, "'none'")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Language", lang.String())
	h.Add("Vary", "Accept-Language")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := viewerTemplate.Execute(w, d); err != nil {
		s.logger().Error("viewer render failed", "error", err.Error())
	}
}

// viewerInstalled says whether ViewerDir holds the viewer's files.
func (s *Server) viewerInstalled() bool { return replay.ViewerInstalled(s.Replay.ViewerDir) }

// viewerFile serves one of ReplayWeb.page's files, unmodified, with the
// replay origin's policy (the service worker's policy is the one its
// script comes with).
func (s *Server) viewerFile(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		replayOriginHeaders(w, "'none'")
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
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, name, st.ModTime(), f)
	}
}

// viewerFrameBeforeWorker answers the viewer's frame when it is loaded
// before the service worker controls it (the first time): ReplayWeb.page
// reloads the frame once the worker is active, and the worker serves it.
// It too answers only for the session's own source; the page that embeds
// it is the only one that may.
func (s *Server) viewerFrameBeforeWorker(w http.ResponseWriter, r *http.Request) {
	replayOriginHeaders(w, "'self'")
	w.Header().Set("Cache-Control", "no-store")
	if q := r.URL.Query(); len(q["source"]) != 1 || !s.sessionSource(s.label(r), q["source"][0]) {
		s.fail(w, r, &BadRequest{Message: "querystring/source must be this replay session's archive or collection"})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = io.WriteString(w, "<!doctype html>\n<meta charset=\"utf-8\"><title>…</title>\n")
}

type viewerText struct {
	Title, NotInstalled, InstallHow, NoSource, BadSource string
}

var viewerTexts = map[i18n.Lang]viewerText{
	i18n.English: {
		Title:        "Replay — capture-ledger",
		NotInstalled: "The archive viewer (ReplayWeb.page) is not installed on this server.",
		InstallHow:   "In the ledgerctl checkout, run the command below (it fetches the replaywebpage npm package, pinned, into .state/replay), or point CAPTURE_LEDGER_REPLAY_VIEWER_DIR at a folder holding its ui.js and sw.js, then reload this page.",
		NoSource:     "Open an archive from the list: each replay link opens its own archive or collection here.",
		BadSource:    "This viewer opens only the archive or collection its link was made for; this one is not. Open it from the list again.",
	},
	i18n.Japanese: {
		Title:        "リプレイ — capture-ledger",
		NotInstalled: "このサーバにはアーカイブの viewer（ReplayWeb.page）が入っていない。",
		InstallHow:   "ledgerctl の checkout で下のコマンドを走らせる（npm の replaywebpage を版を固定して .state/replay に取ってくる）か、CAPTURE_LEDGER_REPLAY_VIEWER_DIR に ui.js と sw.js のあるフォルダを指定してから、このページを読み直す",
		NoSource:     "一覧からアーカイブを開く。リプレイのリンクはそれぞれ、自分のアーカイブかコレクションをここで開く",
		BadSource:    "この viewer が開くのは、リンクが作られた対象のアーカイブかコレクションだけ。これは違う。一覧からもう一度開く",
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
{{if .Source}}<script src="/ui.js"></script>
<style>html, body { margin: 0; height: 100%; } replay-web-page { display: block; width: 100vw; height: 100vh; }</style>
{{else}}<style>body { font: 15px/1.5 system-ui, sans-serif; margin: 2rem auto; max-width: 50rem; padding: 0 1rem; color: #222; } code { background: #f4f4f4; padding: .1rem .3rem; }</style>
{{end}}</head>
<body>
{{if .Source}}<replay-web-page source="{{.Source}}" url="{{.URL}}"{{if .TS}} ts="{{.TS}}"{{end}} replaybase="/sw/" embed="default"></replay-web-page>
{{else}}<p id="message">{{.Message}}</p>
{{if .Install}}<p>{{.T.InstallHow}}</p>
<pre><code>{{.Install}}</code></pre>
{{end}}
{{end}}</body>
</html>
`))
