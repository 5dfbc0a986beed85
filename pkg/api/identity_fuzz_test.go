package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// serveRoutes sends header to every identity route of the real handler
// (in-process, so header bytes an HTTP client would refuse still reach it)
// and fails on any 5xx, or on a 401 whose body is not exactly the
// unauthenticated one. It returns the statuses.
func serveRoutes(t *testing.T, f *idFixture, header http.Header) []int {
	t.Helper()
	var codes []int
	for _, rt := range identityRoutes(f.id) {
		req := httptest.NewRequest(rt.method, rt.path, nil)
		for k, v := range header {
			req.Header[http.CanonicalHeaderKey(k)] = v
		}
		rec := httptest.NewRecorder()
		f.handler.ServeHTTP(rec, req)
		switch {
		case rec.Code >= 500:
			t.Fatalf("%s %s with %q: %d %s", rt.method, rt.path, header, rec.Code, rec.Body.String())
		case rec.Code == http.StatusUnauthorized && rec.Body.String() != unauthenticated:
			t.Fatalf("%s %s with %q: 401 body %q", rt.method, rt.path, header, rec.Body.String())
		}
		codes = append(codes, rec.Code)
	}
	return codes
}

// FuzzDevHeadersNoServerError: whatever the dev headers hold, /api/me,
// /api/archives and /api/archives/{id}/url answer below 500 — a 401 with
// the unauthenticated body when the identity is one OpenFGA could not
// hold, and exactly then.
func FuzzDevHeadersNoServerError(f *testing.F) {
	fx := newIDFixture(f, identity.Headers{})
	for _, h := range hostileIdentities() {
		f.Add(h.subject, strings.Join(h.orgs, ","))
	}
	for _, s := range [][2]string{
		{"bob", "acme"}, {"alice", ""}, {" bob ", " acme , , contoso ,"}, {"alice@example.com", "営業部"},
		{"", "acme"}, {"b\x01ob", "acme"}, {"bob", "ac\x00me"}, {"bob", "acme,acme"}, {"a*b", "**"},
		{"bob", "\u00a0acme\u00a0"}, {"bob", "a\u200bb"}, {"bob\u2028", "acme"}, {strings.Repeat("s", identity.MaxSubjectBytes), strings.Repeat("o", identity.MaxOrganizationBytes)},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, subject, orgs string) {
		hdr := http.Header{}
		hdr.Set(identity.SubjectHeader, subject)
		hdr.Set(identity.OrganizationsHeader, orgs)
		codes := serveRoutes(t, fx, hdr)
		_, resolved := identity.Headers{}.Resolve(&http.Request{Header: hdr})
		for _, c := range codes {
			if (c == http.StatusUnauthorized) == resolved {
				t.Fatalf("subject %q, organizations %q: statuses %v, resolved %v", subject, orgs, codes, resolved)
			}
		}
	})
}

// FuzzJWTClaimsNoServerError: whatever a correctly signed JWT carries
// (payload bytes signed as they are) and whatever the scheme word, the
// identity routes answer below 500 — a 401 with the unauthenticated body
// when the resolver refuses the token, and exactly then.
func FuzzJWTClaimsNoServerError(f *testing.F) {
	iss := newTestIssuer(f)
	res := identity.NewJWT(identity.JWTConfig{Issuer: iss.url, Audience: "capture-ledger"})
	fx := newIDFixture(f, res)
	// Seeds carry exp relative to now as the placeholder EXP, so that they
	// stay valid whenever the corpus runs.
	claims := func(sub string, orgs any, extra string) string {
		b, _ := json.Marshal(map[string]any{"sub": sub, "organizations": orgs, "iss": iss.url, "aud": "capture-ledger"})
		return strings.TrimSuffix(string(b), "}") + extra + "}"
	}
	for _, h := range hostileIdentities() {
		f.Add("Bearer", claims(h.subject, h.orgs, `,"exp":EXP`))
	}
	for _, s := range [][2]string{
		{"Bearer", claims("bob", []string{"acme"}, `,"exp":EXP`)},
		{"bearer", claims("bob", []string{"acme"}, `,"exp":EXP,"iat":0`)},
		{"BEARER", claims("alice", []string{}, `,"exp":EXP`)},
		{"Bearer", claims("bob", []string{"acme"}, ``)},
		{"Bearer", claims("bob", []string{"acme"}, `,"exp":99999999999`)},
		{"Bearer", claims("bob", []string{"acme"}, `,"exp":1e308`)},
		{"Bearer", claims("bob", []string{"acme"}, `,"exp":"EXP"`)},
		{"Bearer", claims(" bob", []any{"acme", 1, nil, "", " "}, `,"exp":EXP`)},
		{"Bearer", claims("bob", "acme", `,"exp":EXP`)},
		{"Bearer", `{"sub":null}`},
		{"Bearer", `[]`},
		{"Bearer", `not json`},
		{"Basic", claims("bob", []string{"acme"}, `,"exp":EXP`)},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, scheme, payload string) {
		payload = strings.ReplaceAll(payload, "EXP", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))
		hdr := http.Header{"Authorization": {scheme + " " + iss.sign(t, []byte(payload))}}
		codes := serveRoutes(t, fx, hdr)
		_, resolved := res.Resolve(&http.Request{Header: hdr})
		for _, c := range codes {
			if (c == http.StatusUnauthorized) == resolved {
				t.Fatalf("scheme %q, payload %q: statuses %v, resolved %v", scheme, payload, codes, resolved)
			}
		}
	})
}
