package api_test

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/api"
)

// tokenParam is a read token in a listing's paths, which differs per run.
var tokenParam = regexp.MustCompile(`t=[^"&]*`)

// TestReplayOriginAnswers: every route of a replay origin, and what is
// not one, answers exactly the status, headers and (for JSON and errors)
// body written below — recorded from the code before the replay origin
// moved out of package api into package viewer, so that a move, or any
// later edit, that changes what a hostile page's origin sends fails here.
// Values that differ per run (Date, ETag, Last-Modified, the length of a
// page holding a token, a token) read "*", archive ids "<archive N>".
func TestReplayOriginAnswers(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"ui.js", "sw.js"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("/* "+name+" of the test */"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	f := newReplayFixture(t, replayOptions{viewerDir: dir, objectSize: 1000})
	id := f.ids[0]
	l, tok := f.link(t, id, "alice", "acme", "")
	origin := f.origins.Origin(labelOf(t, tok))
	read := f.reads(t, tok)(id, tok)
	set := f.do(t, "POST", "/api/replay", as("alice", "acme"), `{"archives":["`+f.ids[0]+`","`+f.ids[1]+`"]}`)
	var setLink api.ReplayLink
	if err := json.Unmarshal(set.body, &setLink); err != nil || set.status != 200 {
		t.Fatalf("a set: %d %s", set.status, set.body)
	}
	setTok := tokenOf(t, setLink.URL)
	setOrigin := f.origins.Origin(labelOf(t, setTok))
	src := url.QueryEscape(read)
	for _, tc := range []struct {
		name, method, url string
		header            map[string]string
		want              string
	}{
		{"viewer page", "GET", l.URL, nil, `200
Cache-Control: no-store
Clear-Site-Data: "cookies"
Content-Language: en
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: text/html; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
Vary: Accept-Language
X-Content-Type-Options: nosniff`},
		{"viewer page in Japanese", "GET", l.URL, map[string]string{"Accept-Language": "ja"}, `200
Cache-Control: no-store
Clear-Site-Data: "cookies"
Content-Language: ja
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: text/html; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
Vary: Accept-Language
X-Content-Type-Options: nosniff`},
		{"viewer page without source", "GET", origin + "/", nil, `404
Cache-Control: no-store
Clear-Site-Data: "cookies"
Content-Language: en
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: text/html; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
Vary: Accept-Language
X-Content-Type-Options: nosniff`},
		{"viewer page of another source", "GET", origin + "/?source=" + url.QueryEscape("https://evil.example/x.wacz"), nil, `400
Cache-Control: no-store
Clear-Site-Data: "cookies"
Content-Language: en
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: text/html; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
Vary: Accept-Language
X-Content-Type-Options: nosniff`},
		{"ui.js", "GET", origin + "/ui.js", nil, `200
Accept-Ranges: bytes
Cache-Control: no-cache
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: text/javascript; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Last-Modified: *
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff`},
		{"sw.js", "GET", origin + "/sw/sw.js", nil, `200
Accept-Ranges: bytes
Cache-Control: no-cache
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: text/javascript; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Last-Modified: *
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff`},
		{"sw/ui.js", "GET", origin + "/sw/ui.js", nil, `200
Accept-Ranges: bytes
Cache-Control: no-cache
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: text/javascript; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Last-Modified: *
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff`},
		{"frame before the worker", "GET", origin + "/sw/?source=" + src, nil, `200
Cache-Control: no-store
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'
Content-Type: text/html; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff`},
		{"frame of another source", "GET", origin + "/sw/?source=x", nil, `400
Cache-Control: no-store
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'
Content-Type: application/json; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff
{"code":"FST_ERR_VALIDATION","error":"Bad Request","message":"querystring/source must be this replay session's archive or collection","statusCode":400}`},
		{"read", "GET", read, nil, `200
Accept-Ranges: bytes
Cache-Control: private, no-store
Content-Disposition: attachment; filename="<archive 0>.wacz"
Content-Length: 1000
Content-Security-Policy: default-src 'none'; sandbox; frame-ancestors 'none'
Content-Type: application/wacz
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Etag: *
Last-Modified: *
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff`},
		{"read a range", "GET", read, map[string]string{"Range": "bytes=0-9"}, `206
Accept-Ranges: bytes
Cache-Control: private, no-store
Content-Disposition: attachment; filename="<archive 0>.wacz"
Content-Length: 10
Content-Range: bytes 0-9/1000
Content-Security-Policy: default-src 'none'; sandbox; frame-ancestors 'none'
Content-Type: application/wacz
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Etag: *
Last-Modified: *
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff`},
		{"read past the end", "GET", read, map[string]string{"Range": "bytes=5000-"}, `416
Accept-Ranges: bytes
Cache-Control: no-store
Content-Length: *
Content-Range: bytes */1000
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff`},
		{"HEAD", "HEAD", read, nil, `200
Accept-Ranges: bytes
Cache-Control: private, no-store
Content-Disposition: attachment; filename="<archive 0>.wacz"
Content-Length: 1000
Content-Security-Policy: default-src 'none'; sandbox; frame-ancestors 'none'
Content-Type: application/wacz
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Etag: *
Last-Modified: *
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff`},
		{"HEAD a range", "HEAD", read, map[string]string{"Range": "bytes=10-19"}, `206
Accept-Ranges: bytes
Cache-Control: private, no-store
Content-Disposition: attachment; filename="<archive 0>.wacz"
Content-Length: 10
Content-Range: bytes 10-19/1000
Content-Security-Policy: default-src 'none'; sandbox; frame-ancestors 'none'
Content-Type: application/wacz
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Etag: *
Last-Modified: *
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff`},
		{"read with If-Range of another version", "GET", read, map[string]string{"Range": "bytes=0-9", "If-Range": `"other"`}, `200
Accept-Ranges: bytes
Cache-Control: private, no-store
Content-Disposition: attachment; filename="<archive 0>.wacz"
Content-Length: 1000
Content-Security-Policy: default-src 'none'; sandbox; frame-ancestors 'none'
Content-Type: application/wacz
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Etag: *
Last-Modified: *
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff`},
		{"read a bad name", "GET", origin + "/wacz/x.wacz?t=" + url.QueryEscape(tok), nil, `400
Cache-Control: no-store
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: application/json; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff
{"code":"FST_ERR_VALIDATION","error":"Bad Request","message":"params/name must be an archive id followed by .wacz","statusCode":400}`},
		{"read without a token", "GET", origin + "/wacz/" + id + ".wacz", nil, `404
Cache-Control: no-store
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: application/json; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff
{"error":"not found"}`},
		{"read with a bad token", "GET", origin + "/wacz/" + id + ".wacz?t=bad", nil, `404
Cache-Control: no-store
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: application/json; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff
{"error":"not found"}`},
		{"POST a read", "POST", read, nil, `404
Cache-Control: no-store
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: application/json; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff
{"error":"not found"}`},
		{"listing", "GET", setOrigin + "/collection.json?t=" + url.QueryEscape(setTok), nil, `200
Cache-Control: no-store
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: application/json; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff
{"resources":[{"name":"<task 0>_c0ffee00.wacz","path":"/wacz/<archive 0>.wacz?t=*"},{"name":"<task 1>_c0ffee00.wacz","path":"/wacz/<archive 1>.wacz?t=*"}]}`},
		{"listing without a token", "GET", setOrigin + "/collection.json", nil, `404
Cache-Control: no-store
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: application/json; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff
{"error":"not found"}`},
		{"no such path", "GET", origin + "/nothing", nil, `404
Cache-Control: no-store
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: application/json; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff
{"error":"not found"}`},
		{"the API on a replay origin", "GET", origin + "/api/me", as("alice", "acme"), `404
Cache-Control: no-store
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: application/json; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
X-Content-Type-Options: nosniff
{"error":"not found"}`},
		{"no session's origin", "GET", f.origins.Origin("abcdefghijklmnopqrstuvwxyz") + "/", nil, `404
Cache-Control: no-store
Clear-Site-Data: "cookies"
Content-Language: en
Content-Length: *
Content-Security-Policy: default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; connect-src 'self' data: blob:; frame-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'
Content-Type: text/html; charset=utf-8
Cross-Origin-Opener-Policy: same-origin
Cross-Origin-Resource-Policy: same-origin
Referrer-Policy: no-referrer
Vary: Accept-Language
X-Content-Type-Options: nosniff`},
	} {
		a := f.do(t, tc.method, tc.url, tc.header, "")
		got := describe(a, f.ids)
		// A listing names each WACZ by its object's name (what a crawl's
		// revisit records name their original's WACZ by): task_crawl.wacz.
		for i, task := range f.tasks {
			got = strings.ReplaceAll(got, task, "<task "+strconv.Itoa(i)+">")
		}
		if got != tc.want {
			t.Errorf("%s: got\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

// describe is an answer as the test compares it: the status, every header
// but Date (sorted, with values that differ per run as "*"), and the body
// when it is JSON.
func describe(a answer, ids []string) string {
	var lines []string
	for k, vs := range a.header {
		switch k {
		case "Date":
			continue
		case "Etag", "Last-Modified":
			vs = []string{"*"}
		case "Content-Length":
			if a.header.Get("Content-Type") != "application/wacz" {
				vs = []string{"*"}
			}
		}
		lines = append(lines, k+": "+strings.Join(vs, ", "))
	}
	sort.Strings(lines)
	out := strings.Join(append([]string{strconv.Itoa(a.status)}, lines...), "\n")
	if strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		out += "\n" + strings.TrimSpace(tokenParam.ReplaceAllString(string(a.body), "t=*"))
	}
	for i, id := range ids {
		out = strings.ReplaceAll(out, id, "<archive "+strconv.Itoa(i)+">")
	}
	return out
}
