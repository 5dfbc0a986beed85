package crawl

import (
	"crypto/sha256"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/manifest"
)

// The decisions of a level, without a database: planLevel is a pure
// function of what the level's transaction read and what was read from the
// bucket, so every rule of a level report is checked here on values. (The
// same rules against PostgreSQL and S3 are level_test.go.)

const (
	planCrawl = "5b0a3c1e-0000-4000-8000-000000000001"
	planTask0 = "7f1e2d3c-4b5a-4968-8776-000000000000"
	planTask1 = "7f1e2d3c-4b5a-4968-8776-000000000001"
	planTask3 = "7f1e2d3c-4b5a-4968-8776-000000000003"
)

var planNow = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

func mustURL(t *testing.T, raw string) rules.URL {
	t.Helper()
	u, err := rules.ParseURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func decided(t *testing.T, raw string, action rules.Action, rule int) rules.LinkDecision {
	return rules.LinkDecision{URL: mustURL(t, raw), Decision: rules.Decision{Action: action, Rule: rule}}
}

func urlHash(u string) [32]byte { return sha256.Sum256([]byte(u)) }

// planFixture is a level 0 of five results: a capture with links, a
// reported failure whose manifest says captured (with links), a page
// robots.txt kept out, a pending page whose manifest belongs to another
// task, and a page that is not this crawl's.
type planFixture struct {
	st    ledger.LevelState
	rep   Report
	pages []pageWork
}

func newPlanFixture(t *testing.T, maxDepth, maxPages int) planFixture {
	t.Helper()
	submitted := time.Date(2026, 10, 1, 8, 59, 0, 0, time.UTC)
	raw := LevelReport{Depth: 0, Results: []PageReport{
		{URL: "https://a.example/", Status: StatusCaptured, TaskID: planTask0, ManifestLocation: "s3://bkt/m0.result.json", SubmittedAt: submitted},
		{URL: "https://a.example/b", Status: StatusFailed, SkipReason: "timeout", TaskID: planTask1, ManifestLocation: "s3://bkt/m1.result.json",
			CorrelationID: planCrawl, FinalURL: "https://a.example/b2"},
		{URL: "https://a.example/c", Status: StatusSkipped, SkipReason: SkipRobots},
		{URL: "https://a.example/d", Status: StatusCaptured, TaskID: planTask3, ManifestLocation: "s3://bkt/m3.result.json"},
		{URL: "https://stranger.example/", Status: StatusCaptured},
	}}
	rep, err := raw.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	pages := make([]pageWork, len(rep.Results))
	for i, p := range rep.Results {
		pages[i] = pageWork{rep: p, url: rep.urls[i], final: rep.urls[i], finalOK: true}
	}
	archive := func(task, key, url string) *manifest.ArchiveRow {
		corr := planCrawl
		return &manifest.ArchiveRow{TaskID: task, CorrelationID: &corr, Bucket: "bkt", ObjectKey: key, SourceURL: url, CapturedAt: submitted}
	}
	// Page 0: bound, admitted, its links decided.
	pages[0].outcome = &manifest.Outcome{Key: "m0.result.json"}
	pages[0].bound, pages[0].archive, pages[0].linksRun = true, archive(planTask0, "m0.wacz", "https://a.example/"), true
	pages[0].links = []rules.LinkDecision{
		decided(t, "https://a.example/1", rules.Follow, 1),
		decided(t, "https://a.example/known", rules.Follow, 1), // the crawl has it
		decided(t, "https://other.example/doc", rules.Capture, 2),
		decided(t, "https://ads.example/x", rules.Skip, 3),
	}
	// Page 1: reported failed, but its manifest is a success: recovered.
	pages[1].final = mustURL(t, "https://a.example/b2")
	pages[1].outcome = &manifest.Outcome{Key: "m1.result.json"}
	pages[1].bound, pages[1].archive, pages[1].linksRun = true, archive(planTask1, "m1.wacz", "https://a.example/b"), true
	pages[1].links = []rules.LinkDecision{
		decided(t, "https://a.example/1", rules.Follow, 1), // also on page 0: decided once
		decided(t, "https://a.example/2", rules.Follow, 1),
		decided(t, "https://a.example/3", rules.Follow, 1),
	}
	// Page 3: the manifest is another task's; its links are never used.
	pages[3].outcome = &manifest.Outcome{Key: "m3.result.json"}
	pages[3].refused, pages[3].linksRun = RefuseManifestTask, true
	pages[3].links = []rules.LinkDecision{decided(t, "https://a.example/from-refused", rules.Follow, 1)}
	// Page 4 is not pending: planLevel refuses it itself. Its links too
	// are never used.
	pages[4].linksRun = true
	pages[4].links = []rules.LinkDecision{decided(t, "https://a.example/from-stranger", rules.Follow, 1)}

	known := map[[32]byte]bool{}
	for _, u := range []string{"https://a.example/", "https://a.example/b", "https://a.example/c", "https://a.example/d", "https://a.example/known"} {
		known[urlHash(u)] = true
	}
	st := ledger.LevelState{
		Crawl:   ledger.Crawl{ID: planCrawl, OrgID: "acme", RequestedBy: "alice", State: StateRunning, MaxDepth: maxDepth, MaxPages: maxPages},
		AtDepth: 4,
		Pending: map[string]int64{"https://a.example/": 10, "https://a.example/b": 11, "https://a.example/c": 12, "https://a.example/d": 13},
		Known:   known, KnownCount: len(known),
	}
	return planFixture{st: st, rep: rep, pages: pages}
}

func TestPlanLevel(t *testing.T) {
	t.Parallel()
	f := newPlanFixture(t, 2, 7) // room for 2 more pages
	plan, out, err := planLevel(f.st, f.rep, f.pages, planNow)
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	submitted := time.Date(2026, 10, 1, 8, 59, 0, 0, time.UTC)

	// Every pending page reported is closed; the manifest wins over the
	// reported status; a refused page is closed failed with why and keeps
	// no task; the stranger is not closed.
	wantCloses := []ledger.PageClose{
		{URL: "https://a.example/", State: "captured", TaskID: str(planTask0), SubmittedAt: &submitted},
		{URL: "https://a.example/b", State: "captured", TaskID: str(planTask1), CorrelationID: str(planCrawl), FinalURL: str("https://a.example/b2")},
		{URL: "https://a.example/c", State: "skipped", SkipReason: str(SkipRobots)},
		{URL: "https://a.example/d", State: "failed", SkipReason: str("refused: " + RefuseManifestTask)},
	}
	if !reflect.DeepEqual(plan.Closes, wantCloses) {
		t.Errorf("closes:\n%s\nwant\n%s", mustJSONInternal(plan.Closes), mustJSONInternal(wantCloses))
	}

	wantRefused := []Refusal{
		{URL: "https://a.example/d", TaskID: planTask3, Reason: RefuseManifestTask},
		{URL: "https://stranger.example/", Reason: RefuseNotPending},
	}
	if !reflect.DeepEqual(out.refusals, wantRefused) {
		t.Errorf("refusals %+v, want %+v", out.refusals, wantRefused)
	}
	if out.captured != 2 || out.recovered != 1 {
		t.Errorf("captured %d recovered %d, want 2 and 1", out.captured, out.recovered)
	}

	// A submission for each admitted result with a task; none for the
	// refused one.
	alice, corr := "alice", planCrawl
	wantSubs := []ledger.NewSubmission{
		{TaskID: planTask0, CorrelationID: &corr, OrgID: "acme", SubmittedBy: &alice, ManifestKey: str("m0.result.json"), SubmittedAt: submitted, Verified: true},
		{TaskID: planTask1, CorrelationID: &corr, OrgID: "acme", SubmittedBy: &alice, ManifestKey: str("m1.result.json"), SubmittedAt: planNow, Verified: true},
	}
	if !reflect.DeepEqual(plan.Submissions, wantSubs) {
		t.Errorf("submissions:\n%s\nwant\n%s", mustJSONInternal(plan.Submissions), mustJSONInternal(wantSubs))
	}

	if len(plan.Archives) != 2 || plan.Archives[0].ObjectKey != "m0.wacz" || plan.Archives[1].ObjectKey != "m1.wacz" || plan.Archives[1].TaskID != planTask1 {
		t.Errorf("archives %+v", plan.Archives)
	}
	tuples := plan.Tuples(1, "arch-1")
	if len(tuples.Writes) != 3 || tuples.Writes[0].Object != "archive:arch-1" || tuples.Writes[0].User != "capture_job:"+planTask1 ||
		tuples.Writes[1].User != "organization:acme" || tuples.Writes[2].User != "user:alice" {
		t.Errorf("tuples of archive 1: %+v", tuples)
	}

	// Each distinct link of the admitted pages is decided once, per rule
	// and hostname; the refused pages' links are not.
	wantDecisions := []ledger.DecisionRecord{
		{Depth: 0, Rule: 1, Action: "follow", Hostname: "a.example", Links: 4,
			Samples: []string{"https://a.example/1", "https://a.example/known", "https://a.example/2", "https://a.example/3"}},
		{Depth: 0, Rule: 2, Action: "capture", Hostname: "other.example", Links: 1, Samples: []string{"https://other.example/doc"}},
		{Depth: 0, Rule: 3, Action: "skip", Hostname: "ads.example", Links: 1, Samples: []string{"https://ads.example/x"}},
	}
	if !reflect.DeepEqual(plan.Decisions, wantDecisions) {
		t.Errorf("decisions:\n%s\nwant\n%s", mustJSONInternal(plan.Decisions), mustJSONInternal(wantDecisions))
	}

	// Next: follow and capture links the crawl does not have, in order,
	// with the page they were read on; the budget takes the first two.
	from := int64(10)
	wantNext := []ledger.NewPage{
		{URL: "https://a.example/1", Host: "a.example", From: &from},
		{URL: "https://other.example/doc", Host: "other.example", From: &from},
	}
	if !reflect.DeepEqual(plan.Next, wantNext) {
		t.Errorf("next:\n%s\nwant\n%s", mustJSONInternal(plan.Next), mustJSONInternal(wantNext))
	}

	// The budget cut the crawl: the reason sticks on the crawl, which goes
	// on (no stop reason in the answer).
	refused, _ := json.Marshal(wantRefused)
	wantTotals := ledger.LevelTotals{
		LevelRecord: ledger.LevelRecord{Depth: 0, Digest: f.rep.digest[:], Results: 5, PagesClosed: 4, PagesCaptured: 2, PagesRecovered: 1,
			PagesDiscovered: 4, Refused: refused},
		CrawlStopReason: str(rules.StopMaxPages), Done: false, Now: planNow,
	}
	if !reflect.DeepEqual(plan.Totals, wantTotals) {
		t.Errorf("totals:\n%+v\nwant\n%+v", plan.Totals, wantTotals)
	}
	if out.reason != rules.StopMaxPages {
		t.Errorf("reason %q", out.reason)
	}
}

// TestPlanLevelEnds: a crawl ends with a level when nothing new is left
// (completed), when the budget is spent (max_pages) or at its last level
// (max_depth); the answer then says why.
func TestPlanLevelEnds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		maxDepth, maxPages int
		noLinks            bool
		reason             string
		discovered         int
	}{
		{"the last level", 0, 100, false, rules.StopMaxDepth, 0},
		{"the budget is spent", 2, 5, false, rules.StopMaxPages, 4},
		{"nothing new", 2, 100, true, rules.StopCompleted, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newPlanFixture(t, tc.maxDepth, tc.maxPages)
			if tc.noLinks {
				for i := range f.pages {
					f.pages[i].links = nil
				}
			}
			plan, out, err := planLevel(f.st, f.rep, f.pages, planNow)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Next) != 0 || !plan.Totals.Done || out.reason != tc.reason || plan.Totals.PagesDiscovered != tc.discovered ||
				plan.Totals.StopReason == nil || *plan.Totals.StopReason != tc.reason ||
				plan.Totals.CrawlStopReason == nil || *plan.Totals.CrawlStopReason != tc.reason {
				t.Errorf("next %d done %v reason %q discovered %d stop %v", len(plan.Next), plan.Totals.Done, out.reason,
					plan.Totals.PagesDiscovered, plan.Totals.StopReason)
			}
			// The closes and admissions do not depend on how the crawl ends.
			if len(plan.Closes) != 4 || len(plan.Submissions) != 2 || len(plan.Archives) != 2 || len(out.refusals) != 2 {
				t.Errorf("closes %d submissions %d archives %d refusals %d", len(plan.Closes), len(plan.Submissions), len(plan.Archives), len(out.refusals))
			}
		})
	}
}

// TestPlanLevelSharedObject: two results naming one WACZ admit it once,
// and a task reported twice is one submission.
func TestPlanLevelSharedObject(t *testing.T) {
	t.Parallel()
	f := newPlanFixture(t, 2, 100)
	f.pages[1].archive.ObjectKey = f.pages[0].archive.ObjectKey
	f.pages[1].rep.TaskID = f.pages[0].rep.TaskID
	plan, _, err := planLevel(f.st, f.rep, f.pages, planNow)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Archives) != 1 || len(plan.Submissions) != 1 {
		t.Errorf("archives %d submissions %d, want 1 and 1", len(plan.Archives), len(plan.Submissions))
	}
}

func mustJSONInternal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
