package postgres_test

import (
	"errors"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// TestSearchIndexerRecord: the rules that keep one index per database.
// OpenSearch processes of one index check in side by side (each indexes);
// another OpenSearch index, or a Bleve holder, is refused while they are
// checked in, and an OpenSearch check-in is refused while a Bleve holder's
// lease is live. A lease is one holder's until it runs out or is released;
// adopting another index clears the marks; marks of a holder that lost the
// index are refused.
func TestSearchIndexerRecord(t *testing.T) {
	t.Parallel()
	s, _, ctx := crawlStore(t)
	var split *search.SplitError
	os1 := search.OpenSearchIdentity("http://user:pw@127.0.0.1:9200", "pages")
	if n, err := s.CheckInOpenSearch(ctx, os1, 300*time.Millisecond); err != nil || n != 0 {
		t.Fatalf("first OpenSearch check-in: %d %v", n, err)
	}
	if _, err := s.CheckInOpenSearch(ctx, os1, 300*time.Millisecond); err != nil {
		t.Errorf("a second process of the same OpenSearch index: %v", err)
	}
	if _, err := s.CheckInOpenSearch(ctx, search.OpenSearchIdentity("http://127.0.0.1:9200", "other"), time.Second); !errors.As(err, &split) {
		t.Errorf("another OpenSearch index while one is checked in: %v", err)
	}
	if _, got, err := s.AcquireSearchIndexer(ctx, "serve a", "http://127.0.0.1:1", "s", time.Second); got || !errors.As(err, &split) {
		t.Errorf("a Bleve holder while OpenSearch is checked in: %v %v", got, err)
	}
	if rec, _ := s.SearchIndexer(ctx); rec.IndexID != os1 || search.IsOpenSearchIdentity(rec.IndexID) == false || rec.Holder != "" {
		t.Errorf("record: %+v", rec)
	}
	if rec, _ := s.SearchIndexer(ctx); rec.IndexID != "opensearch http://127.0.0.1:9200 pages" {
		t.Errorf("the recorded identity keeps no credential: %q", rec.IndexID)
	}
	time.Sleep(400 * time.Millisecond) // the OpenSearch processes stopped checking in

	rec, got, err := s.AcquireSearchIndexer(ctx, "serve a", "http://127.0.0.1:1", "s", time.Minute)
	if err != nil || !got || !rec.Live || rec.Holder != "serve a" {
		t.Fatalf("serve a takes the lease: %+v %v %v", rec, got, err)
	}
	if _, got, err := s.AcquireSearchIndexer(ctx, "serve b", "http://127.0.0.1:2", "t", time.Minute); got || err != nil {
		t.Errorf("serve b while a holds it: %v %v", got, err)
	}
	if _, err := s.AdoptSearchIndex(ctx, "serve b", "bleve b"); !errors.Is(err, search.ErrNotIndexer) {
		t.Errorf("serve b adopting without the lease: %v", err)
	}
	if _, err := s.CheckInOpenSearch(ctx, os1, time.Second); !errors.As(err, &split) {
		t.Errorf("an OpenSearch check-in while a Bleve serve holds the index: %v", err)
	}
	if _, err := s.AdoptSearchIndex(ctx, "serve a", "bleve a"); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkIndexedAs(ctx, "serve a", "bleve a", nil); err != nil {
		t.Errorf("the holder's marks: %v", err)
	}
	if err := s.ReleaseSearchIndexer(ctx, "serve a"); err != nil {
		t.Fatal(err)
	}
	if _, got, err := s.AcquireSearchIndexer(ctx, "serve b", "http://127.0.0.1:2", "t", time.Minute); !got || err != nil {
		t.Fatalf("serve b after a released: %v %v", got, err)
	}
	if _, err := s.AdoptSearchIndex(ctx, "serve b", "bleve b"); err != nil {
		t.Fatal(err)
	}
	for _, who := range [][2]string{{"serve a", "bleve a"}, {"serve b", "bleve a"}, {"serve a", "bleve b"}} {
		if err := s.MarkIndexedAs(ctx, who[0], who[1], nil); !errors.Is(err, search.ErrNotIndexer) {
			t.Errorf("marks of %s into %s after b took over: %v", who[0], who[1], err)
		}
	}
	if ok, err := s.RenewSearchIndexer(ctx, "serve a", time.Minute); ok || err != nil {
		t.Errorf("a renewing a lease it lost: %v %v", ok, err)
	}
}
