// Package viewer is everything a replay session's origin answers, and
// nothing else: the page that embeds the web archive viewer
// (ReplayWeb.page) around the session's source, the viewer's files, its
// frame before the service worker runs, the archive reads and a
// collection's listing. Archived pages may carry hostile script, and they
// run here: so no caller identity, cookie or API token is read or held on
// this origin — a read's token (package replay) is its only credential,
// checked again on every read — and every answer carries the origin's
// policy (frame-ancestors, no CORS, no referrer). The API's origin mints
// the sessions (package api) and sends every request whose host is under
// the replay domain here; pkg/archtest keeps this package from importing
// the identity adapter.
package viewer

import (
	"encoding/json"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// DefaultTimeout bounds one request when Handler.Timeout is zero.
const DefaultTimeout = 60 * time.Second

// Config is where the replay origins are and what they serve. The API's
// origin mints its sessions from the same Config (api.Replay); the handler
// reads it on every request, so it holds what the server was last given.
type Config struct {
	Service *replay.Service
	// ViewerDir holds ReplayWeb.page's ui.js and sw.js; without them the
	// viewer says how to install them.
	ViewerDir string
	// Origins is where sessions are served (CAPTURE_LEDGER_REPLAY_DOMAIN);
	// links are built from it, never from a request's Host, and a
	// request's label is read from its Host by Origins.Match.
	Origins replay.Origins
	// KeepCookies, when the API's origin shares the replay origins' site
	// (Origins.SharesCookiesWith), stops the viewer page from clearing
	// that site's cookies, which would clear the console's too.
	KeepCookies bool
}

// Handler answers the replay origins.
type Handler struct {
	*Config
	// Fail answers a refusal or a failure: the API's one table from errors
	// to status codes (404 for any refusal, 503 when a dependency does not
	// answer, …), so that the two origins answer alike. A bad request
	// reaches it as a *ledger.FieldError naming the place
	// ("params/name", "querystring/source"), to be answered 400.
	Fail func(w http.ResponseWriter, r *http.Request, err error)
	// Log receives the warnings of reads (nil discards them).
	Log *slog.Logger
	// Timeout bounds one request (DefaultTimeout when zero).
	Timeout time.Duration

	mux *http.ServeMux
}

// New returns the handler of the replay origins, its routes registered.
func New(h Handler) *Handler {
	v := &h
	if v.Timeout <= 0 {
		v.Timeout = DefaultTimeout
	}
	if v.Log == nil {
		v.Log = slog.New(slog.DiscardHandler)
	}
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", v.viewerPage)
	m.HandleFunc("GET /ui.js", v.viewerFile("ui.js"))
	// The service worker's scope is the folder it is served from: the
	// viewer's replaybase, below the page that embeds it.
	m.HandleFunc("GET /sw/sw.js", v.viewerFile("sw.js"))
	m.HandleFunc("GET /sw/ui.js", v.viewerFile("ui.js"))
	m.HandleFunc("GET /sw/{$}", v.viewerFrameBeforeWorker)
	// A GET pattern serves HEAD too.
	m.HandleFunc("GET /wacz/{name}", v.replayRead)
	m.HandleFunc("GET /collection.json", v.collectionListing)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		originHeaders(w, "'none'")
		v.Fail(w, r, ledger.ErrNotFound)
	})
	v.mux = m
	return v
}

// ServeHTTP answers a request whose host is under the replay domain: a
// session's origin gets its routes (any other path is a 404), a name
// under the domain that is no session's origin the same 404.
func (v *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := v.Origins.Match(r.Host); !ok {
		originHeaders(w, "'none'")
		v.Fail(w, r, ledger.ErrNotFound)
		return
	}
	v.mux.ServeHTTP(w, r)
}

func (v *Handler) logger() *slog.Logger { return v.Log }

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// originCSP is the policy of what the replay origin itself serves: the
// viewer's page and files, and nothing reaches past the origin. The
// service worker gets it too (a worker's policy comes with its script),
// so neither it nor a page that escaped the viewer's rewriting can fetch
// from anywhere else — another server's archive included.
const originCSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'"

// originHeaders are on every answer of a session's origin: its
// policy with frame-ancestors (who may embed it), no sniffing, no
// referrer (addresses carry tokens). No answer grants CORS.
func originHeaders(w http.ResponseWriter, ancestors string) {
	h := w.Header()
	h.Set("Content-Security-Policy", originCSP+"; frame-ancestors "+ancestors)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// tsPattern is a ReplayWeb.page timestamp (up to 14 digits, or 17 with ms).
var tsPattern = regexp.MustCompile(`^[0-9]{1,17}$`)

// sessionSource says whether source is the one thing the session labelled
// label may open: its archive's read route or its collection's listing, on
// its own origin, with a token of that session that opens it. Anything
// else — another server, another session's route, a token of another
// origin — would let the viewer run someone else's archive here.
func (v *Handler) sessionSource(label, source string) bool {
	if label == "" || len(source) > 1024+replay.MaxTokenBytes*3 {
		return false
	}
	u, err := url.Parse(source)
	if err != nil || u.Scheme+"://"+u.Host != v.Origins.Origin(label) || u.User != nil || u.Fragment != "" {
		return false
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil || len(q) != 1 || len(q["t"]) != 1 {
		return false
	}
	c, err := v.Service.Verify(q["t"][0], label)
	if err != nil {
		return false
	}
	if u.Path == "/collection.json" {
		return c.Collection() && u.String() == v.Origins.Origin(label)+replay.CollectionPath(q["t"][0])
	}
	return !c.Collection() && !c.Download && u.String() == v.Origins.Origin(label)+replay.ReadPath(c.ArchiveID, q["t"][0])
}

// viewerPage is the page that embeds ReplayWeb.page around the session's
// source, at the root of the session's origin. It opens nothing but that
// source (sessionSource).
func (v *Handler) viewerPage(w http.ResponseWriter, r *http.Request) {
	lang := i18n.FromAcceptLanguage(strings.Join(r.Header.Values("Accept-Language"), ","))
	t := viewerTexts[lang]
	q := r.URL.Query()
	d := viewerData{Lang: lang.String(), T: t, URL: "page:0"}
	status := http.StatusOK
	switch {
	case !v.viewerInstalled():
		status, d.Message, d.Install = http.StatusServiceUnavailable, t.NotInstalled, "make replay-viewer"
	case len(q["source"]) == 0:
		status, d.Message = http.StatusNotFound, t.NoSource
	case len(q["source"]) > 1 || !v.sessionSource(v.label(r), q["source"][0]) || len(q["url"]) > 1 || len(q["ts"]) > 1 ||
		(q.Get("ts") != "" && !tsPattern.MatchString(q.Get("ts"))) || len(q.Get("url")) > replay.MaxPageBytes:
		status, d.Message = http.StatusBadRequest, t.BadSource
	default:
		d.Source, d.TS = q["source"][0], q.Get("ts")
		if u := q.Get("url"); u != "" {
			d.URL = template.URL(u)
		}
	}
	h := w.Header()
	originHeaders(w, "'none'")
	if !v.KeepCookies {
		// Every session's origin is a name of one site, and a page may set
		// a cookie for the whole site: an archive replayed before (in
		// another session) may have planted cookies for this session's
		// pages to read as their own. A session starts with none.
		h.Set("Clear-Site-Data", `"cookies"`)
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Language", lang.String())
	h.Add("Vary", "Accept-Language")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if err := viewerTemplate.Execute(w, d); err != nil {
		v.logger().Error("viewer render failed", "error", err.Error())
	}
}

// viewerInstalled says whether ViewerDir holds the viewer's files.
func (v *Handler) viewerInstalled() bool { return replay.ViewerInstalled(v.ViewerDir) }

// viewerFile serves one of ReplayWeb.page's files, unmodified, with the
// replay origin's policy (the service worker's policy is the one its
// script comes with).
func (v *Handler) viewerFile(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		originHeaders(w, "'none'")
		if v.ViewerDir == "" {
			http.NotFound(w, r)
			return
		}
		f, err := os.Open(filepath.Join(v.ViewerDir, name))
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
func (v *Handler) viewerFrameBeforeWorker(w http.ResponseWriter, r *http.Request) {
	originHeaders(w, "'self'")
	w.Header().Set("Cache-Control", "no-store")
	if q := r.URL.Query(); len(q["source"]) != 1 || !v.sessionSource(v.label(r), q["source"][0]) {
		v.Fail(w, r, &ledger.FieldError{Field: "querystring/source", Reason: "must be this replay session's archive or collection"})
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
