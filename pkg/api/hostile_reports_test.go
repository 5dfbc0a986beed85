package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// validation400 is the exact 400 body of a schema refusal naming message.
func validation400(message string) string {
	m, _ := json.Marshal(message)
	return `{"statusCode":400,"code":"FST_ERR_VALIDATION","error":"Bad Request","message":` + string(m) + `}`
}

// startCrawl starts a one-seed crawl as alice and returns its id.
func (f *crawlFixture) startCrawl(t *testing.T, seed string) string {
	t.Helper()
	code, body := f.do(t, "POST", "/api/crawls", "alice", `{"seeds":["`+seed+`"],"maxDepth":1,"perHostDelayMs":0}`)
	if code != 202 {
		t.Fatalf("start: %d %s", code, body)
	}
	var started struct{ CrawlID string }
	if err := json.Unmarshal([]byte(body), &started); err != nil || started.CrawlID == "" {
		t.Fatalf("start: %s", body)
	}
	return started.CrawlID
}

// TestHostileStringsInCrawlBodies is the attack of a runner
// (or anyone with can_submit) that sends U+0000, which PostgreSQL text cannot
// hold, or bytes that are not UTF-8, which encoding/json would store as
// U+FFFD, in a string of a level report, of /failed or of a start. Each is
// a 400 naming the field, in the validation body, and nothing is written.
// A NUL used to be a 500 (SQLSTATE 22021) that a runner resending it
// turned into a crawl stalled for good.
func TestHostileStringsInCrawlBodies(t *testing.T) {
	t.Parallel()
	f := newCrawlFixture(t)
	seed := "https://www.example.com/"
	id := f.startCrawl(t, seed)
	task := uuid.NewString()
	result := func(extra string) string {
		return `{"depth":0,"results":[{"url":"` + seed + `","status":"failed","taskId":"` + task + `","manifestError":"capture failed"` + extra + `}]}`
	}
	pages, failed := "/api/crawls/"+id+"/pages", "/api/crawls/"+id+"/failed"
	before := testenv.TakeSnapshot(t, f.env.DSN)
	for _, tc := range []struct {
		name, path, body, message string
	}{
		{"NUL in skipReason", pages, result(`,"skipReason":"timeout\u0000"`), "body/results/0/skipReason must NOT contain U+0000 (NUL)"},
		{"NUL in correlationId", pages, result(`,"correlationId":"` + id + `\u0000"`), "body/results/0/correlationId must NOT contain U+0000 (NUL)"},
		{"NUL in finalUrl", pages, result(`,"finalUrl":"https://www.example.com/\u0000"`), "body/results/0/finalUrl must NOT contain U+0000 (NUL)"},
		{"NUL in manifestError", pages, `{"depth":0,"results":[{"url":"` + seed + `","status":"failed","taskId":"` + task + `","manifestError":"\u0000"}]}`, "body/results/0/manifestError must NOT contain U+0000 (NUL)"},
		{"NUL in linksLocation", pages, result(`,"linksLocation":"s3://b/k\u0000"`), "body/results/0/linksLocation must NOT contain U+0000 (NUL)"},
		{"invalid UTF-8 in skipReason", pages, result(`,"skipReason":"a` + "\xff" + `b"`), "body/results/0/skipReason must be valid UTF-8"},
		{"invalid UTF-8 in manifestError", pages, `{"depth":0,"results":[{"url":"` + seed + `","status":"failed","taskId":"` + task + `","manifestError":"` + "\xc3\x28" + `"}]}`, "body/results/0/manifestError must be valid UTF-8"},
		{"lone surrogate in finalUrl", pages, result(`,"finalUrl":"https://www.example.com/\ud800"`), "body/results/0/finalUrl must be valid UTF-8"},
		{"NUL inside compiled", pages, `{"depth":0,"results":[],"compiled":{"typescript":"5.6\u0000"}}`, "body/compiled/typescript must NOT contain U+0000 (NUL)"},
		{"NUL in the fail reason", failed, `{"reason":"[crawl_host] \u0000"}`, "body/reason must NOT contain U+0000 (NUL)"},
		{"invalid UTF-8 in the fail reason", failed, `{"reason":"[crawl_host] a` + "\xff" + `b"}`, "body/reason must be valid UTF-8"},
		{"NUL in a seed", "/api/crawls", `{"seeds":["https://e.com/\u0000"]}`, "body/seeds/0 must NOT contain U+0000 (NUL)"},
		{"invalid UTF-8 in a rule", "/api/crawls", `{"seeds":["https://e.com/"],"rules":[{"follow":"` + "\xff" + `"}]}`, "body/rules/0/follow must be valid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := f.do(t, "POST", tc.path, "alice", tc.body)
			if want := validation400(tc.message); code != 400 || body != want {
				t.Errorf("%d %s\nwant 400 %s", code, body, want)
			}
			testenv.Unchanged(t, f.env.DSN, before)
		})
	}

	// The crawl was not touched: the same level, reported cleanly, is taken.
	if code, body := f.do(t, "POST", pages, "alice", result(`,"skipReason":"timeout"`)); code != 200 {
		t.Errorf("clean report after the hostile ones: %d %s", code, body)
	}
}

// TestSchedulerLevelReportWithCompiled: the public capture-scheduler's
// report_level step sends {depth, results, compiled}, compiled being its compile_scripts record
// {typescript, hostTypes, scripts}. The report is taken and compiled is
// ignored (resending with another compiled is the same report); any other
// unknown key is still refused.
func TestSchedulerLevelReportWithCompiled(t *testing.T) {
	t.Parallel()
	f := newCrawlFixture(t)
	seed := "https://www.example.com/"
	id := f.startCrawl(t, seed)
	page := f.capture(t, seed, []map[string]any{{"href": "https://www.example.com/next"}})
	// The result exactly as crawl_host builds it: correlationId is the crawl.
	page["correlationId"] = id
	body := func(compiled map[string]any) string {
		b, _ := json.Marshal(map[string]any{"depth": 0, "results": []any{page}, "compiled": compiled})
		return string(b)
	}
	compiled := map[string]any{"typescript": "5.6.3", "hostTypes": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "scripts": []any{}}
	code, first := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", body(compiled))
	if code != 200 || !strings.Contains(first, `"url":"https://www.example.com/next"`) {
		t.Fatalf("scheduler's report: %d %s", code, first)
	}
	if n := f.count(t, `SELECT count(*) FROM archives WHERE task_id = $1`, page["taskId"]); n != 1 {
		t.Errorf("%d archives for the reported capture, want 1", n)
	}

	before := testenv.TakeSnapshot(t, f.env.DSN)
	other := map[string]any{"typescript": "5.7.2", "hostTypes": "00", "scripts": []any{map[string]any{"id": "scroll", "version": "1.0.0", "sha256": "ab"}}}
	if code, again := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", body(other)); code != 200 || again != first {
		t.Errorf("the same report with another compiled: %d %s\nwant %s", code, again, first)
	}
	testenv.Unchanged(t, f.env.DSN, before)

	for _, tc := range []struct{ body, message string }{
		{`{"depth":0,"results":[],"compiled":{},"compiledAt":"2026-11-30T00:00:00Z"}`, `body must NOT have additional properties: "compiledAt"`},
		{`{"depth":0,"results":[],"scripts":[]}`, `body must NOT have additional properties: "scripts"`},
		{`{"depth":0,"results":[],"compiled":"5.6.3"}`, `body/compiled must be object`},
	} {
		code, got := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", tc.body)
		if want := validation400(tc.message); code != 400 || got != want {
			t.Errorf("%s: %d %s\nwant %s", tc.body, code, got, want)
		}
	}
	testenv.Unchanged(t, f.env.DSN, before)
}

// TestLevelReportRefusesDotSegmentKeys, over HTTP: a
// manifest location whose key has a ".." segment would read another object
// than the one it spells (here a real manifest under victim/). It is that
// page's manifest error, recorded on its submission; nothing is read or
// admitted through it. A manifest whose WACZ key climbs out is not admitted
// (so never signed), and a links location with ".." is not followed.
func TestLevelReportRefusesDotSegmentKeys(t *testing.T) {
	t.Parallel()
	f := newCrawlFixture(t)
	ctx := context.Background()
	seed := "https://www.example.com/"
	id := f.startCrawl(t, seed)
	b := f.env.Bucket
	put := func(key string, body []byte) {
		if err := f.env.Blob.Put(ctx, b, key, "application/json", body); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().UTC()
	entry := func(url, task, manifestLoc, linksLoc string) map[string]any {
		e := map[string]any{"url": url, "status": "captured", "taskId": task, "correlationId": id, "manifestLocation": manifestLoc,
			"submittedAt": now.Add(-time.Second).Format(time.RFC3339Nano), "finishedAt": now.Format(time.RFC3339Nano)}
		if linksLoc != "" {
			e["linksLocation"] = linksLoc
		}
		return e
	}

	// The seed page's manifest location climbs into victim/, where an
	// admissible manifest and a links file wait.
	dotTask := uuid.NewString()
	put("victim/"+dotTask+".result.json", apptest.ManifestFor(dotTask, id, "success", seed, b, "victim/"+dotTask+".wacz", now))
	lb, _ := json.Marshal(map[string]any{"links": []map[string]any{{"href": "https://www.example.com/from-victim"}}})
	put("victim/links.json", lb)
	dotLoc := "s3://" + b + "/crawl/../victim/" + dotTask + ".result.json"
	report, _ := json.Marshal(map[string]any{"depth": 0, "results": []any{entry(seed, dotTask, dotLoc, "s3://"+b+"/crawl/../victim/links.json")}})
	code, body := f.do(t, "POST", "/api/crawls/"+id+"/pages", "alice", string(report))
	if code != 200 || strings.Contains(body, "from-victim") {
		t.Fatalf("report: %d %s", code, body)
	}
	var key, manifestErr *string
	st, _ := f.env.App.Store(ctx)
	if err := st.Pool.QueryRow(ctx, `SELECT manifest_key, manifest_error FROM capture_submissions WHERE task_id = $1`, dotTask).Scan(&key, &manifestErr); err != nil {
		t.Fatal(err)
	}
	want := `not an s3:// location the ledger can read (a ".." key segment): ` + dotLoc
	if key != nil || manifestErr == nil || *manifestErr != want {
		t.Errorf("submission: key %v, error %v; want no key and %q", key, manifestErr, want)
	}
	if n := f.count(t, `SELECT count(*) FROM archives`); n != 0 {
		t.Errorf("%d archives admitted through a \"..\" key", n)
	}
}
