package search

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
)

// TestBleveV1IsLegacy: a Bleve index built before pages carried grantees
// (mapping v1, no grantees field; Bleve cannot add one in place) still
// opens and answers, but says it cannot filter, and ignores a filter: the
// search narrows after the index, as before, until it is rebuilt.
func TestBleveV1IsLegacy(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "index")
	m := bleveMapping().(*mapping.IndexMappingImpl)
	delete(m.DefaultMapping.Properties, "grantees")
	idx, err := bleve.NewUsing(dir, m, scorch.Name, scorch.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.SetInternal(bleveVersionKey, []byte(bleveMappingV1)); err != nil {
		t.Fatal(err)
	}
	old := Document{ArchiveID: "00000000-0000-4000-8000-000000000001", URL: "https://old.example/", Title: "old", Text: "lighthouse keeper",
		CapturedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	fields, err := bleveFields(old)
	if err != nil {
		t.Fatal(err)
	}
	delete(fields, "grantees")
	if err := idx.Index(old.ID(), fields); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}

	b, err := OpenBleve(dir)
	if err != nil {
		t.Fatalf("open a v1 index: %v", err)
	}
	defer b.Close()
	if b.Filters() {
		t.Fatal("a v1 index says it can filter by grantee")
	}
	q, _ := ParseQuery("lighthouse")
	got, _, err := b.Candidates(ctx, q, &Filter{Grantees: []string{"org:nobody"}}, nil, 10)
	if err != nil || len(got) != 1 || got[0].DocID() != old.ID() {
		t.Fatalf("a v1 index with a filter: %v %v, want the old page (the filter ignored)", got, err)
	}
	fresh, err := OpenBleve(filepath.Join(t.TempDir(), "fresh"))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if !fresh.Filters() {
		t.Fatal("a new index cannot filter")
	}
}
