package runner_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// The child process of TestKilledRunnerResumes: a runner on the parent's
// database and bucket, run until it is killed.
const (
	childDSN    = "RUNNER_TEST_CHILD_DSN"
	childBucket = "RUNNER_TEST_CHILD_BUCKET"
	// childLeases, set, makes the child take host leases (a lease lasts
	// 2 s without renewal), as serve does.
	childLeases = "RUNNER_TEST_CHILD_LEASES"
)

func TestMain(m *testing.M) {
	if os.Getenv(childDSN) != "" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

func runChild() int {
	ctx := context.Background()
	pool, err := postgres.Open(ctx, os.Getenv(childDSN), 4)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	st := &postgres.Store{Pool: pool}
	objects := blob.New(blob.Config{
		Endpoint: os.Getenv("LEDGER_TEST_S3_ENDPOINT"), Region: "us-east-1", ForcePathStyle: true,
		AccessKeyID: os.Getenv("LEDGER_TEST_S3_ACCESS_KEY"), SecretAccessKey: os.Getenv("LEDGER_TEST_S3_SECRET_KEY"),
	})
	bucket := os.Getenv(childBucket)
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	eng := capture.NewHTTP(captureConfig())
	cfg := runner.Config{RobotsClient: robotsClient(), CaptureFormats: map[string]bool{"wacz": true}, Log: log, Rescan: 100 * time.Millisecond}
	if os.Getenv(childLeases) != "" {
		cfg.Hosts, cfg.HostAtOnce, cfg.HostLeaseTTL = st, 1, 2*time.Second
	}
	r := runner.New(st, &capture.CrawlCapturer{Engine: eng, Objects: objects, Bucket: bucket, Software: "child"}, cfg)
	svc := &crawl.Service{Store: st, Objects: objects, Bucket: bucket, CaptureFormats: map[string]bool{"wacz": true}, Dispatcher: r, Log: log}
	r.SetLedger(svc)
	_ = r.Run(ctx) // until SIGKILL
	return 0
}

// TestKilledRunnerResumes: a process running a crawl is killed (SIGKILL)
// in the middle of a level; a runner started afterwards on the same
// database finishes the crawl, and every page was captured successfully
// exactly once and registered once.
func TestKilledRunnerResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := newHost(t)
	var body strings.Builder
	for i := range 8 {
		fmt.Fprintf(&body, `<a href="/p%d">p%d</a> `, i, i)
		a.page(fmt.Sprintf("/p%d", i), fmt.Sprintf("p%d", i), "<p>"+strings.Repeat("text ", 100)+"</p>")
	}
	a.page("/", "home", body.String())

	// The crawl is started here and run by the child.
	svc, _ := e.service(newCounter(e), runner.Config{})
	svc.Dispatcher = nil
	maxDepth, delay := 1, 150
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{a.URL + "/"}, MaxDepth: &maxDepth, PerHostDelayMs: &delay})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), childDSN+"="+e.app.DSN, childBucket+"="+e.bucket)
	child.Stdout, child.Stderr = &out, &out
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	for end := time.Now().Add(time.Minute); time.Now().Before(end) && !killed; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(*) FROM crawl_runner_results WHERE crawl_id = $1 AND depth = 1 AND result IS NOT NULL`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n >= 3 {
			if err := child.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
	}
	_ = child.Wait()
	if !killed {
		t.Fatalf("the child never got three pages into level 1:\n%s", out.String())
	}
	var kept int
	if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(*) FROM crawl_runner_results WHERE crawl_id = $1 AND depth = 1 AND result IS NOT NULL`, id).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if kept >= 8 {
		t.Fatalf("the child finished level 1 (%d results) before it was killed", kept)
	}

	levels := make(chan runner.LevelEvent, 4)
	svc2, r := e.service(newCounter(e), runner.Config{OnLevel: func(ev runner.LevelEvent) { levels <- ev }, Rescan: 100 * time.Millisecond})
	runUntilDone(t, r, levels, time.Minute)
	v, err := svc2.Get(e.ctx, alice, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != crawl.StateSucceeded || v.PagesCaptured != 9 {
		t.Fatalf("crawl %s with %d captured, want succeeded with 9", v.State, v.PagesCaptured)
	}
	per := e.successes()
	if len(per) != 9 {
		t.Errorf("successful captures of %d pages, want 9: %v", len(per), per)
	}
	for u, n := range per {
		if n != 1 {
			t.Errorf("%s was captured successfully %d times", u, n)
		}
	}
	rows, err := e.store.Pool.Query(e.ctx, `SELECT source_url, count(*) FROM archives GROUP BY source_url`)
	if err != nil {
		t.Fatal(err)
	}
	archives := 0
	for rows.Next() {
		var u string
		var n int
		if err := rows.Scan(&u, &n); err != nil {
			t.Fatal(err)
		}
		archives++
		if n != 1 {
			t.Errorf("%s registered %d times", u, n)
		}
	}
	if archives != 9 {
		t.Errorf("%d pages registered, want 9", archives)
	}
}
