package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
)

// clock is a settable time for the server's current_time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

type fixture struct {
	env   *apptest.Env
	srv   *httptest.Server
	clock *clock
	wacz  []byte
	id    string // the admitted archive
}

// newFixture admits one archive (task owned by alice, org acme) from a
// manifest in the bucket, drains the outbox, and serves the API with the dev
// header resolver (or res when given).
func newFixture(t *testing.T, res identity.Resolver) *fixture {
	t.Helper()
	ctx := context.Background()
	env := apptest.New(t)
	f := &fixture{env: env, clock: &clock{t: time.Now()}, wacz: []byte("PK\x03\x04 not really a zip, but bytes we can compare")}
	f.id, _ = admitArchive(t, env, testArchive{Key: "org/acme/2026-12/<task>_c0ffee00.wacz", SourceURL: "https://example.com/<script>", Org: "acme", Owner: "alice", Body: f.wacz})
	drainOutbox(t, env, 1)
	store, _ := env.App.Store(ctx)
	perms := app.Permissions{Client: env.FGA, Now: f.clock.Now}
	if res == nil {
		res = identity.Headers{}
	}
	s := &api.Server{
		Access:   &archive.Access{Perms: perms, Catalog: store, Signer: env.App.Blob()},
		Identity: res, Submitters: perms,
	}
	f.srv = serve(t, s)
	return f
}

type resp struct {
	status int
	body   string
}

func (f *fixture) do(t *testing.T, method, path, subject, orgs, body string) resp {
	t.Helper()
	a := send(t, method, f.srv.URL+path, subject, orgs, body)
	return resp{a.status, strings.TrimSpace(string(a.body))}
}

func (f *fixture) mint(t *testing.T, subject, orgs string) (int, string) {
	t.Helper()
	r := f.do(t, "POST", "/api/archives/"+f.id+"/url", subject, orgs, "")
	if r.status != 200 {
		return r.status, r.body
	}
	var u struct {
		URL       string `json:"url"`
		ExpiresIn int    `json:"expiresIn"`
	}
	if err := json.Unmarshal([]byte(r.body), &u); err != nil || u.ExpiresIn != 300 || !strings.Contains(u.URL, "X-Amz-Signature=") {
		t.Fatalf("url body %q", r.body)
	}
	return 200, u.URL
}

func fetch(t *testing.T, url string) (int, []byte) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func TestEndToEndPresignedURL(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()

	// A member of the archive's organization mints a URL and S3 serves it.
	code, url := f.mint(t, "bob", "acme")
	if code != 200 {
		t.Fatalf("member: %d %s", code, url)
	}
	if st, b := fetch(t, url); st != 200 || string(b) != string(f.wacz) {
		t.Fatalf("GET presigned: %d %q", st, b)
	}
	// Tampered: another signature, or another key under the same signature.
	sig := strings.Index(url, "X-Amz-Signature=") + len("X-Amz-Signature=")
	flipped := url[:sig] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", url[sig])+1)%16]) + url[sig+1:]
	for name, bad := range map[string]string{
		"signature": flipped,
		"key":       strings.Replace(url, "_c0ffee00.wacz", "_c0ffee01.wacz", 1),
	} {
		if st, _ := fetch(t, bad); st != http.StatusForbidden {
			t.Errorf("tampered %s: S3 answered %d, want 403", name, st)
		}
	}

	// An outsider gets exactly what a random UUID gets.
	outsider := f.do(t, "POST", "/api/archives/"+f.id+"/url", "carol", "contoso", "")
	random := f.do(t, "POST", "/api/archives/"+uuid.NewString()+"/url", "bob", "acme", "")
	if outsider.status != 404 || outsider != random || outsider.body != `{"error":"not found"}` {
		t.Errorf("outsider %+v, random %+v", outsider, random)
	}
	// The owner sees it without any organization; another org's member does not.
	if code, _ := f.mint(t, "alice", ""); code != 200 {
		t.Errorf("owner: %d", code)
	}
	if code, _ := f.mint(t, "bob", "contoso"); code != 404 {
		t.Errorf("other org's member: %d", code)
	}
	// Claiming a membership in the body or query changes nothing: only the identity counts.
	if r := f.do(t, "POST", "/api/archives/"+f.id+"/url", "carol", "", `{"organizations":["acme"]}`); r.status != 400 {
		t.Errorf("unknown body key: %d %s", r.status, r.body)
	}

	// A time-limited share to dave: inside the window, then after it.
	granted := time.Now()
	err := f.env.FGA.Write(ctx, []authz.Tuple{{
		User: "user:dave", Relation: "viewer", Object: "archive:" + f.id,
		Condition: &authz.Condition{Name: "non_expired_grant", Context: map[string]any{"grant_time": granted.UTC().Format(time.RFC3339), "grant_duration": "1h"}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Set(granted.Add(30 * time.Minute))
	if code, _ := f.mint(t, "dave", ""); code != 200 {
		t.Errorf("share inside its window: %d", code)
	}
	f.clock.Set(granted.Add(61 * time.Minute))
	if code, _ := f.mint(t, "dave", ""); code != 404 {
		t.Errorf("share after its window: %d", code)
	}

	// The list: the member sees it, the outsider sees nothing.
	var page api.ArchivePage
	r := f.do(t, "GET", "/api/archives", "bob", "acme", "")
	if err := json.Unmarshal([]byte(r.body), &page); r.status != 200 || err != nil || len(page.Archives) != 1 || page.Archives[0].ID != f.id || page.Archives[0].ObjectKey == "" {
		t.Errorf("member list: %d %s", r.status, r.body)
	}
	if r := f.do(t, "GET", "/api/archives?bogus=1", "carol", "contoso", ""); r.status != 200 || !strings.Contains(r.body, `"archives":[]`) {
		t.Errorf("outsider list: %d %s", r.status, r.body)
	}
}

func TestAPIValidationOrder(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	cases := []struct {
		name, method, path, subject, body string
		status                            int
		contains                          string
	}{
		{"bad uuid before identity", "POST", "/api/archives/not-a-uuid/url", "", "", 400, "uuid"},
		{"bad before before identity", "GET", "/api/archives?before=yesterday", "", "", 400, "date-time"},
		{"repeated before", "GET", "/api/archives?before=2026-01-01T00:00:00Z&before=2026-01-02T00:00:00Z", "bob", "", 400, "single"},
		{"no identity on url", "POST", "/api/archives/" + uuid.NewString() + "/url", "", "", 401, `{"error":"unauthenticated"}`},
		{"no identity on list", "GET", "/api/archives", "", "", 401, `{"error":"unauthenticated"}`},
		{"no identity on me", "GET", "/api/me", "", "", 401, `{"error":"unauthenticated"}`},
		{"unknown route", "POST", "/api/crawls", "bob", "", 404, "Route POST:/api/crawls not found"},
		{"health", "GET", "/healthz", "", "", 200, `{"status":"ok"}`},
		{"body not an object", "POST", "/api/archives/" + uuid.NewString() + "/url", "bob", "[1]", 400, "Bad Request"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := f.do(t, tc.method, tc.path, tc.subject, "acme", tc.body)
			if r.status != tc.status || !strings.Contains(r.body, tc.contains) {
				t.Errorf("%d %s", r.status, r.body)
			}
		})
	}
	me := f.do(t, "GET", "/api/me", "bob", " acme , ,", "")
	if me.body != `{"canSubmit":false,"organizations":["acme"],"subject":"bob"}` {
		t.Errorf("me: %s", me.body)
	}
}
