package identity

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

// The dev issuer's authorization-code flow (OpenID Connect with PKCE):
// GET /authorize shows a small page where a person types any subject and
// organizations; POST /authorize answers with a redirect back to the
// client's redirect_uri carrying a one-time code; POST /token (form
// encoded, grant_type=authorization_code) exchanges the code and its PKCE
// verifier for an ID token (aud = the client id, with the nonce) and an
// access token the API takes as Bearer. It is as trusting as the rest of
// the dev issuer — anyone who reaches it picks any identity — so it
// answers on loopback only, and sends codes only to loopback redirect
// URIs.

// CodeLifetime bounds an authorization code.
const CodeLifetime = 2 * time.Minute

// maxParam bounds a query or form value of the flow.
const maxParam = 512

// authCode is an issued code, taken once.
type authCode struct {
	clientID, redirectURI, challenge, nonce string
	id                                      Identity
	expires                                 time.Time
}

type codeBook struct {
	mu    sync.Mutex
	codes map[string]authCode
}

func (b *codeBook) put(code string, c authCode, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.codes == nil {
		b.codes = map[string]authCode{}
	}
	for k, v := range b.codes {
		if !now.Before(v.expires) {
			delete(b.codes, k)
		}
	}
	b.codes[code] = c
}

// take removes and returns the code: a code is used once, whatever the
// exchange then decides.
func (b *codeBook) take(code string) (authCode, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c, ok := b.codes[code]
	delete(b.codes, code)
	return c, ok
}

// AuthorizeRequest is what the client asks of /authorize.
type AuthorizeRequest struct {
	ClientID, RedirectURI, State, Nonce, Challenge, Scope string
}

// ParseAuthorizeRequest checks the flow's parameters: response_type code,
// scope holding openid, a client_id, a loopback http(s) redirect_uri, a
// state, a nonce, and an S256 code_challenge. The error names the
// parameter.
func ParseAuthorizeRequest(q url.Values) (AuthorizeRequest, error) {
	get := func(name string, required bool) (string, error) {
		vs := q[name]
		if len(vs) > 1 {
			return "", &ParamError{Name: name, Reason: "must be given once"}
		}
		if len(vs) == 0 || vs[0] == "" {
			if required {
				return "", &ParamError{Name: name, Reason: "is required"}
			}
			return "", nil
		}
		v := vs[0]
		if len(v) > maxParam || !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return "", &ParamError{Name: name, Reason: "must be at most 512 printable characters"}
		}
		return v, nil
	}
	var a AuthorizeRequest
	var err error
	rt, err := get("response_type", true)
	if err != nil {
		return a, err
	}
	if rt != "code" {
		return a, &ParamError{Name: "response_type", Reason: "must be code"}
	}
	if a.Scope, err = get("scope", true); err != nil {
		return a, err
	}
	if !strings.Contains(" "+a.Scope+" ", " openid ") {
		return a, &ParamError{Name: "scope", Reason: "must include openid"}
	}
	if a.ClientID, err = get("client_id", true); err != nil {
		return a, err
	}
	if a.RedirectURI, err = get("redirect_uri", true); err != nil {
		return a, err
	}
	u, perr := url.Parse(a.RedirectURI)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" || u.User != nil {
		return a, &ParamError{Name: "redirect_uri", Reason: "must be an absolute http(s) URL without a fragment"}
	}
	if !loopbackName(u.Host) {
		return a, &ParamError{Name: "redirect_uri", Reason: "must be on a loopback name (the dev issuer sends codes nowhere else)"}
	}
	if a.State, err = get("state", true); err != nil {
		return a, err
	}
	if a.Nonce, err = get("nonce", true); err != nil {
		return a, err
	}
	m, err := get("code_challenge_method", true)
	if err != nil {
		return a, err
	}
	if m != "S256" {
		return a, &ParamError{Name: "code_challenge_method", Reason: "must be S256"}
	}
	if a.Challenge, err = get("code_challenge", true); err != nil {
		return a, err
	}
	if len(a.Challenge) != 43 || !validSecret(a.Challenge) {
		return a, &ParamError{Name: "code_challenge", Reason: "must be the base64url SHA-256 of the verifier (43 characters)"}
	}
	return a, nil
}

// ParamError is a refused parameter of the flow.
type ParamError struct{ Name, Reason string }

func (e *ParamError) Error() string { return e.Name + " " + e.Reason }

// S256 is the PKCE code challenge of verifier.
func S256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// issuerPageHeaders: the sign-in page is never framed and runs no script.
func issuerPageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
}

var authorizePage = template.Must(template.New("authorize").Parse(`<!doctype html>
<html lang="{{.Lang}}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.T.title}}</title></head>
<body>
<main>
<h1>{{.T.title}}</h1>
<p><strong>{{.T.warn}}</strong></p>
<p>{{.T.client}} <code id="client">{{.Req.ClientID}}</code> → <code id="redirect">{{.Req.RedirectURI}}</code></p>
{{if .Error}}<p role="alert" id="error">{{.Error}}</p>{{end}}
{{if .Form}}<form method="post" action="/authorize">
<input type="hidden" name="response_type" value="code">
<input type="hidden" name="scope" value="{{.Req.Scope}}">
<input type="hidden" name="client_id" value="{{.Req.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.Req.RedirectURI}}">
<input type="hidden" name="state" value="{{.Req.State}}">
<input type="hidden" name="nonce" value="{{.Req.Nonce}}">
<input type="hidden" name="code_challenge" value="{{.Req.Challenge}}">
<input type="hidden" name="code_challenge_method" value="S256">
<p><label>{{.T.subject}} <input id="issuer-subject" name="subject" value="{{.Subject}}" autocomplete="off" required autofocus></label></p>
<p><label>{{.T.orgs}} <input id="issuer-orgs" name="organizations" value="{{.Orgs}}" autocomplete="off"></label></p>
<p><button type="submit" id="issuer-continue">{{.T.go}}</button></p>
</form>{{end}}
</main>
</body>
</html>
`))

var authorizeText = map[i18n.Lang]map[string]string{
	i18n.English: {
		"title": "Dev issuer: sign in", "warn": "Development only: this issuer signs anyone in as whoever they type.",
		"client": "Signing in to", "subject": "Subject", "orgs": "Organizations (comma-separated)", "go": "Sign in",
	},
	i18n.Japanese: {
		"title": "開発用発行者: サインイン", "warn": "開発専用です。この発行者は、入力された名前の誰としてでもサインインさせます。",
		"client": "サインイン先", "subject": "ユーザー", "orgs": "組織（カンマ区切り）", "go": "サインイン",
	},
}

type authorizeView struct {
	Lang          string
	T             map[string]string
	Req           AuthorizeRequest
	Error         string
	Form          bool
	Subject, Orgs string
}

func (i *Issuer) renderAuthorize(w http.ResponseWriter, r *http.Request, status int, v authorizeView) {
	lang := i18n.FromAcceptLanguage(strings.Join(r.Header.Values("Accept-Language"), ","))
	v.Lang, v.T = lang.String(), authorizeText[lang]
	if v.T == nil {
		v.Lang, v.T = "en", authorizeText[i18n.English]
	}
	issuerPageHeaders(w)
	w.WriteHeader(status)
	_ = authorizePage.Execute(w, v)
}

func (i *Issuer) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	req, err := ParseAuthorizeRequest(r.URL.Query())
	if err != nil {
		i.renderAuthorize(w, r, http.StatusBadRequest, authorizeView{Error: err.Error()})
		return
	}
	i.renderAuthorize(w, r, http.StatusOK, authorizeView{Req: req, Form: true})
}

// serveAuthorizeForm takes the page's form: only from the issuer's own
// page (Origin or Sec-Fetch-Site), with an identity the API would accept.
func (i *Issuer) serveAuthorizeForm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenRequestBytes)
	if err := r.ParseForm(); err != nil {
		i.renderAuthorize(w, r, http.StatusBadRequest, authorizeView{Error: "the form could not be read"})
		return
	}
	if err := CheckOrigin(r, strings.TrimSuffix(i.issuer, "/"), "http://"+r.Host); err != nil {
		i.renderAuthorize(w, r, http.StatusForbidden, authorizeView{Error: err.Error()})
		return
	}
	req, err := ParseAuthorizeRequest(r.PostForm)
	if err != nil {
		i.renderAuthorize(w, r, http.StatusBadRequest, authorizeView{Error: err.Error()})
		return
	}
	subject := strings.TrimSpace(r.PostForm.Get("subject"))
	orgsRaw := r.PostForm.Get("organizations")
	id := Identity{Subject: subject, Organizations: ParseOrganizations(orgsRaw)}
	if subject == "" {
		i.renderAuthorize(w, r, http.StatusBadRequest, authorizeView{Req: req, Form: true, Orgs: orgsRaw, Error: "subject is required"})
		return
	}
	if !printable(subject) || !printable(orgsRaw) {
		i.renderAuthorize(w, r, http.StatusBadRequest, authorizeView{Req: req, Form: true, Error: "subject and organizations must be printable UTF-8"})
		return
	}
	if err := CheckIdentity(id); err != nil {
		i.renderAuthorize(w, r, http.StatusBadRequest, authorizeView{Req: req, Form: true, Subject: subject, Orgs: orgsRaw, Error: err.Error() + idRulesHint})
		return
	}
	code := NewSecret()
	now := i.now()
	i.codes.put(code, authCode{clientID: req.ClientID, redirectURI: req.RedirectURI, challenge: req.Challenge, nonce: req.Nonce, id: id, expires: now.Add(CodeLifetime)}, now)
	u, _ := url.Parse(req.RedirectURI)
	q := u.Query()
	q.Set("code", code)
	q.Set("state", req.State)
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// idTokenClaims is an ID token's payload.
type idTokenClaims struct {
	Issuer        string   `json:"iss"`
	Subject       string   `json:"sub"`
	Audience      string   `json:"aud"`
	IssuedAt      int64    `json:"iat"`
	Expires       int64    `json:"exp"`
	Nonce         string   `json:"nonce,omitempty"`
	Organizations []string `json:"organizations"`
}

// oauthError answers the token endpoint's error (RFC 6749 §5.2).
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// serveCodeGrant exchanges a code (form-encoded POST /token).
func (i *Issuer) serveCodeGrant(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxTokenRequestBytes)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the form could not be read")
		return
	}
	f := r.PostForm
	if f.Get("grant_type") != "authorization_code" {
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code")
		return
	}
	clientID := f.Get("client_id")
	if user, _, ok := r.BasicAuth(); ok {
		if u, err := url.QueryUnescape(user); err == nil {
			clientID = u
		}
	}
	c, ok := i.codes.take(f.Get("code"))
	switch {
	case !ok || !i.now().Before(c.expires):
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code is unknown, used or expired")
		return
	case subtle.ConstantTimeCompare([]byte(clientID), []byte(c.clientID)) != 1:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the code was issued to another client")
		return
	case f.Get("redirect_uri") != c.redirectURI:
		oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri is not the one the code was issued for")
		return
	}
	verifier := f.Get("code_verifier")
	if len(verifier) < 43 || len(verifier) > 128 || subtle.ConstantTimeCompare([]byte(S256(verifier)), []byte(c.challenge)) != 1 {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
		return
	}
	now := i.now()
	payload, err := json.Marshal(idTokenClaims{Issuer: i.issuer, Subject: c.id.Subject, Audience: c.clientID, IssuedAt: now.Unix(),
		Expires: now.Add(DefaultTokenTTL).Unix(), Nonce: c.nonce, Organizations: c.id.Organizations})
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", "internal error")
		return
	}
	idToken, err := signRS256(i.key, i.kid, payload)
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", "internal error")
		return
	}
	access, err := i.Mint(c.id.Subject, c.id.Organizations, DefaultTokenTTL)
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", "internal error")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(DefaultTokenTTL.Seconds()),
		"id_token": idToken, "scope": "openid"})
}
