package web_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/web"
)

// devIssuer runs `ledgerctl dev issuer`'s handler on a free loopback port
// for the test.
func devIssuer(t *testing.T) *identity.Issuer {
	t.Helper()
	ln, err := identity.ListenLoopback("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	iss, err := identity.NewIssuer("http://"+ln.Addr().String(), "")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: iss.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return iss
}

// authSite is the API's handler (api.Server: /api/me, the console's
// sign-in routes and its CSRF guard) with sessions in a real PostgreSQL,
// signing in at a real dev issuer, on a free loopback port. now is the
// console's clock (ID token expiry).
type authSite struct {
	URL    string
	Issuer *identity.Issuer
	Store  identity.SessionStore
	API    *api.Server
}

func newAuthSite(t *testing.T, now func() time.Time) *authSite {
	t.Helper()
	iss := devIssuer(t)
	a := app.New(config.Settings{DatabaseURL: testenv.Database(t)}, nil)
	t.Cleanup(a.Close)
	store, err := a.SessionStore(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	sessions := &identity.SessionResolver{Bearer: identity.NewJWT(identity.JWTConfig{Issuer: iss.Issuer()}), Store: store}
	auth := web.NewAuth(web.AuthConfig{Issuer: iss.Issuer(), ClientID: "console-test", RedirectURL: base + "/auth/callback", Sessions: sessions, Now: now})
	s := &api.Server{Identity: sessions, CSRF: auth.Guard,
		Pages: &web.Console{Config: web.Config{Who: web.WhoSignIn, Host: "127.0.0.1"}, Auth: auth}}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &authSite{URL: base, Issuer: iss, Store: store, API: s}
}

// browser is a cookie-keeping client that does not follow redirects.
type browser struct {
	*http.Client
	t *testing.T
}

func newBrowser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{Client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}, t: t}
}

func (b *browser) do(method, u, origin string, form url.Values, headers ...string) (*http.Response, string) {
	b.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := b.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res, string(data)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// begin opens the sign-in page and presses Sign in: the issuer's
// authorize URL the console sent the browser to.
func (s *authSite) begin(t *testing.T, b *browser) *url.URL {
	t.Helper()
	res, body := b.do("GET", s.URL+"/auth/sign-in", "", nil)
	m := csrfField.FindStringSubmatch(body)
	if res.StatusCode != 200 || m == nil {
		t.Fatalf("sign-in page: %d %s", res.StatusCode, body)
	}
	res, body = b.do("POST", s.URL+"/auth/sign-in", s.URL, url.Values{"csrf": {m[1]}, "return": {"/"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %d %s", res.StatusCode, body)
	}
	u, err := url.Parse(res.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(u.String(), s.Issuer.Issuer()+"/authorize?") {
		t.Fatalf("sign in went to %q", res.Header.Get("Location"))
	}
	return u
}

// authorize chooses subject and orgs at the issuer's page for the
// authorize URL u: the callback URL the issuer sends the browser back to.
func (s *authSite) authorize(t *testing.T, b *browser, u *url.URL, subject, orgs string) *url.URL {
	t.Helper()
	form := u.Query()
	form.Set("subject", subject)
	form.Set("organizations", orgs)
	res, body := b.do("POST", s.Issuer.Issuer()+"/authorize", s.Issuer.Issuer(), form)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("issuer: %d %s", res.StatusCode, body)
	}
	cb, err := url.Parse(res.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(cb.String(), s.URL+"/auth/callback?") {
		t.Fatalf("issuer sent the browser to %q", res.Header.Get("Location"))
	}
	return cb
}

// me is GET /api/me as b: its status and body.
func (s *authSite) me(b *browser) (int, string) {
	res, body := b.do("GET", s.URL+"/api/me", "", nil)
	return res.StatusCode, body
}

func sessionCookie(t *testing.T, res *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range res.Cookies() {
		if c.Name == identity.SessionCookie && c.Value != "" {
			return c
		}
	}
	return nil
}

// TestSignInFlowWithoutBrowser: the whole flow with a plain HTTP client —
// the session cookie's attributes, /api/me as the ID token's subject and
// organizations, the CSRF token of the page, and sign-out ending the
// session on the server (the cookie, replayed, no longer works).
func TestSignInFlowWithoutBrowser(t *testing.T) {
	t.Parallel()
	s := newAuthSite(t, nil)
	b := newBrowser(t)
	cb := s.authorize(t, b, s.begin(t, b), "alice", "acme,beta")
	res, body := b.do("GET", cb.String(), "", nil)
	if res.StatusCode != 200 || !strings.Contains(body, `http-equiv="refresh" content="0; url=/"`) {
		t.Fatalf("callback: %d %s", res.StatusCode, body)
	}
	c := sessionCookie(t, res)
	if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure || c.Domain != "" || c.MaxAge <= 0 || c.MaxAge > 3600 {
		t.Fatalf("session cookie %+v (raw %q)", c, res.Header.Values("Set-Cookie"))
	}
	if status, me := s.me(b); status != 200 || !strings.Contains(me, `"subject":"alice"`) || !strings.Contains(me, `"organizations":["acme","beta"]`) {
		t.Fatalf("/api/me: %d %s", status, me)
	}
	// A signed-in page carries the session's CSRF token in its head.
	_, page := b.do("GET", s.URL+"/auth/sign-in", "", nil)
	meta := regexp.MustCompile(`<meta name="csrf-token" content="([^"]+)">`).FindStringSubmatch(page)
	if meta == nil || meta[1] != identity.CSRFToken(c.Value) || !strings.Contains(page, `id="me-subject">alice<`) {
		t.Fatalf("signed-in page: %s", page)
	}
	// Sign-out without the token or from elsewhere is refused, and the
	// session lives on.
	if res, body := b.do("POST", s.URL+"/auth/sign-out", s.URL, url.Values{}); res.StatusCode != 403 || !strings.Contains(body, "CSRF token") {
		t.Fatalf("sign-out without token: %d %s", res.StatusCode, body)
	}
	if res, body := b.do("POST", s.URL+"/auth/sign-out", "http://127.0.0.1:1", url.Values{"csrf": {meta[1]}}); res.StatusCode != 403 || !strings.Contains(body, "another site") {
		t.Fatalf("sign-out from another origin: %d %s", res.StatusCode, body)
	}
	if status, _ := s.me(b); status != 200 {
		t.Fatalf("refused sign-outs ended the session: %d", status)
	}
	res, body = b.do("POST", s.URL+"/auth/sign-out", s.URL, url.Values{"csrf": {meta[1]}})
	if res.StatusCode != 200 || !strings.Contains(body, "signed out") {
		t.Fatalf("sign-out: %d %s", res.StatusCode, body)
	}
	if status, _ := s.me(b); status != 401 {
		t.Fatalf("after sign-out: %d", status)
	}
	// The old cookie, replayed by hand, opens nothing.
	replay := newBrowser(t)
	res, body = replay.do("GET", s.URL+"/api/me", "", nil, "Cookie", identity.SessionCookie+"="+c.Value)
	if res.StatusCode != 401 {
		t.Fatalf("replayed cookie after sign-out: %d %s", res.StatusCode, body)
	}
	// Bearer tokens keep working beside the sessions.
	tok, err := s.Issuer.Mint("carol", []string{"acme"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if res, body := replay.do("GET", s.URL+"/api/me", "", nil, "Authorization", "Bearer "+tok); res.StatusCode != 200 || !strings.Contains(body, `"subject":"carol"`) {
		t.Fatalf("Bearer: %d %s", res.StatusCode, body)
	}
}

// TestCallbackRefusals: a callback is refused (403, no session) when its
// state is not this browser's sign-in, was used already, when the code was
// issued for another PKCE challenge, when the ID token's nonce is not the
// sign-in's, and when the ID token has expired.
func TestCallbackRefusals(t *testing.T) {
	t.Parallel()
	s := newAuthSite(t, nil)
	later := newAuthSite(t, func() time.Time { return time.Now().Add(2 * time.Hour) })

	const (
		stateWords = "was not started by this browser"
		pkceWords  = "did not confirm this sign-in"
		tokenWords = "failed verification"
		badWords   = "was not understood"
	)
	refused := func(name string, site *authSite, b *browser, cb *url.URL, want int, words string) {
		t.Helper()
		res, body := b.do("GET", cb.String(), "", nil)
		if res.StatusCode != want || sessionCookie(t, res) != nil || !strings.Contains(body, words) {
			t.Errorf("%s: %d (want %d) %.300s", name, res.StatusCode, want, body)
		}
		if status, _ := site.me(b); status != 401 {
			t.Errorf("%s: /api/me answers %d", name, status)
		}
	}
	tamper := func(u *url.URL, k, v string) *url.URL {
		q := u.Query()
		q.Set(k, v)
		c := *u
		c.RawQuery = q.Encode()
		return &c
	}

	// State mismatch: a state this browser did not start.
	b := newBrowser(t)
	refused("state changed", s, b, tamper(s.authorize(t, b, s.begin(t, b), "alice", "acme"), "state", identity.NewSecret()), 403, stateWords)

	// State of another browser: the attacker's own sign-in, finished in
	// the victim's browser (login CSRF).
	attacker, victim := newBrowser(t), newBrowser(t)
	cb := s.authorize(t, attacker, s.begin(t, attacker), "mallory", "evil")
	s.begin(t, victim) // the victim has a sign-in cookie of its own
	refused("another browser's state", s, victim, cb, 403, stateWords)

	// A callback used twice: the second finds nothing.
	b = newBrowser(t)
	cb = s.authorize(t, b, s.begin(t, b), "alice", "acme")
	if res, _ := b.do("GET", cb.String(), "", nil); res.StatusCode != 200 {
		t.Fatalf("first callback: %d", res.StatusCode)
	}
	b2 := newBrowser(t)
	s.begin(t, b2)
	refused("replayed callback", s, b2, cb, 403, stateWords)

	// PKCE: the code was issued for a challenge whose verifier the
	// console does not hold.
	b = newBrowser(t)
	u := tamper(s.begin(t, b), "code_challenge", identity.S256(strings.Repeat("x", 43)))
	refused("verifier mismatch", s, b, s.authorize(t, b, u, "alice", "acme"), 403, pkceWords)

	// Nonce: the ID token carries another nonce.
	b = newBrowser(t)
	u = tamper(s.begin(t, b), "nonce", "not-the-sign-ins")
	refused("nonce mismatch", s, b, s.authorize(t, b, u, "alice", "acme"), 403, tokenWords)

	// Expiry: the console's clock is two hours on; the one-hour ID token
	// has expired.
	b = newBrowser(t)
	refused("expired ID token", later, b, later.authorize(t, b, later.begin(t, b), "alice", "acme"), 403, tokenWords)

	// The issuer's own refusal, and malformed queries.
	b = newBrowser(t)
	u = s.begin(t, b)
	refused("issuer error", s, b, &url.URL{Scheme: "http", Host: strings.TrimPrefix(s.URL, "http://"), Path: "/auth/callback",
		RawQuery: url.Values{"error": {"access_denied"}, "state": {u.Query().Get("state")}}.Encode()}, 403, "refused the sign-in")
	for _, q := range []string{"", "code=x", "state=x", "code=a&code=b&state=x", "code=%00&state=x", "code=x&state=%zz"} {
		refused("query "+q, s, b, &url.URL{Scheme: "http", Host: strings.TrimPrefix(s.URL, "http://"), Path: "/auth/callback", RawQuery: q}, 400, badWords)
	}
}

// TestSessionCookieSecurity: off loopback, or with an https public URL,
// the session cookie is Secure with the __Host- prefix; on loopback over
// plain HTTP it cannot be Secure (the browser would drop it) and keeps
// its plain name. Either way it is HttpOnly, SameSite=Strict, Path=/.
func TestSessionCookieSecurity(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host, public string
		secure       bool
	}{
		{"127.0.0.1:7070", "", false},
		{"localhost:7070", "", false},
		{"[::1]:7070", "", false},
		{"archive.example.org", "", true},
		{"127.0.0.1:7070", "https://archive.example.org", true},
		{"10.0.0.5:7070", "", true},
	} {
		r, _ := http.NewRequest("GET", "http://"+tc.host+"/", nil)
		r.Host = tc.host
		w := &headerRecorder{h: http.Header{}}
		c := identity.Cookies{PublicURL: tc.public}
		c.Set(w, r, identity.SessionCookie, identity.NewSecret(), 600, http.SameSiteStrictMode)
		raw := w.h.Get("Set-Cookie")
		wantName := identity.SessionCookie + "="
		if tc.secure {
			wantName = "__Host-" + wantName
		}
		if !strings.HasPrefix(raw, wantName) || !strings.Contains(raw, "HttpOnly") || !strings.Contains(raw, "SameSite=Strict") ||
			!strings.Contains(raw, "Path=/") || strings.Contains(raw, "Domain=") || strings.Contains(raw, "Secure") != tc.secure {
			t.Errorf("%s %s: %s", tc.host, tc.public, raw)
		}
	}
}

type headerRecorder struct{ h http.Header }

func (r *headerRecorder) Header() http.Header         { return r.h }
func (r *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *headerRecorder) WriteHeader(int)             {}

// TestCSRFOnEveryStateChangingRoute: every route serve answers on the
// API's origin whose method changes state — listed from its mux, so a new
// route cannot be forgotten — refuses a request carrying a live session
// cookie (403 with a sentence, before anything else) when it comes from
// another origin, says cross-site, says nothing of where it comes from, or
// lacks the session's token; the same request with a Bearer token is not
// cookie-authenticated and is not refused for CSRF.
func TestCSRFOnEveryStateChangingRoute(t *testing.T) {
	t.Parallel()
	srv := startSignInServe(t)
	b := newBrowser(t)
	site := &authSite{URL: srv.URL, Issuer: srv.Issuer}
	cb := site.authorize(t, b, site.begin(t, b), "alice", "acme")
	res, _ := b.do("GET", cb.String(), "", nil)
	c := sessionCookie(t, res)
	if c == nil {
		t.Fatal("no session")
	}
	token := identity.CSRFToken(c.Value)
	routes := unsafeRoutes(srv.Server.Routes())
	if len(routes) < 5 {
		t.Fatalf("only %d state-changing routes found: %v", len(routes), srv.Server.Routes())
	}
	bearer, err := srv.Issuer.Mint("alice", []string{"acme"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range routes {
		for name, h := range map[string][]string{
			"other origin":          {"Origin", "http://127.0.0.1:1", identity.CSRFHeader, token},
			"other site":            {"Sec-Fetch-Site", "cross-site", identity.CSRFHeader, token},
			"same site, other port": {"Sec-Fetch-Site", "same-site", identity.CSRFHeader, token},
			"null origin":           {"Origin", "null", identity.CSRFHeader, token},
			"no origin":             {identity.CSRFHeader, token},
			"no token":              {"Origin", srv.URL},
			"wrong token":           {"Origin", srv.URL, identity.CSRFHeader, identity.CSRFToken(identity.NewSecret())},
		} {
			res, body := b.do(rt.method, srv.URL+rt.path, "", url.Values{"csrf": {"x"}}, h...)
			if res.StatusCode != 403 || !strings.Contains(body, "refused") {
				t.Errorf("%s %s (%s): %d %.200s", rt.method, rt.path, name, res.StatusCode, body)
			}
		}
		// Bearer: not a cookie request; whatever the route answers, it
		// is not the CSRF refusal (sign-in and sign-out act on cookies:
		// checked whatever else is sent).
		if strings.HasPrefix(rt.path, "/auth/") {
			continue
		}
		res, body := b.do(rt.method, srv.URL+rt.path, "http://127.0.0.1:1", nil, "Authorization", "Bearer "+bearer, "Content-Type", "application/json")
		if res.StatusCode == 403 && strings.Contains(body, "refused") {
			t.Errorf("%s %s with Bearer: %d %s", rt.method, rt.path, res.StatusCode, body)
		}
	}
	// The session survived every refused request (sign-out among them).
	if status, body := site.me(b); status != 200 {
		t.Fatalf("session after the attacks: %d %s", status, body)
	}
}

type route struct{ method, path string }

// unsafeRoutes are the patterns whose method changes state (or that take
// every method), with their wildcards filled in.
func unsafeRoutes(patterns []string) []route {
	wild := regexp.MustCompile(`\{[^}]*\}`)
	var out []route
	for _, p := range patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "POST", p
		}
		if identity.Safe(method) {
			continue
		}
		path = strings.ReplaceAll(path, "{$}", "")
		path = wild.ReplaceAllString(path, "00000000-0000-0000-0000-000000000001")
		out = append(out, route{method, path})
	}
	return out
}

// signInServe is a whole serve with the console's sign-in against a dev
// issuer.
type signInServe struct {
	*served
	Issuer *identity.Issuer
}

func startSignInServe(t *testing.T) *signInServe {
	t.Helper()
	iss := devIssuer(t)
	srv := startServe(t, func(s *config.Settings) {
		s.DevIdentity = false
		s.OIDCIssuer = iss.Issuer()
		s.OIDCClientID = "capture-ledger-console"
	})
	return &signInServe{served: srv, Issuer: iss}
}
