package identity

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// IssuerWarning is logged at warn when the dev issuer starts.
const IssuerWarning = "DEV ISSUER — mints signed tokens for anyone who asks. Never run this outside local development."

// DefaultIssuerPort is the dev issuer's port when
// CAPTURE_LEDGER_DEV_ISSUER_PORT is unset.
const DefaultIssuerPort = 9099

// DefaultTokenTTL is the lifetime of a minted token when none is asked for.
const DefaultTokenTTL = time.Hour

// maxTokenTTL bounds the time spans [ParseTimeSpan] reads (either sign),
// and how far in the past an already expired token may be minted. A token
// that is still valid lives at most MaxTokenLifetime.
const maxTokenTTL = 100 * 365 * 24 * time.Hour

// maxTokenRequestBytes bounds the body of POST /token.
const maxTokenRequestBytes = 64 << 10

// ErrSubjectRequired is returned by [Issuer.Mint] for a blank subject.
var ErrSubjectRequired = errors.New("subject is required")

// DefaultIssuerURL is the dev issuer's own URL when
// CAPTURE_LEDGER_OIDC_ISSUER is unset.
func DefaultIssuerURL(port int) string {
	return "http://127.0.0.1:" + strconv.Itoa(port)
}

// Issuer is the dev token issuer: an RS256 key generated in memory at every
// start (never persisted) that signs a token for anyone who asks. Serve it
// only through [ListenLoopback].
type Issuer struct {
	issuer   string
	audience string
	key      *rsa.PrivateKey
	kid      string
	jwks     []byte
	now      func() time.Time
	codes    codeBook
}

// NewIssuer generates a fresh key. issuerURL becomes the iss claim (and the
// base of the JWKS and token endpoints); audience the aud claim (empty means
// DefaultAudience). The key id is the key's RFC 7638 thumbprint (SHA-256,
// base64url), so it changes with the key.
func NewIssuer(issuerURL, audience string) (*Issuer, error) {
	u, err := url.Parse(issuerURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("dev issuer: issuer %q is not an http(s) URL", issuerURL)
	}
	if audience == "" {
		audience = DefaultAudience
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("dev issuer: generate key: %w", err)
	}
	pub, err := jwk.Import(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("dev issuer: import key: %w", err)
	}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("dev issuer: thumbprint: %w", err)
	}
	kid := base64.RawURLEncoding.EncodeToString(tp)
	for name, v := range map[string]any{jwk.KeyIDKey: kid, jwk.AlgorithmKey: jwa.RS256(), jwk.KeyUsageKey: "sig"} {
		if err := pub.Set(name, v); err != nil {
			return nil, fmt.Errorf("dev issuer: set %s: %w", name, err)
		}
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		return nil, fmt.Errorf("dev issuer: key set: %w", err)
	}
	doc, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("dev issuer: marshal key set: %w", err)
	}
	return &Issuer{issuer: issuerURL, audience: audience, key: key, kid: kid, jwks: doc, now: time.Now}, nil
}

// Issuer returns the iss claim of minted tokens.
func (i *Issuer) Issuer() string { return i.issuer }

// Audience returns the aud claim of minted tokens.
func (i *Issuer) Audience() string { return i.audience }

// KeyID returns the kid of the signing key.
func (i *Issuer) KeyID() string { return i.kid }

// JWKS returns the public key set as served at /.well-known/jwks.json.
func (i *Issuer) JWKS() []byte { return append([]byte(nil), i.jwks...) }

// mintedClaims is the payload, in the order the original writes it.
type mintedClaims struct {
	Organizations []string `json:"organizations"`
	Subject       string   `json:"sub"`
	Issuer        string   `json:"iss"`
	Audience      string   `json:"aud"`
	IssuedAt      int64    `json:"iat"`
	Expires       int64    `json:"exp"`
}

// Mint signs a token for subject (trimmed; blank gives ErrSubjectRequired)
// with the given organizations, valid for ttl from now: at most
// MaxTokenLifetime (a negative ttl mints an already expired token, which is
// useful for tests). Its header is {alg: RS256, kid}; its claims
// organizations, sub, iss, aud, iat, exp.
//
// Mint does not check subject and organizations against the id rules
// ([CheckIdentity]) so that tests can mint the hostile tokens the API must
// refuse; POST /token does.
func (i *Issuer) Mint(subject string, orgs []string, ttl time.Duration) (string, error) {
	subject = strings.TrimSpace(subject)
	if subject == "" {
		return "", ErrSubjectRequired
	}
	if ttl > MaxTokenLifetime || ttl < -maxTokenTTL {
		return "", fmt.Errorf("dev issuer: token lifetime %s is out of range (at most %s)", ttl, MaxTokenLifetime)
	}
	if orgs == nil {
		orgs = []string{}
	}
	iat := i.now().Unix()
	payload, err := json.Marshal(mintedClaims{
		Organizations: orgs,
		Subject:       subject,
		Issuer:        i.issuer,
		Audience:      i.audience,
		IssuedAt:      iat,
		Expires:       iat + int64(math.Round(ttl.Seconds())),
	})
	if err != nil {
		return "", err
	}
	return signRS256(i.key, i.kid, payload)
}

// signRS256 signs payload as a compact JWS with header {alg: RS256[, kid]}.
func signRS256(key *rsa.PrivateKey, kid string, payload []byte) (string, error) {
	hdr := jws.NewHeaders()
	if kid != "" {
		if err := hdr.Set(jws.KeyIDKey, kid); err != nil {
			return "", err
		}
	}
	tok, err := jws.Sign(payload, jws.WithKey(jwa.RS256(), key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		return "", fmt.Errorf("dev issuer: sign: %w", err)
	}
	return string(tok), nil
}

// Handler serves GET /.well-known/openid-configuration,
// GET /.well-known/jwks.json, GET and POST /authorize, and POST /token
// (a JSON body mints a token outright; a form exchanges a code).
func (i *Issuer) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", i.serveConfiguration)
	mux.HandleFunc("GET "+JWKSPath, i.serveJWKS)
	mux.HandleFunc("GET /authorize", i.serveAuthorize)
	mux.HandleFunc("POST /authorize", i.serveAuthorizeForm)
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			i.serveCodeGrant(w, r)
			return
		}
		i.serveToken(w, r)
	})
	return mux
}

func (i *Issuer) serveConfiguration(w http.ResponseWriter, _ *http.Request) {
	base := strings.TrimSuffix(i.issuer, "/")
	writeJSON(w, http.StatusOK, map[string]any{
		"issuer":                                i.issuer,
		"jwks_uri":                              JWKSURL(i.issuer),
		"authorization_endpoint":                base + "/authorize",
		"token_endpoint":                        base + "/token",
		"response_types_supported":              []string{"code"},
		"grant_types_supported":                 []string{"authorization_code"},
		"subject_types_supported":               []string{"public"},
		"scopes_supported":                      []string{"openid"},
		"code_challenge_methods_supported":      []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none", "client_secret_basic", "client_secret_post"},
		"claims_supported":                      []string{"sub", "iss", "aud", "exp", "iat", "nonce", OrganizationsClaim},
		"id_token_signing_alg_values_supported": []string{"RS256"},
	})
}

func (i *Issuer) serveJWKS(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(i.jwks)
}

// tokenRequest is the parsed body of POST /token.
type tokenRequest struct {
	subject       string
	organizations []string
	ttl           time.Duration
}

// requestError is a 400 answer for POST /token.
type requestError struct {
	body any
}

func validationError(msg string) *requestError {
	return &requestError{body: map[string]any{
		"statusCode": 400, "code": "FST_ERR_VALIDATION", "error": "Bad Request", "message": msg,
	}}
}

func (i *Issuer) serveToken(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxTokenRequestBytes+1))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, validationError("body could not be read").body)
		return
	}
	if len(body) > maxTokenRequestBytes {
		writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "body too large"})
		return
	}
	req, rerr := parseTokenRequest(body)
	if rerr != nil {
		writeJSON(w, http.StatusBadRequest, rerr.body)
		return
	}
	tok, err := i.Mint(req.subject, req.organizations, req.ttl)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]any{"error": "internal error"})
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer"})
}

// parseTokenRequest reads {subject, organizations?, expiresIn?}. Unknown
// keys and wrong types are validation errors; a missing or blank subject is
// {"error":"subject is required"}; non-string organizations are dropped. A
// subject or organization the API would refuse ([CheckIdentity]) and a
// lifetime over MaxTokenLifetime are refused with {"error": why}: a token
// that can never be accepted is not minted.
func parseTokenRequest(body []byte) (tokenRequest, *requestError) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&fields); err != nil || fields == nil {
		return tokenRequest{}, validationError("body must be object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return tokenRequest{}, validationError("body must be object")
	}
	for name := range fields {
		switch name {
		case "subject", "organizations", "expiresIn":
		default:
			return tokenRequest{}, validationError("body must NOT have additional properties")
		}
	}
	req := tokenRequest{organizations: []string{}, ttl: DefaultTokenTTL}
	if raw, ok := fields["subject"]; ok {
		if err := json.Unmarshal(raw, &req.subject); err != nil || isNull(raw) {
			return tokenRequest{}, validationError("body/subject must be string")
		}
	}
	req.subject = strings.TrimSpace(req.subject)
	if req.subject == "" {
		return tokenRequest{}, &requestError{body: map[string]any{"error": "subject is required"}}
	}
	if raw, ok := fields["organizations"]; ok {
		var items []any
		if err := json.Unmarshal(raw, &items); err != nil || isNull(raw) {
			return tokenRequest{}, validationError("body/organizations must be array")
		}
		for _, it := range items {
			if s, ok := it.(string); ok {
				req.organizations = append(req.organizations, s)
			}
		}
	}
	if raw, ok := fields["expiresIn"]; ok {
		var span string
		if err := json.Unmarshal(raw, &span); err != nil || isNull(raw) {
			return tokenRequest{}, validationError("body/expiresIn must be string")
		}
		ttl, err := ParseTimeSpan(span)
		if err != nil {
			return tokenRequest{}, &requestError{body: map[string]any{"error": `expiresIn must be a time span such as "1h", "30m" or "-1h"`}}
		}
		if ttl > MaxTokenLifetime {
			return tokenRequest{}, &requestError{body: map[string]any{"error": "expiresIn must be at most " + lifetimeText}}
		}
		req.ttl = ttl
	}
	if err := CheckIdentity(Identity{Subject: req.subject, Organizations: req.organizations}); err != nil {
		return tokenRequest{}, &requestError{body: map[string]any{"error": err.Error() + idRulesHint}}
	}
	return req, nil
}

// lifetimeText is MaxTokenLifetime as the token endpoint spells it.
var lifetimeText = strings.TrimSuffix(strings.TrimSuffix(MaxTokenLifetime.String(), "0s"), "0m")

// idRulesHint follows an id refusal of POST /token.
const idRulesHint = ` — ids may not contain ":", "#", whitespace or control characters, nor be "*" (see docs/identity.md)`

func isNull(raw json.RawMessage) bool { return strings.TrimSpace(string(raw)) == "null" }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// timeSpan is the grammar of jose's time spans: an optional sign, a number,
// a unit, and optionally " ago" or " from now".
var timeSpan = regexp.MustCompile(`(?i)^([+-])? ?(\d+|\d+\.\d+) ?(seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|w|years?|yrs?|y)(?: (ago|from now))?$`)

// ParseTimeSpan reads a time span like "1h", "30m", "-1h", "2 days",
// "90 seconds", "1.5h" or "10 minutes ago" (negative). Units are s, m, h, d,
// w and y (365.25 days) with their long forms; the result is rounded to the
// second and bounded to ±100 years.
func ParseTimeSpan(s string) (time.Duration, error) {
	m := timeSpan.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("invalid time span %q", s)
	}
	value, err := strconv.ParseFloat(m[2], 64)
	if err != nil {
		return 0, fmt.Errorf("invalid time span %q", s)
	}
	var unit float64
	switch u := strings.ToLower(m[3]); {
	case u == "s" || strings.HasPrefix(u, "sec"):
		unit = 1
	case u == "m" || strings.HasPrefix(u, "min"):
		unit = 60
	case u == "h" || strings.HasPrefix(u, "h"):
		unit = 3600
	case u == "d" || strings.HasPrefix(u, "day"):
		unit = 86400
	case u == "w" || strings.HasPrefix(u, "week"):
		unit = 7 * 86400
	default: // y, yr, yrs, year, years
		unit = 365.25 * 86400
	}
	secs := math.Round(value * unit)
	if secs > maxTokenTTL.Seconds() {
		return 0, fmt.Errorf("time span %q is too long", s)
	}
	negative := m[1] == "-"
	if strings.EqualFold(m[4], "ago") {
		if negative {
			return 0, fmt.Errorf("invalid time span %q", s)
		}
		negative = true
	}
	d := time.Duration(secs) * time.Second
	if negative {
		d = -d
	}
	return d, nil
}

// ListenLoopback listens on host:port, refusing any host but 127.0.0.1,
// localhost and ::1: whoever reaches the dev issuer can mint any identity.
// "localhost" binds 127.0.0.1 so that name resolution cannot widen it. Port 0
// picks a free port.
func ListenLoopback(host string, port int) (net.Listener, error) {
	if !IsLoopback(host) {
		return nil, fmt.Errorf("dev issuer listens on loopback only (127.0.0.1, localhost or ::1), not %q", host)
	}
	if port < 0 || port > 65535 {
		return nil, fmt.Errorf("port must be between 1 and 65535")
	}
	if host == "localhost" {
		host = "127.0.0.1"
	}
	return net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
}
