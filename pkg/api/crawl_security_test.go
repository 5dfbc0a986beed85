package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// doAs sends a request as subject of orgs through the dev headers (no
// headers at all when subject is empty).
func (f *crawlFixture) doAs(t *testing.T, method, path, subject, orgs, body string) (int, string) {
	t.Helper()
	a := send(t, method, f.srv.URL+path, subject, orgs, body)
	return a.status, strings.TrimSpace(string(a.body))
}

func (f *crawlFixture) grant(t *testing.T, user, relation, org string) {
	t.Helper()
	if err := f.env.FGA.Write(context.Background(), []authz.Tuple{{User: "user:" + user, Relation: relation, Object: "organization:" + org}}, nil); err != nil {
		t.Fatal(err)
	}
}

func (f *crawlFixture) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	st, err := f.env.App.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := st.Pool.QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// victimCapture writes what a capture server leaves for one capture of the
// crawl victimCrawl (correlationId = that crawl), and returns the report
// entry that claims it and the task id.
func (f *crawlFixture) victimCapture(t *testing.T, victimCrawl, url string) (map[string]any, string) {
	t.Helper()
	ctx := context.Background()
	task := uuid.NewString()
	base := "acme/" + task + "_" + victimCrawl
	if err := f.env.Blob.Put(ctx, f.env.Bucket, base+".wacz", "application/zip", []byte("acme's archive")); err != nil {
		t.Fatal(err)
	}
	m := apptest.ManifestFor(task, victimCrawl, "success", url, f.env.Bucket, base+".wacz", time.Now())
	if err := f.env.Blob.Put(ctx, f.env.Bucket, base+".result.json", "application/json", m); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	return map[string]any{
		"url": url, "status": "captured", "taskId": task,
		"manifestLocation": "s3://" + f.env.Bucket + "/" + base + ".result.json",
		"submittedAt":      now.Add(-time.Second).Format(time.RFC3339Nano), "finishedAt": now.Format(time.RFC3339Nano),
	}, task
}

// TestLevelReportCannotClaimAnotherOrganizationsCapture is the attack of
// a submitter of organization evil who learns where an
// unregistered capture of acme's crawl left its manifest reports it inside
// evil's own crawl. Nothing of it may be admitted to evil, and acme can
// still register it.
func TestLevelReportCannotClaimAnotherOrganizationsCapture(t *testing.T) {
	t.Parallel()
	f := newCrawlFixture(t)
	f.grant(t, "mallory", "submitter", "evil")

	// acme's crawl: its capture's manifest was not written yet when the
	// level was reported, so the submission is recorded without an archive.
	code, body := f.doAs(t, "POST", "/api/crawls", "alice", "acme", `{"seeds":["https://www.example.com/"],"maxDepth":0}`)
	if code != 202 {
		t.Fatalf("acme's crawl: %d %s", code, body)
	}
	var started struct{ CrawlID string }
	_ = json.Unmarshal([]byte(body), &started)
	acmeCrawl := started.CrawlID
	task := uuid.NewString()
	manifestKey := "acme/" + task + "_" + acmeCrawl + ".result.json"
	lost, _ := json.Marshal(map[string]any{"depth": 0, "results": []any{map[string]any{
		"url": "https://www.example.com/", "status": "captured", "taskId": task, "correlationId": acmeCrawl,
		"manifestLocation": "s3://" + f.env.Bucket + "/" + manifestKey,
	}}})
	if code, body := f.doAs(t, "POST", "/api/crawls/"+acmeCrawl+"/pages", "alice", "acme", string(lost)); code != 200 || !strings.Contains(body, `"refused":[]`) {
		t.Fatalf("acme's level report: %d %s", code, body)
	}
	if n := f.count(t, `SELECT count(*) FROM capture_submissions WHERE task_id = $1 AND org_id = 'acme'`, task); n != 1 {
		t.Fatalf("acme's submission: %d rows", n)
	}
	// The capture finishes late: its WACZ and manifest reach the bucket.
	ctx := context.Background()
	waczKey := "acme/" + task + "_" + acmeCrawl + ".wacz"
	if err := f.env.Blob.Put(ctx, f.env.Bucket, waczKey, "application/zip", []byte("acme's archive")); err != nil {
		t.Fatal(err)
	}
	if err := f.env.Blob.Put(ctx, f.env.Bucket, manifestKey, "application/json",
		apptest.ManifestFor(task, acmeCrawl, "success", "https://www.example.com/", f.env.Bucket, waczKey, time.Now())); err != nil {
		t.Fatal(err)
	}
	// A second acme capture nobody reported at all (its crawl may have died).
	other, otherTask := f.victimCapture(t, acmeCrawl, "https://www.example.com/members")

	// evil's crawl, seeded with the very same URL so that only the
	// binding to the crawl can tell the captures apart.
	code, body = f.doAs(t, "POST", "/api/crawls", "mallory", "evil", `{"seeds":["https://www.example.com/"],"maxDepth":0}`)
	if code != 202 {
		t.Fatalf("evil's crawl: %d %s", code, body)
	}
	_ = json.Unmarshal([]byte(body), &started)
	evilCrawl := started.CrawlID

	// evil's own capture of another URL, reported on the pending page, and
	// a report naming one task with another task's manifest.
	wrongURL, wrongURLTask := f.victimCapture(t, evilCrawl, "https://www.example.com/elsewhere")
	wrongURL["url"] = "https://www.example.com/"
	notPending, notPendingTask := f.victimCapture(t, evilCrawl, "https://www.example.com/members")
	otherTaskID := uuid.NewString()
	wrongTask := map[string]any{"url": "https://www.example.com/", "status": "captured", "taskId": otherTaskID,
		"manifestLocation": "s3://" + f.env.Bucket + "/" + manifestKey}

	type refused struct{ URL, TaskID, Reason string }
	for _, tc := range []struct {
		name   string
		result map[string]any
		want   []refused
	}{
		{"acme's manifest on evil's pending page", map[string]any{
			"url": "https://www.example.com/", "status": "captured", "taskId": task,
			"manifestLocation": "s3://" + f.env.Bucket + "/" + manifestKey,
		}, []refused{{"https://www.example.com/", task, crawl.RefuseManifestCorr}}},
		{"acme's manifest with evil's crawl as correlationId", map[string]any{
			"url": "https://www.example.com/", "status": "captured", "taskId": task, "correlationId": evilCrawl,
			"manifestLocation": "s3://" + f.env.Bucket + "/" + manifestKey,
		}, []refused{{"https://www.example.com/", task, crawl.RefuseManifestCorr}}},
		{"acme's correlationId in the report", map[string]any{
			"url": "https://www.example.com/", "status": "captured", "taskId": task, "correlationId": acmeCrawl,
			"manifestLocation": "s3://" + f.env.Bucket + "/" + manifestKey,
		}, []refused{{"https://www.example.com/", task, crawl.RefuseCorrelation}}},
		{"a manifest of another url", wrongURL,
			[]refused{{"https://www.example.com/", wrongURLTask, crawl.RefuseManifestURL}}},
		{"a manifest of another task", wrongTask,
			[]refused{{"https://www.example.com/", otherTaskID, crawl.RefuseManifestTask}}},
		{"an unreported acme capture of a page evil's crawl never dispatched", other,
			[]refused{{"https://www.example.com/members", otherTask, crawl.RefuseManifestCorr}}},
		{"a page evil's crawl never dispatched", notPending,
			[]refused{{"https://www.example.com/members", notPendingTask, crawl.RefuseNotPending}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each attempt on a fresh evil crawl level: replay the same crawl by
			// reopening its page (the level is recorded once per depth).
			sub := testenv.TakeSnapshot(t, f.env.DSN)
			rep, _ := json.Marshal(map[string]any{"depth": 0, "results": []any{tc.result}})
			code, body := f.doAs(t, "POST", "/api/crawls/"+evilCrawl+"/pages", "mallory", "evil", string(rep))
			if code != 200 {
				t.Fatalf("report: %d %s", code, body)
			}
			var res struct{ Refused []refused }
			if err := json.Unmarshal([]byte(body), &res); err != nil || len(res.Refused) != len(tc.want) || res.Refused[0] != tc.want[0] {
				t.Errorf("answer %s, want refused %+v", body, tc.want)
			}
			// Nothing of acme's capture reached evil: no archive, no
			// submission, no tuple.
			for _, tbl := range []string{"archives", "capture_submissions", "fga_outbox"} {
				after := testenv.TakeSnapshot(t, f.env.DSN)
				if sub[tbl] != after[tbl] {
					t.Errorf("%s changed: %s -> %s", tbl, sub[tbl], after[tbl])
				}
			}
			var pageState, skip string
			st, _ := f.env.App.Store(ctx)
			_ = st.Pool.QueryRow(ctx, `SELECT state, coalesce(skip_reason,'') || coalesce(task_id,'') FROM crawl_pages WHERE crawl_id = $1 AND depth = 0`, evilCrawl).Scan(&pageState, &skip)
			if tc.want[0].URL == "https://www.example.com/" && (pageState != "failed" || skip != "refused: "+tc.want[0].Reason) {
				t.Errorf("evil's page: %s %q, want failed with the refusal and no task", pageState, skip)
			}
			// The same report again is answered from the record, refusals and all.
			if code, again := f.doAs(t, "POST", "/api/crawls/"+evilCrawl+"/pages", "mallory", "evil", string(rep)); code != 200 || again != body {
				t.Errorf("replay: %d %s, first %s", code, again, body)
			}
			// Reopen evil's level for the next attempt.
			for _, q := range []string{
				`DELETE FROM crawl_levels WHERE crawl_id = $1`,
				`UPDATE crawl_pages SET state = 'pending', skip_reason = NULL WHERE crawl_id = $1`,
				`UPDATE crawls SET state = 'running', stop_reason = NULL, finished_at = NULL WHERE id = $1`,
			} {
				if _, err := st.Pool.Exec(ctx, q, evilCrawl); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	if n := f.count(t, `SELECT count(*) FROM capture_submissions WHERE org_id = 'evil'`); n != 0 {
		t.Errorf("%d submissions recorded for evil", n)
	}

	// acme's capture is still registrable, for acme: reconcile reads the
	// submission acme's level recorded and admits the archive to acme.
	adm, err := f.env.App.Admitter(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &archive.Reconciler{Admitter: adm, Objects: f.env.Blob}
	res, err := r.Reconcile(ctx, nil)
	if err != nil || res.Registered != 1 {
		t.Fatalf("reconcile: %+v %v", res, err)
	}
	var payload string
	st, _ := f.env.App.Store(ctx)
	if err := st.Pool.QueryRow(ctx, `SELECT o.payload::text FROM fga_outbox o JOIN archives a ON o.payload::text LIKE '%' || a.id::text || '%' WHERE a.object_key = $1`, waczKey).Scan(&payload); err != nil {
		t.Fatalf("acme's archive: %v", err)
	}
	if !strings.Contains(payload, "organization:acme") || strings.Contains(payload, "evil") || strings.Contains(payload, "mallory") {
		t.Errorf("acme's archive tuples: %s", payload)
	}
}

// TestCrawlBelongsToItsOrganization: can_submit on some
// other organization does not open a crawl. Every refusal is the 404 an
// absent crawl gets and writes nothing; the crawl's organization and the
// scheduler that runs its crawls keep working.
func TestCrawlBelongsToItsOrganization(t *testing.T) {
	t.Parallel()
	f := newCrawlFixture(t)
	f.grant(t, "mallory", "submitter", "evil")
	f.grant(t, "scheduler", "submitter", "acme")
	f.grant(t, "carol", "submitter", "acme")

	// The scheduler starts and polls a crawl of its organization.
	code, body := f.doAs(t, "POST", "/api/crawls", "scheduler", "acme", `{"seeds":["https://www.example.com/"],"maxDepth":1}`)
	if code != 202 {
		t.Fatalf("scheduler's start: %d %s", code, body)
	}
	var started struct{ CrawlID string }
	_ = json.Unmarshal([]byte(body), &started)
	id := started.CrawlID
	if code, body := f.doAs(t, "GET", "/api/crawls/"+id, "scheduler", "acme", ""); code != 200 || !strings.Contains(body, `"orgId":"acme"`) {
		t.Fatalf("scheduler's poll: %d %s", code, body)
	}

	absent := uuid.NewString()
	report := `{"depth":0,"results":[{"url":"https://www.example.com/","status":"failed","skipReason":"timeout"}]}`
	before := testenv.TakeSnapshot(t, f.env.DSN)
	for _, who := range []struct{ name, subject, orgs string }{
		{"a submitter of another organization", "mallory", "evil"},
		{"one who claims acme without can_submit on it", "mallory", "evil,acme"},
		{"one who only claims acme", "mallory", "acme"},
	} {
		t.Run(who.name, func(t *testing.T) {
			for _, op := range []struct{ method, path, body string }{
				{"GET", "/api/crawls/%s", ""},
				{"GET", "/api/crawls/%s/decisions", ""},
				{"GET", "/api/crawls/%s/progress", ""},
				{"GET", "/api/crawls/%s/pages", ""},
				{"GET", "/api/crawls/%s/why?url=https%3A%2F%2Fwww.example.com%2F", ""},
				{"POST", "/api/crawls/%s/pages", report},
				{"POST", "/api/crawls/%s/failed", `{"reason":"sabotage"}`},
			} {
				code, body := f.doAs(t, op.method, strings.Replace(op.path, "%s", id, 1), who.subject, who.orgs, op.body)
				acode, abody := f.doAs(t, op.method, strings.Replace(op.path, "%s", absent, 1), who.subject, who.orgs, op.body)
				if code != 404 || body != `{"error":"not found"}` || acode != code || abody != body {
					t.Errorf("%s %s: %d %s (absent crawl: %d %s)", op.method, op.path, code, body, acode, abody)
				}
			}
			code, body := f.doAs(t, "GET", "/api/crawls", who.subject, who.orgs, "")
			if code != 200 || strings.Contains(body, id) {
				t.Errorf("list: %d %s", code, body)
			}
			code, body = f.doAs(t, "GET", "/api/decisions?domain=example.com&action=follow", who.subject, who.orgs, "")
			if strings.Contains(body, id) {
				t.Errorf("decisions by domain: %d %s", code, body)
			}
			// A start attributed to acme without can_submit on it.
			if !strings.HasPrefix(who.orgs, "evil") {
				code, body = f.doAs(t, "POST", "/api/crawls", who.subject, who.orgs, `{"seeds":["https://evil.example/"]}`)
				if code != 404 || body != `{"error":"not found"}` {
					t.Errorf("start attributed to an organization without can_submit: %d %s", code, body)
				}
			}
		})
	}
	testenv.Unchanged(t, f.env.DSN, before)

	// acme runs as many crawls as it may (1 here); evil's own bound is
	// untouched by it: its start is taken, and the 409 of its next one
	// names evil's crawl, never acme's.
	code, body = f.doAs(t, "POST", "/api/crawls", "mallory", "evil", `{"seeds":["https://evil.example/"]}`)
	if code != 202 || strings.Contains(body, id) {
		t.Fatalf("another organization's start while acme is at its bound: %d %s", code, body)
	}
	var evil struct{ CrawlID string }
	_ = json.Unmarshal([]byte(body), &evil)
	code, body = f.doAs(t, "POST", "/api/crawls", "mallory", "evil,acme", `{"seeds":["https://evil.example/b"]}`)
	if code != 409 || strings.Contains(body, id) || !strings.Contains(body, evil.CrawlID) || !strings.Contains(body, `"limit":1`) {
		t.Errorf("evil's second start: %d %s", code, body)
	}

	// acme's other submitter sees and may touch the crawl; the 409 names
	// it to them.
	if code, body := f.doAs(t, "GET", "/api/crawls", "carol", "acme", ""); code != 200 || !strings.Contains(body, id) {
		t.Errorf("carol's list: %d %s", code, body)
	}
	if code, body := f.doAs(t, "POST", "/api/crawls", "carol", "acme", `{"seeds":["https://www.example.com/"]}`); code != 409 || !strings.Contains(body, id) {
		t.Errorf("carol's 409: %d %s", code, body)
	}
	// The scheduler reports the level and the crawl goes on.
	code, body = f.doAs(t, "POST", "/api/crawls/"+id+"/pages", "scheduler", "acme", report)
	if code != 200 || !strings.Contains(body, `"refused":[]`) {
		t.Errorf("scheduler's report: %d %s", code, body)
	}
	// Its requester keeps access without can_submit (revoked meanwhile).
	if err := f.env.FGA.Write(context.Background(), nil, []authz.Tuple{{User: "user:scheduler", Relation: "submitter", Object: "organization:acme"}}); err != nil {
		t.Fatal(err)
	}
	if code, body := f.doAs(t, "GET", "/api/crawls/"+id, "scheduler", "acme", ""); code != 200 {
		t.Errorf("requester without can_submit: %d %s", code, body)
	}
}
