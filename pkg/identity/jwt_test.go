package identity

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
)

func TestJWTResolveTokens(t *testing.T) {
	clock := newClock()
	iss, _ := startIssuer(t, clock)
	other, err := NewIssuer(iss.Issuer(), testAudience) // same iss, its own key, never served
	if err != nil {
		t.Fatal(err)
	}
	other.now = clock.Now
	rsaKeys, ecKey := testKeys(t)

	var logs logBuffer
	j := NewJWT(JWTConfig{Issuer: iss.Issuer(), Logger: logs.logger(), Now: clock.Now})

	issuer := iss.Issuer()
	good := validClaims(issuer)
	sign := func(claims any) string { return signWith(t, jwa.RS256(), iss.key, iss.kid, claims) }
	mint := func(ttl time.Duration) string {
		tok, err := iss.Mint("alice", []string{"acme", "contoso"}, ttl)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	otherTok, err := other.Mint("alice", []string{"acme"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: must(x509.MarshalPKIXPublicKey(&iss.key.PublicKey))})
	hs256 := func(secret []byte) string {
		signing := b64(mustJSON(t, map[string]any{"alg": "HS256", "typ": "JWT", "kid": iss.kid})) + "." + b64(mustJSON(t, good))
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(signing))
		return signing + "." + b64(mac.Sum(nil))
	}

	type want struct {
		ok      bool
		subject string
		orgs    []string
		reason  string
		claim   string
	}
	ok := func(sub string, orgs ...string) want {
		if orgs == nil {
			orgs = []string{}
		}
		return want{ok: true, subject: sub, orgs: orgs}
	}
	rej := func(reason string) want { return want{reason: reason} }
	claimRej := func(name string) want { return want{reason: ReasonClaim, claim: name} }

	tests := []struct {
		name  string
		token string
		want  want
	}{
		{"minted token", mint(time.Hour), ok("alice", "acme", "contoso")},
		{"signed claims", sign(good), ok("alice", "acme", "contoso")},
		{"aud array", sign(with(good, "aud", []any{"other", testAudience})), ok("alice", "acme", "contoso")},
		{"orgs absent", sign(with(good, "organizations", nil)), ok("alice")},
		{"orgs not an array", sign(with(good, "organizations", "acme")), ok("alice")},
		{"orgs null", sign(with(good, "organizations", jsonNull)), ok("alice")},
		{"orgs non-strings and blanks dropped", sign(with(good, "organizations", []any{"acme", 5, "", " ", nil, true, map[string]any{}, "contoso"})), ok("alice", "acme", "contoso")},
		{"exp within leeway", sign(with(good, "exp", t0.Add(-29*time.Second).Unix())), ok("alice", "acme", "contoso")},
		{"nbf within leeway", sign(with(good, "nbf", t0.Add(30*time.Second).Unix())), ok("alice", "acme", "contoso")},
		{"nbf past", sign(with(good, "nbf", t0.Add(-time.Hour).Unix())), ok("alice", "acme", "contoso")},

		{"second issuer key, its own kid", otherTok, rej(ReasonNoKey)},
		{"second issuer key, no kid", signWith(t, jwa.RS256(), other.key, "", good), rej(ReasonSignature)},
		{"second issuer key, our kid", signWith(t, jwa.RS256(), other.key, iss.kid, good), rej(ReasonSignature)},
		{"unrelated key, our kid", signWith(t, jwa.RS256(), rsaKeys[0], iss.kid, good), rej(ReasonSignature)},
		{"ES256 but only RSA published", signWith(t, jwa.ES256(), ecKey, "", good), rej(ReasonNoKey)},
		{"tampered payload", tamperPayload(t, sign(good), with(good, "sub", "mallory")), rej(ReasonSignature)},

		{"wrong issuer", sign(with(good, "iss", "http://127.0.0.1:1")), claimRej("iss")},
		{"issuer with trailing slash", sign(with(good, "iss", issuer+"/")), claimRej("iss")},
		{"missing issuer", sign(with(good, "iss", nil)), claimRej("iss")},
		{"issuer not a string", sign(with(good, "iss", 7)), claimRej("iss")},
		{"wrong audience", sign(with(good, "aud", "someone-else")), claimRej("aud")},
		{"audience array without ours", sign(with(good, "aud", []any{"a", "b"})), claimRej("aud")},
		{"missing audience", sign(with(good, "aud", nil)), claimRej("aud")},
		{"expired", mint(-time.Hour), claimRej("exp")},
		{"expired beyond leeway", sign(with(good, "exp", t0.Add(-30*time.Second).Unix())), claimRej("exp")},
		{"exp not a number", sign(with(good, "exp", "9999999999")), claimRej("exp")},
		{"exp null", sign(with(good, "exp", jsonNull)), claimRej("exp")},
		{"no exp", sign(with(good, "exp", nil)), claimRej("exp")},
		{"no exp, no iat", sign(with(good, "exp", nil, "iat", nil)), claimRej("exp")},
		{"exp at the maximum lifetime", sign(with(good, "exp", t0.Add(MaxTokenLifetime).Unix())), ok("alice", "acme", "contoso")},
		{"exp past the maximum lifetime", sign(with(good, "exp", t0.Add(MaxTokenLifetime+DefaultLeeway+time.Second).Unix())), claimRej("exp")},
		{"exp a century away", sign(with(good, "exp", t0.Add(100*365*24*time.Hour).Unix())), claimRej("exp")},
		{"exp huge", sign(with(good, "exp", 1e300)), claimRej("exp")},
		{"exp - iat past the maximum", sign(with(good, "iat", t0.Add(-2*time.Hour).Unix(), "exp", t0.Add(MaxTokenLifetime-time.Hour).Unix())), claimRej("exp")},
		{"exp - iat at the maximum", sign(with(good, "iat", t0.Add(-time.Hour).Unix(), "exp", t0.Add(MaxTokenLifetime-time.Hour).Unix())), ok("alice", "acme", "contoso")},
		{"not yet valid", sign(with(good, "nbf", t0.Add(31*time.Second).Unix())), claimRej("nbf")},
		{"nbf null", sign(with(good, "nbf", jsonNull)), claimRej("nbf")},
		{"iat not a number", sign(with(good, "iat", "now")), claimRej("iat")},
		{"missing sub", sign(with(good, "sub", nil)), claimRej("sub")},
		{"empty sub", sign(with(good, "sub", "")), claimRej("sub")},
		{"blank sub", sign(with(good, "sub", "  ")), claimRej("sub")},
		{"sub not a string", sign(with(good, "sub", 42)), claimRej("sub")},
		{"sub typed", sign(with(good, "sub", "user:alice")), claimRej("sub")},
		{"sub a userset", sign(with(good, "sub", "alice#member")), claimRej("sub")},
		{"sub the wildcard", sign(with(good, "sub", "*")), claimRej("sub")},
		{"sub with a space", sign(with(good, "sub", "alice smith")), claimRej("sub")},
		{"sub padded", sign(with(good, "sub", " alice ")), claimRej("sub")},
		{"sub too long", sign(with(good, "sub", strings.Repeat("a", MaxSubjectBytes+1))), claimRej("sub")},
		{"sub at the limit", sign(with(good, "sub", strings.Repeat("a", MaxSubjectBytes), "organizations", nil)), ok(strings.Repeat("a", MaxSubjectBytes))},
		{"sub an email", sign(with(good, "sub", "alice@example.com", "organizations", nil)), ok("alice@example.com")},
		{"org a userset", sign(with(good, "organizations", []any{"acme#member"})), claimRej("organizations")},
		{"org with a space", sign(with(good, "organizations", []any{"acme", "a b"})), claimRej("organizations")},
		{"org typed", sign(with(good, "organizations", []any{"organization:acme"})), claimRej("organizations")},
		{"org the wildcard", sign(with(good, "organizations", []any{"*"})), claimRej("organizations")},
		{"org too long", sign(with(good, "organizations", []any{strings.Repeat("o", 300)})), claimRej("organizations")},
		{"org with a control character", sign(with(good, "organizations", []any{"ac\u0000me"})), claimRej("organizations")},
		{"too many orgs", sign(with(good, "organizations", manyOrgs(MaxOrganizations+1))), claimRej("organizations")},

		{"alg none, empty signature", handBuilt(t, map[string]any{"alg": "none"}, good, nil), rej(ReasonAlg)},
		{"alg none with kid and signature", handBuilt(t, map[string]any{"alg": "none", "kid": iss.kid}, good, []byte("sig")), rej(ReasonAlg)},
		{"alg None", handBuilt(t, map[string]any{"alg": "None"}, good, nil), rej(ReasonMalformed)},
		{"no alg", handBuilt(t, map[string]any{"kid": iss.kid}, good, []byte("sig")), rej(ReasonAlg)},
		{"HS256 with public key PEM", hs256(pubPEM), rej(ReasonAlg)},
		{"HS256 with JWKS bytes", hs256(iss.JWKS()), rej(ReasonAlg)},
		{"unknown crit header", signWithHeaders(t, iss, map[string]any{"crit": []string{"x-must"}, "x-must": true}, good), rej(ReasonCrit)},
		{"b64 false, raw payload", b64(mustJSON(t, map[string]any{"alg": "RS256", "kid": iss.kid, "b64": false, "crit": []string{"b64"}})) + "." + string(mustJSON(t, good)) + ".c2ln", rej(ReasonMalformed)},
		{"PS256", signWith(t, jwa.PS256(), iss.key, iss.kid, good), rej(ReasonAlg)},
		{"RS512", signWith(t, jwa.RS512(), iss.key, iss.kid, good), rej(ReasonAlg)},

		{"empty token", "", rej(ReasonMalformed)},
		{"one segment", "abc", rej(ReasonMalformed)},
		{"two segments", "abc.def", rej(ReasonMalformed)},
		{"four segments", sign(good) + ".x", rej(ReasonMalformed)},
		{"leading space", " " + sign(good), rej(ReasonMalformed)},
		{"trailing space", sign(good) + " ", rej(ReasonMalformed)},
		{"padding", sign(good) + "=", rej(ReasonMalformed)},
		{"JSON serialization", `{"payload":"e30","signatures":[]}`, rej(ReasonMalformed)},
		{"header not JSON", b64([]byte("nope")) + "." + b64(mustJSON(t, good)) + ".c2ln", rej(ReasonMalformed)},
		{"payload an array", sign([]byte(`["alice"]`)), rej(ReasonMalformed)},
		{"payload a string", sign([]byte(`"alice"`)), rej(ReasonMalformed)},
		{"payload not JSON", sign([]byte(`alice`)), rej(ReasonMalformed)},
		{"oversized", strings.Repeat("a", maxTokenBytes) + ".b.c", rej(ReasonMalformed)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			id, got := j.Resolve(bearerRequest(tt.token))
			if got != tt.want.ok {
				t.Fatalf("Resolve ok = %v, want %v (log: %s)", got, tt.want.ok, logs.String())
			}
			lines := logs.lines(t)
			if tt.want.ok {
				if id.Subject != tt.want.subject || !reflect.DeepEqual(id.Organizations, tt.want.orgs) {
					t.Fatalf("identity = %+v, want %s %v", id, tt.want.subject, tt.want.orgs)
				}
				for _, l := range lines {
					if l["msg"] == "JWT rejected" {
						t.Fatalf("accepted token logged a rejection: %v", l)
					}
				}
				return
			}
			if id.Subject != "" || id.Organizations != nil {
				t.Fatalf("rejected token returned identity %+v", id)
			}
			last := lines[len(lines)-1]
			if last["msg"] != "JWT rejected" || last["level"] != "INFO" {
				t.Fatalf("log = %v, want info \"JWT rejected\"", last)
			}
			if last["reason"] != tt.want.reason {
				t.Fatalf("reason = %v, want %s", last["reason"], tt.want.reason)
			}
			if tt.want.claim == "" {
				if _, has := last["claim"]; has {
					t.Fatalf("claim logged for reason %s: %v", tt.want.reason, last)
				}
			} else if last["claim"] != tt.want.claim {
				t.Fatalf("claim = %v, want %s", last["claim"], tt.want.claim)
			}
			assertNoSecrets(t, logs.String(), tt.token)
		})
	}
}

// manyOrgs is n distinct organizations.
func manyOrgs(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = "org" + strconv.Itoa(i)
	}
	return out
}

// signWithHeaders signs claims with the issuer's key and extra protected
// headers.
func signWithHeaders(t *testing.T, iss *Issuer, extra map[string]any, claims any) string {
	t.Helper()
	hdr := jws.NewHeaders()
	for k, v := range extra {
		if err := hdr.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := hdr.Set(jws.KeyIDKey, iss.kid); err != nil {
		t.Fatal(err)
	}
	tok, err := jws.Sign(mustJSON(t, claims), jws.WithKey(jwa.RS256(), iss.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(tok)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// tamperPayload swaps the payload segment of token for claims.
func tamperPayload(t *testing.T, token string, claims map[string]any) string {
	parts := strings.Split(token, ".")
	return parts[0] + "." + b64(mustJSON(t, claims)) + "." + parts[2]
}

// assertNoSecrets fails if the log holds the token, any of its segments, or
// a claim value of the test tokens.
func assertNoSecrets(t *testing.T, log, token string) {
	t.Helper()
	if token != "" && strings.Contains(log, token) {
		t.Fatalf("log contains the token: %s", log)
	}
	for _, seg := range strings.Split(token, ".") {
		if len(seg) >= 8 && strings.Contains(log, seg) {
			t.Fatalf("log contains a token segment %q: %s", seg, log)
		}
	}
	for _, v := range []string{"alice", "mallory", "acme", "contoso", "someone-else", "9999999999"} {
		if strings.Contains(log, v) {
			t.Fatalf("log contains claim value %q: %s", v, log)
		}
	}
}

func TestJWTAuthorizationHeader(t *testing.T) {
	clock := newClock()
	iss, _ := startIssuer(t, clock)
	var logs logBuffer
	j := NewJWT(JWTConfig{Issuer: iss.Issuer(), Logger: logs.logger(), Now: clock.Now})
	tok, err := iss.Mint("alice", []string{"acme"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		headers []string // Authorization values; nil = absent
		ok      bool
		reason  string // "" = nothing logged
	}{
		{"valid", []string{"Bearer " + tok}, true, ""},
		{"absent", nil, false, ""},
		{"empty", []string{""}, false, ReasonNoBearer},
		{"lowercase bearer", []string{"bearer " + tok}, true, ""},
		{"uppercase BEARER", []string{"BEARER " + tok}, true, ""},
		{"mixed case bEaReR", []string{"bEaReR " + tok}, true, ""},
		{"Bearers", []string{"Bearers " + tok}, false, ReasonNoBearer},
		{"no space", []string{"Bearer" + tok}, false, ReasonNoBearer},
		{"tab", []string{"Bearer\t" + tok}, false, ReasonNoBearer},
		{"bare token", []string{tok}, false, ReasonNoBearer},
		{"basic", []string{"Basic YWxpY2U6cGFzcw=="}, false, ReasonNoBearer},
		{"prefix only", []string{"Bearer "}, false, ReasonMalformed},
		{"double space", []string{"Bearer  " + tok}, false, ReasonMalformed},
		{"two headers", []string{"Bearer " + tok, "Bearer " + tok}, false, ReasonMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs.Reset()
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			for _, h := range tt.headers {
				r.Header.Add("Authorization", h)
			}
			// The dev headers must never count in JWT mode.
			r.Header.Set(SubjectHeader, "mallory")
			id, ok := j.Resolve(r)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if ok && (id.Subject != "alice" || !reflect.DeepEqual(id.Organizations, []string{"acme"})) {
				t.Fatalf("identity = %+v", id)
			}
			lines := logs.lines(t)
			if tt.reason == "" {
				for _, l := range lines {
					if l["msg"] == "JWT rejected" {
						t.Fatalf("unexpected rejection log %v", l)
					}
				}
				return
			}
			if len(lines) == 0 || lines[len(lines)-1]["reason"] != tt.reason {
				t.Fatalf("log = %v, want reason %s", lines, tt.reason)
			}
			assertNoSecrets(t, logs.String(), tok)
		})
	}
}

func TestJWTIssuerAndAudienceConfig(t *testing.T) {
	clock := newClock()
	ln, err := ListenLoopback("127.0.0.1", 0)
	if err != nil {
		t.Fatal(err)
	}
	// Issuer configured with a trailing slash: iss must match it exactly,
	// and the JWKS is still found at <issuer without slash>/.well-known/jwks.json.
	issuerURL := "http://" + ln.Addr().String() + "/"
	iss, err := NewIssuer(issuerURL, "ledger-test")
	if err != nil {
		t.Fatal(err)
	}
	iss.now = clock.Now
	srv := httptest.NewUnstartedServer(iss.Handler())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	tok, err := iss.Mint("bob", nil, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := NewJWT(JWTConfig{Issuer: issuerURL, Audience: "ledger-test", Now: clock.Now}).Resolve(bearerRequest(tok)); !ok || id.Subject != "bob" || id.Organizations == nil || len(id.Organizations) != 0 {
		t.Fatalf("custom audience: %+v %v", id, ok)
	}
	if _, ok := NewJWT(JWTConfig{Issuer: issuerURL, Now: clock.Now}).Resolve(bearerRequest(tok)); ok {
		t.Fatal("default audience accepted a token for another audience")
	}
}

func TestJWTAcceptsES256AndKidlessTokens(t *testing.T) {
	rsaKeys, ecKey := testKeys(t)
	srv := newJWKSServer(t)
	srv.publish(t, map[string]any{"ec-1": ecKey, "rsa-1": rsaKeys[0], "rsa-2": rsaKeys[1]})
	clock := newClock()
	j := NewJWT(JWTConfig{Issuer: srv.srv.URL, Now: clock.Now})
	claims := validClaims(srv.srv.URL)
	tests := []struct {
		name  string
		token string
		ok    bool
	}{
		{"ES256 with kid", signWith(t, jwa.ES256(), ecKey, "ec-1", claims), true},
		{"ES256 without kid", signWith(t, jwa.ES256(), ecKey, "", claims), true},
		{"RS256 without kid, second of two keys", signWith(t, jwa.RS256(), rsaKeys[1], "", claims), true},
		{"RS256 with kid of the other key", signWith(t, jwa.RS256(), rsaKeys[1], "rsa-1", claims), false},
		{"RS256 with EC kid", signWith(t, jwa.RS256(), rsaKeys[0], "ec-1", claims), false},
		{"RS256 unpublished key, no kid", signWith(t, jwa.RS256(), rsaKeys[2], "", claims), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, ok := j.Resolve(bearerRequest(tt.token))
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if ok && id.Subject != "alice" {
				t.Fatalf("identity = %+v", id)
			}
		})
	}
}

func TestParseJWKSSkipsUnusableKeys(t *testing.T) {
	rsaKeys, ecKey := testKeys(t)
	small := must(rsa.GenerateKey(rand.Reader, 1024))
	pub := func(k any, kv ...any) map[string]any {
		var m map[string]any
		j := must(jwk.PublicKeyOf(k))
		if err := json.Unmarshal(mustJSON(t, j), &m); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name string
		key  any // a JWK as JSON-able value
		want []string
	}{
		{"rsa", pub(rsaKeys[0], "kid", "a"), []string{"a/RS256"}},
		{"rsa alg RS256 use sig", pub(rsaKeys[0], "kid", "a", "alg", "RS256", "use", "sig"), []string{"a/RS256"}},
		{"rsa for encryption", pub(rsaKeys[0], "kid", "a", "use", "enc"), nil},
		{"rsa for PS256", pub(rsaKeys[0], "kid", "a", "alg", "PS256"), nil},
		{"rsa key_ops without verify", pub(rsaKeys[0], "kid", "a", "key_ops", []string{"encrypt"}), nil},
		{"rsa key_ops verify", pub(rsaKeys[0], "kid", "a", "key_ops", []string{"verify"}), []string{"a/RS256"}},
		{"rsa 1024 bits", map[string]any{"kty": "RSA", "kid": "a", "n": b64(small.N.Bytes()), "e": "AQAB"}, nil},
		{"ec P-256", pub(ecKey, "kid", "e"), []string{"e/ES256"}},
		{"ec alg ES384", pub(ecKey, "kid", "e", "alg", "ES384"), nil},
		{"symmetric", map[string]any{"kty": "oct", "k": "c2VjcmV0", "kid": "h"}, nil},
		{"unknown kty", map[string]any{"kty": "XYZ", "kid": "x"}, nil},
		{"garbage", "not a key", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := parseJWKS(mustJSON(t, map[string]any{"keys": []any{tt.key}}))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, k := range keys {
				got = append(got, k.kid+"/"+k.alg)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("keys = %v, want %v", got, tt.want)
			}
		})
	}
	for _, doc := range []string{`[]`, `{}`, `{"keys":{}}`, `nope`} {
		if _, err := parseJWKS([]byte(doc)); err == nil {
			t.Errorf("parseJWKS(%s) succeeded", doc)
		}
	}
}

// TestJWKSRefetchCooldown pins the cache: keys live 10 minutes, an unknown
// kid refetches but never within 30 s of the previous fetch, and a failed
// fetch also waits out the cooldown.
func TestJWKSRefetchCooldown(t *testing.T) {
	rsaKeys, _ := testKeys(t)
	srv := newJWKSServer(t)
	clock := newClock()
	var logs logBuffer
	j := NewJWT(JWTConfig{Issuer: srv.srv.URL, Now: clock.Now, Logger: logs.logger()})
	claims := func() map[string]any {
		c := validClaims(srv.srv.URL)
		c["exp"] = clock.Now().Add(time.Hour).Unix()
		return c
	}
	tokFor := func(key int, kid string) string { return signWith(t, jwa.RS256(), rsaKeys[key], kid, claims()) }

	srv.set([]byte(`oops`), http.StatusInternalServerError)
	steps := []struct {
		name    string
		at      time.Duration // since t0
		setup   func()
		key     int
		kid     string
		ok      bool
		reason  string
		fetches int32 // total fetches after the step
	}{
		{"first fetch fails", 0, nil, 0, "k1", false, ReasonJWKS, 1},
		{"failure within cooldown does not refetch", 20 * time.Second, func() { srv.publish(t, map[string]any{"k1": rsaKeys[0]}) }, 0, "k1", false, ReasonJWKS, 1},
		{"after cooldown refetches", 30 * time.Second, nil, 0, "k1", true, "", 2},
		{"cached", 40 * time.Second, nil, 0, "k1", true, "", 2},
		{"unknown kid within cooldown", 59 * time.Second, func() { srv.publish(t, map[string]any{"k2": rsaKeys[1]}) }, 1, "k2", false, ReasonNoKey, 2},
		{"unknown kid after cooldown refetches", 60 * time.Second, nil, 1, "k2", true, "", 3},
		{"rotated-out kid within cooldown", 70 * time.Second, nil, 0, "k1", false, ReasonNoKey, 3},
		{"rotated-out kid after cooldown refetches, still unknown", 91 * time.Second, nil, 0, "k1", false, ReasonNoKey, 4},
		{"unknown kid again within cooldown", 100 * time.Second, nil, 0, "k9", false, ReasonNoKey, 4},
		{"known kid never refetches", 91*time.Second + 9*time.Minute, nil, 1, "k2", true, "", 4},
		{"max age refetches a known kid", 91*time.Second + 10*time.Minute, nil, 1, "k2", true, "", 5},
		{"stale keys and issuer down", 91*time.Second + 20*time.Minute, func() { srv.set([]byte(`{}`), http.StatusBadGateway) }, 1, "k2", false, ReasonJWKS, 6},
		{"stale keys are not used within cooldown", 91*time.Second + 20*time.Minute + 29*time.Second, nil, 1, "k2", false, ReasonJWKS, 6},
		{"issuer back", 91*time.Second + 20*time.Minute + 30*time.Second, func() { srv.publish(t, map[string]any{"k2": rsaKeys[1]}) }, 1, "k2", true, "", 7},
	}
	for _, s := range steps {
		clock.Set(t0.Add(s.at))
		if s.setup != nil {
			s.setup()
		}
		logs.Reset()
		_, ok := j.Resolve(bearerRequest(tokFor(s.key, s.kid)))
		if ok != s.ok {
			t.Fatalf("%s: ok = %v, want %v (log %s)", s.name, ok, s.ok, logs.String())
		}
		if got := srv.fetches.Load(); got != s.fetches {
			t.Fatalf("%s: fetches = %d, want %d", s.name, got, s.fetches)
		}
		if s.reason != "" {
			var reasons []any
			for _, l := range logs.lines(t) {
				if l["msg"] == "JWT rejected" {
					reasons = append(reasons, l["reason"])
				}
			}
			if len(reasons) != 1 || reasons[0] != s.reason {
				t.Fatalf("%s: rejection reasons %v, want [%s]", s.name, reasons, s.reason)
			}
		}
	}
}

func TestJWKSConcurrentFetchIsShared(t *testing.T) {
	rsaKeys, _ := testKeys(t)
	srv := newJWKSServer(t)
	srv.publish(t, map[string]any{"k1": rsaKeys[0]})
	srv.setDelay(100 * time.Millisecond)
	clock := newClock()
	j := NewJWT(JWTConfig{Issuer: srv.srv.URL, Now: clock.Now})
	tok := signWith(t, jwa.RS256(), rsaKeys[0], "k1", validClaims(srv.srv.URL))
	var wg sync.WaitGroup
	results := make([]bool, 16)
	for i := range results {
		wg.Go(func() { _, results[i] = j.Resolve(bearerRequest(tok)) })
	}
	wg.Wait()
	for i, ok := range results {
		if !ok {
			t.Fatalf("request %d rejected", i)
		}
	}
	if got := srv.fetches.Load(); got != 1 {
		t.Fatalf("fetches = %d, want 1", got)
	}
}

// TestJWKSFetchIsDetachedFromRequests: a waiter gives up when its own
// request is cancelled, and the shared fetch is not aborted when the request
// that started it is cancelled.
func TestJWKSFetchIsDetachedFromRequests(t *testing.T) {
	rsaKeys, _ := testKeys(t)
	srv := newJWKSServer(t)
	srv.publish(t, map[string]any{"k1": rsaKeys[0]})
	srv.setDelay(300 * time.Millisecond)
	clock := newClock()
	j := NewJWT(JWTConfig{Issuer: srv.srv.URL, Now: clock.Now})
	tok := signWith(t, jwa.RS256(), rsaKeys[0], "k1", validClaims(srv.srv.URL))

	first := bearerRequest(tok)
	ctx, cancelFirst := context.WithCancel(first.Context())
	go j.Resolve(first.WithContext(ctx))
	for srv.fetches.Load() == 0 { // wait until the first request's fetch is running
		time.Sleep(5 * time.Millisecond)
	}
	waiter := make(chan bool)
	go func() { _, ok := j.Resolve(bearerRequest(tok)); waiter <- ok }()

	gone := bearerRequest(tok)
	goneCtx, cancelGone := context.WithCancel(gone.Context())
	cancelGone()
	if _, ok := j.Resolve(gone.WithContext(goneCtx)); ok {
		t.Fatal("cancelled waiter was accepted")
	}
	time.Sleep(50 * time.Millisecond)
	cancelFirst()
	if !<-waiter {
		t.Fatal("waiter rejected after the initiating request was cancelled")
	}
	if got := srv.fetches.Load(); got != 1 {
		t.Fatalf("fetches = %d, want 1", got)
	}
}
