package identity

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
	"time"
)

// Console sessions: after the OIDC sign-in (pkg/web), a browser holds a
// random secret in an HttpOnly, SameSite=Strict cookie; the ledger keeps
// the secret's SHA-256 with the identity the ID token said (subject and
// organizations) until the token's expiry or sign-out. A session is one
// more way to resolve the caller ([SessionResolver]); a request that
// carries an Authorization header is never resolved by its cookie.
//
// A state-changing request resolved by its cookie must prove it comes from
// a page of this origin ([CSRF]): a synchronizer token derived from the
// session's secret ([CSRFToken]), which only a page the server rendered for
// that session holds, and a same-origin Origin or Sec-Fetch-Site.

// Cookie names. With Secure they take the __Host- prefix (no Domain, Path
// /, Secure: no other host can set or shadow them).
const (
	SessionCookie = "capture-ledger-session"
	SignInCookie  = "capture-ledger-signin"
	hostPrefix    = "__Host-"
)

// CSRFHeader carries the CSRF token of a script's request; CSRFField the
// token of a form's.
const (
	CSRFHeader = "X-CSRF-Token"
	CSRFField  = "csrf"
)

// SignInLifetime bounds a sign-in under way (from "Sign in" to the
// callback).
const SignInLifetime = 10 * time.Minute

// secretBytes is the entropy of a session, sign-in cookie or state.
const secretBytes = 32

// maxSecretLen bounds a secret read from a request (base64url of 32 bytes
// is 43 characters).
const maxSecretLen = 64

// PendingSignIn is a sign-in under way, as the ledger keeps it.
type PendingSignIn struct {
	StateHash, BrowserHash []byte
	Nonce, Verifier        string
	// ReturnTo is the console path the browser goes back to.
	ReturnTo string
	Expires  time.Time
}

// SessionStore keeps sessions and sign-ins under way (PostgreSQL:
// pkg/store/postgres, migration 000015).
type SessionStore interface {
	CreateSession(ctx context.Context, hash []byte, id Identity, expires time.Time) error
	Session(ctx context.Context, hash []byte, now time.Time) (Identity, bool, error)
	EndSession(ctx context.Context, hash []byte, now time.Time) error
	BeginSignIn(ctx context.Context, p PendingSignIn) error
	TakeSignIn(ctx context.Context, stateHash []byte) (PendingSignIn, bool, error)
}

// NewSecret is a fresh random secret, base64url without padding.
func NewSecret() string {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		panic("identity: no randomness: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Hash is what the ledger keeps of a secret.
func Hash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// CSRFToken is the synchronizer token of the session (or sign-in cookie)
// whose secret is secret: an HMAC of a fixed label under the secret, so it
// is bound to that session, and knowing it does not give the cookie.
func CSRFToken(secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("capture-ledger csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// validSecret says whether s could be a secret this package made.
func validSecret(s string) bool {
	if len(s) < 32 || len(s) > maxSecretLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// Cookies decides how the console's cookies are set and read: Secure
// (with the __Host- prefix) unless the request reached serve over plain
// HTTP on a loopback name and the public URL is not https.
type Cookies struct {
	// PublicURL is CAPTURE_LEDGER_API_URL (may be empty).
	PublicURL string
}

// Secure says whether r's cookies are Secure.
func (c Cookies) Secure(r *http.Request) bool {
	if r.TLS != nil || strings.HasPrefix(strings.ToLower(c.PublicURL), "https:") {
		return true
	}
	return !loopbackName(r.Host)
}

// loopbackName says whether host (of a Host header, any port) is a
// loopback name: 127.0.0.0/8, ::1, localhost or a name under .localhost.
func loopbackName(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Name is the cookie's name for r: base, with the __Host- prefix when
// Secure.
func (c Cookies) Name(r *http.Request, base string) string {
	if c.Secure(r) {
		return hostPrefix + base
	}
	return base
}

// Read returns the secret r's cookie base holds, if it holds one that
// could be a secret. Only the name r's security calls for is read.
func (c Cookies) Read(r *http.Request, base string) (string, bool) {
	name := c.Name(r, base)
	var found string
	n := 0
	for _, k := range r.Cookies() {
		if k.Name == name {
			found = k.Value
			n++
		}
	}
	if n != 1 || !validSecret(found) {
		return "", false
	}
	return found, true
}

// Set writes cookie base holding secret. SameSite is Strict for the
// session; the sign-in cookie is Lax, because the issuer's redirect back
// to the callback is a navigation from another site. maxAge 0 makes a
// browser-session cookie; negative deletes it.
func (c Cookies) Set(w http.ResponseWriter, r *http.Request, base, secret string, maxAge int, same http.SameSite) {
	http.SetCookie(w, &http.Cookie{
		Name: c.Name(r, base), Value: secret, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: c.Secure(r), SameSite: same,
	})
}

// Clear deletes cookie base.
func (c Cookies) Clear(w http.ResponseWriter, r *http.Request, base string) {
	c.Set(w, r, base, "", -1, http.SameSiteStrictMode)
}

// SessionResolver resolves a request by its Authorization header when it
// has one (Bearer, through Bearer: never the cookie then, valid or not),
// else by its session cookie.
type SessionResolver struct {
	Bearer  Resolver
	Store   SessionStore
	Cookies Cookies
	Now     func() time.Time
}

// Resolve implements [Resolver].
func (s *SessionResolver) Resolve(r *http.Request) (Identity, bool) {
	if len(r.Header.Values("Authorization")) > 0 {
		if s.Bearer == nil {
			return Identity{}, false
		}
		return s.Bearer.Resolve(r)
	}
	id, _, ok := s.Session(r)
	return id, ok
}

// Session is the identity of r's session cookie and its secret, when the
// cookie names a session that has not ended. A store that fails resolves
// nobody.
func (s *SessionResolver) Session(r *http.Request) (Identity, string, bool) {
	secret, ok := s.Cookies.Read(r, SessionCookie)
	if !ok || s.Store == nil {
		return Identity{}, "", false
	}
	id, ok, err := s.Store.Session(r.Context(), Hash(secret), s.now())
	if err != nil || !ok || CheckIdentity(id) != nil {
		return Identity{}, "", false
	}
	return id, secret, true
}

// CookieAuthenticated says whether r would be resolved by a cookie: it
// has no Authorization header and carries a session or sign-in cookie.
func (s *SessionResolver) CookieAuthenticated(r *http.Request) bool {
	if len(r.Header.Values("Authorization")) > 0 {
		return false
	}
	for _, k := range r.Cookies() {
		switch strings.TrimPrefix(k.Name, hostPrefix) {
		case SessionCookie, SignInCookie:
			return true
		}
	}
	return false
}

func (s *SessionResolver) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Safe says whether method changes nothing (GET, HEAD, OPTIONS).
func Safe(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// CSRFError is a refused cross-site request: answered 403 with its
// sentence.
type CSRFError struct{ Reason string }

func (e *CSRFError) Error() string { return e.Reason }

// CheckOrigin refuses a request that does not say it comes from a page of
// this origin: its Origin must be one of origins (scheme://host[:port]);
// when it has none, or "null" (a page whose referrer policy is no-referrer
// posts a form with Origin: null), its Sec-Fetch-Site must be
// same-origin. A request with neither is refused too: every browser sends
// one of them on a state-changing request.
func CheckOrigin(r *http.Request, origins ...string) error {
	vals := r.Header.Values("Origin")
	if len(vals) > 1 || (len(vals) == 1 && vals[0] != "null") {
		if len(vals) == 1 {
			for _, o := range origins {
				if o != "" && strings.EqualFold(vals[0], o) {
					return nil
				}
			}
		}
		return &CSRFError{Reason: "refused: this request comes from another site (Origin " + quoteASCII(strings.Join(vals, ",")) + "); state-changing requests are accepted only from this server's own pages"}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		if site == "same-origin" {
			return nil
		}
		return &CSRFError{Reason: "refused: this request comes from another site (Sec-Fetch-Site " + quoteASCII(site) + "); state-changing requests are accepted only from this server's own pages"}
	}
	return &CSRFError{Reason: "refused: a state-changing request with a session cookie must say where it comes from (Origin or Sec-Fetch-Site); scripts should send a token in an Authorization header instead of a cookie"}
}

// CheckToken refuses a request whose CSRF token (the X-CSRF-Token header,
// else the form field csrf of a url-encoded body) is not the one of the
// cookie secret.
func CheckToken(r *http.Request, secret string) error {
	got := r.Header.Get(CSRFHeader)
	if got == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
		if err := r.ParseForm(); err == nil {
			got = r.PostForm.Get(CSRFField)
		}
	}
	want := CSRFToken(secret)
	if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return &CSRFError{Reason: "refused: the CSRF token is missing or is not this session's; reload the page and try again"}
	}
	return nil
}

// quoteASCII quotes s for a message, keeping printable ASCII only and at
// most 100 bytes of it.
func quoteASCII(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 100; i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
		} else {
			b.WriteByte('?')
		}
	}
	return `"` + b.String() + `"`
}

// OrganizationsFromClaim reads an organizations claim the way the JWT
// resolver does: the non-blank strings of an array, in order; [] otherwise.
func OrganizationsFromClaim(raw []byte) []string { return organizationsClaim(raw) }
