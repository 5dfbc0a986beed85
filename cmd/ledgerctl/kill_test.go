package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestKill9OfAServeMidLevel: two `ledgerctl serve` processes share the
// ledger; the one running a crawl gets SIGKILL while the host is answering
// its fourth page of the second level (the host holds that answer until
// the kill, which lands once the three pages before it are kept: their
// captures are written beside its fetch), so its in-flight capture's host
// lease is left behind and its
// runner's lock dropped with its connections. The other process resumes the crawl on
// its rescan and finishes it: the crawl ends succeeded with every page, no
// page was fetched twice but the one in flight at the kill, every page is
// registered exactly once, and the host's captures by both processes (the
// dead one's expired lease included) keep the crawl's delay — by
// `ledgerctl hosts politeness` and as the host saw its visitors.
func TestKill9OfAServeMidLevel(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t, map[string]string{
		"CAPTURE_LEDGER_CRAWL_RESCAN_MS":   "300",
		"CAPTURE_LEDGER_HOST_LEASE_TTL_MS": "1000",
	})
	c.grant("alice", "acme")
	serves := map[string]*serveProc{"serve-a": c.serve("serve-a"), "serve-b": c.serve("serve-b")}
	s := newSite(t)
	var links strings.Builder
	for i := range 10 {
		fmt.Fprintf(&links, `<a href="/p%d">p%d</a> `, i, i)
		s.page(fmt.Sprintf("/p%d", i), "<p>"+strings.Repeat("text ", 50)+"</p>")
	}
	s.page("/", links.String())
	// The fourth page of level 1 to be asked for is held until the process
	// asking is killed: the kill lands mid-capture, the lease held.
	inflight, release := make(chan string, 1), make(chan struct{})
	var asked atomic.Int32
	for i := range 10 {
		path := fmt.Sprintf("/p%d", i)
		inner := s.pages[path]
		s.handle(path, func(w http.ResponseWriter, r *http.Request) {
			if asked.Add(1) == 4 {
				inflight <- path
				<-release
			}
			inner(w, r)
		})
	}
	for _, p := range serves {
		p.ready(t)
	}

	var started struct {
		CrawlID string `json:"crawlId"`
	}
	if code := serves["serve-a"].call(t, "POST", "/api/crawls", "alice", "acme", map[string]any{
		"seeds": []string{s.URL + "/"}, "maxDepth": 1, "perHostDelayMs": 150,
	}, &started); code != http.StatusAccepted {
		t.Fatalf("start: %d", code)
	}
	id := started.CrawlID

	// Kill whichever process holds the crawl while its fourth page of
	// level 1 is being fetched.
	var victim, held string
	select {
	case held = <-inflight:
	case <-time.After(60 * time.Second):
		t.Fatal("no process got to the fourth page of level 1 within 60 s")
	}
	// The pages before it have been fetched; their captures are written
	// beside the fourth's fetch, and are kept within moments: the kill
	// lands once they are, so that only the fourth is in flight.
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := c.db.QueryRow(ctx, `SELECT count(*) FROM crawl_runner_results WHERE crawl_id = $1 AND depth = 1 AND result IS NOT NULL`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n >= 3 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("%d of the 3 pages fetched before the fourth were kept within 20 s", n)
		}
	}
	holders := runnerLockHolders(t, c, []string{id})
	if len(holders) != 1 {
		t.Fatalf("processes holding the crawl: %v, want one", holders)
	}
	victim = holders[0]
	serves[victim].kill(t)
	close(release)
	killedAt := time.Now()
	var killedDB time.Time // the kill on PostgreSQL's clock, which the leases use
	if err := c.db.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&killedDB); err != nil {
		t.Fatal(err)
	}
	var survivor *serveProc
	for name, p := range serves {
		if name != victim {
			survivor = p
		}
	}
	var kept int
	if err := c.db.QueryRow(ctx, `SELECT count(*) FROM crawl_runner_results WHERE crawl_id = $1 AND depth = 1 AND result IS NOT NULL`, id).Scan(&kept); err != nil {
		t.Fatal(err)
	}
	if kept >= 10 {
		t.Fatalf("level 1 ended (%d results) before the kill", kept)
	}

	// PostgreSQL ends the killed process's sessions (and so its advisory
	// locks) once it sees their sockets closed; until then a lock held by a
	// dead process would look like it still runs the crawl. (Other tests'
	// serves have the same names in other databases of the server.)
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var left int
		if err := c.db.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, victim).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("%d sessions of the killed %s still open 10 s after the kill", left, victim)
		}
	}

	// The survivor resumes it.
	var v struct {
		State         string `json:"state"`
		PagesCaptured int    `json:"pagesCaptured"`
	}
	resumedBy := map[string]bool{}
	for end := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		for _, n := range runnerLockHolders(t, c, []string{id}) {
			resumedBy[n] = true
		}
		if code := survivor.call(t, "GET", "/api/crawls/"+id, "alice", "acme", nil, &v); code != http.StatusOK {
			t.Fatalf("GET /api/crawls/%s on %s: %d", id, survivor.name, code)
		}
		if v.State != "running" {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("%s did not finish the crawl within 60 s of the kill", survivor.name)
		}
	}
	var firstAfter float64
	if err := c.db.QueryRow(ctx, `
		SELECT coalesce(extract(epoch FROM min(started_at) - $2) * 1000, -1)
		FROM host_captures WHERE crawl_id = $1 AND started_at > $2`, id, killedDB).Scan(&firstAfter); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s killed with %d of 10 level-1 pages kept; %s's first capture started %.0f ms after the kill (rescan 300 ms, the dead lease's TTL 1 s), and it finished the crawl %s after the kill",
		victim, kept, survivor.name, firstAfter, time.Since(killedAt).Round(time.Millisecond))
	if v.State != "succeeded" || v.PagesCaptured != 11 {
		t.Errorf("crawl %s with %d pages captured, want succeeded with 11", v.State, v.PagesCaptured)
	}
	if resumedBy[victim] || !resumedBy[survivor.name] {
		t.Errorf("processes seen running the crawl after the kill: %v, want %s only", resumedBy, survivor.name)
	}

	// No page fetched twice but the one in flight; every page there.
	fetched := map[string]int{}
	for _, vis := range s.visits() {
		fetched[vis.path]++
	}
	for p, n := range fetched {
		if want := map[bool]int{true: 2, false: 1}[p == held]; n != want {
			t.Errorf("%s fetched %d times, want %d (%s was in flight at the kill)", p, n, want, held)
		}
	}
	if len(fetched) != 11 {
		t.Errorf("%d pages fetched, want 11: %v", len(fetched), fetched)
	}
	// Nothing lost, nothing registered twice.
	var archives, distinct int
	if err := c.db.QueryRow(ctx, `SELECT count(*), count(DISTINCT source_url) FROM archives`).Scan(&archives, &distinct); err != nil {
		t.Fatal(err)
	}
	if archives != 11 || distinct != 11 {
		t.Errorf("%d archives of %d pages registered, want 11 of 11", archives, distinct)
	}

	// Polite across both processes, the dead one's lease included.
	out, errs, code := c.ledgerctl("hosts", "politeness", s.name, "--json")
	var rep struct {
		OK       bool `json:"ok"`
		Captures int  `json:"captures"`
		Expired  int  `json:"expired"`
		Running  int  `json:"running"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("hosts politeness: exit %d: %v: %s %s", code, err, out, errs)
	}
	if code != 0 || !rep.OK || rep.Captures != 12 || rep.Expired != 1 || rep.Running != 0 {
		t.Errorf("hosts politeness across both processes: exit %d, ok %v, %d captures (want 12), %d expired (want 1: the dead one's), %d running: %s", code, rep.OK, rep.Captures, rep.Expired, rep.Running, errs)
	}
	if ov, sh, minGap := sitePoliteness(s, 150*time.Millisecond, time.Second); ov != 0 || sh != 0 {
		t.Errorf("as the host saw it: %d overlaps, %d gaps under 150 ms (least %s)", ov, sh, minGap)
	}
}
