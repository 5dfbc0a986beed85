package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// hostReport is what the test reads of `ledgerctl hosts politeness --json`.
type hostReport struct {
	OK            bool           `json:"ok"`
	Captures      int            `json:"captures"`
	Crawls        int            `json:"crawls"`
	Direct        int            `json:"direct"`
	Organizations []string       `json:"organizations"`
	Running       int            `json:"running"`
	Overlaps      int            `json:"overlaps"`
	ShortGaps     int            `json:"shortGaps"`
	MinGapMs      *float64       `json:"minGapMs"`
	Sources       map[string]int `json:"sources"`
	// The fairness between organizations.
	MostTurnsWhileWaiting int      `json:"mostTurnsWhileWaiting"`
	TurnsWaiter           string   `json:"turnsWaiter"`
	TurnsTaker            string   `json:"turnsTaker"`
	LongestWaitMs         *float64 `json:"longestWaitMs"`
}

// TestFiveCrawlsOfThreeOrganizationsInTwoServes: two `ledgerctl serve`
// processes share one PostgreSQL, one bucket and one OpenFGA datastore
// (each embeds its own OpenFGA server on it; the submitters granted by
// `ledgerctl fga grant`, a third process, are what both check). Three
// organizations start
// five crawls at the same moment through the HTTP API, spread over both
// processes, over three shared loopback hosts — one whose robots.txt asks
// Crawl-delay 0.2, one answering a 429 to the first request of every
// page — while direct captures (POST /api/captures) hit one of them too.
//
// Every crawl ends succeeded with all its pages; both processes ran crawl
// levels (seen holding the runner's lock of a crawl); every host's
// captures across all crawls, direct captures and both processes have no
// overlap and no short gap, checked three ways: `ledgerctl hosts
// politeness HOST` (exit 0), SQL over every capture's start and end, and
// the host's own record of when each request arrived and was answered.
// No organization waited while another held the host: on each host, while
// a party of one organization stood ready in line, no other organization
// took more than one turn (the round robin), by the report and by SQL over
// when each party asked and started; each organization's wait for its
// first capture is logged.
func TestFiveCrawlsOfThreeOrganizationsInTwoServes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t, map[string]string{
		// Every party keeps at least 100 ms between a host's captures,
		// direct captures included.
		"CAPTURE_LEDGER_HOST_DELAY_MS": "100",
	})
	orgOf := map[string]string{"alice": "acme", "gina": "globex", "ivan": "initech"}
	for subject, org := range orgOf {
		c.grant(subject, org)
	}
	a, b := c.serve("serve-a"), c.serve("serve-b")
	serves := []*serveProc{a, b}

	slow, plain, storm := newSite(t), newSite(t), newSite(t)
	for _, s := range []*site{slow, plain, storm} {
		var links []string
		for i := 1; i <= 3; i++ {
			p := fmt.Sprintf("/p%d", i)
			s.page(p, "<p>a page</p>")
			links = append(links, fmt.Sprintf(`<a href="%s">%s</a>`, p, p))
		}
		s.page("/", strings.Join(links, " "))
	}
	slow.handle("/robots.txt", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.2\n")
	})
	for _, p := range []string{"/", "/p1", "/p2", "/p3"} {
		storm.handle(p, testenv.RefusedOnce(storm.pages[p]))
	}
	a.ready(t)
	b.ready(t)

	// Five crawls at once: acme and globex two each, initech one, started
	// on serve-a, serve-b, serve-a, …
	starts := []string{"alice", "gina", "ivan", "alice", "gina"}
	ids := make([]string, len(starts))
	var wg sync.WaitGroup
	for i, subject := range starts {
		wg.Go(func() {
			var got struct {
				CrawlID string `json:"crawlId"`
			}
			code := serves[i%2].call(t, "POST", "/api/crawls", subject, orgOf[subject], map[string]any{
				"seeds": []string{slow.URL + "/", plain.URL + "/", storm.URL + "/"}, "maxDepth": 1, "perHostDelayMs": 100, "hostParallelism": 3,
			}, &got)
			if code != http.StatusAccepted || got.CrawlID == "" {
				t.Errorf("crawl %d of %s on %s: %d", i, orgOf[subject], serves[i%2].name, code)
			}
			ids[i] = got.CrawlID
		})
	}
	// Direct captures of the plain host go through the same leases.
	var direct sync.WaitGroup
	direct.Go(func() {
		for i := 1; i <= 2; i++ {
			var res struct {
				Pages []struct {
					Status string `json:"status"`
				} `json:"pages"`
			}
			code := b.call(t, "POST", "/api/captures", "alice", "acme", map[string]any{"urls": []string{fmt.Sprintf("%s/p%d", plain.URL, i)}, "organization": "acme"}, &res)
			if code != http.StatusOK || len(res.Pages) != 1 || res.Pages[0].Status != "captured" {
				t.Errorf("direct capture %d: %d %+v", i, code, res)
			}
		}
	})
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// Until every crawl ends, asked of the process that did not start it,
	// and noting which processes hold a crawl's runner lock meanwhile.
	ran := map[string]bool{}
	deadline := time.Now().Add(90 * time.Second)
	for running := len(ids); running > 0; time.Sleep(150 * time.Millisecond) {
		for _, name := range runnerLockHolders(t, c, ids) {
			ran[name] = true
		}
		running = 0
		for i, id := range ids {
			var v struct {
				State string `json:"state"`
			}
			if code := serves[(i+1)%2].call(t, "GET", "/api/crawls/"+id, starts[i], orgOf[starts[i]], nil, &v); code != http.StatusOK {
				t.Fatalf("GET /api/crawls/%s on %s: %d", id, serves[(i+1)%2].name, code)
			}
			if v.State == "running" {
				running++
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d crawls still running after 90 s", running)
		}
	}
	direct.Wait()
	for i, id := range ids {
		var v struct {
			State         string `json:"state"`
			PagesCaptured int    `json:"pagesCaptured"`
		}
		serves[i%2].call(t, "GET", "/api/crawls/"+id, starts[i], orgOf[starts[i]], nil, &v)
		if v.State != "succeeded" || v.PagesCaptured != 12 {
			t.Errorf("crawl %s of %s: %s with %d pages captured, want succeeded with 12", id, orgOf[starts[i]], v.State, v.PagesCaptured)
		}
	}
	if !ran["serve-a"] || !ran["serve-b"] {
		t.Errorf("processes seen running crawl levels: %v, want both", ran)
	}

	for _, h := range []struct {
		s      *site
		least  time.Duration
		direct int
	}{{slow, 200 * time.Millisecond, 0}, {plain, 100 * time.Millisecond, 2}, {storm, 100 * time.Millisecond, 0}} {
		name := h.s.name
		// The operator's report, as a separate process.
		out, errs, code := c.ledgerctl("hosts", "politeness", name, "--json")
		var rep hostReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("hosts politeness %s: exit %d: %v: %s %s", name, code, err, out, errs)
		}
		if code != 0 || !rep.OK || rep.Overlaps != 0 || rep.ShortGaps != 0 || rep.Running != 0 ||
			rep.Crawls != 5 || rep.Direct != h.direct || len(rep.Organizations) != 3 || rep.Captures < 20+h.direct {
			t.Errorf("hosts politeness %s: exit %d, ok %v, %d captures (%d direct) by %d crawls of %v, %d overlaps, %d short gaps, %d running",
				name, code, rep.OK, rep.Captures, rep.Direct, rep.Crawls, rep.Organizations, rep.Overlaps, rep.ShortGaps, rep.Running)
		}
		switch h.s {
		case slow:
			if rep.Sources["crawl-delay"] == 0 {
				t.Errorf("%s: no capture kept robots.txt's Crawl-delay: %v", name, rep.Sources)
			}
		case storm:
			if rep.Sources["backoff"] == 0 {
				t.Errorf("%s: no capture waited a back-off: %v", name, rep.Sources)
			}
		}

		// Independently, by SQL over every capture's start and end.
		overlaps, short, held := sqlPoliteness(t, c, name, h.least)
		if overlaps != 0 || short != 0 || held != 0 {
			t.Errorf("%s by SQL: %d overlaps, %d gaps under %s, %d gaps under the previous party's hold", name, overlaps, short, h.least, held)
		}

		// And as the host saw its visitors.
		ov, sh, minGap := sitePoliteness(h.s, h.least, time.Second)
		if ov != 0 || sh != 0 {
			t.Errorf("%s as the host saw it: %d requests while another was answered, %d sooner than %s after the previous answer (or 1 s after a 429); least gap %s",
				name, ov, sh, h.least, minGap)
		}
		if h.s == storm {
			refused := 0
			for _, v := range storm.visits() {
				if v.status == http.StatusTooManyRequests {
					refused++
				}
			}
			if refused != 4 {
				t.Errorf("%s answered %d 429s, want 4 (the first request of each page)", name, refused)
			}
		}

		// Fairness: the most turns one other organization took while a
		// party of an organization stood ready in the host's line for its
		// organization's next turn — by the report and by SQL.
		turns := sqlTurnsWhileWaiting(t, c, name)
		t.Logf("%s: %d captures, least gap %.0f ms (report), %s (host's view); longest wait in line %.0f ms; most turns of one organization while another waited: %d (report: %d, %s waited for %s)",
			name, rep.Captures, deref(rep.MinGapMs), minGap.Round(time.Millisecond), deref(rep.LongestWaitMs), turns,
			rep.MostTurnsWhileWaiting, rep.TurnsWaiter, rep.TurnsTaker)
		if rep.MostTurnsWhileWaiting > 1 || turns > 1 || rep.LongestWaitMs == nil {
			t.Errorf("%s: an organization waited while another took %d turns (report: %d, %s waited for %s), want at most 1 (round robin)",
				name, turns, rep.MostTurnsWhileWaiting, rep.TurnsWaiter, rep.TurnsTaker)
		}
	}

	// How long each organization waited for its first capture after its
	// first crawl started, on PostgreSQL's clock.
	rows, err := c.db.Query(ctx, `
		SELECT c.org_id, extract(epoch FROM min(h.started_at) - min(c.started_at)) * 1000
		FROM crawls c JOIN host_captures h ON h.crawl_id = c.id GROUP BY c.org_id ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var org string
		var ms float64
		if err := rows.Scan(&org, &ms); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s's first capture %.0f ms after its first crawl started", org, ms)
	}
	rows.Close()
}

func deref(f *float64) float64 {
	if f == nil {
		return -1
	}
	return *f
}

// sqlTurnsWhileWaiting is, over the host's captures, the most captures one
// other organization started after a party asked for the host and after its
// organization's previous capture, while that party was ready (its delay
// had passed since the end the other capture counted its gap from).
func sqlTurnsWhileWaiting(t *testing.T, c *cluster, host string) int {
	t.Helper()
	var n int
	if err := c.db.QueryRow(context.Background(), `
		WITH c AS (
			SELECT id, org_id, started_at, prev_end, delay_ms, asked_at,
			       lag(started_at) OVER (PARTITION BY org_id ORDER BY started_at, id) AS org_prev
			FROM host_captures WHERE host = $1)
		SELECT coalesce(max(n), 0) FROM (
			SELECT x.id, y.org_id, count(*) AS n
			FROM c x JOIN c y ON y.org_id <> x.org_id
			 AND y.started_at > greatest(x.asked_at, coalesce(x.org_prev, x.asked_at))
			 AND y.started_at < x.started_at
			 AND (y.prev_end IS NULL OR y.started_at >= y.prev_end + x.delay_ms * interval '1 millisecond')
			WHERE x.asked_at IS NOT NULL
			GROUP BY x.id, y.org_id) z`, host).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// sqlPoliteness counts, over every capture of host in host_captures, the
// captures that started before an earlier one ended, those that started
// sooner than least after the latest earlier end, and those sooner than
// the hold (a back-off) the party of the latest earlier end asked for.
func sqlPoliteness(t *testing.T, c *cluster, host string, least time.Duration) (overlaps, short, held int) {
	t.Helper()
	ctx := context.Background()
	if err := c.db.QueryRow(ctx, `
		SELECT count(*) FROM host_captures a JOIN host_captures b ON a.host = b.host AND a.id <> b.id
		WHERE a.host = $1 AND b.started_at >= a.started_at AND b.started_at < coalesce(a.ended_at, 'infinity')`, host).Scan(&overlaps); err != nil {
		t.Fatal(err)
	}
	if err := c.db.QueryRow(ctx, `
		SELECT count(*) FILTER (WHERE started_at < prev_end + $2 * interval '1 millisecond'),
		       count(*) FILTER (WHERE started_at < prev_end + prev_hold * interval '1 millisecond')
		FROM (SELECT started_at,
		             max(ended_at) OVER w AS prev_end,
		             (SELECT p.hold_ms FROM host_captures p WHERE p.host = x.host AND p.started_at < x.started_at
		              ORDER BY p.ended_at DESC NULLS LAST LIMIT 1) AS prev_hold
		      FROM host_captures x WHERE host = $1
		      WINDOW w AS (ORDER BY started_at, id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) y`,
		host, least.Milliseconds()).Scan(&short, &held); err != nil {
		t.Fatal(err)
	}
	return overlaps, short, held
}

// runnerLockHolders are the application names of the sessions holding the
// embedded runner's lock of one of the crawls.
func runnerLockHolders(t *testing.T, c *cluster, crawlIDs []string) []string {
	t.Helper()
	rows, err := c.db.Query(context.Background(), `
		SELECT DISTINCT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND a.datname = current_database()
		  AND ((l.classid::bigint << 32) | l.objid::bigint) IN (
		      SELECT hashtextextended('ledgerctl crawl runner ' || id, 0) FROM unnest($1::text[]) id)`, crawlIDs)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}
