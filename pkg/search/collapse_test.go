package search_test

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/wacz"
)

// capture is one archive of one page for the collapse tests.
type capture struct {
	name, url, org, text string
	minute               int // captured at 2026-11-20 09:00 UTC + minute
	id                   string
}

// addCaptures writes each capture's WACZ to the bucket, its ledger row
// (source URL = the page's URL), its recorded grantee and its admission
// tuples in OpenFGA.
func addCaptures(t *testing.T, env *apptest.Env, caps []*capture) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, env.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, c := range caps {
		c.id = uuid.NewString()
		task := uuid.NewString()
		at := time.Date(2026, 11, 20, 9, c.minute, 0, 0, time.UTC)
		var buf bytes.Buffer
		if _, err := wacz.Write(&buf, wacz.Capture{Created: at, Pages: []wacz.Page{{URL: c.url, Date: at, Title: "News", Text: c.text}}}); err != nil {
			t.Fatal(err)
		}
		key := "org/" + c.org + "/" + task + ".wacz"
		if err := env.Blob.Put(ctx, env.Bucket, key, "application/wacz", buf.Bytes()); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO archives (id, task_id, bucket, object_key, source_url, captured_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			c.id, task, env.Bucket, key, c.url, at); err != nil {
			t.Fatal(err)
		}
		if err := apptest.CopySources(ctx, conn, []apptest.Source{{ArchiveID: c.id, TaskID: task, At: at, Kind: ledger.ReasonOrganization, Principal: c.org}}); err != nil {
			t.Fatal(err)
		}
		var tuples []authz.Tuple
		for _, tu := range ledger.AdmissionTuples(c.id, task, c.org, nil).Writes {
			tuples = append(tuples, authz.Tuple{User: tu.User, Relation: tu.Relation, Object: tu.Object})
		}
		if err := env.FGA.Write(ctx, tuples, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// walk follows a search from its first page to its last, limit hits a
// page, and returns every page.
func walk(t *testing.T, s *search.Searcher, subject, org string, req search.Request) []search.Page {
	t.Helper()
	var pages []search.Page
	for range 100 {
		p, err := s.Search(context.Background(), subject, []string{org}, req)
		if err != nil {
			t.Fatalf("%s: %v", subject, err)
		}
		pages = append(pages, p)
		if p.Next == nil {
			return pages
		}
		req.Cursor = *p.Next
	}
	t.Fatalf("%s: paging does not end", subject)
	return nil
}

// seen is what a caller can tell from a walk: each hit's archive, URL and
// other captures in order, the first page's total and whether it is exact.
func seen(pages []search.Page) string {
	var b strings.Builder
	for i, p := range pages {
		if i == 0 {
			fmt.Fprintf(&b, "total %v exact %v lower %v\n", *p.Total, p.TotalExact, p.TotalIsLowerBound)
		}
		for _, h := range p.Hits {
			fmt.Fprintf(&b, "%s %s %s others", h.ArchiveID, h.URL, h.CapturedAt.Format(time.RFC3339))
			for _, o := range h.OtherCaptures {
				fmt.Fprintf(&b, " %s", o.ArchiveID)
			}
			fmt.Fprintf(&b, " more %v\n", h.OtherCapturesMore)
		}
	}
	return b.String()
}

// TestSearchCollapsesAcrossPages: a URL captured three times (the oldest
// scoring best, the newest in between) shows once in a whole walk, page
// size 1 or 2, as its newest matching capture, the other two named among
// its other captures; a URL whose newest capture no longer matches shows
// as its newest capture that does; the total counts URLs, exactly. The
// newest capture of a URL belonging to another organization (denied to
// alice) changes nothing she sees — not the hits, not their order, not the
// total, not the other captures — whether the index narrows her search
// (as serve runs it) or OpenFGA is asked about every hit
// (CAPTURE_LEDGER_LIST_SOURCE=scan); globex's bob sees it as the hit.
// Both backends.
func TestSearchCollapsesAcrossPages(t *testing.T) {
	t.Parallel()
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runCollapse(t, open(t))
		})
	}
}

func runCollapse(t *testing.T, backend search.Backend) {
	ctx := context.Background()
	env := apptest.New(t)
	env.App.SetSearchBackend(backend)
	const (
		story   = "https://news.example/story"
		other   = "https://news.example/other"
		once    = "https://news.example/once"
		changed = "https://news.example/changed"
		denied  = "https://news.example/denied"
	)
	plums := func(n int) string { return strings.TrimSpace(strings.Repeat("plum ", n)) + " in the orchard" }
	caps := []*capture{
		{name: "story1", url: story, org: "acme", text: plums(4), minute: 1},
		{name: "story2", url: story, org: "acme", text: plums(1), minute: 2},
		{name: "story3", url: story, org: "acme", text: plums(2), minute: 3},
		{name: "other1", url: other, org: "acme", text: plums(3), minute: 4},
		{name: "other2", url: other, org: "acme", text: plums(5), minute: 5},
		{name: "once", url: once, org: "acme", text: plums(1), minute: 6},
		{name: "changed1", url: changed, org: "acme", text: plums(2), minute: 7},
		{name: "changed2", url: changed, org: "acme", text: "no fruit in the orchard any more", minute: 8},
		{name: "denied1", url: denied, org: "acme", text: plums(1), minute: 9},
		{name: "denied2", url: denied, org: "acme", text: plums(2), minute: 10},
	}
	addCaptures(t, env, caps)
	ix, err := env.App.Indexer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.IndexPending(ctx, nil); err != nil {
		t.Fatal(err)
	}
	narrowed, err := env.App.Searcher(ctx)
	if err != nil {
		t.Fatal(err)
	}
	scan := *narrowed
	scan.Recorded, scan.Scope = nil, nil
	by := map[string]*capture{}
	for _, c := range caps {
		by[c.name] = c
	}
	q := mustQuery(t, "plum")

	// What alice must see, worked out from the captures: one hit per URL,
	// its newest matching capture, the others of its URL newest first.
	want := map[string][]string{ // shown → its other captures
		"story3":   {"story2", "story1"},
		"other2":   {"other1"},
		"once":     {},
		"changed1": {"changed2"},
		"denied2":  {"denied1"},
	}
	check := func(t *testing.T, pages []search.Page, limit int) {
		t.Helper()
		var shown []string
		for _, p := range pages {
			if len(p.Hits) > limit {
				t.Errorf("%d hits on a page of %d", len(p.Hits), limit)
			}
			for _, h := range p.Hits {
				var name string
				for n, c := range by {
					if c.id == h.ArchiveID {
						name = n
					}
				}
				shown = append(shown, name)
				others, ok := want[name]
				if !ok {
					t.Errorf("hit %s (%s): not the newest matching capture of its URL", name, h.URL)
					continue
				}
				var got []string
				for _, o := range h.OtherCaptures {
					got = append(got, o.ArchiveID)
				}
				var wantIDs []string
				for _, o := range others {
					wantIDs = append(wantIDs, by[o].id)
				}
				if !reflect.DeepEqual(got, wantIDs) || h.OtherCapturesMore {
					t.Errorf("hit %s: other captures %v (more %v), want %v", name, got, h.OtherCapturesMore, others)
				}
			}
		}
		sorted := slices.Clone(shown)
		slices.Sort(sorted)
		if !reflect.DeepEqual(sorted, []string{"changed1", "denied2", "once", "other2", "story3"}) {
			t.Errorf("limit %d: the walk showed %v, want each URL once as its newest matching capture", limit, shown)
		}
		if p := pages[0]; p.Total == nil || *p.Total != 5 || !p.TotalExact || p.TotalIsLowerBound {
			t.Errorf("limit %d: total %v exact %v lower bound %v, want exactly 5 (URLs, not captures)", limit, fmtTotal(p.Total), p.TotalExact, p.TotalIsLowerBound)
		}
	}
	before := map[string]string{}
	for _, limit := range []int{1, 2} {
		for name, s := range map[string]*search.Searcher{"narrowed": narrowed, "scan": &scan} {
			pages := walk(t, s, "alice", "acme", search.Request{Query: q, Limit: limit})
			check(t, pages, limit)
			before[fmt.Sprint(name, limit)] = seen(pages)
		}
	}

	// A filter keeps the newest capture in range: before 09:02:30, story2.
	to := time.Date(2026, 11, 20, 9, 2, 30, 0, time.UTC)
	pages := walk(t, narrowed, "alice", "acme", search.Request{Query: q, Limit: 1, Filter: ledger.ArchiveFilter{To: to}})
	var got []string
	for _, p := range pages {
		for _, h := range p.Hits {
			got = append(got, h.ArchiveID)
		}
	}
	if !reflect.DeepEqual(got, []string{by["story2"].id}) {
		t.Errorf("to 09:02:30: hits %v, want story2 %s alone", got, by["story2"].id)
	}

	// globex captures the denied URL last, with the best score of all.
	newest := &capture{name: "denied3", url: denied, org: "globex", text: plums(8), minute: 11}
	addCaptures(t, env, []*capture{newest})
	if _, err := ix.IndexPending(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{1, 2} {
		for name, s := range map[string]*search.Searcher{"narrowed": narrowed, "scan": &scan} {
			after := seen(walk(t, s, "alice", "acme", search.Request{Query: q, Limit: limit}))
			if after != before[fmt.Sprint(name, limit)] {
				t.Errorf("%s, limit %d: globex's capture changed what alice sees:\nbefore:\n%s\nafter:\n%s", name, limit, before[fmt.Sprint(name, limit)], after)
			}
		}
	}
	bob := walk(t, narrowed, "bob", "globex", search.Request{Query: q, Limit: 2})
	if len(bob) != 1 || len(bob[0].Hits) != 1 || bob[0].Hits[0].ArchiveID != newest.id || len(bob[0].Hits[0].OtherCaptures) != 0 {
		t.Errorf("bob: %s, want globex's capture alone, with no other capture he may view", seen(bob))
	}
}

// TestBackendAmong: which archives hold a page of one URL that matches
// the query and passes the filter, in both backends.
func TestBackendAmong(t *testing.T) {
	t.Parallel()
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := open(t)
			a, c, d, e := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
			page := func(archive string, n int, url, text string, grantee string) search.Document {
				return search.Document{ArchiveID: archive, Page: n, URL: url, Title: "t", Text: text, SourceURL: url, Grantees: []string{grantee}}
			}
			docs := map[string][]search.Document{
				a: {page(a, 0, "https://x.test/", "plum", "org:acme")},
				c: {page(c, 0, "https://x.test/", "pear", "org:acme")},                                                       // does not match
				d: {page(d, 0, "https://y.test/", "plum", "org:acme"), page(d, 1, "https://x.test/", "plums", "org:globex")}, // second page matches
				e: {page(e, 0, "https://x.test/", "plum", "org:globex")},
			}
			if err := b.Put(ctx, docs); err != nil {
				t.Fatal(err)
			}
			all := []string{a, c, d, e}
			for _, tc := range []struct {
				name string
				f    *search.Filter
				url  string
				ids  []string
				want []string
			}{
				{"any", nil, "https://x.test/", all, []string{a, d, e}},
				{"acme's keys", &search.Filter{Grantees: []string{"org:acme"}}, "https://x.test/", all, []string{a}},
				{"acme's keys or e by id", &search.Filter{Grantees: []string{"org:acme"}, Archives: []string{e}}, "https://x.test/", all, []string{a, e}},
				{"among some", nil, "https://x.test/", []string{c, d}, []string{d}},
				{"another url", nil, "https://y.test/", all, []string{d}},
				{"a prefix is not the url", nil, "https://x.test", all, nil},
				{"none asked", nil, "https://x.test/", nil, nil},
			} {
				got, err := b.Among(ctx, mustQuery(t, "plum"), tc.f, tc.url, tc.ids)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				var ids []string
				for id, ok := range got {
					if ok {
						ids = append(ids, id)
					}
				}
				slices.Sort(ids)
				want := slices.Clone(tc.want)
				slices.Sort(want)
				if !slices.Equal(ids, want) {
					t.Errorf("%s: %v, want %v", tc.name, ids, want)
				}
			}
		})
	}
}

func fmtTotal(n *int) string {
	if n == nil {
		return "null"
	}
	return fmt.Sprint(*n)
}
