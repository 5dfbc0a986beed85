package api_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// fixtureCrawl records a finished crawl of acme whose pages captured the
// fixture's archives of tasks, and returns its id.
func fixtureCrawl(t *testing.T, f *replayFixture, tasks ...string) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, f.env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	id := uuid.NewString()
	if _, err := conn.Exec(ctx, `INSERT INTO crawls (id, seeds, max_depth, max_pages, per_host_delay_ms, host_parallelism, org_id, requested_by, state, stop_reason, finished_at)
		VALUES ($1, $2, 1, 10, 0, 1, 'acme', 'carol', 'succeeded', 'completed', now())`, id, []string{"https://example.com/"}); err != nil {
		t.Fatal(err)
	}
	for i, task := range tasks {
		if _, err := conn.Exec(ctx, `INSERT INTO crawl_pages (crawl_id, url, depth, host, state, task_id, submitted_at, finished_at)
			VALUES ($1, $2, 0, 'example.com', 'captured', $3, now(), now())`, id, "https://example.com/"+string(rune('a'+i)), task); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

// downloadLinkOf asks for a crawl's download link as who.
func downloadLinkOf(t *testing.T, f *replayFixture, crawlID string, who map[string]string) (int, api.DownloadLink, string) {
	t.Helper()
	r := f.do(t, "POST", "/api/crawls/"+crawlID+"/download", who, "")
	var l api.DownloadLink
	if r.status == 200 {
		if err := json.Unmarshal(r.body, &l); err != nil {
			t.Fatal(err)
		}
	}
	return r.status, l, string(r.body)
}

// warcsIn lists the WARC files a WACZ holds.
func warcsIn(t *testing.T, data []byte) []string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range zr.File {
		if strings.HasPrefix(f.Name, "archive/") {
			out = append(out, f.Name)
		}
	}
	return out
}

// TestCrawlDownload: alice, of the crawl's organization, downloads the
// crawl as one WACZ through a link bound to it: both archives' WARCs in a
// file wacz.Check accepts, as an attachment never sniffed. Bob, of
// another organization, and an absent crawl get the same 404; the link
// read with a changed token, on another crawl, on an archive's download
// route or as a replay collection reads nothing, nor does a replay
// session's token on the download route. Access lost after the link was
// made is asked again: one archive lost leaves it out, both lost is a 404.
func TestCrawlDownload(t *testing.T) {
	t.Parallel()
	f := newReplayFixture(t, replayOptions{content: gardenWACZ(t), second: scriptedWACZ(t, "/* harmless */"), cache: -1})
	crawlID := fixtureCrawl(t, f, f.tasks...)
	status, l, raw := downloadLinkOf(t, f, crawlID, as("alice", "acme"))
	if status != 200 || !strings.HasPrefix(l.URL, "/api/crawls/"+crawlID+"/wacz?") || l.Filename != "crawl-"+crawlID+".wacz" {
		t.Fatalf("link: %d %s", status, raw)
	}
	got := f.do(t, "GET", l.URL, nil, "")
	if got.status != 200 {
		t.Fatalf("download: %d %s", got.status, got.body)
	}
	for k, want := range map[string]string{
		"Content-Type": "application/octet-stream", "Content-Disposition": `attachment; filename="crawl-` + crawlID + `.wacz"`,
		"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox; default-src 'none'; frame-ancestors 'none'",
		"Cache-Control": "no-store",
	} {
		if got.header.Get(k) != want {
			t.Errorf("%s: %q, want %q", k, got.header.Get(k), want)
		}
	}
	if problems, err := wacz.Check(bytes.NewReader(got.body), int64(len(got.body))); err != nil || len(problems) > 0 {
		t.Fatalf("the download is not a valid WACZ: %v %v", problems, err)
	}
	warcs := warcsIn(t, got.body)
	// Oldest capture first: the second archive is an hour older.
	if len(warcs) != 2 || !strings.HasPrefix(warcs[0], "archive/"+f.ids[1]+"-") || !strings.HasPrefix(warcs[1], "archive/"+f.ids[0]+"-") {
		t.Errorf("WARCs %v, want the two archives', oldest first", warcs)
	}

	// Nobody else, and nothing absent, gets a link: one 404.
	denied, _, deniedRaw := downloadLinkOf(t, f, crawlID, as("bob", "globex"))
	absent, _, absentRaw := downloadLinkOf(t, f, uuid.NewString(), as("alice", "acme"))
	if denied != 404 || absent != 404 || deniedRaw != absentRaw {
		t.Errorf("denied: %d %s; absent: %d %s", denied, deniedRaw, absent, absentRaw)
	}

	// The link reads this crawl on this route and nothing else.
	u, _ := url.Parse(l.URL)
	tok, label := u.Query().Get("t"), u.Query().Get("l")
	changed := u.Query()
	changed.Set("t", tok[:len(tok)-2]+"AA")
	dl := f.do(t, "POST", "/api/archives/"+f.ids[0]+"/download", as("alice", "acme"), "")
	var archiveLink api.DownloadLink
	if err := json.Unmarshal(dl.body, &archiveLink); err != nil || dl.status != 200 {
		t.Fatalf("archive download link: %d %s", dl.status, dl.body)
	}
	archiveQuery := strings.SplitN(archiveLink.URL, "?", 2)[1]
	replayed := f.do(t, "POST", "/api/crawls/"+crawlID+"/replay", as("alice", "acme"), "")
	var session api.ReplayLink
	if err := json.Unmarshal(replayed.body, &session); err != nil || replayed.status != 200 {
		t.Fatalf("replay link: %d %s", replayed.status, replayed.body)
	}
	sessionTok := tokenOf(t, session.URL)
	for _, tc := range []struct{ name, path string }{
		{"a changed token", u.Path + "?" + changed.Encode()},
		{"another crawl", "/api/crawls/" + uuid.NewString() + "/wacz?" + u.RawQuery},
		{"no label", u.Path + "?t=" + url.QueryEscape(tok)},
		{"two tokens", u.Path + "?" + u.RawQuery + "&t=" + url.QueryEscape(tok)},
		{"an archive's download token", u.Path + "?" + archiveQuery},
		{"the crawl's token on an archive's download route", "/api/archives/" + f.ids[0] + "/wacz?" + u.RawQuery},
		{"a replay session's token of the crawl", u.Path + "?" + url.Values{"l": {labelOf(t, sessionTok)}, "t": {sessionTok}}.Encode()},
		{"the crawl's token as a replay collection", f.origins.Origin(label) + "/collection.json?t=" + url.QueryEscape(tok)},
	} {
		if r := f.do(t, "GET", tc.path, nil, ""); r.status != 404 {
			t.Errorf("%s: %d %.200s", tc.name, r.status, r.body)
		}
	}
	if r := f.do(t, "GET", "/api/crawls/nope/wacz?"+u.RawQuery, nil, ""); r.status != 400 {
		t.Errorf("a bad id: %d", r.status)
	}

	// acme loses the newer archive: the same link now holds the older
	// one only; then it loses both, and the link reads nothing.
	lose := func(task string) {
		t.Helper()
		if err := f.env.FGA.Write(context.Background(), nil, []authz.Tuple{{User: "organization:acme", Relation: "parent", Object: "capture_job:" + task}}); err != nil {
			t.Fatal(err)
		}
	}
	lose(f.tasks[0])
	got = f.do(t, "GET", l.URL, nil, "")
	if w := warcsIn(t, got.body); got.status != 200 || len(w) != 1 || !strings.HasPrefix(w[0], "archive/"+f.ids[1]+"-") {
		t.Errorf("after one archive was lost: %d, WARCs %v", got.status, w)
	}
	lose(f.tasks[1])
	if r := f.do(t, "GET", l.URL, nil, ""); r.status != 404 || string(r.body) != notFoundBody+"\n" {
		t.Errorf("after both were lost: %d %q", r.status, r.body)
	}
}

// TestCrawlDownloadBounds: a crawl download takes a place of its caller,
// of each of its caller's organizations and of the server, when its link
// is made; with its caller's or an organization's place taken the link is
// refused with a 429, with the server's all taken a 503, each with
// Retry-After and its sentence, so the console can say why before any
// download starts. The link holds its place until it is followed and the
// download ends. A link followed on another serve process takes a place
// there, and is refused there the same way when none is free.
func TestCrawlDownloadBounds(t *testing.T) {
	t.Parallel()
	gate := visible.NewGate(visible.GateBounds{Lists: 2, PerCaller: 1, PerOrg: 1, Checks: 1})
	f := newReplayFixture(t, replayOptions{content: gardenWACZ(t), second: scriptedWACZ(t, "/* harmless */"), cache: -1, exports: gate})
	crawlID := fixtureCrawl(t, f, f.tasks...)
	link := func() string {
		t.Helper()
		status, l, raw := downloadLinkOf(t, f, crawlID, as("alice", "acme"))
		if status != 200 {
			t.Fatalf("link: %d %s", status, raw)
		}
		return l.URL
	}
	refused := func(name string, r answer, status int, says string) {
		t.Helper()
		if r.status != status || r.header.Get("Retry-After") != "10" || !strings.Contains(string(r.body), says) || r.header.Get("Content-Disposition") != "" || strings.Contains(string(r.body), "/wacz?") {
			t.Errorf("%s: %d Retry-After %q %s, want %d saying %q, no link and no attachment", name, r.status, r.header.Get("Retry-After"), r.body, status, says)
		}
	}
	bounds := []struct {
		name    string
		holders [][2]string // callers and their organization, holding places
		status  int
		says    string
	}{
		{"alice's own place taken", [][2]string{{"alice", "other"}}, 429, "too many of your crawl downloads are running at once (limit 1)"},
		{"acme's place taken", [][2]string{{"carol", "acme"}}, 429, "too many crawl downloads of organization acme are running at once (limit 1)"},
		{"the server's places taken", [][2]string{{"dave", "x"}, {"erin", "y"}}, 503, "server busy: too many crawl downloads are running at once (limit 2)"},
	}
	hold := func(g *visible.Gate, holders [][2]string) (leaveAll func()) {
		t.Helper()
		var leaves []func()
		for _, h := range holders {
			leave, busy := g.Enter(h[0], []string{h[1]})
			if busy != nil {
				t.Fatalf("%v", busy)
			}
			leaves = append(leaves, leave)
		}
		return func() {
			for _, leave := range leaves {
				leave()
			}
		}
	}
	for _, tc := range bounds {
		leaveAll := hold(gate, tc.holders)
		refused(tc.name, f.do(t, "POST", "/api/crawls/"+crawlID+"/download", as("alice", "acme"), ""), tc.status, tc.says)
		leaveAll()
	}
	if n := gate.Running(); n != 0 {
		t.Errorf("%d places held after refused links", n)
	}

	// A link holds its place: alice's second link is refused until the
	// first has been followed and its download has ended.
	first := link()
	if n := gate.Running(); n != 1 {
		t.Errorf("a link made holds %d places, want 1", n)
	}
	refused("a second link while the first is unfollowed", f.do(t, "POST", "/api/crawls/"+crawlID+"/download", as("alice", "acme"), ""), 429, "too many of your crawl downloads are running at once (limit 1)")
	if r := f.do(t, "GET", first, nil, ""); r.status != 200 || len(warcsIn(t, r.body)) != 2 {
		t.Errorf("the first link: %d", r.status)
	}
	if n := gate.Running(); n != 0 {
		t.Errorf("%d places still held after the download ended", n)
	}
	if r := f.do(t, "GET", link(), nil, ""); r.status != 200 || len(warcsIn(t, r.body)) != 2 {
		t.Errorf("with every place free: %d", r.status)
	}

	// Followed on another serve process, the link takes a place of that
	// process's bounds, refused when full as the link would have been.
	otherGate := visible.NewGate(visible.GateBounds{Lists: 2, PerCaller: 1, PerOrg: 1, Checks: 1})
	other := f.another(t, otherGate)
	for _, tc := range bounds {
		l := link()
		leaveAll := hold(otherGate, tc.holders)
		res, err := http.Get(other.URL + l)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		refused(tc.name+", followed on another process", answer{status: res.StatusCode, header: res.Header, body: body}, tc.status, tc.says)
		leaveAll()
		// Its place here is given back when it expires; followed here it
		// is used and given back.
		if r := f.do(t, "GET", l, nil, ""); r.status != 200 {
			t.Errorf("%s: the link followed here afterwards: %d", tc.name, r.status)
		}
	}
	res, err := http.Get(other.URL + link())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || len(warcsIn(t, body)) != 2 {
		t.Errorf("followed on another process with its places free: %d", res.StatusCode)
	}
	if n, m := otherGate.Running(), gate.Running(); n != 0 || m != 1 {
		t.Errorf("after the downloads: %d places held on the other process (want 0), %d here (want 1: the last link's, until it expires)", n, m)
	}
}

// TestCrawlDownloadOfAnArchiveThatCannotBeMerged: an archive of the crawl
// whose object is not a WACZ stops the download. Read first (the older),
// nothing was sent yet: a 409 naming it. Read second, the file's start
// was sent: the connection is broken, so the client never holds a short
// file that looks whole.
func TestCrawlDownloadOfAnArchiveThatCannotBeMerged(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		newer, older   []byte
		refusedUpFront bool
	}{
		{"the first read", gardenWACZ(t), []byte("not a WACZ at all"), true},
		{"the second read", []byte("not a WACZ at all"), gardenWACZ(t), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newReplayFixture(t, replayOptions{content: tc.newer, second: tc.older, cache: -1})
			crawlID := fixtureCrawl(t, f, f.tasks...)
			status, l, raw := downloadLinkOf(t, f, crawlID, as("alice", "acme"))
			if status != 200 {
				t.Fatalf("link: %d %s", status, raw)
			}
			res, err := http.Get(f.srv.URL + l.URL)
			if tc.refusedUpFront {
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != 409 || !strings.Contains(string(body), "the crawl cannot be written as one WACZ") || !strings.Contains(string(body), f.ids[1]) {
					t.Errorf("%d %s, want 409 naming archive %s", res.StatusCode, body, f.ids[1])
				}
				return
			}
			if err == nil {
				_, err = io.ReadAll(res.Body)
				res.Body.Close()
			}
			if err == nil {
				t.Fatalf("the download ended as if whole (%d) though its second archive is not a WACZ", res.StatusCode)
			}
			if !slices.ContainsFunc(strings.Split(f.log.String(), "\n"), func(line string) bool {
				return strings.Contains(line, "Crawl download broken off") && strings.Contains(line, f.ids[0])
			}) {
				t.Errorf("the log does not say the download was broken off, naming the archive:\n%s", f.log.String())
			}
		})
	}
}
