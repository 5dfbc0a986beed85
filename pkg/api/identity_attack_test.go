package api_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// idFixture is one admitted archive (task owned by alice, organization
// acme, tuples delivered) served by the real handler with a resolver.
type idFixture struct {
	env     *apptest.Env
	srv     *httptest.Server
	handler http.Handler
	id      string // the archive
}

// newIDFixture builds an idFixture on the dev stack (testing.TB, so fuzz
// targets can share it).
func newIDFixture(tb testing.TB, res identity.Resolver) *idFixture {
	tb.Helper()
	ctx := context.Background()
	env := apptest.New(tb)
	id, _ := admitArchive(tb, env, testArchive{Key: "org/acme/<task>.wacz", SourceURL: "https://example.com/", Org: "acme", Owner: "alice", Body: []byte("wacz of one task")})
	drainOutbox(tb, env, 1)
	access, err := env.App.Access(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	perms, err := env.App.Permissions(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	s := &api.Server{Access: access, Identity: res, Submitters: perms}
	srv := serve(tb, s)
	return &idFixture{env: env, srv: srv, handler: s.Handler(), id: id}
}

// unauthenticated is the exact body of every 401.
const unauthenticated = `{"error":"unauthenticated"}` + "\n"

// hostileIdentity is a subject and organizations OpenFGA cannot hold: the
// edge must answer 401, not ask OpenFGA and answer 500.
type hostileIdentity struct {
	name    string
	subject string
	orgs    []string
}

func hostileIdentities() []hostileIdentity {
	many := make([]string, identity.MaxOrganizations+1)
	for i := range many {
		many[i] = "org" + strconv.Itoa(i)
	}
	return []hostileIdentity{
		{"typed subject", "user:alice", []string{"acme"}},
		{"userset subject", "alice#member", []string{"acme"}},
		{"wildcard subject", "*", []string{"acme"}},
		{"subject with a space", "alice smith", []string{"acme"}},
		{"subject of 300 characters", strings.Repeat("s", 300), []string{"acme"}},
		{"subject not UTF-8", "bob\xe9", []string{"acme"}},
		{"userset organization", "bob", []string{"acme#member"}},
		{"organization with a space", "bob", []string{"a b"}},
		{"typed organization", "bob", []string{"organization:acme"}},
		{"organization of 300 characters", "bob", []string{strings.Repeat("o", 300)}},
		{"wildcard organization", "bob", []string{"acme", "*"}},
		{"more organizations than OpenFGA takes", "bob", many},
	}
}

// identityRoutes are the routes every caller reaches.
func identityRoutes(archiveID string) []struct{ method, path string } {
	return []struct{ method, path string }{
		{"GET", "/api/me"},
		{"GET", "/api/archives"},
		{"POST", "/api/archives/" + archiveID + "/url"},
	}
}

// call sends one request and returns the status and the exact body.
func call(t *testing.T, base, method, path string, header http.Header, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestHostileDevHeadersAreUnauthenticated: a caller sends, through the dev
// headers, a subject or organizations OpenFGA refuses. Every route answers
// exactly 401 {"error":"unauthenticated"} and nothing is written.
func TestHostileDevHeadersAreUnauthenticated(t *testing.T) {
	t.Parallel()
	f := newIDFixture(t, identity.Headers{})
	before := testenv.TakeSnapshot(t, f.env.DSN)
	for _, h := range hostileIdentities() {
		for _, rt := range identityRoutes(f.id) {
			t.Run(h.name+" "+rt.method+" "+strings.Replace(rt.path, f.id, "{id}", 1), func(t *testing.T) {
				hdr := http.Header{}
				hdr.Set(identity.SubjectHeader, h.subject)
				hdr.Set(identity.OrganizationsHeader, strings.Join(h.orgs, ","))
				code, body := call(t, f.srv.URL, rt.method, rt.path, hdr, nil)
				if code != http.StatusUnauthorized || body != unauthenticated {
					t.Errorf("%s %s as %.40q of %.60q: %d %q, want 401 %q", rt.method, rt.path, h.subject, h.orgs, code, body, unauthenticated)
				}
			})
		}
	}
	// The same routes answer a well-formed identity: the 401s are the
	// identity's, not the routes'.
	for _, rt := range identityRoutes(f.id) {
		hdr := http.Header{identity.SubjectHeader: {"bob"}, identity.OrganizationsHeader: {"acme"}}
		if code, body := call(t, f.srv.URL, rt.method, rt.path, hdr, nil); code != http.StatusOK {
			t.Errorf("%s %s as bob of acme: %d %s", rt.method, rt.path, code, body)
		}
	}
	testenv.Unchanged(t, f.env.DSN, before)
}

// testIssuer signs any claims with a key its JWKS publishes: the API's JWT
// resolver trusts it like a real OIDC issuer.
type testIssuer struct {
	url string
	key *rsa.PrivateKey
}

func newTestIssuer(t testing.TB) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := jwk.Import(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]any{jwk.KeyIDKey: "k1", jwk.AlgorithmKey: jwa.RS256(), jwk.KeyUsageKey: "sig"} {
		if err := pub.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(doc)
	}))
	t.Cleanup(srv.Close)
	return &testIssuer{url: srv.URL, key: key}
}

// sign signs payload as it is (any bytes) under kid k1.
func (i *testIssuer) sign(t testing.TB, payload []byte) string {
	t.Helper()
	hdr := jws.NewHeaders()
	if err := hdr.Set(jws.KeyIDKey, "k1"); err != nil {
		t.Fatal(err)
	}
	tok, err := jws.Sign(payload, jws.WithKey(jwa.RS256(), i.key, jws.WithProtectedHeaders(hdr)))
	if err != nil {
		t.Fatal(err)
	}
	return string(tok)
}

// claims are valid claims for subject and orgs, valid for an hour.
func (i *testIssuer) claims(subject string, orgs []string) map[string]any {
	now := time.Now()
	return map[string]any{
		"sub": subject, "organizations": orgs, "iss": i.url, "aud": "capture-ledger",
		"iat": now.Unix(), "exp": now.Add(time.Hour).Unix(),
	}
}

func (i *testIssuer) token(t testing.TB, claims map[string]any) string {
	t.Helper()
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	return i.sign(t, b)
}

func without(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for _, k := range keys {
		delete(out, k)
	}
	return out
}

func withClaim(m map[string]any, k string, v any) map[string]any {
	out := without(m)
	out[k] = v
	return out
}

// TestHostileJWTsAreUnauthenticated: a correctly signed JWT whose sub or
// organizations OpenFGA refuses, one without exp, and one living longer
// than identity.MaxTokenLifetime are each answered exactly 401
// {"error":"unauthenticated"} on every route, and nothing is written. The
// Bearer scheme is accepted in any case.
func TestHostileJWTsAreUnauthenticated(t *testing.T) {
	t.Parallel()
	iss := newTestIssuer(t)
	f := newIDFixture(t, identity.NewJWT(identity.JWTConfig{Issuer: iss.url, Audience: "capture-ledger"}))
	before := testenv.TakeSnapshot(t, f.env.DSN)

	type attack struct {
		name  string
		token string
	}
	var attacks []attack
	for _, h := range hostileIdentities() {
		if strings.ToValidUTF8(h.subject, "") != h.subject {
			continue // JSON cannot carry it: json.Marshal would replace the byte
		}
		attacks = append(attacks, attack{h.name, iss.token(t, iss.claims(h.subject, h.orgs))})
	}
	good := iss.claims("bob", []string{"acme"})
	now := time.Now()
	attacks = append(attacks,
		attack{"subject padded with spaces", iss.token(t, withClaim(good, "sub", " bob "))},
		attack{"organization padded with spaces", iss.token(t, withClaim(good, "organizations", []string{" acme"}))},
		attack{"no exp", iss.token(t, without(good, "exp"))},
		attack{"no exp and no iat", iss.token(t, without(good, "exp", "iat"))},
		attack{"exp past the maximum lifetime", iss.token(t, withClaim(without(good, "iat"), "exp", now.Add(identity.MaxTokenLifetime+time.Hour).Unix()))},
		attack{"exp a century away", iss.token(t, withClaim(good, "exp", now.Add(100*365*24*time.Hour).Unix()))},
		attack{"lifetime past the maximum since iat", iss.token(t, withClaim(withClaim(good, "iat", now.Add(-2*time.Hour).Unix()), "exp", now.Add(identity.MaxTokenLifetime-time.Hour).Unix()))},
	)
	for _, a := range attacks {
		for _, rt := range identityRoutes(f.id) {
			t.Run(a.name+" "+rt.method+" "+strings.Replace(rt.path, f.id, "{id}", 1), func(t *testing.T) {
				hdr := http.Header{"Authorization": {"Bearer " + a.token}}
				code, body := call(t, f.srv.URL, rt.method, rt.path, hdr, nil)
				if code != http.StatusUnauthorized || body != unauthenticated {
					t.Errorf("%s %s: %d %q, want 401 %q", rt.method, rt.path, code, body, unauthenticated)
				}
			})
		}
	}

	// A well-formed token at the maximum lifetime is accepted, with the
	// scheme in any case (RFC 9110 §11.1).
	atMax := iss.token(t, withClaim(good, "exp", now.Add(identity.MaxTokenLifetime).Unix()))
	for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
		code, body := call(t, f.srv.URL, "GET", "/api/me", http.Header{"Authorization": {scheme + " " + atMax}}, nil)
		if code != http.StatusOK || body != `{"canSubmit":false,"organizations":["acme"],"subject":"bob"}`+"\n" {
			t.Errorf("scheme %q: %d %s", scheme, code, body)
		}
	}
	for _, rt := range identityRoutes(f.id) {
		if code, body := call(t, f.srv.URL, rt.method, rt.path, http.Header{"Authorization": {"bearer " + atMax}}, nil); code != http.StatusOK {
			t.Errorf("%s %s with a good token: %d %s", rt.method, rt.path, code, body)
		}
	}
	testenv.Unchanged(t, f.env.DSN, before)
}

// TestOversizedBodyIs413: a body over the route's limit is refused 413
// with Fastify's body, before identity and before anything is written,
// whether its Content-Length announces it or it arrives chunked.
func TestOversizedBodyIs413(t *testing.T) {
	t.Parallel()
	f := newIDFixture(t, identity.Headers{})
	before := testenv.TakeSnapshot(t, f.env.DSN)
	const want = `{"code":"FST_ERR_CTP_BODY_TOO_LARGE","error":"Payload Too Large","message":"Request body is too large: body must be at most 1024 bytes","statusCode":413}` + "\n"
	big := `{"x":"` + strings.Repeat("a", 4096) + `"}`
	for _, tc := range []struct {
		name string
		hdr  http.Header
		body io.Reader
	}{
		{"member, with Content-Length", http.Header{identity.SubjectHeader: {"bob"}, identity.OrganizationsHeader: {"acme"}}, strings.NewReader(big)},
		{"member, chunked", http.Header{identity.SubjectHeader: {"bob"}, identity.OrganizationsHeader: {"acme"}}, io.MultiReader(strings.NewReader(big))},
		{"nobody", http.Header{}, strings.NewReader(big)},
		{"a megabyte", http.Header{identity.SubjectHeader: {"bob"}}, strings.NewReader(strings.Repeat(" ", 1<<20))},
	} {
		code, body := call(t, f.srv.URL, "POST", "/api/archives/"+f.id+"/url", tc.hdr, tc.body)
		if code != http.StatusRequestEntityTooLarge || body != want {
			t.Errorf("%s: %d %q, want 413 %q", tc.name, code, body, want)
		}
	}
	// At the limit the body is read as usual: 400 for the unknown key.
	atLimit := `{"x":"` + strings.Repeat("a", 1024-8) + `"}`
	if code, body := call(t, f.srv.URL, "POST", "/api/archives/"+f.id+"/url", http.Header{identity.SubjectHeader: {"bob"}}, strings.NewReader(atLimit)); code != http.StatusBadRequest {
		t.Errorf("a body of exactly 1024 bytes: %d %s", code, body)
	}
	testenv.Unchanged(t, f.env.DSN, before)
}

// TestLevelReportsInDevHeaderMode pins what the startup note says about
// crawl level reports when identity is the dev header: a report is
// identified by X-Capture-ledger-Subject like every request. The flow's
// Bearer JWT alone is 401 and changes nothing; a subject that is neither
// the crawl's requester nor a submitter of its organization is 404; the
// requester's report is accepted.
func TestLevelReportsInDevHeaderMode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newIDFixture(t, identity.Headers{})
	flowSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `"00000000-0000-4000-8000-000000000000"`)
	}))
	t.Cleanup(flowSrv.Close)
	f.env.App.Settings.WebhookURL, f.env.App.Settings.WebhookToken = flowSrv.URL, "flow-token"
	svc, err := f.env.App.Crawls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.env.FGA.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "submitter", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}
	access, _ := f.env.App.Access(ctx)
	perms, _ := f.env.App.Permissions(ctx)
	srv := httptest.NewServer((&api.Server{Access: access, Crawls: svc, Identity: identity.Headers{}, Submitters: perms}).Handler())
	t.Cleanup(srv.Close)

	as := func(subject, orgs string) http.Header {
		return http.Header{identity.SubjectHeader: {subject}, identity.OrganizationsHeader: {orgs}}
	}
	code, body := call(t, srv.URL, "POST", "/api/crawls", as("alice", "acme"), strings.NewReader(`{"seeds":["https://www.example.com/"],"maxDepth":0,"maxPages":1,"perHostDelayMs":0}`))
	var started struct{ CrawlID string }
	if err := json.Unmarshal([]byte(body), &started); code != http.StatusAccepted || err != nil || started.CrawlID == "" {
		t.Fatalf("start: %d %s", code, body)
	}
	report := `{"depth":0,"results":[{"url":"https://www.example.com/","status":"failed","skipReason":"test"}]}`
	path := "/api/crawls/" + started.CrawlID + "/pages"

	before := testenv.TakeSnapshot(t, f.env.DSN)
	if code, body := call(t, srv.URL, "POST", path, http.Header{"Authorization": {"Bearer flow-token"}}, strings.NewReader(report)); code != http.StatusUnauthorized || body != unauthenticated {
		t.Errorf("report with the flow's Bearer token only: %d %q", code, body)
	}
	if code, body := call(t, srv.URL, "POST", path, as("mallory", "acme"), strings.NewReader(report)); code != http.StatusNotFound || body != `{"error":"not found"}`+"\n" {
		t.Errorf("report as a member who may not submit: %d %q", code, body)
	}
	testenv.Unchanged(t, f.env.DSN, before)
	if code, body := call(t, srv.URL, "POST", path, as("alice", ""), strings.NewReader(report)); code != http.StatusOK {
		t.Errorf("report as the crawl's requester: %d %s", code, body)
	}
}
