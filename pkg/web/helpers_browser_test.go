package web_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

// evalJS runs js in the tab and returns its value.
func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %.80s: %v", js, err)
	}
	return v
}

// waitJS polls js (an expression) until it is true, or fails the test
// saying what and showing show (an expression) at the end.
func waitJS(t *testing.T, ctx context.Context, what, js, show string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+js+")"))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			got, _ := chromedp.Run(ctx, chromedp.Evaluate[string]("String("+show+")"))
			t.Fatalf("%s: never true (%v); %s", what, err, got)
		}
	}
}

// shot saves what the tab's window shows as name under LEDGER_TEST_SCREENSHOTS,
// when it is set (to look at; nothing compares them).
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("LEDGER_TEST_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, name), png, 0o644)
	}
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
	}
}

// replayTabs are the tabs the browser has open on replay origins.
func replayTabs(t *testing.T, ctx context.Context) []string {
	t.Helper()
	targets, err := chromedp.Targets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, ti := range targets {
		if ti.Type == "page" && strings.Contains(ti.URL, ".replay.localhost:") {
			out = append(out, ti.URL)
		}
	}
	return out
}

// waitReplayTab waits until more than before replay tabs are open.
func waitReplayTab(t *testing.T, ctx context.Context, before int, why string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); len(replayTabs(t, ctx)) <= before; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			note, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`Array.from(document.querySelectorAll(".note")).map(function (n) { return n.textContent; }).join("|")`))
			t.Fatalf("%s: no replay tab opened; the rows say %q", why, note)
		}
	}
}

// seeded is one archive seedArchives inserted.
type seeded struct{ ID, Task, URL string }

// seedArchives inserts archives of org with the given source URLs (hostile
// ones included: the ledger takes what the capturer reported), captured
// one minute apart from at downwards, with their tuples in OpenFGA and
// their grantees recorded, as apptest.SeedArchives does.
func seedArchives(t *testing.T, env *apptest.Env, org string, at time.Time, urls ...string) []seeded {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var out []seeded
	var rows [][]any
	var tuples []authz.Tuple
	var sources []apptest.Source
	for i, u := range urls {
		id, task := uuid.NewString(), uuid.NewString()
		when := at.Add(-time.Duration(i) * time.Minute)
		out = append(out, seeded{id, task, u})
		rows = append(rows, []any{id, task, env.Bucket, fmt.Sprintf("org/%s/%s.wacz", org, id), u, when})
		tuples = append(tuples,
			authz.Tuple{User: "capture_job:" + task, Relation: "parent", Object: "archive:" + id},
			authz.Tuple{User: "organization:" + org, Relation: "parent", Object: "capture_job:" + task})
		sources = append(sources, apptest.Source{ArchiveID: id, TaskID: task, At: when, Kind: "organization", Principal: org})
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{"archives"}, []string{"id", "task_id", "bucket", "object_key", "source_url", "captured_at"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	if err := apptest.CopySources(ctx, conn, sources); err != nil {
		t.Fatal(err)
	}
	if err := env.FGA.Write(ctx, tuples, nil); err != nil {
		t.Fatal(err)
	}
	return out
}

// seedCrawl records a finished crawl of org whose pages captured the
// given archives (so the list names the crawl on their rows).
func seedCrawl(t *testing.T, env *apptest.Env, org, by string, pages []seeded) string {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	id := uuid.NewString()
	if _, err := conn.Exec(ctx, `INSERT INTO crawls (id, seeds, max_depth, max_pages, per_host_delay_ms, host_parallelism, org_id, requested_by, state, stop_reason, finished_at)
		VALUES ($1, $2, 1, 10, 0, 1, $3, $4, 'succeeded', 'completed', now())`, id, []string{pages[0].URL}, org, by); err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		if _, err := conn.Exec(ctx, `INSERT INTO crawl_pages (crawl_id, url, depth, host, state, task_id, submitted_at, finished_at) VALUES ($1, $2, 0, 'crawl.test', 'captured', $3, now(), now())`, id, p.URL, p.Task); err != nil {
			t.Fatal(err)
		}
	}
	return id
}
