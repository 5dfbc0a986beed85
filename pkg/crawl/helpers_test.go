package crawl_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// fgaPermissions asks the real (embedded) OpenFGA, the way the server does.
type fgaPermissions struct{ c authz.Client }

func (p fgaPermissions) MaySubmit(ctx context.Context, subject string, orgs []string) (bool, error) {
	return authz.MaySubmit(ctx, p.c, subject, orgs)
}

// recorder is a Dispatcher that keeps the levels it is given.
type recorder struct {
	mu     sync.Mutex
	levels []crawl.Level
	job    func(l crawl.Level) (string, error)
}

func (r *recorder) Dispatch(_ context.Context, l crawl.Level) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.levels = append(r.levels, l)
	if r.job != nil {
		return r.job(l)
	}
	return "", nil
}

func (r *recorder) last(t *testing.T) crawl.Level {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.levels) == 0 {
		t.Fatal("no level was dispatched")
	}
	return r.levels[len(r.levels)-1]
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.levels)
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is one test's database, bucket, OpenFGA and service.
type env struct {
	t      testing.TB
	ctx    context.Context
	pool   *pgxpool.Pool
	store  *postgres.Store
	blob   *blob.Client
	bucket string
	fga    *authz.Embedded
	disp   *recorder
	clock  *clock
	svc    *crawl.Service
	// targets are the capture-target operations on the same store.
	targets *crawl.Targets
	// crawlID is the crawl start last started: the correlationId write
	// puts into manifests, as a runner sends the crawl id.
	crawlID string
}

// alice may submit for acme; bob is a member of nothing that lets him.
var (
	alice = crawl.Caller{Subject: "alice", Orgs: []string{"acme"}}
	bob   = crawl.Caller{Subject: "bob", Orgs: []string{"acme"}}
)

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	dsn := testenv.Database(t)
	pool, err := postgres.Open(ctx, dsn, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	client, bucket, _ := testenv.Bucket(t)

	fgaClient, err := authz.NewMemory(authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fgaClient.Close() })
	if _, err := authz.Deploy(ctx, fgaClient, "crawl-tests", fga.Model); err != nil {
		t.Fatal(err)
	}
	if err := fgaClient.Write(ctx, []authz.Tuple{{User: "user:alice", Relation: "submitter", Object: "organization:acme"}}, nil); err != nil {
		t.Fatal(err)
	}

	e := &env{
		t: t, ctx: ctx, pool: pool, store: &postgres.Store{Pool: pool}, blob: client, bucket: bucket,
		fga: fgaClient, disp: &recorder{}, clock: &clock{t: time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)},
	}
	level := slog.LevelWarn
	if os.Getenv("CRAWL_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	e.svc = &crawl.Service{
		Store: e.store, Objects: client, Bucket: bucket,
		CaptureFormats: map[string]bool{"wacz": true}, Permissions: fgaPermissions{fgaClient},
		Dispatcher: e.disp, Now: e.clock.Now,
		Log: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: level})),
	}
	e.targets = &crawl.Targets{Store: e.store}
	return e
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func (e *env) put(key string, v any) {
	e.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := e.blob.Put(e.ctx, e.bucket, key, "application/json", data); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) loc(key string) string { return "s3://" + e.bucket + "/" + key }

// link is one item of a .links.json.
type link struct {
	Href string  `json:"href"`
	Text string  `json:"text"`
	Rel  *string `json:"rel"`
}

func links(hrefs ...string) []link {
	out := make([]link, len(hrefs))
	for i, h := range hrefs {
		out[i] = link{Href: h}
	}
	return out
}

func nofollow(href string) link {
	r := "nofollow noreferrer"
	return link{Href: href, Rel: &r}
}

// capture describes one capture the test writes into the bucket.
type capture struct {
	url      string
	final    string // "" = same as url
	status   string // manifest status; "" = success
	links    []link // nil = no links file
	noLinks  bool   // success without a links artefact
	reported crawl.PageStatus
	// linksInReport puts linksLocation into the report (else only the
	// manifest names it).
	linksInReport bool
	skipReason    string
	noManifest    bool // report a manifestLocation whose object is missing
}

// write puts the capture's manifest (and links file) into the bucket and
// returns its page report.
func (e *env) write(c capture) crawl.PageReport {
	e.t.Helper()
	task := uuid.NewString()
	stem := "org/acme/" + task
	final := c.final
	if final == "" {
		final = c.url
	}
	status := c.status
	if status == "" {
		status = "success"
	}
	ts := e.clock.Now().Add(-time.Second)
	m := map[string]any{
		"taskId": task, "correlationId": e.crawlID, "url": c.url, "labels": []string{}, "status": status,
		"timestamp": ts.Format(time.RFC3339Nano), "captureProcessingTimeMs": 1200,
		"artifacts": map[string]any{},
	}
	if status == "success" {
		arts := map[string]any{"wacz": e.loc(stem + ".wacz")}
		if c.links != nil && !c.noLinks {
			arts["links"] = e.loc(stem + ".links.json")
		}
		m["artifacts"] = arts
		m["completeness"] = map[string]any{"complete": true, "bodylessUrls": []string{}, "truncatedUrls": []string{}}
	} else {
		m["errorDetails"] = map[string]any{"type": "internal", "message": "net::ERR_FAILED"}
	}
	if !c.noManifest {
		e.put(stem+".result.json", m)
	}
	if c.links != nil {
		e.put(stem+".links.json", map[string]any{
			"taskId": task, "url": c.url, "finalUrl": final, "labels": []string{},
			"capturedAt": ts.Format(time.RFC3339Nano), "links": c.links,
		})
	}
	reported := c.reported
	if reported == "" {
		reported = crawl.StatusCaptured
	}
	p := crawl.PageReport{
		URL: c.url, Status: reported, TaskID: task, ManifestLocation: e.loc(stem + ".result.json"),
		SubmittedAt: ts.Add(-time.Second), FinishedAt: ts, SkipReason: c.skipReason,
	}
	if c.final != "" {
		p.FinalURL = c.final
	}
	if c.links != nil && c.linksInReport {
		p.LinksLocation = e.loc(stem + ".links.json")
	}
	return p
}

// snapshot is every row a level report can touch, as text, for comparing
// the state before and after.
func (e *env) snapshot(crawlID string) string {
	e.t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT row_to_json(c)::text FROM crawls c WHERE id = $1`,
		`SELECT coalesce(json_agg(p ORDER BY p.id), '[]')::text FROM (SELECT id, url, depth, host, state, skip_reason, task_id, correlation_id, final_url, discovered_from, submitted_at, finished_at FROM crawl_pages WHERE crawl_id = $1) p`,
		`SELECT coalesce(json_agg(d ORDER BY d.depth, d.rule, d.action, d.hostname), '[]')::text FROM crawl_decisions d WHERE crawl_id = $1`,
		`SELECT coalesce(json_agg(l ORDER BY l.depth), '[]')::text FROM crawl_levels l WHERE crawl_id = $1`,
		`SELECT coalesce(json_agg(a ORDER BY a.object_key), '[]')::text FROM (SELECT task_id, bucket, object_key, source_url, labels, wacz_complete, signed, captured_at FROM archives) a WHERE $1::uuid IS NOT NULL`,
		`SELECT coalesce(json_agg(o.payload ORDER BY o.id), '[]')::text FROM fga_outbox o WHERE $1::uuid IS NOT NULL`,
		`SELECT coalesce(json_agg(s ORDER BY s.task_id), '[]')::text FROM (SELECT task_id, correlation_id, org_id, submitted_by, manifest_key, manifest_error FROM capture_submissions) s WHERE $1::uuid IS NOT NULL`,
	} {
		var s string
		if err := e.pool.QueryRow(e.ctx, q, crawlID).Scan(&s); err != nil {
			e.t.Fatalf("snapshot %q: %v", q, err)
		}
		b.WriteString(s)
		b.WriteByte('\n')
	}
	return b.String()
}

func (e *env) count(q string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.pool.QueryRow(e.ctx, q, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return n
}

func (e *env) get(id string) crawl.CrawlView {
	e.t.Helper()
	v, err := e.svc.Get(e.ctx, alice, id)
	if err != nil {
		e.t.Fatalf("Get: %v", err)
	}
	return v
}

func (e *env) start(req crawl.StartRequest) string {
	e.t.Helper()
	id, err := e.svc.Start(e.ctx, alice, req)
	if err != nil {
		e.t.Fatalf("Start: %v", err)
	}
	e.crawlID = id
	return id
}

func (e *env) report(id string, rep crawl.LevelReport) crawl.LevelResult {
	e.t.Helper()
	res, err := e.svc.ReportLevel(e.ctx, alice, id, rep)
	if err != nil {
		e.t.Fatalf("ReportLevel(depth %d): %v", rep.Depth, err)
	}
	return res
}

// noFinal drops the reported final URL (the links file still has it).
func noFinal(p crawl.PageReport) crawl.PageReport {
	p.FinalURL = ""
	return p
}

func ptr[T any](v T) *T { return &v }

func nextURLs(res crawl.LevelResult) []string {
	out := make([]string, len(res.Next))
	for i, n := range res.Next {
		out[i] = n.URL
	}
	return out
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
