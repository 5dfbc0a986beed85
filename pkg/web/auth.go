package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// Sign-in: the console runs OpenID Connect's authorization-code flow with
// PKCE (S256), state and nonce against CAPTURE_LEDGER_OIDC_ISSUER:
//
//	POST /auth/sign-in   starts it (CSRF-checked), 303 to the issuer
//	GET  /auth/callback  takes the code back, checks state (bound to this
//	                     browser's sign-in cookie), exchanges the code with
//	                     the verifier, verifies the ID token (issuer,
//	                     audience = client id, nonce, expiry) and opens a
//	                     session
//	POST /auth/sign-out  ends the session server-side (CSRF-checked)
//
// The session is identity.SessionResolver's: a cookie holding a random
// secret, the ledger keeping its hash with the ID token's subject and
// organizations until the token's expiry.

// AuthConfig is the OIDC client's settings.
type AuthConfig struct {
	Issuer, ClientID, ClientSecret string
	// RedirectURL is where the issuer sends the browser back
	// (…/auth/callback on the API's origin).
	RedirectURL string
	Sessions    *identity.SessionResolver
	// HTTPClient talks to the issuer (nil: 10 s timeout).
	HTTPClient *http.Client
	// Now is the clock of ID token expiry and sessions (nil: time.Now).
	Now func() time.Time
}

// Auth is the console's OIDC client.
type Auth struct {
	cfg AuthConfig

	mu       sync.Mutex
	provider *oidc.Provider
}

// NewAuth returns the client; the issuer is asked for its endpoints at the
// first sign-in (and again until it answers).
func NewAuth(cfg AuthConfig) *Auth {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Auth{cfg: cfg}
}

func (a *Auth) cookies() identity.Cookies { return a.cfg.Sessions.Cookies }

// discover reads the issuer's discovery document once it answers.
func (a *Auth) discover(ctx context.Context) (*oidc.Provider, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.provider != nil {
		return a.provider, nil
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, a.cfg.HTTPClient), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, a.cfg.Issuer)
	if err != nil {
		return nil, err
	}
	a.provider = p
	return p, nil
}

func (a *Auth) oauth(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: a.cfg.ClientID, ClientSecret: a.cfg.ClientSecret, RedirectURL: a.cfg.RedirectURL,
		Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID}}
}

// FormOrigin is the origin of the issuer, which the console's pages may
// send a form to (the sign-in's redirect goes there).
func (a *Auth) FormOrigin() string {
	u, err := url.Parse(a.cfg.Issuer)
	if err != nil || u.Host == "" {
		return ""
	}
	if a.provider != nil {
		if v, err := url.Parse(a.provider.Endpoint().AuthURL); err == nil && v.Host != "" && v.Host != u.Host {
			return u.Scheme + "://" + u.Host + " " + v.Scheme + "://" + v.Host
		}
	}
	return u.Scheme + "://" + u.Host
}

// Origins are the origins whose pages may change state here: the
// request's own and the public URL's.
func (a *Auth) Origins(r *http.Request) []string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	out := []string{scheme + "://" + r.Host}
	if pub := a.cookies().PublicURL; pub != "" {
		if u, err := url.Parse(pub); err == nil && u.Host != "" {
			out = append(out, u.Scheme+"://"+u.Host)
			if u.Scheme == "https" {
				out = append(out, "https://"+r.Host)
			}
		}
	}
	return out
}

// Guard is the CSRF check of every request serve answers: a
// state-changing request resolved by a cookie (no Authorization header)
// must come from this origin (Origin or Sec-Fetch-Site) and carry the CSRF
// token of its session — or, signed out, of its sign-in cookie. Requests
// with a Bearer token are not cookie-authenticated and pass, except on
// sign-in and sign-out, which act on the cookies whatever else is sent.
func (a *Auth) Guard(r *http.Request) error {
	if identity.Safe(r.Method) || (!a.cfg.Sessions.CookieAuthenticated(r) && !strings.HasPrefix(r.URL.Path, "/auth/")) {
		return nil
	}
	if err := identity.CheckOrigin(r, a.Origins(r)...); err != nil {
		return err
	}
	secret, ok := a.cookies().Read(r, identity.SessionCookie)
	if !ok {
		secret, ok = a.cookies().Read(r, identity.SignInCookie)
	}
	if !ok {
		return &identity.CSRFError{Reason: "refused: this browser's session cookie is not one this server made; reload the page and sign in again"}
	}
	return identity.CheckToken(r, secret)
}

// pageIdentity is what a page shows of its session: who is signed in and
// the CSRF token its forms and scripts send. Signed out, the token is the
// sign-in cookie's (set here when the browser has none).
func (a *Auth) pageIdentity(w http.ResponseWriter, r *http.Request) (*identity.Identity, string) {
	if id, secret, ok := a.cfg.Sessions.Session(r); ok {
		return &id, identity.CSRFToken(secret)
	}
	pre, ok := a.cookies().Read(r, identity.SignInCookie)
	if !ok {
		pre = identity.NewSecret()
		a.cookies().Set(w, r, identity.SignInCookie, pre, 0, http.SameSiteLaxMode)
	}
	return nil, identity.CSRFToken(pre)
}

// returnPath keeps a console path to come back to: a path of this origin
// ("/…", not "//…" nor the sign-in's own), printable ASCII, at most 512
// bytes; "/" otherwise.
func returnPath(p string) string {
	if p == "" || len(p) > 512 || p[0] != '/' || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.HasPrefix(p, "/auth/") {
		return "/"
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x21 || p[i] > 0x7e || p[i] == '\\' {
			return "/"
		}
	}
	return p
}

// signIn starts the flow: a fresh sign-in cookie binds it to this
// browser; state, nonce and the PKCE verifier wait in the ledger.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	a := c.Auth
	p, err := a.discover(r.Context())
	if err != nil {
		c.log().Warn("OIDC issuer unreachable", "issuer", a.cfg.Issuer, "error", err.Error())
		c.authPage(w, r, http.StatusServiceUnavailable, "issuerDown", "")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	ret := "/"
	if err := r.ParseForm(); err == nil {
		ret = returnPath(r.PostForm.Get("return"))
	}
	browser, state, nonce, verifier := identity.NewSecret(), identity.NewSecret(), identity.NewSecret(), oauth2.GenerateVerifier()
	now := a.cfg.Now()
	if err := a.cfg.Sessions.Store.BeginSignIn(r.Context(), identity.PendingSignIn{StateHash: identity.Hash(state), BrowserHash: identity.Hash(browser),
		Nonce: nonce, Verifier: verifier, ReturnTo: ret, Expires: now.Add(identity.SignInLifetime)}); err != nil {
		c.log().Error("sign-in could not be stored", "error", err.Error())
		c.authPage(w, r, http.StatusServiceUnavailable, "storeDown", "")
		return
	}
	a.cookies().Set(w, r, identity.SignInCookie, browser, int(identity.SignInLifetime.Seconds()), http.SameSiteLaxMode)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, a.oauth(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), http.StatusSeeOther)
}

// Callback is the query the issuer sends the browser back with.
type Callback struct {
	Code, State string
	// Error is the issuer's error code (access_denied, …), when it sent
	// one instead of a code.
	Error string
}

// maxCallbackValue bounds the code and state.
const maxCallbackValue = 2048

// ParseCallback reads the callback's query: code and state once each
// (or error once), printable ASCII, bounded. Anything else is an error
// naming the parameter.
func ParseCallback(rawQuery string) (Callback, error) {
	if len(rawQuery) > 3*maxCallbackValue {
		return Callback{}, errors.New("the query is too long")
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return Callback{}, errors.New("the query is not valid")
	}
	one := func(name string) (string, error) {
		vs := q[name]
		if len(vs) == 0 {
			return "", nil
		}
		if len(vs) > 1 {
			return "", fmt.Errorf("%s must be given once", name)
		}
		v := vs[0]
		if len(v) > maxCallbackValue {
			return "", fmt.Errorf("%s is too long", name)
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				return "", fmt.Errorf("%s must be printable ASCII", name)
			}
		}
		return v, nil
	}
	var cb Callback
	if cb.Error, err = one("error"); err != nil {
		return Callback{}, err
	}
	if cb.State, err = one("state"); err != nil {
		return Callback{}, err
	}
	if cb.Error != "" {
		return cb, nil
	}
	if cb.Code, err = one("code"); err != nil {
		return Callback{}, err
	}
	if cb.Code == "" {
		return Callback{}, errors.New("code is required")
	}
	if cb.State == "" {
		return Callback{}, errors.New("state is required")
	}
	return cb, nil
}

// refusal is why a callback is refused (logged; the page says less).
type refusal struct {
	status   int
	key, why string
}

// callback finishes the flow and opens the session.
func (c *Console) callback(w http.ResponseWriter, r *http.Request) {
	a := c.Auth
	id, ret, rf := c.finish(r)
	// The sign-in cookie has done its work either way.
	a.cookies().Clear(w, r, identity.SignInCookie)
	if rf != nil {
		c.log().Info("sign-in refused", "reason", rf.why)
		c.authPage(w, r, rf.status, rf.key, "")
		return
	}
	secret := identity.NewSecret()
	if err := a.cfg.Sessions.Store.CreateSession(r.Context(), identity.Hash(secret), id, id.Expires); err != nil {
		c.log().Error("session could not be stored", "error", err.Error())
		c.authPage(w, r, http.StatusServiceUnavailable, "storeDown", "")
		return
	}
	a.cookies().Set(w, r, identity.SessionCookie, secret, int(time.Until(id.Expires).Seconds()), http.SameSiteStrictMode)
	// A page, not a redirect: the browser came here from the issuer's
	// site, and a redirect would carry that on, so the SameSite=Strict
	// session cookie would not go with it. The page's refresh is a
	// navigation of this origin.
	c.authPage(w, r, http.StatusOK, "signedIn", ret)
}

func (c *Console) finish(r *http.Request) (identity.Identity, string, *refusal) {
	a := c.Auth
	cb, err := ParseCallback(r.URL.RawQuery)
	if err != nil {
		return identity.Identity{}, "", &refusal{http.StatusBadRequest, "badCallback", err.Error()}
	}
	if cb.State == "" {
		return identity.Identity{}, "", &refusal{http.StatusBadRequest, "badCallback", "no state"}
	}
	// Taken once: a replayed callback finds nothing.
	pending, ok, err := a.cfg.Sessions.Store.TakeSignIn(r.Context(), identity.Hash(cb.State))
	if err != nil {
		return identity.Identity{}, "", &refusal{http.StatusServiceUnavailable, "storeDown", err.Error()}
	}
	browser, hasCookie := a.cookies().Read(r, identity.SignInCookie)
	now := a.cfg.Now()
	switch {
	case !ok:
		return identity.Identity{}, "", &refusal{http.StatusForbidden, "stateMismatch", "state unknown or used"}
	case !hasCookie || string(identity.Hash(browser)) != string(pending.BrowserHash):
		return identity.Identity{}, "", &refusal{http.StatusForbidden, "stateMismatch", "state of another browser"}
	case !now.Before(pending.Expires):
		return identity.Identity{}, "", &refusal{http.StatusForbidden, "stateMismatch", "sign-in took too long"}
	case cb.Error != "":
		return identity.Identity{}, "", &refusal{http.StatusForbidden, "issuerRefused", "issuer answered " + cb.Error}
	}
	p, err := a.discover(r.Context())
	if err != nil {
		return identity.Identity{}, "", &refusal{http.StatusServiceUnavailable, "issuerDown", err.Error()}
	}
	ctx := oidc.ClientContext(r.Context(), a.cfg.HTTPClient)
	tok, err := a.oauth(p).Exchange(ctx, cb.Code, oauth2.VerifierOption(pending.Verifier))
	if err != nil {
		return identity.Identity{}, "", &refusal{http.StatusForbidden, "exchangeRefused", "code exchange: " + err.Error()}
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return identity.Identity{}, "", &refusal{http.StatusForbidden, "exchangeRefused", "no ID token"}
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: a.cfg.ClientID, Now: a.cfg.Now}).Verify(ctx, raw)
	if err != nil {
		return identity.Identity{}, "", &refusal{http.StatusForbidden, "tokenRefused", "ID token: " + err.Error()}
	}
	if idt.Nonce != pending.Nonce {
		return identity.Identity{}, "", &refusal{http.StatusForbidden, "tokenRefused", "ID token: nonce is not this sign-in's"}
	}
	var claims map[string]json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return identity.Identity{}, "", &refusal{http.StatusForbidden, "tokenRefused", "ID token claims"}
	}
	id := identity.Identity{Subject: idt.Subject, Organizations: identity.OrganizationsFromClaim(claims[identity.OrganizationsClaim]), Expires: idt.Expiry}
	if strings.TrimSpace(id.Subject) == "" || identity.CheckIdentity(id) != nil {
		return identity.Identity{}, "", &refusal{http.StatusForbidden, "tokenRefused", "ID token: subject or organizations break the id rules"}
	}
	// A session lasts no longer than its token, nor than any token may.
	if limit := now.Add(identity.MaxTokenLifetime); id.Expires.After(limit) {
		id.Expires = limit
	}
	return id, pending.ReturnTo, nil
}

// signOut ends the session in the ledger and in the browser.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	a := c.Auth
	if secret, ok := a.cookies().Read(r, identity.SessionCookie); ok {
		if err := a.cfg.Sessions.Store.EndSession(r.Context(), identity.Hash(secret), a.cfg.Now()); err != nil {
			c.log().Error("session could not be ended", "error", err.Error())
			c.authPage(w, r, http.StatusServiceUnavailable, "storeDown", "")
			return
		}
	}
	a.cookies().Clear(w, r, identity.SessionCookie)
	c.authPage(w, r, http.StatusOK, "signedOut", "")
}

// authScreen is the page of sign-in's and sign-out's outcomes (no route of
// its own; its texts are common).
var authScreen = screen{Name: "auth", Title: "authTitle"}

// authPage answers an outcome of the flow: the sentence of key, and, when
// refresh is set, on to that console path.
func (c *Console) authPage(w http.ResponseWriter, r *http.Request, status int, key, refresh string) {
	c.render(w, r, authScreen, status, func(p *page) {
		p.Message, p.Refresh = key, refresh
		if key == "signedOut" {
			// The session just ended: the page shows the signed-out
			// header whatever the request carried.
			p.Me = nil
		}
	})
}

func init() {
	addCommon(texts{
		"signIn":       {"Sign in", "サインイン"},
		"signOut":      {"Sign out", "サインアウト"},
		"signedInAs":   {"Signed in as", "サインイン中:"},
		"signInFirst":  {"Sign in first (above).", "先にサインインしてください（上）。"},
		"signInPrompt": {"Sign in with your organization's account to see and capture archives.", "アーカイブの閲覧と取得には、組織のアカウントでサインインしてください。"},
		"authTitle":    {"Sign in", "サインイン"},
		"continue":     {"Continue", "続ける"},
		"backHome":     {"Back to the console", "コンソールに戻る"},
		"signedIn":     {"You are signed in.", "サインインしました。"},
		"signedOut":    {"You are signed out: this browser's session has ended on the server.", "サインアウトしました。このブラウザーのセッションはサーバーで終了しました。"},
		"issuerDown":   {"The sign-in service (the OIDC issuer) did not answer. Try again in a moment.", "サインインのサービス（OIDC 発行者）が応答しませんでした。しばらくしてから再試行してください。"},
		"storeDown":    {"The server could not keep the session just now. Try again in a moment.", "サーバーがセッションを保存できませんでした。しばらくしてから再試行してください。"},
		"badCallback":  {"The sign-in answer was not understood. Start again with Sign in.", "サインインの応答を解釈できませんでした。「サインイン」からやり直してください。"},
		"stateMismatch": {"This sign-in was not started by this browser, was already used, or took too long. Start again with Sign in.",
			"このサインインはこのブラウザーで開始されていないか、使用済みか、時間切れです。「サインイン」からやり直してください。"},
		"issuerRefused":   {"The sign-in service refused the sign-in.", "サインインのサービスがサインインを拒否しました。"},
		"exchangeRefused": {"The sign-in service did not confirm this sign-in. Start again with Sign in.", "サインインのサービスがこのサインインを確認しませんでした。「サインイン」からやり直してください。"},
		"tokenRefused":    {"The sign-in service's answer failed verification (signature, audience, nonce or expiry). Start again with Sign in.", "サインインのサービスの応答が検証に失敗しました（署名、対象、nonce、有効期限）。「サインイン」からやり直してください。"},
	})
}
