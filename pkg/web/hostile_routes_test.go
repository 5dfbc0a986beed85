package web_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// hostileValues are strings an attacker puts where a name, an id or a
// query goes, percent-encoded as they travel in a path or a query: bytes
// PostgreSQL text cannot hold or that are not UTF-8, characters OpenFGA
// reserves in its ids, and the usual path and length tricks.
var hostileValues = []struct{ name, enc string }{
	{"NUL", "%00"},
	{"invalid UTF-8", "%FF"},
	{"lone surrogate (CESU-8)", "%ED%A0%80"},
	{"overlong slash", "%C0%AF"},
	{"OpenFGA #", "acme%23member"},
	{"OpenFGA type prefix", "user%3Aalice"},
	{"OpenFGA wildcard", "%2A"},
	{"space", "a%20b"},
	{"newline", "a%0D%0Ab"},
	{"dot segments", "..%2F..%2Fetc"},
	{"long", strings.Repeat("a", 5000)},
	{"Japanese", "%E6%97%A5%E6%9C%AC"},
	{"markup", "%22%3E%3Cscript%3E" + markup + "%3C%2Fscript%3E"},
}

// markup is what a hostile value's script would run: no answer may carry
// it as markup.
const markup = "hostileMarkup()"

// refused says the answer is a refusal (or finds nothing): not a 2xx.
func refused(code int) bool { return code < 200 || code > 299 }

// hostileQueryNames are the query parameters any route of the API or the
// console reads, and a few it does not.
var hostileQueryNames = []string{"q", "org", "cursor", "limit", "before", "beforeId", "after", "state", "host",
	"crawl", "crawlId", "from", "to", "since", "seed", "rule", "url", "domain", "depth", "why", "source", "lang",
	"ts", "t", "l", "group", "page", "nope"}

// hostileHeaderValues are raw header values (set past net/http's client
// checks, as a raw socket can send them).
var hostileHeaderValues = []string{"\x00", "al\x00ice", "\xff", "\xed\xa0\x80", "acme#member", "user:alice", "*",
	"a b", "acme,\xff", strings.Repeat("a", 5000), ""}

// TestEveryRouteAnswersHostileStrings walks every route a whole serve
// answers on the API's origin (the console's screens and the crawl,
// capture, search, share and replay routes; listed from the router, so a
// route added later is walked too) and the routes of a replay origin, and
// sends each hostile strings where an attacker can put them: in each of
// the path's wildcards, in every query parameter, in the identity headers,
// in Host, Range and If-Range, and in the JSON body of a state-changing
// route. None may be a 5xx (a hostile string never reaches PostgreSQL or
// OpenFGA as an error) or echo the markup; on the API's routes a hostile
// wildcard, identity or body string is refused (400, 401) or finds nothing
// (404). docs/security.md says so.
func TestEveryRouteAnswersHostileStrings(t *testing.T) {
	t.Parallel()
	viewerDir := testenv.ReplayViewer(t)
	srv := startServe(t, func(s *config.Settings) { s.ReplayViewerDir = viewerDir })
	ctx := context.Background()
	if _, err := authz.Grant(ctx, srv.Env.FGA, "submitter", "alice", "acme"); err != nil {
		t.Fatal(err)
	}
	archiveID := addOwned(t, srv.Env, "https://www.example.com/")
	waitVisible(t, srv, archiveID)
	code, body := call(t, "POST", srv.URL+"/api/crawls", "alice", "acme", `{"seeds":["https://www.example.com/"],"maxDepth":0}`)
	if code != 202 {
		t.Fatalf("start a crawl: %d %s", code, body)
	}
	var started struct{ CrawlID string }
	if err := json.Unmarshal([]byte(body), &started); err != nil || started.CrawlID == "" {
		t.Fatalf("start a crawl: %s", body)
	}
	h := srv.Server.Handler()
	host := fmt.Sprintf("127.0.0.1:%d", srv.Port)

	// do sends one request straight to serve's handler (so that nothing
	// in between cleans it) and fails the test on a 5xx.
	sent := 0
	do := func(what, method, target, reqHost string, header map[string]string, body string) int {
		t.Helper()
		req := httptest.NewRequest(method, "http://"+host+"/", strings.NewReader(body))
		u, err := url.Parse(target)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		req.URL.Path, req.URL.RawPath, req.URL.RawQuery, req.RequestURI = u.Path, u.RawPath, u.RawQuery, target
		req.Host = reqHost
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(identity.SubjectHeader, "alice")
		req.Header.Set(identity.OrganizationsHeader, "acme")
		for k, v := range header {
			req.Header[http.CanonicalHeaderKey(k)] = []string{v}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		sent++
		if rec.Code >= 500 {
			t.Errorf("%.200s: %s %.200s: %d %.300s", what, method, target, rec.Code, rec.Body.String())
		}
		if strings.Contains(rec.Body.String(), "<script>"+markup) {
			t.Errorf("%.200s: %s %.200s: %d: the answer carries the hostile markup: %.300s", what, method, target, rec.Code, rec.Body.String())
		}
		return rec.Code
	}

	// A replay session's origin: the viewer, its worker, the token-bound
	// reads and the collection listing, each with hostile tokens, ids,
	// paths and ranges.
	code, body = call(t, "POST", srv.URL+"/api/archives/"+archiveID+"/replay", "alice", "acme", `{}`)
	if code != 200 {
		t.Fatalf("replay link: %d %s", code, body)
	}
	var link struct{ URL string }
	if err := json.Unmarshal([]byte(body), &link); err != nil {
		t.Fatalf("replay link: %s", body)
	}
	viewer, err := url.Parse(link.URL)
	if err != nil {
		t.Fatal(err)
	}
	token := tokenIn(viewer)
	if token == "" {
		t.Fatalf("no token in the replay link %s", link.URL)
	}
	for _, p := range []string{"/", "/sw.js", "/ui.js", "/index.html", "/wacz/" + archiveID + ".wacz", "/collection.json", "/favicon.ico", "/x"} {
		do("replay "+p, "GET", p+"?t="+url.QueryEscape(token), viewer.Host, nil, "")
		for _, v := range hostileValues {
			do("replay "+p+" token "+v.name, "GET", p+"?t="+v.enc, viewer.Host, nil, "")
			do("replay "+p+" path "+v.name, "GET", p+v.enc+"?t="+url.QueryEscape(token), viewer.Host, nil, "")
			do("replay "+p+" query "+v.name, "GET", p+"?t="+url.QueryEscape(token)+"&source="+v.enc+"&url="+v.enc, viewer.Host, nil, "")
		}
		for _, v := range hostileHeaderValues {
			do(fmt.Sprintf("replay %s Range %q", p, v), "GET", p+"?t="+url.QueryEscape(token), viewer.Host, map[string]string{"Range": "bytes=" + v}, "")
			do(fmt.Sprintf("replay %s If-Range %q", p, v), "GET", p+"?t="+url.QueryEscape(token), viewer.Host, map[string]string{"Range": "bytes=0-1", "If-Range": v}, "")
		}
		do("replay "+p+" HEAD", "HEAD", p+"?t="+url.QueryEscape(token), viewer.Host, nil, "")
		do("replay "+p+" POST", "POST", p+"?t="+url.QueryEscape(token), viewer.Host, nil, "{}")
	}
	for _, v := range hostileHeaderValues {
		do(fmt.Sprintf("replay Host %q.replay.localhost", v), "GET", "/?t="+url.QueryEscape(token), v+".replay.localhost", nil, "")
	}
	wild := regexp.MustCompile(`\{[^}]*\}`)
	routes := srv.Server.Routes()
	if len(routes) < 30 {
		t.Fatalf("only %d routes listed: %v", len(routes), routes)
	}
	// Deleting the archive goes last: the other routes are walked with it
	// still there.
	last := func(p string) int {
		if strings.HasPrefix(p, "DELETE /api/archives/{id}") {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(routes, func(a, b string) int { return cmp.Compare(last(a), last(b)) })
	for _, pattern := range routes {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok {
			method, path = "POST", pattern
		}
		path = strings.ReplaceAll(path, "{$}", "")
		// Each wildcard its real value (the test's archive, crawl or
		// share, where the route is about one), the others left so.
		fill := func(i int, v string) string {
			n := -1
			return wild.ReplaceAllStringFunc(path, func(w string) string {
				n++
				if n == i {
					return v
				}
				switch {
				case w == "{name}":
					return "console.js"
				case strings.HasPrefix(path, "/api/crawls/") || strings.HasPrefix(path, "/crawls/"):
					return started.CrawlID
				case w == "{shareId}":
					return "00000000-0000-0000-0000-000000000001"
				}
				return archiveID
			})
		}
		valid := fill(-1, "")
		// The API's routes (but the download's bytes, read with a link's
		// token, and the probes, which read no identity) must refuse what
		// the console's screens, which hold no data, may serve.
		api := strings.HasPrefix(path, "/api/") && !strings.HasSuffix(path, "/wacz")
		must := func(what string, code int) {
			t.Helper()
			if api && !refused(code) {
				t.Errorf("%.200s: %s %s: %d, want a refusal", what, method, path, code)
			}
		}
		do(pattern+" as it is", method, valid, host, nil, "")
		for i := range len(wild.FindAllString(path, -1)) {
			for _, v := range hostileValues {
				if v.name == "Japanese" {
					continue // a name, not an attack: may be a 404
				}
				what := pattern + " wildcard " + v.name
				must(what, do(what, method, fill(i, v.enc), host, nil, ""))
			}
		}
		for _, name := range hostileQueryNames {
			for _, v := range hostileValues {
				do(pattern+" ?"+name+"="+v.name, method, valid+"?"+name+"="+v.enc, host, nil, "")
			}
		}
		for _, v := range hostileHeaderValues {
			what := pattern + fmt.Sprintf(" subject %.40q", v)
			must(what, do(what, method, valid, host, map[string]string{identity.SubjectHeader: v}, ""))
			if v != "" { // no organization at all is a caller of none
				what = pattern + fmt.Sprintf(" organizations %.40q", v)
				must(what, do(what, method, valid, host, map[string]string{identity.OrganizationsHeader: v}, ""))
			}
			do(pattern+fmt.Sprintf(" Authorization %q", v), method, valid, host, map[string]string{"Authorization": "Bearer " + v}, "")
			do(pattern+fmt.Sprintf(" Accept-Language %q", v), method, valid, host, map[string]string{"Accept-Language": v}, "")
			do(pattern+fmt.Sprintf(" Host %q", v), method, valid, v, nil, "")
		}
		if !identity.Safe(method) {
			for _, b := range hostileBodies(archiveID, started.CrawlID) {
				code := do(pattern+" body "+b, method, valid, host, nil, b)
				if strings.Contains(b, `\u0000`) || strings.Contains(b, `\ud800`) || !utf8.ValidString(b) {
					must(pattern+" body "+b, code)
				}
			}
		}
	}

	t.Logf("%d requests over %d routes and a replay origin", sent, len(routes))
}

// hostileBodies are JSON bodies of state-changing routes with hostile
// strings in the fields those routes read (and a few they do not).
func hostileBodies(archiveID, crawlID string) []string {
	var out []string
	for _, v := range []string{`\u0000`, "\xff", `\ud800`, `acme#member`, `user:alice`, `*`, "a\u2028b", strings.Repeat("a", 5000)} {
		out = append(out,
			`{"grantee":"user:`+v+`","for":"1h"}`,
			`{"grantee":"`+v+`"}`,
			`{"organization":"`+v+`","expiresIn":"`+v+`"}`,
			`{"seeds":["https://e.com/`+v+`"],"rules":[{"follow":"`+v+`"}]}`,
			`{"urls":["https://e.com/`+v+`"],"engine":"`+v+`"}`,
			`{"url":"https://e.com/`+v+`","engine":"http"}`,
			`{"archiveIds":["`+v+`"]}`,
			`{"archives":["`+archiveID+`","`+v+`"]}`,
			`{"page":"`+v+`"}`,
			`{"reason":"`+v+`"}`,
			`{"depth":0,"results":[{"url":"`+v+`","status":"failed","taskId":"`+v+`"}]}`,
			`{"crawlId":"`+crawlID+`","`+v+`":1}`,
			`{"csrf":"`+v+`"}`,
		)
	}
	return append(out, "\xff\xfe", "{", "[]", "null", `"x"`, "{}{}", strings.Repeat("[", 100000))
}

// tokenIn finds a replay token in a viewer URL's fragment or query.
func tokenIn(u *url.URL) string {
	for _, s := range []string{u.RawQuery, u.Fragment} {
		if v, err := url.ParseQuery(s); err == nil {
			for _, k := range []string{"t", "source"} {
				if x := v.Get(k); x != "" {
					if su, err := url.Parse(x); err == nil && su.Query().Get("t") != "" {
						return su.Query().Get("t")
					}
					return x
				}
			}
		}
	}
	return ""
}

// waitVisible waits until alice's list shows the archive (serve's drain
// has delivered its tuples).
func waitVisible(t *testing.T, srv *served, id string) {
	t.Helper()
	for range 200 {
		code, body := call(t, "GET", srv.URL+"/api/archives/"+id, "alice", "acme", "")
		if code == 200 {
			return
		}
		_ = body
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("archive %s never became visible to alice", id)
}
