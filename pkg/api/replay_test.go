package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
	"github.com/capture-ledger/ledgerctl/pkg/web"
)

// notFoundBody is the answer of every refusal (and of absence).
const notFoundBody = `{"error":"not found"}`

// replayFixture is a served API with replay on, and two archives of acme
// submitted by carol: alice sees them as a member of acme, nobody else.
type replayFixture struct {
	env   *apptest.Env
	srv   *httptest.Server
	svc   *replay.Service
	clock *clock
	log   *testenv.SyncBuffer
	obj   []byte
	ids   []string // the archives
	tasks []string // their capture jobs
	// origins are where the server has replay sessions.
	origins replay.Origins
	// another starts another server like srv, with exports as its crawl
	// download bounds.
	another func(t testing.TB, exports *visible.Gate) *httptest.Server
}

type replayOptions struct {
	objectSize int
	cache      time.Duration
	viewerDir  string
	// content, when set, is the object of the first archive (a real WACZ);
	// second, of the second.
	content, second []byte
	// sourceURL is what the first archive's manifest says was captured.
	sourceURL string
	// wrap, when set, wraps the served handler (to watch requests).
	wrap func(http.Handler) http.Handler
	// jwtIssuer, when set, identifies callers by its JWTs (on the
	// fixture's clock) instead of the dev headers.
	jwtIssuer *identity.Issuer
	// reads bounds the reads in flight (the service's defaults when zero).
	reads replay.ReadBounds
	// collectionLimit is the replay service's CollectionLimit.
	collectionLimit int
	// exports bounds the crawl downloads (the API's default when nil).
	exports *visible.Gate
}

// blobRanges reads archives in place (archive.Access.Ranges) from the
// fixture's bucket.
type blobRanges struct{ c *blob.Client }

func (b blobRanges) OpenObject(ctx context.Context, bucket, key string) (archive.Object, error) {
	return b.c.OpenReaderAt(ctx, bucket, key)
}

func newReplayFixture(t testing.TB, o replayOptions) *replayFixture {
	t.Helper()
	ctx := context.Background()
	env := apptest.New(t)
	f := &replayFixture{env: env, clock: &clock{t: time.Now()}, log: &testenv.SyncBuffer{}}
	if o.objectSize == 0 {
		o.objectSize = 100_000
	}
	f.obj = o.content
	if f.obj == nil {
		f.obj = make([]byte, o.objectSize)
		_, _ = rand.Read(f.obj)
	}
	if o.sourceURL == "" {
		o.sourceURL = "https://example.com/"
	}
	for i := range 2 {
		body := f.obj
		if i > 0 {
			body = []byte("the second archive")
			if o.second != nil {
				body = o.second
			}
		}
		id, task := admitArchive(t, env, testArchive{Key: "org/acme/2026-12/<task>_c0ffee00.wacz", SourceURL: o.sourceURL, Org: "acme", Owner: "carol", Body: body, Age: time.Duration(i+1) * time.Hour})
		f.ids, f.tasks = append(f.ids, id), append(f.tasks, task)
	}
	drainOutbox(t, env, 2)
	store, _ := env.App.Store(ctx)
	perms := app.Permissions{Client: env.FGA, Now: f.clock.Now}
	signer, err := replay.NewSigner([]byte("a test key that is long enough to sign with"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(f.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.svc = &replay.Service{Perms: perms, Catalog: store, Objects: env.App.Blob(), Signer: signer, Log: log, CheckCache: o.cache, Now: f.clock.Now, Reads: o.reads, CollectionLimit: o.collectionLimit}
	var resolver identity.Resolver = identity.Headers{}
	if o.jwtIssuer != nil {
		resolver = identity.NewJWT(identity.JWTConfig{Issuer: o.jwtIssuer.Issuer(), Audience: o.jwtIssuer.Audience(), Now: f.clock.Now})
	}
	server := func(exports *visible.Gate) *api.Server {
		return &api.Server{
			Access:   &archive.Access{Perms: perms, Catalog: store, Signer: env.App.Blob(), Ranges: blobRanges{env.App.Blob()}, Log: log},
			Exports:  exports,
			Identity: resolver, Submitters: perms, Log: log,
			Pages:  &web.Console{Config: web.Config{Who: web.WhoNames, Host: "127.0.0.1", Port: 7070, Features: web.Features{Replay: true}}},
			Replay: &api.Replay{Service: f.svc, ViewerDir: o.viewerDir},
		}
	}
	// Another serve process's API over the same ledger, OpenFGA, bucket
	// and signing key, with its own crawl download bounds.
	f.another = func(t testing.TB, exports *visible.Gate) *httptest.Server {
		s := server(exports)
		s.Replay.Origins = f.origins
		srv := httptest.NewServer(s.Handler())
		t.Cleanup(srv.Close)
		return srv
	}
	s := server(o.exports)
	h := s.Handler()
	if o.wrap != nil {
		h = o.wrap(h)
	}
	f.srv = httptest.NewUnstartedServer(h)
	// Replay origins are <label>.replay.localhost on the server's port, as
	// serve has them.
	origins, err := replay.ParseDomain("", f.srv.Listener.Addr().(*net.TCPAddr).Port)
	if err != nil {
		t.Fatal(err)
	}
	s.Replay.Origins, f.origins = origins, origins
	f.srv.Start()
	t.Cleanup(f.srv.Close)
	return f
}

// do sends a request to the fixture's server: path on the API's origin,
// or an absolute URL (a replay origin, whose name is sent as the Host while
// the request goes to the server's address, as a browser resolving
// *.localhost would).
func (f *replayFixture) do(t testing.TB, method, path string, header map[string]string, body string) answer {
	t.Helper()
	target, host := f.srv.URL+path, ""
	if strings.HasPrefix(path, "http://") {
		u, err := url.Parse(path)
		if err != nil {
			t.Fatal(err)
		}
		target, host = f.srv.URL+u.RequestURI(), u.Host
	}
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{res.StatusCode, res.Header, b}
}

func as(subject, orgs string) map[string]string {
	return map[string]string{identity.SubjectHeader: subject, identity.OrganizationsHeader: orgs}
}

// link mints a viewer link as subject and returns it with its token.
func (f *replayFixture) link(t testing.TB, id, subject, orgs, body string) (api.ReplayLink, string) {
	t.Helper()
	a := f.do(t, "POST", "/api/archives/"+id+"/replay", as(subject, orgs), body)
	if a.status != 200 {
		t.Fatalf("mint as %s: %d %s", subject, a.status, a.body)
	}
	var l api.ReplayLink
	if err := json.Unmarshal(a.body, &l); err != nil {
		t.Fatal(err)
	}
	return l, tokenOf(t, l.URL)
}

// tokenOf is the t parameter of the source a viewer link reads.
func tokenOf(t testing.TB, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	src, err := url.Parse(u.Query().Get("source"))
	if err != nil {
		t.Fatal(err)
	}
	tok := src.Query().Get("t")
	if tok == "" {
		t.Fatalf("no token in %s", link)
	}
	return tok
}

// labelOf is the session label a token is bound to (its payload's "l").
func labelOf(t testing.TB, tok string) string {
	t.Helper()
	payload, _, _ := strings.Cut(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ L string }
	if err := json.Unmarshal(raw, &m); err != nil || m.L == "" {
		t.Fatalf("no label in the token: %v", err)
	}
	return m.L
}

// reads returns how to address reads on the origin of tok's session: the
// URL reading archive id with token (any token, to try it there).
func (f *replayFixture) reads(t testing.TB, tok string) func(id, token string) string {
	origin := f.origins.Origin(labelOf(t, tok))
	return func(id, token string) string {
		return origin + "/wacz/" + id + ".wacz?t=" + url.QueryEscape(token)
	}
}

// TestReplayLink: POST /api/archives/{id}/replay checks identity and
// can_view like minting a URL, and answers a link to the viewer on an
// origin of the session's own, whose source is the archive read on that
// origin, valid for an hour (or what was asked, within bounds).
func TestReplayLink(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t, replayOptions{})
	id := f.ids[0]
	before := time.Now()
	l, tok := f.link(t, id, "alice", "acme", "")
	origin := f.origins.Origin(labelOf(t, tok))
	want := origin + "/?source=" + url.QueryEscape(f.reads(t, tok)(id, tok))
	if l.URL != want || !strings.HasPrefix(origin, "http://") || !strings.HasSuffix(origin, ".replay.localhost:"+f.srv.URL[strings.LastIndex(f.srv.URL, ":")+1:]) {
		t.Errorf("url %s, want %s", l.URL, want)
	}
	if d := l.ExpiresAt.Sub(before); d < time.Hour-2*time.Second || d > time.Hour+time.Second {
		t.Errorf("expiresAt %s is not an hour from now", l.ExpiresAt)
	}
	l, tok2 := f.link(t, id, "alice", "acme", `{"expiresIn":600}`)
	if d := l.ExpiresAt.Sub(before); d < 598*time.Second || d > 601*time.Second {
		t.Errorf("expiresIn 600: expiresAt %s", l.ExpiresAt)
	}
	// Every link is a session of its own, on an origin of its own.
	if labelOf(t, tok2) == labelOf(t, tok) {
		t.Errorf("two links share the origin %s", origin)
	}
	// The page to open, as the console names it (the row's sourceUrl).
	l, tok = f.link(t, id, "alice", "acme", `{"page":"https://example.com/a?b=c&d"}`)
	if want := f.origins.Origin(labelOf(t, tok)) + "/?source=" + url.QueryEscape(f.reads(t, tok)(id, tok)) + "&url=" + url.QueryEscape("https://example.com/a?b=c&d"); l.URL != want {
		t.Errorf("with a page: %s, want %s", l.URL, want)
	}
	for _, tc := range []struct {
		name, id, subject, orgs, body string
		status                        int
		want                          string
	}{
		{"outsider", id, "bob", "globex", "", 404, notFoundBody},
		{"member of another org", id, "alice", "globex", "", 404, notFoundBody},
		{"absent archive", uuid.NewString(), "alice", "acme", "", 404, notFoundBody},
		{"no identity", id, "", "", "", 401, `{"error":"unauthenticated"}`},
		{"not a uuid", "nope", "alice", "acme", "", 400, `params/id must match format`},
		{"too short", id, "alice", "acme", `{"expiresIn":59}`, 400, `body/expiresIn must be between 60 and 43200`},
		{"too long", id, "alice", "acme", `{"expiresIn":43201}`, 400, `body/expiresIn must be between 60 and 43200`},
		{"expiresIn twice", id, "alice", "acme", `{"expiresIn":60,"expiresIn":120}`, 400, `body/expiresIn must NOT appear more than once`},
		{"not an integer", id, "alice", "acme", `{"expiresIn":60.5}`, 400, `"body/expiresIn must be int64"`},
		{"unknown key", id, "alice", "acme", `{"ttl":60}`, 400, `must NOT have additional properties`},
		{"page not a URL", id, "alice", "acme", `{"page":"garden"}`, 400, `body/page must be an absolute http(s) URL`},
		{"page of another scheme", id, "alice", "acme", `{"page":"javascript:alert(1)"}`, 400, `body/page must be an absolute http(s) URL`},
		{"page with a NUL", id, "alice", "acme", `{"page":"https://e.com/\u0000"}`, 400, `body/page must NOT contain U+0000 (NUL)`},
		{"page with a lone surrogate", id, "alice", "acme", `{"page":"https://e.com/\ud800"}`, 400, `body/page must be valid UTF-8`},
		{"page too long", id, "alice", "acme", `{"page":"https://e.com/` + strings.Repeat("a", 8200) + `"}`, 400, `body/page is longer than 8192 bytes`},
	} {
		h := map[string]string{}
		if tc.subject != "" {
			h = as(tc.subject, tc.orgs)
		}
		a := f.do(t, "POST", "/api/archives/"+tc.id+"/replay", h, tc.body)
		if a.status != tc.status || !strings.Contains(string(a.body), tc.want) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, a.status, a.body, tc.status, tc.want)
		}
	}
	// The refusal is the URL mint's refusal, byte for byte.
	mine := f.do(t, "POST", "/api/archives/"+id+"/replay", as("bob", "globex"), "")
	theirs := f.do(t, "POST", "/api/archives/"+id+"/url", as("bob", "globex"), "")
	if !bytes.Equal(mine.body, theirs.body) || mine.status != theirs.status {
		t.Errorf("replay refusal %d %s, url refusal %d %s", mine.status, mine.body, theirs.status, theirs.body)
	}
}

// TestReplayEndsWithItsCredential: a session minted with a JWT that
// expires in 60 s reads no longer than that JWT is accepted, whatever
// lifetime was asked for; a new session needs the credential again.
func TestReplayEndsWithItsCredential(t *testing.T) {
	t.Parallel()
	iss := startIssuer(t, "capture-ledger")
	f := newReplayFixture(t, replayOptions{jwtIssuer: iss, cache: -1})
	id := f.ids[0]
	start := f.clock.Now()
	jwt, err := iss.Mint("alice", []string{"acme"}, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	bearer := map[string]string{"Authorization": "Bearer " + jwt}
	a := f.do(t, "POST", "/api/archives/"+id+"/replay", bearer, `{"expiresIn":43200}`)
	if a.status != 200 {
		t.Fatalf("mint with the JWT: %d %s", a.status, a.body)
	}
	var l api.ReplayLink
	_ = json.Unmarshal(a.body, &l)
	tok := tokenOf(t, l.URL)
	if l.ExpiresAt.After(start.Add(61 * time.Second)) {
		t.Errorf("a 12 h link from a 60 s JWT expires at %s (%s from now)", l.ExpiresAt, l.ExpiresAt.Sub(start))
	}
	read := f.reads(t, tok)(id, tok)
	if a := f.do(t, "GET", read, map[string]string{"Range": "bytes=0-9"}, ""); a.status != 206 {
		t.Fatalf("a read while the JWT holds: %d", a.status)
	}
	// Past the JWT's expiry and leeway: the API refuses the JWT, and the
	// session reads nothing.
	f.clock.Set(start.Add(60*time.Second + identity.DefaultLeeway + time.Second))
	if a := f.do(t, "POST", "/api/archives/"+id+"/url", bearer, ""); a.status != 401 {
		t.Fatalf("the expired JWT is still accepted: %d", a.status)
	}
	if a := f.do(t, "GET", read, map[string]string{"Range": "bytes=0-9"}, ""); a.status != 404 {
		t.Errorf("the session still reads after its JWT expired: %d", a.status)
	}
	if a := f.do(t, "POST", "/api/archives/"+id+"/replay", bearer, ""); a.status != 401 {
		t.Errorf("a new session with the expired JWT: %d", a.status)
	}
}

// TestReplayRanges: the viewer's reads, with a link's token, honour Range
// the way RFC 9110 says, and every byte is the object's.
func TestReplayRanges(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t, replayOptions{objectSize: 100_000})
	id := f.ids[0]
	_, tok := f.link(t, id, "alice", "acme", "")
	path := f.reads(t, tok)(id, tok)
	size := len(f.obj)
	whole := f.do(t, "GET", path, nil, "")
	if whole.status != 200 || !bytes.Equal(whole.body, f.obj) || whole.header.Get("Content-Length") != strconv.Itoa(size) {
		t.Fatalf("whole: %d, %d bytes, length %s", whole.status, len(whole.body), whole.header.Get("Content-Length"))
	}
	etag, modified := whole.header.Get("ETag"), whole.header.Get("Last-Modified")
	if etag == "" || modified == "" || whole.header.Get("Accept-Ranges") != "bytes" {
		t.Fatalf("validators: ETag %q, Last-Modified %q, Accept-Ranges %q", etag, modified, whole.header.Get("Accept-Ranges"))
	}
	if whole.header.Get("Cache-Control") != "private, no-store" || whole.header.Get("X-Content-Type-Options") != "nosniff" ||
		!strings.HasPrefix(whole.header.Get("Content-Disposition"), "attachment") {
		t.Errorf("the object may be kept or rendered: %v", whole.header)
	}
	for _, tc := range []struct {
		name, rng   string
		first, last int
	}{
		{"first bytes", "bytes=0-99", 0, 99},
		{"middle", "bytes=40000-49999", 40000, 49999},
		{"suffix", "bytes=-100", size - 100, size - 1},
		{"to the end", "bytes=99000-", 99000, size - 1},
		{"initial read of the viewer", "bytes=0-", 0, size - 1},
		{"last byte past the end", "bytes=99990-200000", 99990, size - 1},
		{"suffix longer than the object", "bytes=-200000", 0, size - 1},
	} {
		a := f.do(t, "GET", path, map[string]string{"Range": tc.rng}, "")
		wantCR := fmt.Sprintf("bytes %d-%d/%d", tc.first, tc.last, size)
		if a.status != 206 || a.header.Get("Content-Range") != wantCR || a.header.Get("Content-Length") != strconv.Itoa(tc.last-tc.first+1) {
			t.Errorf("%s: %d, Content-Range %q, Content-Length %q; want 206, %q", tc.name, a.status, a.header.Get("Content-Range"), a.header.Get("Content-Length"), wantCR)
			continue
		}
		if !bytes.Equal(a.body, f.obj[tc.first:tc.last+1]) {
			t.Errorf("%s: the bytes are not the object's", tc.name)
		}
		if a.header.Get("ETag") != etag || a.header.Get("Last-Modified") != modified {
			t.Errorf("%s: validators changed", tc.name)
		}
	}
	for _, rng := range []string{"bytes=100000-", "bytes=500000-600000", "bytes=-0"} {
		a := f.do(t, "GET", path, map[string]string{"Range": rng}, "")
		if a.status != 416 || a.header.Get("Content-Range") != fmt.Sprintf("bytes */%d", size) || len(a.body) != 0 {
			t.Errorf("%s: %d, Content-Range %q, %d bytes; want 416 bytes */%d", rng, a.status, a.header.Get("Content-Range"), len(a.body), size)
		}
	}
	// A header asking for something else than one byte range is ignored:
	// all of the object.
	for _, rng := range []string{"bytes=0-1,5-6", "items=0-5", "bytes=9-2", "bytes=x-"} {
		a := f.do(t, "GET", path, map[string]string{"Range": rng}, "")
		if a.status != 200 || !bytes.Equal(a.body, f.obj) {
			t.Errorf("%s: %d, %d bytes; want 200 and the object", rng, a.status, len(a.body))
		}
	}
	// If-Range: the range while the object is the one named, all of it once
	// it is not.
	if a := f.do(t, "GET", path, map[string]string{"Range": "bytes=0-9", "If-Range": etag}, ""); a.status != 206 || !bytes.Equal(a.body, f.obj[:10]) {
		t.Errorf("If-Range with the ETag: %d", a.status)
	}
	if a := f.do(t, "GET", path, map[string]string{"Range": "bytes=0-9", "If-Range": modified}, ""); a.status != 206 {
		t.Errorf("If-Range with the date: %d", a.status)
	}
	if a := f.do(t, "GET", path, map[string]string{"Range": "bytes=0-9", "If-Range": `"another"`}, ""); a.status != 200 || !bytes.Equal(a.body, f.obj) {
		t.Errorf("If-Range with another ETag: %d, %d bytes", a.status, len(a.body))
	}

	// HEAD, several times, with and without ranges: the same metadata,
	// no body.
	for i := range 3 {
		for _, tc := range []struct {
			rng, status, length, cr string
		}{
			{"", "200", strconv.Itoa(size), ""},
			{"bytes=0-99", "206", "100", fmt.Sprintf("bytes 0-99/%d", size)},
			{"bytes=-100", "206", "100", fmt.Sprintf("bytes %d-%d/%d", size-100, size-1, size)},
			{"bytes=200000-", "416", "0", fmt.Sprintf("bytes */%d", size)},
		} {
			h := map[string]string{}
			if tc.rng != "" {
				h["Range"] = tc.rng
			}
			a := f.do(t, "HEAD", path, h, "")
			if strconv.Itoa(a.status) != tc.status || a.header.Get("Content-Range") != tc.cr || len(a.body) != 0 ||
				(tc.status != "416" && (a.header.Get("Content-Length") != tc.length || a.header.Get("ETag") != etag || a.header.Get("Last-Modified") != modified || a.header.Get("Accept-Ranges") != "bytes")) {
				t.Errorf("HEAD %d %q: %d %v", i, tc.rng, a.status, a.header)
			}
		}
	}
}

// TestReplayRefusals: a read with a token altered in any field, with a
// bad signature, expired, for another archive, or presented by someone
// else, and a read by someone who lost access, all get the 404 every
// refusal gets — the same bytes as an archive that does not exist.
func TestReplayRefusals(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t, replayOptions{cache: -1})
	id, other := f.ids[0], f.ids[1]
	_, tok := f.link(t, id, "alice", "acme", "")
	_, otherTok := f.link(t, other, "alice", "acme", "")
	_, sameTok := f.link(t, id, "alice", "acme", "")
	waczPath := f.reads(t, tok)
	origin := f.origins.Origin(labelOf(t, tok))
	crawlLink := f.do(t, "POST", "/api/replay", as("alice", "acme"), `{"archives":["`+id+`"]}`)
	if crawlLink.status != 200 {
		t.Fatalf("a collection of the archive: %d %s", crawlLink.status, crawlLink.body)
	}
	var set api.ReplayLink
	_ = json.Unmarshal(crawlLink.body, &set)
	setTok := tokenOf(t, set.URL)
	if a := f.do(t, "GET", waczPath(id, tok), map[string]string{"Range": "bytes=0-9"}, ""); a.status != 206 {
		t.Fatalf("the untouched token: %d %s", a.status, a.body)
	}
	absent := f.do(t, "GET", waczPath(uuid.NewString(), tok), nil, "")
	if absent.status != 404 || string(bytes.TrimSpace(absent.body)) != notFoundBody {
		t.Fatalf("absent archive: %d %s", absent.status, absent.body)
	}
	edit := func(fn func(m map[string]any)) string {
		payload, sig, _ := strings.Cut(tok, ".")
		raw, _ := base64.RawURLEncoding.DecodeString(payload)
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		fn(m)
		raw, _ = json.Marshal(m)
		return base64.RawURLEncoding.EncodeToString(raw) + "." + sig
	}
	payload, sig, _ := strings.Cut(tok, ".")
	sigBytes, _ := base64.RawURLEncoding.DecodeString(sig)
	sigBytes[0] ^= 1
	cases := []struct {
		name, path string
		header     map[string]string
	}{
		{"archive field set to the other archive", waczPath(other, edit(func(m map[string]any) { m["a"] = other })), nil},
		{"subject field changed", waczPath(id, edit(func(m map[string]any) { m["s"] = "bob" })), nil},
		{"organization added", waczPath(id, edit(func(m map[string]any) { m["o"] = []string{"acme", "globex"} })), nil},
		{"organizations emptied", waczPath(id, edit(func(m map[string]any) { m["o"] = []string{} })), nil},
		{"expiry moved", waczPath(id, edit(func(m map[string]any) { m["e"] = time.Now().Add(2 * time.Hour).Unix() })), nil},
		{"signature changed", waczPath(id, payload+"."+base64.RawURLEncoding.EncodeToString(sigBytes)), nil},
		{"signature removed", waczPath(id, payload), nil},
		{"token for another archive", waczPath(other, tok), nil},
		{"another archive's token", waczPath(id, otherTok), nil},
		{"label changed", waczPath(id, edit(func(m map[string]any) { m["l"] = labelOf(t, otherTok) })), nil},
		{"another session's token for the same archive", waczPath(id, sameTok), nil},
		{"on another session's origin", f.reads(t, otherTok)(id, tok), nil},
		{"a collection's token", f.reads(t, setTok)(id, setTok), nil},
		{"on the API's origin", "/api/archives/" + id + "/wacz?t=" + url.QueryEscape(tok), nil},
		{"on the replay domain itself", "http://replay.localhost" + f.srv.URL[strings.LastIndex(f.srv.URL, ":"):] + "/wacz/" + id + ".wacz?t=" + url.QueryEscape(tok), nil},
		{"no token", origin + "/wacz/" + id + ".wacz", nil},
		{"two tokens", waczPath(id, tok) + "&t=" + url.QueryEscape(tok), nil},
		{"garbage", waczPath(id, "not a token"), nil},
		{"NUL", origin + "/wacz/" + id + ".wacz?t=" + url.QueryEscape(tok) + "%00", nil},
		{"invalid UTF-8", origin + "/wacz/" + id + ".wacz?t=%ff%fe." + sig, nil},
		{"huge", waczPath(id, strings.Repeat("A", 5000)+"."+sig), nil},
	}
	for _, tc := range cases {
		for _, method := range []string{"GET", "HEAD"} {
			a := f.do(t, method, tc.path, tc.header, "")
			if a.status != 404 || (method == "GET" && !bytes.Equal(a.body, absent.body) && !strings.HasPrefix(tc.path, "/api/")) || a.header.Get("Content-Type") != absent.header.Get("Content-Type") {
				t.Errorf("%s, %s: %d %q", tc.name, method, a.status, a.body)
			}
		}
	}
	// A replay origin reads no identity: dev headers change nothing.
	for _, who := range []map[string]string{as("alice", "acme"), as("bob", "globex")} {
		if a := f.do(t, "GET", waczPath(id, tok), who, ""); a.status != 200 {
			t.Errorf("presented with identity headers %v: %d", who, a.status)
		}
	}
	// Expiry, by the server's clock.
	f.clock.Set(time.Now().Add(time.Hour + time.Second))
	if a := f.do(t, "GET", waczPath(id, tok), nil, ""); a.status != 404 || !bytes.Equal(a.body, absent.body) {
		t.Errorf("expired: %d %s", a.status, a.body)
	}
	f.clock.Set(time.Now())
	if a := f.do(t, "GET", waczPath(id, tok), nil, ""); a.status != 200 {
		t.Errorf("back before expiry: %d", a.status)
	}
	// A bad archive id is a 400 before anything else, as on every route.
	if a := f.do(t, "GET", waczPath("nope", tok), nil, ""); a.status != 400 {
		t.Errorf("bad id: %d", a.status)
	}
}

// TestReplayRevocation: removing the tuple that gave access stops the
// next read of a token minted before (here with no answer cached; the
// cache's bound is DefaultCheckCache, exercised by the browser test).
func TestReplayRevocation(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t, replayOptions{cache: -1})
	id := f.ids[0]
	_, tok := f.link(t, id, "alice", "acme", "")
	_, carolTok := f.link(t, id, "carol", "", "")
	waczPath := f.reads(t, tok)
	if a := f.do(t, "GET", waczPath(id, tok), map[string]string{"Range": "bytes=0-99"}, ""); a.status != 206 {
		t.Fatalf("before: %d", a.status)
	}
	orgTuple := authz.Tuple{User: "organization:acme", Relation: "parent", Object: "capture_job:" + f.tasks[0]}
	if err := f.env.FGA.Write(context.Background(), nil, []authz.Tuple{orgTuple}); err != nil {
		t.Fatal(err)
	}
	if a := f.do(t, "GET", waczPath(id, tok), map[string]string{"Range": "bytes=100-199"}, ""); a.status != 404 || string(bytes.TrimSpace(a.body)) != notFoundBody {
		t.Errorf("after the org lost the archive: %d %s", a.status, a.body)
	}
	// The owner (carol submitted it) still reads.
	if a := f.do(t, "GET", f.reads(t, carolTok)(id, carolTok), map[string]string{"Range": "bytes=100-199"}, ""); a.status != 206 {
		t.Errorf("owner after: %d", a.status)
	}
	// Given back, the same token reads again: nothing was remembered.
	if err := f.env.FGA.Write(context.Background(), []authz.Tuple{orgTuple}, nil); err != nil {
		t.Fatal(err)
	}
	if a := f.do(t, "GET", waczPath(id, tok), map[string]string{"Range": "bytes=100-199"}, ""); a.status != 206 {
		t.Errorf("given back: %d", a.status)
	}
}

// TestReplayOriginHeaders: nothing a replay origin answers grants CORS to
// any origin; every answer carries its policy (with who may embed it), no
// sniffing and no referrer; and the API's origin serves nothing of replay
// (no viewer, no worker, no archive bytes), nor does a replay origin serve
// the API.
func TestReplayOriginHeaders(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t, replayOptions{})
	id := f.ids[0]
	l, tok := f.link(t, id, "alice", "acme", "")
	origin := f.origins.Origin(labelOf(t, tok))
	read := f.reads(t, tok)
	for _, o := range []string{origin, "http://127.0.0.1", f.srv.URL, "https://evil.example", "null"} {
		for _, path := range []string{read(id, tok), read(id, "bad"), l.URL, origin + "/sw/sw.js", origin + "/nothing"} {
			a := f.do(t, "GET", path, map[string]string{"Origin": o, "Range": "bytes=0-9"}, "")
			h := a.header
			if h.Get("Access-Control-Allow-Origin") != "" || h.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("%s from %s: CORS granted: %v", path, o, h)
			}
			csp := h.Get("Content-Security-Policy")
			if !(strings.Contains(csp, "connect-src 'self'") || strings.HasPrefix(csp, "default-src 'none'")) || !strings.Contains(csp, "frame-ancestors ") || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("%s: headers %v", path, h)
			}
		}
		a := f.do(t, "OPTIONS", read(id, tok), map[string]string{"Origin": o, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "range"}, "")
		if a.header.Get("Access-Control-Allow-Origin") != "" || a.header.Get("Access-Control-Allow-Headers") != "" {
			t.Errorf("preflight from %s: %d %v", o, a.status, a.header)
		}
	}
	// On the API's origin: none of replay's routes, for anyone.
	for _, path := range []string{"/replay/", "/replay/ui.js", "/replay/sw/sw.js", "/sw/sw.js", "/ui.js", "/api/archives/" + id + "/wacz?t=" + url.QueryEscape(tok), "/wacz/" + id + ".wacz?t=" + url.QueryEscape(tok), "/collection.json?t=" + url.QueryEscape(tok)} {
		a := f.do(t, "GET", path, as("alice", "acme"), "")
		if a.status != 404 || bytes.Contains(a.body, f.obj[:16]) || strings.Contains(string(a.body), "replay-web-page") {
			t.Errorf("the API's origin answers %s: %d", path, a.status)
		}
	}
	// On a replay origin: nothing of the API, whatever it is sent.
	for _, path := range []string{"/api/me", "/api/archives", "/api/archives/" + id + "/url", "/healthz"} {
		for _, method := range []string{"GET", "POST"} {
			a := f.do(t, method, origin+path, as("alice", "acme"), "")
			if a.status != 404 || strings.Contains(string(a.body), "alice") || strings.Contains(string(a.body), id) {
				t.Errorf("%s %s on a replay origin: %d %s", method, path, a.status, a.body)
			}
		}
	}
	// The viewer page may be embedded by nobody; the worker's frame only
	// by the page of its own origin.
	if csp := f.do(t, "GET", l.URL, nil, "").header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("viewer page policy %q", csp)
	}
	src := url.QueryEscape(read(id, tok))
	if a := f.do(t, "GET", origin+"/sw/?source="+src, nil, ""); a.status != 200 || !strings.Contains(a.header.Get("Content-Security-Policy"), "frame-ancestors 'self'") {
		t.Errorf("worker frame: %d %v", a.status, a.header)
	}
}

// TestReplayNeverLogsTokens: whatever the reads, granted or refused, the
// log (at debug level) holds neither a token nor any part of one.
func TestReplayNeverLogsTokens(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t, replayOptions{cache: -1})
	id := f.ids[0]
	_, tok := f.link(t, id, "alice", "acme", "")
	waczPath := f.reads(t, tok)
	payload, sig, _ := strings.Cut(tok, ".")
	f.do(t, "GET", waczPath(id, tok), map[string]string{"Range": "bytes=0-9"}, "")
	f.do(t, "GET", waczPath(id, payload+"."+sig[:10]), nil, "")
	f.do(t, "GET", waczPath(f.ids[1], tok), nil, "")
	f.do(t, "HEAD", waczPath(id, tok), map[string]string{"Range": "bytes=999999-"}, "")
	f.clock.Set(time.Now().Add(2 * time.Hour))
	f.do(t, "GET", waczPath(id, tok), nil, "")
	f.clock.Set(time.Now())
	if err := f.env.FGA.Write(context.Background(), nil, []authz.Tuple{{User: "organization:acme", Relation: "parent", Object: "capture_job:" + f.tasks[0]}}); err != nil {
		t.Fatal(err)
	}
	f.do(t, "GET", waczPath(id, tok), nil, "")
	// A row whose object is gone: warned about, by archive id only.
	if err := f.env.Blob.DeleteBucket(context.Background(), f.env.Bucket); err != nil {
		t.Fatal(err)
	}
	_, carolTok := f.link(t, id, "carol", "", "")
	if a := f.do(t, "GET", f.reads(t, carolTok)(id, carolTok), nil, ""); a.status != 404 {
		t.Errorf("object gone: %d %s", a.status, a.body)
	}
	logged := f.log.String()
	for _, part := range []string{tok, payload, sig, sig[:16], payload[:16], url.QueryEscape(tok), carolTok[:16]} {
		if strings.Contains(logged, part) {
			t.Fatalf("the log holds a token's part %q:\n%s", part, logged)
		}
	}
	for _, want := range []string{"Replay link issued", "Replay token refused", "Replay read denied", "whose object S3 does not"} {
		if !strings.Contains(logged, want) {
			t.Errorf("the log lacks %q:\n%s", want, logged)
		}
	}
}

// TestViewerPage: the root of a session's origin embeds ReplayWeb.page
// around that session's source only, serves its two files unmodified,
// and says how to install them when they are missing.
func TestViewerPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ui, sw := []byte("/* ui.js of the test */"), []byte("/* sw.js of the test */")
	_ = os.WriteFile(filepath.Join(dir, "ui.js"), ui, 0o600)
	f := newReplayFixture(t, replayOptions{viewerDir: dir})
	id, other := f.ids[0], f.ids[1]
	l, tok := f.link(t, id, "alice", "acme", "")
	origin := f.origins.Origin(labelOf(t, tok))
	missing := f.do(t, "GET", l.URL, nil, "")
	if missing.status != 503 || !strings.Contains(string(missing.body), "make replay-viewer") || strings.Contains(string(missing.body), "<replay-web-page") {
		t.Errorf("without sw.js: %d %s", missing.status, missing.body)
	}
	if ja := f.do(t, "GET", l.URL, map[string]string{"Accept-Language": "ja"}, ""); !strings.Contains(string(ja.body), "viewer（ReplayWeb.page）が入っていない") {
		t.Errorf("in Japanese: %s", ja.body)
	}
	_ = os.WriteFile(filepath.Join(dir, "sw.js"), sw, 0o600)
	page := f.do(t, "GET", l.URL, nil, "")
	body := string(page.body)
	src := strings.ReplaceAll(f.reads(t, tok)(id, tok), "&", "&amp;")
	if page.status != 200 || !strings.Contains(body, `<replay-web-page source="`+src+`" url="page:0" replaybase="/sw/"`) ||
		!strings.Contains(body, `<script src="/ui.js">`) || page.header.Get("Referrer-Policy") != "no-referrer" ||
		page.header.Get("Clear-Site-Data") != `"cookies"` {
		t.Errorf("viewer page: %d %v\n%s", page.status, page.header, body)
	}
	for path, want := range map[string][]byte{"/ui.js": ui, "/sw/sw.js": sw, "/sw/ui.js": ui} {
		a := f.do(t, "GET", origin+path, nil, "")
		if a.status != 200 || !bytes.Equal(a.body, want) || !strings.HasPrefix(a.header.Get("Content-Type"), "text/javascript") {
			t.Errorf("%s: %d %q %s", path, a.status, a.body, a.header.Get("Content-Type"))
		}
	}
	if a := f.do(t, "GET", origin+"/sw.js", nil, ""); a.status != 404 {
		t.Errorf("/sw.js (outside the worker's folder): %d", a.status)
	}
	_, otherTok := f.link(t, other, "alice", "acme", "")
	own := f.reads(t, tok)(id, tok)
	for _, q := range []string{
		"?source=" + url.QueryEscape("https://evil.example/x.wacz"),
		"?source=" + url.QueryEscape("https://evil.example/x.json"),
		"?source=" + url.QueryEscape("/wacz/"+id+".wacz?t="+url.QueryEscape(tok)),
		"?source=" + url.QueryEscape(f.reads(t, otherTok)(other, otherTok)),
		"?source=" + url.QueryEscape(f.reads(t, tok)(other, otherTok)),
		"?source=" + url.QueryEscape(own+"&u=1"),
		"?source=" + url.QueryEscape(own+"#x"),
		"?source=" + url.QueryEscape(strings.Replace(own, "http://", "https://", 1)),
		"?source=" + url.QueryEscape(origin+"/collection.json?t="+url.QueryEscape(tok)),
		"?source=" + url.QueryEscape(own) + "&source=" + url.QueryEscape(own),
		"?source=" + url.QueryEscape(own) + "&ts=abc",
	} {
		for _, path := range []string{"/", "/sw/"} {
			if path == "/sw/" && strings.HasSuffix(q, "&ts=abc") {
				continue // the worker's frame reads only its source
			}
			a := f.do(t, "GET", origin+path+q, nil, "")
			if a.status != 400 || strings.Contains(string(a.body), "<replay-web-page") {
				t.Errorf("%s%s: %d", path, q, a.status)
			}
		}
	}
	hostile := f.do(t, "GET", origin+"/?source="+url.QueryEscape(own)+"&url="+url.QueryEscape(`x"><script>alert(1)</script>`), nil, "")
	if hostile.status != 200 || strings.Contains(string(hostile.body), "<script>alert(1)") {
		t.Errorf("hostile url: %d %s", hostile.status, hostile.body)
	}
	if a := f.do(t, "GET", origin+"/", nil, ""); a.status != 404 || strings.Contains(string(a.body), "<replay-web-page") {
		t.Errorf("no source: %d", a.status)
	}
}

// FuzzViewerPage: any query to a replay origin's viewer or worker frame
// gives the page or a refusal (never a 500), and the page embeds nothing
// but a source of that origin.
func FuzzViewerPage(f *testing.F) {
	dir := f.TempDir()
	_ = os.WriteFile(filepath.Join(dir, "ui.js"), []byte("ui"), 0o600)
	_ = os.WriteFile(filepath.Join(dir, "sw.js"), []byte("sw"), 0o600)
	signer, err := replay.NewSigner([]byte("a test key that is long enough to sign with"))
	if err != nil {
		f.Fatal(err)
	}
	origins := replay.Origins{Scheme: "http", Domain: "replay.localhost", Port: "7070"}
	s := &api.Server{Replay: &api.Replay{ViewerDir: dir, Origins: origins, Service: &replay.Service{Signer: signer}}}
	h := s.Handler()
	label, _ := replay.NewLabel()
	tok, _ := signer.Sign(replay.Claims{Label: label, ArchiveID: "0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", Subject: "alice", Organizations: []string{"acme"}, Expires: time.Now().Add(time.Hour)})
	good := origins.Origin(label) + replay.ReadPath("0b6b2c4e-3f5a-4c1e-9d7a-2f1e0c9b8a71", tok)
	for _, q := range []string{"", "source=" + url.QueryEscape(good), "source=" + url.QueryEscape(good) + "&url=%00", "ts=1&ts=2", "url=%ff", "source=%2F%2Fevil", "source=http%3A%2F%2Fevil%2Fx.json"} {
		f.Add(q, false)
		f.Add(q, true)
	}
	f.Fuzz(func(t *testing.T, q string, frame bool) {
		path := "/"
		if frame {
			path = "/sw/"
		}
		req := httptest.NewRequest("GET", path, nil)
		req.Host = label + ".replay.localhost:7070"
		req.URL.RawQuery = q
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 && rec.Code != 400 && rec.Code != 404 {
			t.Fatalf("%q: %d", q, rec.Code)
		}
		body := rec.Body.String()
		if i := strings.Index(body, `<replay-web-page source="`); i >= 0 && !strings.HasPrefix(body[i+len(`<replay-web-page source="`):], origins.Origin(label)+"/wacz/") {
			t.Fatalf("%q: embeds %s", q, body[i:min(len(body), i+120)])
		}
	})
}

// TestReplayCollections: POST /api/replay opens the archives of a list the
// caller may view as one collection, whose listing (ReplayWeb.page's
// multi-WACZ JSON, on the session's origin) is made from what is visible
// at each request, each archive read with a read token of the same
// session; bad bodies are 400s naming the field; nothing visible is the
// same 404 as nothing at all.
func TestReplayCollections(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t, replayOptions{cache: -1})
	a, b := f.ids[0], f.ids[1]
	mint := func(who map[string]string, path, body string) (int, api.ReplayLink, string) {
		r := f.do(t, "POST", path, who, body)
		var l api.ReplayLink
		_ = json.Unmarshal(r.body, &l)
		return r.status, l, string(r.body)
	}
	status, l, raw := mint(as("alice", "acme"), "/api/replay", `{"archives":["`+a+`","`+b+`","`+a+`"],"expiresIn":600}`)
	if status != 200 || l.Archives != 2 {
		t.Fatalf("a set of two: %d %s", status, raw)
	}
	tok := tokenOf(t, l.URL)
	origin := f.origins.Origin(labelOf(t, tok))
	listing := func() (int, []string) {
		r := f.do(t, "GET", origin+"/collection.json?t="+url.QueryEscape(tok), nil, "")
		var c struct {
			Resources []struct{ Name, Path string } `json:"resources"`
		}
		_ = json.Unmarshal(r.body, &c)
		var names []string
		for _, res := range c.Resources {
			names = append(names, res.Name)
			// Each path reads through this origin, with a token of this
			// session for that archive.
			if got := f.do(t, "GET", origin+res.Path, map[string]string{"Range": "bytes=0-3"}, ""); got.status != 206 {
				t.Errorf("reading %s from the listing: %d", res.Name, got.status)
			}
			if got := f.do(t, "GET", f.origins.Origin("abcdefghijklmnopqrstuvwxyz")+res.Path, nil, ""); got.status != 404 {
				t.Errorf("the listing's read of %s on another origin: %d", res.Name, got.status)
			}
		}
		if !strings.Contains(r.header.Get("Cache-Control"), "no-store") || r.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("listing headers: %v", r.header)
		}
		return r.status, names
	}
	// Each WACZ is named by its object's name, which a crawl's revisit
	// records name their original's WACZ by.
	nameA, nameB := f.tasks[0]+"_c0ffee00.wacz", f.tasks[1]+"_c0ffee00.wacz"
	if s, names := listing(); s != 200 || strings.Join(names, ",") != nameA+","+nameB {
		t.Errorf("listing: %d %v", s, names)
	}
	// The listing on another session's origin, or with a read token: 404.
	_, other := f.link(t, a, "alice", "acme", "")
	if r := f.do(t, "GET", f.origins.Origin(labelOf(t, other))+"/collection.json?t="+url.QueryEscape(tok), nil, ""); r.status != 404 {
		t.Errorf("the listing on another origin: %d", r.status)
	}
	if r := f.do(t, "GET", f.origins.Origin(labelOf(t, other))+"/collection.json?t="+url.QueryEscape(other), nil, ""); r.status != 404 {
		t.Errorf("a listing with a read token: %d", r.status)
	}
	// acme loses archive b: the next listing has a alone.
	if err := f.env.FGA.Write(context.Background(), nil, []authz.Tuple{{User: "organization:acme", Relation: "parent", Object: "capture_job:" + f.tasks[1]}}); err != nil {
		t.Fatal(err)
	}
	if s, names := listing(); s != 200 || strings.Join(names, ",") != nameA {
		t.Errorf("listing after the revocation: %d %v", s, names)
	}
	// Nothing visible, an absent crawl, a crawl of nothing visible: one 404.
	nobody, _, nobodyRaw := mint(as("bob", "globex"), "/api/replay", `{"archives":["`+a+`"]}`)
	absent, _, absentRaw := mint(as("alice", "acme"), "/api/crawls/"+uuid.NewString()+"/replay", "")
	if nobody != 404 || absent != 404 || nobodyRaw != absentRaw {
		t.Errorf("nothing visible: %d %s; absent crawl: %d %s", nobody, nobodyRaw, absent, absentRaw)
	}
	many := make([]string, replay.MaxSet+1)
	for i := range many {
		many[i] = `"` + uuid.NewString() + `"`
	}
	for _, tc := range []struct{ path, body, want string }{
		{"/api/replay", `{}`, "body/archives must hold 1 to 50"},
		{"/api/replay", `{"archives":[]}`, "body/archives must hold 1 to 50"},
		{"/api/replay", `{"archives":[` + strings.Join(many, ",") + `]}`, "body/archives must hold 1 to 50"},
		{"/api/replay", `{"archives":["nope"]}`, `body/archives/0 must match format \"uuid\"`},
		{"/api/replay", `{"archives":["` + a + `"],"expiresIn":5}`, "body/expiresIn must be between"},
		{"/api/replay", `{"archives":["` + a + `"],"extra":1}`, "must NOT have additional properties"},
		{"/api/replay", `{"archives":["` + a + "\u0000" + `"]}`, "400"},
		{"/api/crawls/nope/replay", ``, "params/id must match format"},
		{"/api/crawls/" + uuid.NewString() + "/replay", `{"page":"https://example.com/"}`, "page (a collection opens at its first page)"},
	} {
		r := f.do(t, "POST", tc.path, as("alice", "acme"), tc.body)
		if r.status != 400 || (tc.want != "400" && !strings.Contains(string(r.body), tc.want)) {
			t.Errorf("%s %s: %d %s, want 400 %s", tc.path, tc.body, r.status, r.body, tc.want)
		}
	}
	if r := f.do(t, "POST", "/api/replay", nil, `{"archives":["`+a+`"]}`); r.status != 401 {
		t.Errorf("no identity: %d", r.status)
	}
}

// TestReplayAndDownloadTokensStayApart: a replay session's token (which
// every page of the session can read from its address) opens nothing on
// the API's origin — not the download route, valid as long as the session
// rather than the minute a download link lives — and a download link's
// token (minted on the API's origin) opens no replay session.
func TestReplayAndDownloadTokensStayApart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"ui.js", "sw.js"} {
		_ = os.WriteFile(filepath.Join(dir, name), []byte("/* "+name+" */"), 0o600)
	}
	f := newReplayFixture(t, replayOptions{viewerDir: dir})
	id := f.ids[0]
	_, tok := f.link(t, id, "alice", "acme", "")
	if a := f.do(t, "GET", f.reads(t, tok)(id, tok), nil, ""); a.status != 200 {
		t.Fatalf("the session's read: %d", a.status)
	}
	dl := f.do(t, "POST", "/api/archives/"+id+"/download", as("alice", "acme"), "")
	var link api.DownloadLink
	if err := json.Unmarshal(dl.body, &link); err != nil || dl.status != 200 {
		t.Fatalf("download link: %d %s", dl.status, dl.body)
	}
	if a := f.do(t, "GET", link.URL, nil, ""); a.status != 200 || !bytes.Equal(a.body, f.obj) {
		t.Fatalf("the download: %d", a.status)
	}
	u, _ := url.Parse(link.URL)
	dlTok := u.Query().Get("t")
	dlOrigin := f.origins.Origin(u.Query().Get("l"))
	for _, tc := range []struct {
		name, path string
		want       int
	}{
		{"a session's token on the download route", "/api/archives/" + id + "/wacz?" + url.Values{"l": {labelOf(t, tok)}, "t": {tok}}.Encode(), 404},
		{"a download token on its label's replay origin", f.reads(t, dlTok)(id, dlTok), 404},
		{"a download token as a viewer's source", dlOrigin + "/?source=" + url.QueryEscape(f.reads(t, dlTok)(id, dlTok)), 400},
		{"a download token as the worker frame's source", dlOrigin + "/sw/?source=" + url.QueryEscape(f.reads(t, dlTok)(id, dlTok)), 400},
	} {
		if a := f.do(t, "GET", tc.path, nil, ""); a.status != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, a.status, tc.want)
		}
	}
}
