package search_test

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// backendFactory opens a fresh, empty backend for one test.
type backendFactory func(t *testing.T) search.Backend

func bleveFactory(t *testing.T) search.Backend {
	b, err := search.OpenBleve(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func openSearchFactory(t *testing.T) search.Backend {
	_, srv := newFakeOpenSearch(t, "pages-test")
	b, err := search.NewOpenSearch(srv.URL, "pages-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

var backends = map[string]backendFactory{"bleve": bleveFactory, "opensearch": openSearchFactory}

// TestBackendConformance runs the same suite against both backends: what a
// document is after a round trip, how terms match (CJK bigram phrases,
// English stems and case, title or text, every term), how a write
// replaces an archive's pages, and paging through a result list.
func TestBackendConformance(t *testing.T) {
	t.Parallel()
	for name, open := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runBackendConformance(t, open)
		})
		t.Run(name+"/filter", func(t *testing.T) {
			t.Parallel()
			runFilterConformance(t, open)
		})
	}
}

func doc(archive string, page int, title, text string) search.Document {
	return search.Document{
		ArchiveID: archive, Page: page, URL: fmt.Sprintf("https://example.com/%s/%d", archive[:8], page),
		Title: title, Text: text, ObjectKey: "org/acme/" + archive + ".wacz", SourceURL: "https://example.com/",
		Labels: []string{"daily"}, CapturedAt: time.Date(2026, 11, 2, 3, 4, 5, 6000, time.UTC),
	}
}

// find runs q and returns the ids of every match, in result order, paging
// size at a time with search_after, and the total of the first call.
func find(t *testing.T, b search.Backend, q string, size int) ([]string, int) {
	t.Helper()
	pq, err := search.ParseQuery(q)
	if err != nil {
		t.Fatalf("parse %q: %v", q, err)
	}
	var ids []string
	var after *search.Position
	total := -1
	for range 1000 {
		got, n, err := b.Candidates(context.Background(), pq, nil, after, size)
		if err != nil {
			t.Fatalf("candidates %q: %v", q, err)
		}
		if total < 0 {
			total = n
		} else if n != total {
			t.Fatalf("%q: total %d on a later page, %d on the first", q, n, total)
		}
		for _, p := range got {
			ids = append(ids, p.DocID())
		}
		if len(got) < size {
			return ids, total
		}
		after = &got[len(got)-1]
	}
	t.Fatalf("%q: paging does not end", q)
	return nil, 0
}

func sortedCopy(s []string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}

func runBackendConformance(t *testing.T, open backendFactory) {
	ctx := context.Background()
	b := open(t)

	// An empty (or absent) index matches nothing and holds nothing.
	if ids, total := find(t, b, "anything", 10); len(ids) != 0 || total != 0 {
		t.Fatalf("empty index: %v, total %d", ids, total)
	}
	if docs, err := b.Documents(ctx, []string{search.DocID(uuid.NewString(), 0)}); err != nil || len(docs) != 0 {
		t.Fatalf("empty index documents: %v %v", docs, err)
	}

	a, bID, c, d := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	withheld := "no-archive"
	docsA := []search.Document{
		doc(a, 0, "レスポンシブなデザイン入門", "画面の幅に合わせて組み替えるレスポンシブなデザインの基本。"),
		doc(a, 1, "東京の天気", "東京は晴れ。明日も晴れでしょう。"),
		doc(a, 2, "Running shoes", "She runs every morning; RUNNING keeps her happy. The runner's guide."),
	}
	docsA[2].TextTruncated = true
	docsB := []search.Document{doc(bID, 0, "京都の寺", "京都には古い寺が多い。秋の紅葉。")}
	docsC := []search.Document{doc(c, 0, "", "")}
	docsC[0].TextWithheld = &withheld
	docsC[0].Labels = nil
	docsD := []search.Document{doc(d, 0, "Responsive web design", "Design that responds to the screen: a responsive layout.")}
	// Two writes: one archive alone, three together.
	if err := b.Put(ctx, map[string][]search.Document{a: docsA}); err != nil {
		t.Fatalf("put %s: %v", a, err)
	}
	if err := b.Put(ctx, map[string][]search.Document{bID: docsB, c: docsC, d: docsD}); err != nil {
		t.Fatalf("put three: %v", err)
	}

	// Documents come back as they were written.
	all := slices.Concat(docsA, docsB, docsC, docsD)
	var ids []string
	for _, d := range all {
		ids = append(ids, d.ID())
	}
	got, err := b.Documents(ctx, append(ids, search.DocID(uuid.NewString(), 3)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(all) {
		t.Fatalf("documents: %d, want %d", len(got), len(all))
	}
	for _, want := range all {
		g := got[want.ID()]
		if want.Labels == nil {
			want.Labels = []string{}
		}
		if g.Labels == nil {
			g.Labels = []string{}
		}
		g.CapturedAt, want.CapturedAt = g.CapturedAt.UTC(), want.CapturedAt.UTC()
		if !reflect.DeepEqual(g, want) {
			t.Errorf("document %s:\n got %+v\nwant %+v", want.ID(), g, want)
		}
	}

	for _, tc := range []struct {
		q    string
		want []string
	}{
		// CJK: bigram phrases, so a katakana word finds the longer text it
		// starts, and 東京 is not 京都.
		{"レスポンシブ", []string{docsA[0].ID()}},
		{"レスポンシブなデザイン", []string{docsA[0].ID()}},
		{"東京", []string{docsA[1].ID()}},
		{"京都", []string{docsB[0].ID()}},
		{"京都 紅葉", []string{docsB[0].ID()}},
		{"京都 東京", nil},
		// English: stems and case.
		{"running", []string{docsA[2].ID()}},
		{"RUNS", []string{docsA[2].ID()}},
		{"Run", []string{docsA[2].ID()}},
		{"runner", []string{docsA[2].ID()}},
		{"responsive", []string{docsD[0].ID()}},
		{"RESPONSIVE design", []string{docsD[0].ID()}},
		{`"responsive layout"`, []string{docsD[0].ID()}},
		{`"layout responsive"`, nil},
		{"responsive shoes", nil},
		// Title alone is enough.
		{"入門", []string{docsA[0].ID()}},
		{"nothing-like-this", nil},
	} {
		ids, total := find(t, b, tc.q, 2)
		if !reflect.DeepEqual(sortedCopy(ids), sortedCopy(tc.want)) || total != len(tc.want) {
			t.Errorf("%q: %v (total %d), want %v", tc.q, ids, total, tc.want)
		}
	}

	// Writing an archive again replaces its pages: fewer pages drop the
	// rest, none drops them all.
	if err := b.Put(ctx, map[string][]search.Document{a: docsA[:1]}); err != nil {
		t.Fatal(err)
	}
	if ids, _ := find(t, b, "東京", 10); len(ids) != 0 {
		t.Fatalf("a page removed by a rewrite still matches: %v", ids)
	}
	if ids, _ := find(t, b, "レスポンシブ", 10); len(ids) != 1 {
		t.Fatalf("the page kept by a rewrite: %v", ids)
	}
	if err := b.Put(ctx, map[string][]search.Document{a: nil}); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.Documents(ctx, []string{docsA[0].ID()}); len(got) != 0 {
		t.Fatalf("an archive written with no page keeps %v", got)
	}

	// Paging: 57 matches with different scores and ties, read 5 at a time
	// after the last position, are the one list read at once, each once.
	many := map[string][]search.Document{}
	for i := range 57 {
		id := uuid.NewString()
		text := "common words"
		for range i % 4 {
			text += " common"
		}
		many[id] = []search.Document{doc(id, 0, "page", text)}
	}
	if err := b.Put(ctx, many); err != nil {
		t.Fatal(err)
	}
	whole, total := find(t, b, "common", 100)
	paged, _ := find(t, b, "common", 5)
	if total != 57 || len(whole) != 57 || !reflect.DeepEqual(whole, paged) {
		t.Fatalf("paging: %d at once (total %d), %d by 5, equal %v", len(whole), total, len(paged), reflect.DeepEqual(whole, paged))
	}
	if len(slices.Compact(sortedCopy(paged))) != 57 {
		t.Fatal("paging returned a document twice")
	}
}

// filtered runs q narrowed by f and returns every match's position, in
// result order, paging size at a time, and the first call's total.
func filtered(t *testing.T, b search.Backend, q string, f *search.Filter, size int) ([]search.Position, int) {
	t.Helper()
	pq, err := search.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	var out []search.Position
	var after *search.Position
	total := -1
	for range 1000 {
		got, n, err := b.Candidates(context.Background(), pq, f, after, size)
		if err != nil {
			t.Fatalf("candidates %q %+v: %v", q, f, err)
		}
		if total < 0 {
			total = n
		}
		out = append(out, got...)
		if len(got) < size {
			return out, total
		}
		after = &got[len(got)-1]
	}
	t.Fatalf("%q: paging does not end", q)
	return nil, 0
}

// runFilterConformance: a filter keeps the pages holding one of its
// grantee keys or of one of its archives and nothing else, in the order
// and with the scores of the unfiltered query; an empty filter keeps
// nothing; grantees survive a round trip.
func runFilterConformance(t *testing.T, open backendFactory) {
	ctx := context.Background()
	b := open(t)
	type arch struct {
		id       string
		grantees []string
		pages    int
	}
	archives := []arch{
		{uuid.NewString(), []string{"org:acme", "user:alice"}, 3},
		{uuid.NewString(), []string{"org:acme"}, 1},
		{uuid.NewString(), []string{"org:bobco", "user:bob"}, 5},
		{uuid.NewString(), []string{"org:bobco"}, 2},
		{uuid.NewString(), nil, 2},                                     // indexed before grantees existed, or none recorded
		{uuid.NewString(), []string{"org:acme:x", "user:org:acme"}, 1}, // keys that only look alike
	}
	put := map[string][]search.Document{}
	for i, a := range archives {
		for p := range a.pages {
			text := "harbour lighthouse"
			for range (i + p) % 3 {
				text += " lighthouse"
			}
			d := doc(a.id, p, "notes", text)
			d.Grantees = a.grantees
			put[a.id] = append(put[a.id], d)
		}
	}
	if err := b.Put(ctx, put); err != nil {
		t.Fatal(err)
	}
	got, err := b.Documents(ctx, []string{search.DocID(archives[0].id, 0), search.DocID(archives[4].id, 0)})
	if err != nil || !reflect.DeepEqual(got[search.DocID(archives[0].id, 0)].Grantees, archives[0].grantees) || len(got[search.DocID(archives[4].id, 0)].Grantees) != 0 {
		t.Fatalf("grantees after a round trip: %+v %v", got, err)
	}
	all, total := filtered(t, b, "lighthouse", nil, 100)
	if total != 14 || len(all) != 14 {
		t.Fatalf("unfiltered: %d (total %d), want 14", len(all), total)
	}
	for _, tc := range []struct {
		name string
		f    search.Filter
		want []int // archives
	}{
		{"an organization", search.Filter{Grantees: []string{"org:acme"}}, []int{0, 1}},
		{"a user", search.Filter{Grantees: []string{"user:bob"}}, []int{2}},
		{"organizations and user", search.CallerKeysFilter("alice", []string{"acme", "bobco"}), []int{0, 1, 2, 3}},
		{"an outsider", search.CallerKeysFilter("mallory", []string{"umbrella"}), nil},
		{"archive ids", search.Filter{Archives: []string{archives[4].id, archives[3].id}}, []int{3, 4}},
		{"keys and ids", search.Filter{Grantees: []string{"user:alice"}, Archives: []string{archives[4].id}}, []int{0, 4}},
		{"empty", search.Filter{}, nil},
	} {
		for _, size := range []int{100, 2} {
			got, total := filtered(t, b, "lighthouse", &tc.f, size)
			// The same positions, in the same order, as the unfiltered
			// query's that belong to the wanted archives.
			var want []search.Position
			for _, p := range all {
				for _, i := range tc.want {
					if p.ArchiveID == archives[i].id {
						want = append(want, p)
					}
				}
			}
			if !reflect.DeepEqual(got, want) || total != len(want) {
				t.Errorf("%s (pages of %d): %d positions (total %d), want %d; equal order and scores: %v", tc.name, size, len(got), total, len(want), reflect.DeepEqual(got, want))
			}
		}
	}
}

// TestOpenSearchOldIndex: an index an earlier version created (mapping
// without grantees, pages without them) gains the field before the first
// write; its old pages are found by archive id and not by grantee key, new
// pages by their keys.
func TestOpenSearchOldIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f, srv := newFakeOpenSearch(t, "old-index")
	old := doc(uuid.NewString(), 0, "old", "lighthouse keeper")
	src := map[string]any{"archiveId": old.ArchiveID, "page": 0.0, "docId": old.ID(), "url": old.URL, "title": old.Title, "text": old.Text,
		"textTruncated": false, "textWithheld": nil, "objectKey": old.ObjectKey, "sourceUrl": old.SourceURL, "labels": []any{"daily"}, "capturedAt": old.CapturedAt}
	f.createOld(map[string]map[string]any{old.ID(): src})
	b, err := search.NewOpenSearch(srv.URL, "old-index", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if ids, _ := filtered(t, b, "lighthouse", &search.Filter{Archives: []string{old.ArchiveID}}, 10); len(ids) != 1 || ids[0].DocID() != old.ID() {
		t.Fatalf("an old page by its archive id: %v", ids)
	}
	if ids, _ := filtered(t, b, "lighthouse", &search.Filter{Grantees: []string{"org:acme"}}, 10); len(ids) != 0 {
		t.Fatalf("an old page by a grantee key: %v", ids)
	}
	fresh := doc(uuid.NewString(), 0, "new", "lighthouse")
	fresh.Grantees = []string{"org:acme"}
	if err := b.Put(ctx, map[string][]search.Document{fresh.ArchiveID: {fresh}}); err != nil {
		t.Fatalf("a write to an old index: %v", err)
	}
	if ids, _ := filtered(t, b, "lighthouse", &search.Filter{Grantees: []string{"org:acme"}}, 10); len(ids) != 1 || ids[0].DocID() != fresh.ID() {
		t.Fatalf("a new page by its grantee key: %v", ids)
	}
	if f.count("PUT _mapping") != 1 {
		t.Fatalf("PUT _mapping sent %d times, want once", f.count("PUT _mapping"))
	}
}
