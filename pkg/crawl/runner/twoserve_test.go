package runner_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// TestKilledServeResumedByTheOther: two runner processes (serve's runner,
// host leases on) share one database and bucket; the one running a crawl
// is killed (SIGKILL) in the middle of a level, and the other, still
// running, resumes the crawl on its own rescan and finishes it: every page
// captured successfully, none twice but the one in flight at the kill, none
// lost, and the host's captures by both processes (the killed one's
// expired lease included) keep the crawl's delay.
func TestKilledServeResumedByTheOther(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := newHost(t)
	var body strings.Builder
	for i := range 10 {
		fmt.Fprintf(&body, `<a href="/p%d">p%d</a> `, i, i)
		a.page(fmt.Sprintf("/p%d", i), fmt.Sprintf("p%d", i), "<p>"+strings.Repeat("text ", 100)+"</p>")
	}
	a.page("/", "home", body.String())

	svc, _ := e.service(newCounter(e), runner.Config{})
	svc.Dispatcher = nil // started here, run by the children
	maxDepth, delay := 1, 150
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{a.URL + "/"}, MaxDepth: &maxDepth, PerHostDelayMs: &delay})
	if err != nil {
		t.Fatal(err)
	}
	type child struct {
		cmd *exec.Cmd
		out strings.Builder
	}
	children := map[string]*child{}
	for _, name := range []string{"serve-a", "serve-b"} {
		c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$")}
		c.cmd.Env = append(os.Environ(), childDSN+"="+e.app.DSN+"&application_name="+name, childBucket+"="+e.bucket, childLeases+"=1")
		c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
		if err := c.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		children[name] = c
		t.Cleanup(func() {
			_ = c.cmd.Process.Signal(syscall.SIGKILL)
			_ = c.cmd.Wait()
		})
	}
	// Kill the process holding the crawl once it is three pages into
	// level 1.
	var victim string
	for end := time.Now().Add(40 * time.Second); time.Now().Before(end) && victim == ""; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(*) FROM crawl_runner_results WHERE crawl_id = $1 AND depth = 1 AND result IS NOT NULL`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n < 3 {
			continue
		}
		if err := e.store.Pool.QueryRow(e.ctx, `
			SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE 'serve-%' LIMIT 1`).Scan(&victim); err != nil {
			t.Fatalf("which process holds the crawl: %v", err)
		}
		if err := children[victim].cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = children[victim].cmd.Wait()
	}
	if victim == "" {
		t.Fatalf("no process got three pages into level 1:\n%s\n%s", children["serve-a"].out.String(), children["serve-b"].out.String())
	}
	killedAt := time.Now()
	var kept int
	if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(*) FROM crawl_runner_results WHERE crawl_id = $1 AND depth = 1 AND result IS NOT NULL`, id).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if kept >= 10 {
		t.Fatalf("level 1 ended (%d results) before the kill", kept)
	}
	// The other process resumes it.
	var state string
	var captured int
	for end := time.Now().Add(40 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := e.store.Pool.QueryRow(e.ctx, `SELECT state, pages_captured FROM crawls WHERE id = $1`, id).Scan(&state, &captured); err != nil {
			t.Fatal(err)
		}
		if state != "running" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the surviving process did not finish the crawl within 40 s of the kill")
		}
	}
	t.Logf("%s killed with %d of 10 level-1 pages kept; the other finished the crawl %s later", victim, kept, time.Since(killedAt).Round(time.Millisecond))
	if state != "succeeded" || captured != 11 {
		t.Fatalf("crawl %s with %d captured, want succeeded with 11", state, captured)
	}
	per := e.successes()
	twice := 0
	for u, n := range per {
		if n > 1 {
			twice++
			if n > 2 {
				t.Errorf("%s captured %d times", u, n)
			}
		}
	}
	if len(per) != 11 || twice > 1 {
		t.Errorf("%d pages captured successfully (want 11), %d of them twice (at most the one in flight): %v", len(per), twice, per)
	}
	var archives int
	if err := e.store.Pool.QueryRow(e.ctx, `SELECT count(DISTINCT source_url) FROM archives`).Scan(&archives); err != nil || archives != 11 {
		t.Errorf("%d pages registered, want 11 (%v)", archives, err)
	}
	rep, err := (&politeness.HostService{Store: e.store, AtOnce: 1}).Report(e.ctx, strings.TrimPrefix(a.URL, "http://"), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK || rep.Captures < 11 || rep.Running != 0 {
		t.Errorf("host report across both processes: ok %v, %d captures, %d overlaps, %d short gaps, %d expired, %d running",
			rep.OK, rep.Captures, rep.Overlaps, rep.ShortGaps, rep.Expired, rep.Running)
	}
}
