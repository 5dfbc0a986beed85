package identity

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
)

func getJSON(t *testing.T, url string) map[string]any {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestIssuerDiscoveryAndJWKS(t *testing.T) {
	iss, srv := startIssuer(t, newClock())
	conf := getJSON(t, srv.URL+"/.well-known/openid-configuration")
	want := map[string]any{
		"issuer":                                iss.Issuer(),
		"jwks_uri":                              iss.Issuer() + "/.well-known/jwks.json",
		"authorization_endpoint":                iss.Issuer() + "/authorize",
		"token_endpoint":                        iss.Issuer() + "/token",
		"response_types_supported":              []any{"code"},
		"grant_types_supported":                 []any{"authorization_code"},
		"subject_types_supported":               []any{"public"},
		"scopes_supported":                      []any{"openid"},
		"code_challenge_methods_supported":      []any{"S256"},
		"token_endpoint_auth_methods_supported": []any{"none", "client_secret_basic", "client_secret_post"},
		"claims_supported":                      []any{"sub", "iss", "aud", "exp", "iat", "nonce", "organizations"},
		"id_token_signing_alg_values_supported": []any{"RS256"},
	}
	if !reflect.DeepEqual(conf, want) {
		t.Fatalf("configuration = %v\nwant %v", conf, want)
	}

	set := getJSON(t, srv.URL+JWKSPath)
	keys, _ := set["keys"].([]any)
	if len(set) != 1 || len(keys) != 1 {
		t.Fatalf("jwks = %v", set)
	}
	key := keys[0].(map[string]any)
	var names []string
	for k := range key {
		names = append(names, k)
	}
	if len(key) != 6 || key["kty"] != "RSA" || key["alg"] != "RS256" || key["use"] != "sig" || key["e"] != "AQAB" {
		t.Fatalf("jwk = %v (fields %v)", key, names)
	}
	// kid is the RFC 7638 thumbprint: SHA-256 over the required members in
	// lexicographic order, without whitespace.
	canonical := `{"e":"` + key["e"].(string) + `","kty":"RSA","n":"` + key["n"].(string) + `"}`
	sum := sha256.Sum256([]byte(canonical))
	if key["kid"] != b64(sum[:]) || iss.KeyID() != key["kid"] {
		t.Fatalf("kid = %v, want thumbprint %s", key["kid"], b64(sum[:]))
	}
	other, err := NewIssuer(iss.Issuer(), "")
	if err != nil {
		t.Fatal(err)
	}
	if other.KeyID() == iss.KeyID() || other.Audience() != DefaultAudience {
		t.Fatalf("second issuer: kid %s audience %s", other.KeyID(), other.Audience())
	}
}

func TestNewIssuerRejectsBadURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:9099", "ftp://127.0.0.1", "http://", "::"} {
		if _, err := NewIssuer(u, ""); err == nil {
			t.Errorf("NewIssuer(%q) succeeded", u)
		}
	}
}

func TestIssuerToken(t *testing.T) {
	clock := newClock()
	iss, srv := startIssuer(t, clock)
	j := NewJWT(JWTConfig{Issuer: iss.Issuer(), Now: clock.Now})
	validation := func(msg string) map[string]any {
		return map[string]any{"statusCode": float64(400), "code": "FST_ERR_VALIDATION", "error": "Bad Request", "message": msg}
	}
	tests := []struct {
		name     string
		body     string
		status   int
		errBody  map[string]any // for non-200
		subject  string
		orgs     []string
		lifetime int64 // exp - iat
		accepted bool  // the API's resolver accepts it at t0
	}{
		{"subject and organizations", `{"subject":"alice","organizations":["acme",1,null,"contoso",{}]}`, 200, nil, "alice", []string{"acme", "contoso"}, 3600, true},
		{"subject trimmed, no organizations", `{"subject":"  bob  "}`, 200, nil, "bob", []string{}, 3600, true},
		{"expiresIn 30m", `{"subject":"a","expiresIn":"30m"}`, 200, nil, "a", []string{}, 1800, true},
		{"expiresIn 1 day", `{"subject":"a","expiresIn":"1 day"}`, 200, nil, "a", []string{}, 86400, true},
		{"expiresIn 2 days, past the maximum lifetime", `{"subject":"a","expiresIn":"2 days"}`, 400, map[string]any{"error": "expiresIn must be at most 24h"}, "", nil, 0, false},
		{"expiresIn 10 years", `{"subject":"a","expiresIn":"10y"}`, 400, map[string]any{"error": "expiresIn must be at most 24h"}, "", nil, 0, false},
		{"typed subject", `{"subject":"user:alice"}`, 400, map[string]any{"error": `subject "user:alice" contains ':'` + idRulesHint}, "", nil, 0, false},
		{"wildcard subject", `{"subject":"*"}`, 400, map[string]any{"error": `subject "*" is "*", the wildcard` + idRulesHint}, "", nil, 0, false},
		{"userset organization", `{"subject":"a","organizations":["acme#member"]}`, 400, map[string]any{"error": `organization "acme#member" contains '#'` + idRulesHint}, "", nil, 0, false},
		{"organization with a space", `{"subject":"a","organizations":["a b"]}`, 400, map[string]any{"error": `organization "a b" contains whitespace` + idRulesHint}, "", nil, 0, false},
		{"expiresIn -1h", `{"subject":"a","expiresIn":"-1h"}`, 200, nil, "a", []string{}, -3600, false},
		{"missing subject", `{}`, 400, map[string]any{"error": "subject is required"}, "", nil, 0, false},
		{"blank subject", `{"subject":"   "}`, 400, map[string]any{"error": "subject is required"}, "", nil, 0, false},
		{"subject not a string", `{"subject":5}`, 400, validation("body/subject must be string"), "", nil, 0, false},
		{"subject null", `{"subject":null}`, 400, validation("body/subject must be string"), "", nil, 0, false},
		{"unknown key", `{"subject":"a","admin":true}`, 400, validation("body must NOT have additional properties"), "", nil, 0, false},
		{"organizations not an array", `{"subject":"a","organizations":"acme"}`, 400, validation("body/organizations must be array"), "", nil, 0, false},
		{"expiresIn not a string", `{"subject":"a","expiresIn":3600}`, 400, validation("body/expiresIn must be string"), "", nil, 0, false},
		{"expiresIn not a span", `{"subject":"a","expiresIn":"soon"}`, 400, map[string]any{"error": `expiresIn must be a time span such as "1h", "30m" or "-1h"`}, "", nil, 0, false},
		{"not JSON", `subject=a`, 400, validation("body must be object"), "", nil, 0, false},
		{"array", `[]`, 400, validation("body must be object"), "", nil, 0, false},
		{"null", `null`, 400, validation("body must be object"), "", nil, 0, false},
		{"empty body", ``, 400, validation("body must be object"), "", nil, 0, false},
		{"trailing data", `{"subject":"a"} {}`, 400, validation("body must be object"), "", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := http.Post(srv.URL+"/token", "application/json", strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status = %d, want %d (%v)", resp.StatusCode, tt.status, body)
			}
			if tt.status != 200 {
				if !reflect.DeepEqual(body, tt.errBody) {
					t.Fatalf("body = %v, want %v", body, tt.errBody)
				}
				return
			}
			tok, _ := body["access_token"].(string)
			if len(body) != 2 || body["token_type"] != "Bearer" || tok == "" {
				t.Fatalf("body = %v", body)
			}
			parts := strings.Split(tok, ".")
			var hdr, claims map[string]any
			decodeSegment(t, parts[0], &hdr)
			decodeSegment(t, parts[1], &claims)
			if !reflect.DeepEqual(hdr, map[string]any{"alg": "RS256", "kid": iss.KeyID()}) {
				t.Fatalf("header = %v", hdr)
			}
			var claimNames []string
			for k := range claims {
				claimNames = append(claimNames, k)
			}
			if len(claims) != 6 || claims["sub"] != tt.subject || claims["iss"] != iss.Issuer() || claims["aud"] != testAudience ||
				claims["iat"] != float64(t0.Unix()) || int64(claims["exp"].(float64))-t0.Unix() != tt.lifetime {
				t.Fatalf("claims = %v (%v)", claims, claimNames)
			}
			id, ok := j.Resolve(bearerRequest(tok))
			if ok != tt.accepted {
				t.Fatalf("resolver ok = %v, want %v", ok, tt.accepted)
			}
			if ok && (id.Subject != tt.subject || !reflect.DeepEqual(id.Organizations, tt.orgs)) {
				t.Fatalf("identity = %+v", id)
			}
		})
	}

	resp, err := http.Get(srv.URL + "/token")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /token = %d", resp.StatusCode)
	}
	resp, err = http.Post(srv.URL+"/token", "application/json", strings.NewReader(`{"subject":"`+strings.Repeat("a", maxTokenRequestBytes)+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("oversized body = %d", resp.StatusCode)
	}
}

func decodeSegment(t *testing.T, seg string, v any) {
	t.Helper()
	raw, err := b64dec(seg)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

func TestMint(t *testing.T) {
	clock := newClock()
	iss, _ := startIssuer(t, clock)
	for _, s := range []string{"", "  ", "\t\n"} {
		if _, err := iss.Mint(s, nil, time.Hour); !errors.Is(err, ErrSubjectRequired) {
			t.Errorf("Mint(%q) err = %v", s, err)
		}
	}
	if _, err := iss.Mint("a", nil, 200*365*24*time.Hour); err == nil {
		t.Error("Mint accepted a 200-year lifetime")
	}
	if _, err := iss.Mint("a", nil, MaxTokenLifetime+time.Second); err == nil {
		t.Error("Mint accepted a lifetime past MaxTokenLifetime")
	}
	if _, err := iss.Mint("a", nil, MaxTokenLifetime); err != nil {
		t.Errorf("Mint refused MaxTokenLifetime: %v", err)
	}
	tok, err := iss.Mint(" carol ", []string{"acme"}, 90*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	decodeSegment(t, strings.Split(tok, ".")[1], &claims)
	if claims["sub"] != "carol" || claims["exp"].(float64)-claims["iat"].(float64) != 90 || !reflect.DeepEqual(claims["organizations"], []any{"acme"}) {
		t.Fatalf("claims = %v", claims)
	}
	// The payload keeps the original claim order.
	raw, _ := b64dec(strings.Split(tok, ".")[1])
	if !regexpOrder(string(raw), "organizations", "sub", "iss", "aud", "iat", "exp") {
		t.Fatalf("claim order: %s", raw)
	}
}

func regexpOrder(s string, names ...string) bool {
	at := -1
	for _, n := range names {
		i := strings.Index(s, `"`+n+`"`)
		if i <= at {
			return false
		}
		at = i
	}
	return true
}

func TestParseTimeSpan(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"1h", time.Hour, true},
		{"30m", 30 * time.Minute, true},
		{"-1h", -time.Hour, true},
		{"+2h", 2 * time.Hour, true},
		{"90s", 90 * time.Second, true},
		{"90 seconds", 90 * time.Second, true},
		{"1 sec", time.Second, true},
		{"5 mins", 5 * time.Minute, true},
		{"2 hrs", 2 * time.Hour, true},
		{"1.5h", 90 * time.Minute, true},
		{"1H", time.Hour, true},
		{"2 days", 48 * time.Hour, true},
		{"1w", 7 * 24 * time.Hour, true},
		{"1 year", time.Duration(365.25*24) * time.Hour, true},
		{"10 minutes ago", -10 * time.Minute, true},
		{"10 minutes from now", 10 * time.Minute, true},
		{"- 1h", -time.Hour, true},
		{"0s", 0, true},
		{"0.4s", 0, true},
		{"-1h ago", 0, false},
		{"", 0, false},
		{"h", 0, false},
		{"1", 0, false},
		{"1hour ", 0, false},
		{" 1h", time.Hour, true}, // the grammar allows a space before the number
		{"1 fortnight", 0, false},
		{"1.h", 0, false},
		{".5h", 0, false},
		{"1e3s", 0, false},
		{"101y", 0, false},
		{"99999999999999999999999999y", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseTimeSpan(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseTimeSpan(%q) = %v, %v; want %v ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestListenLoopback(t *testing.T) {
	for _, host := range []string{"0.0.0.0", "", "::", "192.168.1.10", "127.0.0.2", "example.com", "localhost.", "LOCALHOST"} {
		ln, err := ListenLoopback(host, 0)
		if err == nil {
			ln.Close()
			t.Errorf("ListenLoopback(%q) succeeded", host)
		} else if !strings.Contains(err.Error(), "loopback only") {
			t.Errorf("ListenLoopback(%q) err = %v", host, err)
		}
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		ln, err := ListenLoopback(host, 0)
		if err != nil {
			t.Fatalf("ListenLoopback(%q): %v", host, err)
		}
		if ip := ln.Addr().(*net.TCPAddr).IP; !ip.Equal(net.IPv4(127, 0, 0, 1)) {
			t.Errorf("ListenLoopback(%q) bound %v", host, ip)
		}
		ln.Close()
	}
	// ::1 is allowed; the machine may lack IPv6, but it must not be refused
	// for being non-loopback.
	if ln, err := ListenLoopback("::1", 0); err == nil {
		if ip := ln.Addr().(*net.TCPAddr).IP; !ip.Equal(net.IPv6loopback) {
			t.Errorf("::1 bound %v", ip)
		}
		ln.Close()
	} else if strings.Contains(err.Error(), "loopback only") {
		t.Errorf("::1 refused: %v", err)
	}
	if _, err := ListenLoopback("127.0.0.1", 70000); err == nil {
		t.Error("port 70000 accepted")
	}
}

func FuzzTokenRequest(f *testing.F) {
	for _, s := range []string{`{"subject":"a"}`, `{"subject":" a ","organizations":["x",1],"expiresIn":"-1h"}`, `{}`, `[]`, `null`, `{"subject":"a","x":1}`, `{"expiresIn":"1.5 hours ago","subject":"b"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, rerr := parseTokenRequest(body)
		if rerr != nil {
			if _, err := json.Marshal(rerr.body); err != nil {
				t.Fatal(err)
			}
			return
		}
		if req.subject == "" || strings.TrimSpace(req.subject) != req.subject {
			t.Fatalf("subject %q accepted", req.subject)
		}
		if req.organizations == nil || req.ttl > MaxTokenLifetime || req.ttl < -maxTokenTTL || req.ttl%time.Second != 0 {
			t.Fatalf("request %+v", req)
		}
		if err := CheckIdentity(Identity{Subject: req.subject, Organizations: req.organizations}); err != nil {
			t.Fatalf("request %+v", req)
		}
	})
}

func FuzzParseTimeSpan(f *testing.F) {
	for _, s := range []string{"1h", "-1h", "30m", "1.5 hours ago", "100y", "2 weeks from now", "1e9s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseTimeSpan(s)
		if err != nil {
			return
		}
		if d > maxTokenTTL || d < -maxTokenTTL || d%time.Second != 0 {
			t.Fatalf("ParseTimeSpan(%q) = %v", s, d)
		}
	})
}

func TestDefaultIssuerURL(t *testing.T) {
	if got := DefaultIssuerURL(DefaultIssuerPort); got != "http://127.0.0.1:9099" {
		t.Fatalf("DefaultIssuerURL = %q", got)
	}
}
