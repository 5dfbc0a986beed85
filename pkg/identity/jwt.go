package identity

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
)

// DefaultAudience is the audience expected when CAPTURE_LEDGER_OIDC_AUDIENCE
// is unset.
const DefaultAudience = "capture-ledger"

// JWKSPath is appended to the issuer to find its keys. OIDC discovery is not
// consulted.
const JWKSPath = "/.well-known/jwks.json"

// Defaults of [JWTConfig].
const (
	DefaultLeeway       = 30 * time.Second
	DefaultJWKSMaxAge   = 10 * time.Minute
	DefaultJWKSCooldown = 30 * time.Second
)

// MaxTokenLifetime is the longest a JWT may live: its exp may lie at most
// this far (plus the leeway) after now, and after its iat when it has one.
// A token without exp, or living longer, is refused (claim "exp"): a stolen
// token must not be a permanent credential. The dev issuer mints nothing
// longer.
const MaxTokenLifetime = 24 * time.Hour

// maxTokenBytes bounds the bearer token we are willing to parse.
const maxTokenBytes = 16 << 10

// Reason codes logged with "JWT rejected" (attribute "reason"). For
// ReasonClaim the attribute "claim" names the failing claim (iss, aud, exp,
// nbf, iat, sub or organizations). Neither the token nor any claim value is
// ever logged.
const (
	ReasonNoBearer  = "no-bearer" // Authorization present but not "Bearer <token>" (scheme in any case)
	ReasonMalformed = "malformed" // not a compact JWS with a JSON object payload
	ReasonAlg       = "alg"       // alg is not RS256 or ES256 (none, HS*, …)
	ReasonCrit      = "crit"      // a "crit" header names extensions we do not implement
	ReasonJWKS      = "jwks"      // the issuer's keys could not be obtained
	ReasonNoKey     = "no-key"    // no key of the JWKS matches kid and alg
	ReasonSignature = "signature" // the signature does not verify
	ReasonClaim     = "claim"     // a claim failed validation
)

// JWTConfig configures the JWT resolver. Only Issuer is required.
type JWTConfig struct {
	// Issuer must equal the token's iss claim exactly. Keys are fetched
	// from Issuer (one trailing slash removed) + JWKSPath.
	Issuer string
	// Audience must be in the token's aud claim. Empty means DefaultAudience.
	Audience string
	// Logger receives the "JWT rejected" lines at info. Nil discards.
	Logger *slog.Logger
	// HTTPClient fetches the JWKS. Nil means a client with a 10 s timeout.
	HTTPClient *http.Client
	// Now is the clock for exp/nbf and the JWKS cache. Nil means time.Now.
	Now func() time.Time
	// Leeway tolerated on exp and nbf. Zero means DefaultLeeway.
	Leeway time.Duration
	// JWKSMaxAge is how long fetched keys are trusted. Zero means
	// DefaultJWKSMaxAge.
	JWKSMaxAge time.Duration
	// JWKSCooldown is the minimum time between two JWKS fetches. Zero means
	// DefaultJWKSCooldown.
	JWKSCooldown time.Duration
}

// JWT resolves callers from "Authorization: Bearer <jwt>" (the scheme is
// case-insensitive, RFC 9110 §11.1). See [JWTConfig] and [JWT.Resolve] for
// what is checked.
type JWT struct {
	issuer   string
	audience string
	log      *slog.Logger
	now      func() time.Time
	leeway   time.Duration
	keys     *jwksCache
}

// NewJWT returns a JWT resolver. It does not contact the issuer: keys are
// fetched on first use.
func NewJWT(cfg JWTConfig) *JWT {
	j := &JWT{
		issuer:   cfg.Issuer,
		audience: cfg.Audience,
		log:      cfg.Logger,
		now:      cfg.Now,
		leeway:   cfg.Leeway,
	}
	if j.audience == "" {
		j.audience = DefaultAudience
	}
	if j.log == nil {
		j.log = slog.New(slog.DiscardHandler)
	}
	if j.now == nil {
		j.now = time.Now
	}
	if j.leeway <= 0 {
		j.leeway = DefaultLeeway
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	maxAge, cooldown := cfg.JWKSMaxAge, cfg.JWKSCooldown
	if maxAge <= 0 {
		maxAge = DefaultJWKSMaxAge
	}
	if cooldown <= 0 {
		cooldown = DefaultJWKSCooldown
	}
	j.keys = &jwksCache{
		url:      JWKSURL(cfg.Issuer),
		client:   client,
		now:      j.now,
		maxAge:   maxAge,
		cooldown: cooldown,
		log:      j.log,
	}
	return j
}

// JWKSURL is where the keys of issuer are fetched from.
func JWKSURL(issuer string) string {
	return strings.TrimSuffix(issuer, "/") + JWKSPath
}

// Issuer returns the issuer the resolver accepts.
func (j *JWT) Issuer() string { return j.issuer }

// Resolve verifies the bearer token of r. A request without an
// Authorization header is refused silently; every other refusal is logged.
func (j *JWT) Resolve(r *http.Request) (Identity, bool) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return Identity{}, false
	}
	var rej rejection
	var id Identity
	switch {
	case len(values) > 1:
		rej = rejection{reason: ReasonMalformed}
	case !hasBearerScheme(values[0]):
		rej = rejection{reason: ReasonNoBearer}
	default:
		id, rej = j.verify(r.Context(), values[0][len(bearerPrefix):])
	}
	if rej.reason != "" {
		attrs := []slog.Attr{slog.String("reason", rej.reason)}
		if rej.claim != "" {
			attrs = append(attrs, slog.String("claim", rej.claim))
		}
		j.log.LogAttrs(r.Context(), slog.LevelInfo, "JWT rejected", attrs...)
		return Identity{}, false
	}
	return id, true
}

// bearerPrefix is the scheme and the one space before the token.
const bearerPrefix = "Bearer "

// hasBearerScheme reports whether v starts with "Bearer " in any case.
func hasBearerScheme(v string) bool {
	return len(v) >= len(bearerPrefix) && strings.EqualFold(v[:len(bearerPrefix)], bearerPrefix)
}

type rejection struct {
	reason string
	claim  string
}

// verify checks token and returns the identity it carries, or why not.
func (j *JWT) verify(ctx context.Context, token string) (Identity, rejection) {
	if len(token) == 0 || len(token) > maxTokenBytes || !isCompactJWS(token) {
		return Identity{}, rejection{reason: ReasonMalformed}
	}
	buf := []byte(token)
	msg, err := jws.Parse(buf, jws.WithCompact())
	if err != nil || len(msg.Signatures()) != 1 {
		return Identity{}, rejection{reason: ReasonMalformed}
	}
	hdr := msg.Signatures()[0].ProtectedHeaders()
	alg, ok := hdr.Algorithm()
	if !ok {
		return Identity{}, rejection{reason: ReasonAlg}
	}
	var sigAlg jwa.SignatureAlgorithm
	switch alg.String() {
	case "RS256":
		sigAlg = jwa.RS256()
	case "ES256":
		sigAlg = jwa.ES256()
	default:
		return Identity{}, rejection{reason: ReasonAlg}
	}
	// RFC 7515 §4.1.11: a critical extension we do not understand must be
	// refused. We understand none.
	if hdr.Has(jws.CriticalKey) {
		return Identity{}, rejection{reason: ReasonCrit}
	}
	kid, _ := hdr.KeyID()
	keys, err := j.keys.lookup(ctx, kid, sigAlg.String())
	if err != nil {
		return Identity{}, rejection{reason: ReasonJWKS}
	}
	if len(keys) == 0 {
		return Identity{}, rejection{reason: ReasonNoKey}
	}
	var payload []byte
	for _, k := range keys {
		if p, err := jws.Verify(buf, jws.WithCompact(), jws.WithCritValidation(true), jws.WithKey(sigAlg, k.key)); err == nil {
			payload = p
			break
		}
	}
	if payload == nil {
		return Identity{}, rejection{reason: ReasonSignature}
	}
	return j.checkClaims(payload)
}

// isCompactJWS reports whether s is three base64url segments joined by dots.
func isCompactJWS(s string) bool {
	dots := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			dots++
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return dots == 2
}

// checkClaims validates the verified payload. The checks follow jose's
// jwtVerify: iss equal, aud containing the audience, nbf (when present)
// numeric and in range with the leeway, iat (when present) numeric; and
// more strictly than jose: exp required, numeric, not past (with the
// leeway) and within MaxTokenLifetime of now and of iat; sub a valid
// subject and every organization a valid organization ([CheckIdentity]).
func (j *JWT) checkClaims(payload []byte) (Identity, rejection) {
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(payload, &claims); err != nil || claims == nil {
		return Identity{}, rejection{reason: ReasonMalformed}
	}
	claim := func(name string) rejection { return rejection{reason: ReasonClaim, claim: name} }

	var iss string
	if raw, ok := claims["iss"]; !ok || json.Unmarshal(raw, &iss) != nil || iss != j.issuer {
		return Identity{}, claim("iss")
	}
	if !audienceContains(claims["aud"], j.audience) {
		return Identity{}, claim("aud")
	}
	now := float64(j.now().Unix())
	leeway := j.leeway.Seconds()
	maxLife := MaxTokenLifetime.Seconds()
	exp, ok := number(claims["exp"])
	if !ok || exp <= now-leeway || exp > now+maxLife+leeway {
		return Identity{}, claim("exp")
	}
	if raw, ok := claims["nbf"]; ok {
		nbf, ok := number(raw)
		if !ok || nbf > now+leeway {
			return Identity{}, claim("nbf")
		}
	}
	if raw, ok := claims["iat"]; ok {
		iat, ok := number(raw)
		if !ok {
			return Identity{}, claim("iat")
		}
		if exp-iat > maxLife {
			return Identity{}, claim("exp")
		}
	}
	var sub string
	if raw, ok := claims["sub"]; !ok || json.Unmarshal(raw, &sub) != nil || strings.TrimSpace(sub) == "" || CheckSubject(sub) != nil {
		return Identity{}, claim("sub")
	}
	id := Identity{Subject: sub, Organizations: organizationsClaim(claims[OrganizationsClaim]), Expires: time.Unix(int64(exp), 0)}
	if CheckIdentity(id) != nil {
		return Identity{}, claim(OrganizationsClaim)
	}
	return id, rejection{}
}

// number decodes a JSON number claim; null, strings and others are not.
func number(raw json.RawMessage) (float64, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return 0, false
	}
	f, ok := v.(float64)
	return f, ok
}

// audienceContains accepts an aud that is the audience or an array holding it.
func audienceContains(raw json.RawMessage, audience string) bool {
	if raw == nil {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch aud := v.(type) {
	case string:
		return aud == audience
	case []any:
		for _, a := range aud {
			if s, ok := a.(string); ok && s == audience {
				return true
			}
		}
	}
	return false
}

// organizationsClaim keeps the string entries of an array claim that are not
// blank, in order. Anything else (absent, not an array) gives [].
func organizationsClaim(raw json.RawMessage) []string {
	orgs := []string{}
	if raw == nil {
		return orgs
	}
	var v []any
	if json.Unmarshal(raw, &v) != nil {
		return orgs
	}
	for _, e := range v {
		if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
			orgs = append(orgs, s)
		}
	}
	return orgs
}
