// Package web is the console `serve` offers at / on the API's origin: HTML
// pages (embedded templates) and their scripts and styles (embedded assets),
// in English and Japanese, with no build step.
//
// Pages carry no archive data: each page's script asks the JSON API for what
// it shows and for every action, so the console can do nothing its caller
// could not do with the API, and every action is checked there again. The
// pages and assets are the same for everyone; only the language and the
// identity form differ.
//
// A screen is one file of this package (its route, its texts in both
// languages, its script) plus templates/<name>.html and assets/<name>.js;
// screens register themselves (register) so each can be added or changed
// alone.
package web

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// Who is how the console identifies its caller to the API, decided on the
// server from the identity mode.
type Who string

// The identity forms the console shows.
const (
	// WhoNames asks for a subject and organizations (the dev identity's
	// headers; loopback only).
	WhoNames Who = "names"
	// WhoToken asks for a bearer token (JWT mode without sign-in).
	WhoToken Who = "token"
	// WhoNone: the API accepts nobody; the console says so.
	WhoNone Who = "none"
	// WhoSignIn offers "Sign in" (the OIDC flow, auth.go) and, signed
	// in, who it is and "Sign out".
	WhoSignIn Who = "oidc"
)

// Features says which parts of the API this serve answers, so the console
// offers only what works here.
type Features struct {
	Crawls, Search, Replay, Captures, Shares, Delete bool
}

// Config is what the console is built from.
type Config struct {
	Who    Who
	Issuer string // JWT mode: the issuer, named in the notice
	// Host and Port are where serve listens (the names form warns off
	// loopback).
	Host string
	Port int
	// Why asks the list for why each row is visible (GET /api/archives?why=1).
	Why      bool
	Features Features
}

// Console serves the pages and assets.
type Console struct {
	Config Config
	Log    *slog.Logger
	// Auth, with Config.Who WhoSignIn, serves sign-in and sign-out and
	// tells each page who is signed in.
	Auth *Auth

	all []screen
}

// Mux is where the console adds its routes (an *http.ServeMux, or the
// API's recording mux).
type Mux = interface {
	HandleFunc(pattern string, handler func(http.ResponseWriter, *http.Request))
}

// screen is one page of the console.
type screen struct {
	// Name names the template (templates/<Name>.html defines "main") and
	// the body's data-screen; the script assets/<Name>.js runs it, when
	// Script is set.
	Name string
	// Pattern is the route, e.g. "GET /crawls/{id}".
	Pattern string
	// Nav, when set, is the text key of the screen's entry in the
	// navigation, ordered by Order.
	Nav   string
	Order int
	// Href is the navigation link (the pattern's path when empty).
	Href string
	// Title is the text key of the page title.
	Title  string
	Script bool
	// Needs says the feature the screen needs; without it the route
	// answers 404 and the navigation leaves it out.
	Needs func(Features) bool
	// Text are the screen's texts (common texts are added to every page).
	Text texts
}

// Text is one text in both languages.
type Text struct{ En, Ja string }

type texts map[string]Text

var (
	registryMu sync.Mutex
	screens    []screen
	common     = texts{}
)

// register adds a screen; called from each screen file's init.
func register(s screen) {
	registryMu.Lock()
	defer registryMu.Unlock()
	screens = append(screens, s)
}

// addCommon adds texts every page carries.
func addCommon(t texts) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for k, v := range t {
		common[k] = v
	}
}

func (t texts) in(lang i18n.Lang) map[string]string {
	out := make(map[string]string, len(t))
	for k, v := range t {
		if lang == i18n.Japanese && v.Ja != "" {
			out[k] = v.Ja
		} else {
			out[k] = v.En
		}
	}
	return out
}

// navItem is one entry of the navigation.
type navItem struct {
	Href, Label string
	Current     bool
}

// page is what the templates see. html/template escapes every value by
// context; T holds the page's texts (the screen's and the common ones), and
// the page carries them as JSON for its script.
type page struct {
	Lang    string
	Other   string // the other language's tag, for the switch
	Screen  string
	Script  bool
	Title   string
	T       map[string]string
	Nav     []navItem
	Who     Who
	Config  Config
	Path    string
	Warn    string
	PathVal map[string]string
	// Me is who is signed in (sign-in mode); CSRF the token the page's
	// forms and scripts send (the layout's <meta name="csrf-token"> when
	// signed in, the sign-in form's field when not).
	Me   *identity.Identity
	CSRF string
	// Refresh, when set, sends the browser on to this path of the
	// console (sign-in and sign-out pages).
	Refresh string
	// Message is the text key an auth page shows.
	Message string
}

// Register adds the console's routes to mux and reports whether it serves
// "/" (the API's own page stays there otherwise).
func (c *Console) Register(mux Mux) (home bool) {
	registryMu.Lock()
	list := append([]screen(nil), screens...)
	registryMu.Unlock()
	sort.SliceStable(list, func(i, j int) bool { return list[i].Order < list[j].Order })
	c.all = list
	if c.Auth != nil && c.Config.Who == WhoSignIn {
		mux.HandleFunc("GET /auth/sign-in", func(w http.ResponseWriter, r *http.Request) { c.authPage(w, r, http.StatusOK, "signInPrompt", "") })
		mux.HandleFunc("POST /auth/sign-in", c.signIn)
		mux.HandleFunc("GET /auth/callback", c.callback)
		mux.HandleFunc("POST /auth/sign-out", c.signOut)
	}
	for _, s := range list {
		if s.Needs != nil && !s.Needs(c.Config.Features) {
			continue
		}
		mux.HandleFunc(s.Pattern, c.serveScreen(s, list))
		if s.Pattern == "GET /{$}" {
			home = true
		}
	}
	mux.HandleFunc("GET /assets/{name}", c.asset)
	return home
}

// Security headers of every console page: only the console's own scripts,
// styles and API; never framed (clickjacking); no referrer to the pages
// it links to. Forms go to this origin only — and, in sign-in mode, to the
// issuer the sign-in form's redirect leads to.
func (c *Console) pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	formAction := "'self'"
	if c.Auth != nil && c.Config.Who == WhoSignIn {
		if o := c.Auth.FormOrigin(); o != "" {
			formAction += " " + o
		}
	}
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action "+formAction+"; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// LangCookie remembers the language chosen with the switch.
const LangCookie = "capture-ledger-lang"

// Language is the reader's language: ?lang= (the switch; remembered in a
// cookie), else the cookie, else Accept-Language. English by default.
func Language(w http.ResponseWriter, r *http.Request) i18n.Lang {
	if q := r.URL.Query().Get("lang"); q == "en" || q == "ja" {
		if w != nil {
			http.SetCookie(w, &http.Cookie{Name: LangCookie, Value: q, Path: "/", MaxAge: 365 * 24 * 3600, SameSite: http.SameSiteLaxMode, HttpOnly: true})
		}
		return i18n.Lang(q)
	}
	if c, err := r.Cookie(LangCookie); err == nil && (c.Value == "en" || c.Value == "ja") {
		return i18n.Lang(c.Value)
	}
	return i18n.FromAcceptLanguage(strings.Join(r.Header.Values("Accept-Language"), ","))
}

var (
	parseOnce sync.Once
	parsed    map[string]*template.Template
	parseErr  error
)

// templateFor is the layout joined with a screen's template.
func templateFor(name string) (*template.Template, error) {
	parseOnce.Do(func() {
		parsed = map[string]*template.Template{}
		layout, err := template.New("layout.html").ParseFS(templateFS, "templates/layout.html", "templates/who.html")
		if err != nil {
			parseErr = err
			return
		}
		entries, err := fs.Glob(templateFS, "templates/*.html")
		if err != nil {
			parseErr = err
			return
		}
		for _, e := range entries {
			base := strings.TrimSuffix(path.Base(e), ".html")
			if base == "layout" || base == "who" {
				continue
			}
			t, err := template.Must(layout.Clone()).ParseFS(templateFS, e)
			if err != nil {
				parseErr = err
				return
			}
			parsed[base] = t
		}
	})
	if parseErr != nil {
		return nil, parseErr
	}
	t, ok := parsed[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return t, nil
}

func (c *Console) serveScreen(s screen, all []screen) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.render(w, r, s, http.StatusOK, func(p *page) {
			for _, key := range []string{"id"} {
				if v := r.PathValue(key); v != "" {
					p.PathVal[key] = v
				}
			}
		})
	}
}

// render writes screen s's page (the layout around templates/<s.Name>.html)
// with status; fill adds to what every page has.
func (c *Console) render(w http.ResponseWriter, r *http.Request, s screen, status int, fill func(*page)) {
	c.pageHeaders(w)
	lang := Language(w, r)
	t := common.in(lang)
	for k, v := range s.Text.in(lang) {
		t[k] = v
	}
	other := "ja"
	if lang == i18n.Japanese {
		other = "en"
	}
	p := page{Lang: lang.String(), Other: other, Screen: s.Name, Script: s.Script, Title: t[s.Title], T: t,
		Who: c.Config.Who, Config: c.Config, Path: r.URL.Path, PathVal: map[string]string{}}
	if c.Config.Who == WhoNames && !loopback(c.Config.Host) {
		p.Warn = t["warnNames"]
	}
	if c.Auth != nil && c.Config.Who == WhoSignIn {
		p.Me, p.CSRF = c.Auth.pageIdentity(w, r)
	}
	for _, o := range c.all {
		if o.Nav == "" || (o.Needs != nil && !o.Needs(c.Config.Features)) {
			continue
		}
		href := o.Href
		if href == "" {
			href = strings.TrimSuffix(strings.TrimPrefix(o.Pattern, "GET "), "{$}")
		}
		// A screen's label is its own text (or a common one), whichever
		// page shows the navigation.
		label := t[o.Nav]
		if own, ok := o.Text[o.Nav]; ok {
			label = texts{o.Nav: own}.in(lang)[o.Nav]
		}
		p.Nav = append(p.Nav, navItem{Href: href, Label: label, Current: o.Name == s.Name})
	}
	if fill != nil {
		fill(&p)
	}
	tpl, err := templateFor(s.Name)
	if err != nil {
		c.log().Error("console template missing", "screen", s.Name, "error", err.Error())
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := tpl.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		c.log().Error("console render failed", "screen", s.Name, "error", err.Error())
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", lang.String())
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Add("Vary", "Accept-Language, Cookie")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func loopback(host string) bool {
	h := strings.Trim(host, "[]")
	return h == "127.0.0.1" || h == "::1" || h == "localhost" || strings.HasPrefix(h, "127.")
}

var started = time.Now()

// asset serves assets/<name> (scripts, styles, images): only names the
// binary holds; nothing else of the file system is reachable.
func (c *Console) asset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if name == "" || strings.ContainsAny(name, "/\\") || strings.HasPrefix(name, ".") {
		http.NotFound(w, r)
		return
	}
	b, err := assetFS.ReadFile("assets/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	switch path.Ext(name) {
	case ".js":
		h.Set("Content-Type", "text/javascript; charset=utf-8")
	case ".css":
		h.Set("Content-Type", "text/css; charset=utf-8")
	case ".svg":
		h.Set("Content-Type", "image/svg+xml")
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	case ".png":
		h.Set("Content-Type", "image/png")
	case ".txt":
		h.Set("Content-Type", "text/plain; charset=utf-8")
	default:
		h.Set("Content-Type", "application/octet-stream")
	}
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, started, bytes.NewReader(b))
}

func (c *Console) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}
