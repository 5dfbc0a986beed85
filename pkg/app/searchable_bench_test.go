package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/config"
)

// BenchmarkCaptureToSearchable: how soon a crawl's pages can be found by
// search, through one serve as it runs (its embedded runner, the http
// engine, the level admissions, its outbox drainer and its search indexer,
// both woken by PostgreSQL's notifications). An archive is searchable once
// it is indexed (indexed_at) and its tuples are in OpenFGA (its outbox rows'
// processed_at), whichever comes last; measured for every archive of the
// crawl from its capture's end (crawl_pages.finished_at) and from its
// admission (archives.created_at), and for the crawl from its end to its
// last archive searchable. Peer, same iteration: the same archives indexed
// again in one pass after the crawl (their indexed_at cleared, which wakes
// the same indexer): what the end-to-searchable time would be if indexing
// began when the crawl ended.
func BenchmarkCaptureToSearchable(b *testing.B) {
	for _, c := range []struct {
		name            string
		hosts, perHost  int
		delayMs         int
		hostParallelism int
	}{
		{"500pages-10hosts-delay0", 10, 50, 0, 10},
		{"20pages-1host-delay250ms", 1, 20, 250, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			// The organization's capture capacity (by default 3 crawl
			// captures at once and 120 pages a minute) would pace the
			// crawl; this measures the pipeline, so it is raised. The
			// outbox is drained on serve's default schedule (5 s).
			env := apptest.NewWith(b, func(s *config.Settings) {
				s.CapturePerOrg, s.CapturePerCaller = 64, 64
				s.CaptureURLsPerOrg, s.CaptureURLsPerCaller = 1_000_000, 1_000_000
				s.DrainInterval = 5 * time.Second
			})
			ctx := context.Background()
			if _, err := authz.Grant(ctx, env.FGA, "submitter", "alice", "acme"); err != nil {
				b.Fatal(err)
			}
			var iter atomic.Int64
			var seeds []string
			for h := range c.hosts {
				site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "text/html; charset=utf-8")
					var j int
					if r.URL.Path == "/" {
						var links strings.Builder
						for k := 1; k < c.perHost; k++ {
							fmt.Fprintf(&links, `<a href="/p%d">page %d</a> `, k, k)
						}
						fmt.Fprintf(w, `<!doctype html><title>home %d</title><p>zq%dh%dp0 %s</p>%s`, h, iter.Load(), h, strings.Repeat("lorem ipsum ", 100), links.String())
						return
					}
					if _, err := fmt.Sscanf(r.URL.Path, "/p%d", &j); err != nil || j < 1 || j >= c.perHost {
						http.NotFound(w, r)
						return
					}
					fmt.Fprintf(w, `<!doctype html><title>page %d of %d</title><p>zq%dh%dp%d %s</p>`, j, h, iter.Load(), h, j, strings.Repeat("lorem ipsum ", 100))
				}))
				b.Cleanup(site.Close)
				seeds = append(seeds, site.URL+"/")
			}
			srv := startClusterServe(b, env, "bench")
			conn, err := pgx.Connect(ctx, env.DSN)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = conn.Close(context.Background()) })
			pages := c.hosts * c.perHost
			var (
				fromCapture, fromAdmission []time.Duration
				readable, indexed          []time.Duration
				crawlWall, afterEnd, pass  time.Duration
			)
			b.ResetTimer()
			for range b.N {
				n := iter.Add(1)
				body := fmt.Sprintf(`{"seeds":%s,"maxDepth":1,"maxPages":%d,"perHostDelayMs":%d,"hostParallelism":%d}`,
					jsonStrings(seeds), pages, c.delayMs, c.hostParallelism)
				code, out := srv.aliceCalls(b, "POST", "/api/crawls", body)
				if code != http.StatusAccepted {
					b.Fatalf("start the crawl: %d %v", code, out)
				}
				id := out["crawlId"].(string)
				// The crawl's end and its end-to-searchable time, as the
				// API reports them.
				deadline := time.Now().Add(5 * time.Minute)
				for {
					code, out = srv.aliceCalls(b, "GET", "/api/crawls/"+id, "")
					s, _ := out["search"].(map[string]any)
					if code == http.StatusOK && out["state"] == "succeeded" && s != nil && s["searchableAfterMs"] != nil {
						if s["archives"] != float64(pages) || s["indexed"] != float64(pages) {
							b.Fatalf("the crawl's search member: %v", s)
						}
						started, _ := time.Parse(time.RFC3339Nano, out["startedAt"].(string))
						finished, _ := time.Parse(time.RFC3339Nano, out["finishedAt"].(string))
						crawlWall += finished.Sub(started)
						break
					}
					if code == http.StatusOK && out["state"] != "running" && out["state"] != "succeeded" {
						b.Fatalf("the crawl ended %v: %v", out["state"], out)
					}
					if time.Now().After(deadline) {
						b.Fatalf("the crawl's view: %d %v", code, out)
					}
					time.Sleep(10 * time.Millisecond)
				}
				// An archive is searchable once it is indexed and its
				// tuples are in OpenFGA (its outbox rows delivered): wait
				// for both, then read when each happened.
				for {
					var left int
					if err := conn.QueryRow(ctx, `
						SELECT count(*) FROM crawl_pages p JOIN archives a ON a.task_id::text = p.task_id
						WHERE p.crawl_id = $1::uuid AND EXISTS (
							SELECT 1 FROM fga_outbox o
							WHERE o.processed_at IS NULL AND o.payload::text LIKE '%archive:' || a.id::text || '%')`, id).Scan(&left); err != nil {
						b.Fatal(err)
					}
					if left == 0 {
						break
					}
					if time.Now().After(deadline) {
						b.Fatalf("%d archives' tuples still not delivered", left)
					}
					time.Sleep(10 * time.Millisecond)
				}
				rows, err := conn.Query(ctx, `
					WITH s AS (
						SELECT p.finished_at, a.created_at, a.indexed_at,
						       (SELECT max(o.processed_at) FROM fga_outbox o WHERE o.payload::text LIKE '%archive:' || a.id::text || '%') AS readable_at
						FROM crawl_pages p JOIN archives a ON a.task_id::text = p.task_id
						WHERE p.crawl_id = $1::uuid)
					SELECT extract(epoch FROM greatest(indexed_at, readable_at) - finished_at)::float8,
					       extract(epoch FROM greatest(indexed_at, readable_at) - created_at)::float8,
					       extract(epoch FROM readable_at - created_at)::float8,
					       extract(epoch FROM indexed_at - created_at)::float8,
					       extract(epoch FROM greatest(indexed_at, readable_at) - (SELECT finished_at FROM crawls WHERE id = $1::uuid))::float8
					FROM s`, id)
				if err != nil {
					b.Fatal(err)
				}
				got, last := 0, time.Duration(0)
				for rows.Next() {
					var fc, fa, ra, ia, fe float64 // seconds
					if err := rows.Scan(&fc, &fa, &ra, &ia, &fe); err != nil {
						b.Fatal(err)
					}
					sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
					fromCapture, fromAdmission = append(fromCapture, sec(fc)), append(fromAdmission, sec(fa))
					readable, indexed = append(readable, sec(ra)), append(indexed, sec(ia))
					last = max(last, sec(fe))
					got++
				}
				if err := rows.Err(); err != nil {
					b.Fatal(err)
				}
				if got != pages {
					b.Fatalf("%d archives of the crawl, want %d", got, pages)
				}
				afterEnd += last
				// Searchable means found: this iteration's last page by its
				// own word.
				word := fmt.Sprintf("zq%dh%dp%d", n, c.hosts-1, c.perHost-1)
				code, out = srv.aliceCalls(b, "GET", "/api/search?q="+word, "")
				if hits, _ := out["hits"].([]any); code != http.StatusOK || len(hits) != 1 {
					b.Fatalf("search %s: %d %v", word, code, out)
				}
				// The peer: the same archives indexed again in one pass.
				start := time.Now()
				if _, err := conn.Exec(ctx, `
					UPDATE archives SET indexed_at = NULL
					WHERE task_id::text IN (SELECT task_id FROM crawl_pages WHERE crawl_id = $1::uuid AND task_id IS NOT NULL)`, id); err != nil {
					b.Fatal(err)
				}
				for {
					var left int
					if err := conn.QueryRow(ctx, `
						SELECT count(*) FROM archives
						WHERE indexed_at IS NULL AND task_id::text IN (SELECT task_id FROM crawl_pages WHERE crawl_id = $1::uuid AND task_id IS NOT NULL)`, id).Scan(&left); err != nil {
						b.Fatal(err)
					}
					if left == 0 {
						break
					}
					if time.Since(start) > 5*time.Minute {
						b.Fatalf("%d archives still not indexed again", left)
					}
					time.Sleep(5 * time.Millisecond)
				}
				pass += time.Since(start)
			}
			b.StopTimer()
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			q := func(ds []time.Duration, p float64) float64 {
				s := slices.Clone(ds)
				slices.Sort(s)
				return ms(s[min(len(s)-1, int(p*float64(len(s))))])
			}
			nf := float64(b.N)
			b.ReportMetric(crawlWall.Seconds()/nf, "crawl-s")
			b.ReportMetric(q(fromCapture, 0.5), "capture-to-searchable-p50-ms")
			b.ReportMetric(q(fromCapture, 0.95), "capture-to-searchable-p95-ms")
			b.ReportMetric(q(fromCapture, 1), "capture-to-searchable-max-ms")
			b.ReportMetric(q(fromAdmission, 0.5), "admitted-to-searchable-p50-ms")
			b.ReportMetric(q(fromAdmission, 1), "admitted-to-searchable-max-ms")
			b.ReportMetric(q(readable, 0.5), "admitted-to-tuples-p50-ms")
			b.ReportMetric(q(indexed, 0.5), "admitted-to-indexed-p50-ms")
			b.ReportMetric(ms(afterEnd)/nf, "searchable-after-end-ms")
			b.ReportMetric(ms(pass)/nf, "one-pass-after-ms")
			b.ReportMetric(float64(afterEnd)/float64(pass), "after-end/one-pass")
		})
	}
}

// jsonStrings is ss as a JSON array.
func jsonStrings(ss []string) string {
	data, _ := json.Marshal(ss)
	return string(data)
}
