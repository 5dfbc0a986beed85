package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestCrawlPayloads: a crawl's payload index keeps the first record of
// each digest, answers only about the crawl asked, survives a new
// connection (a resumed level), refuses a crawl id that is not a UUID
// naming it and a malformed row changing nothing, and goes with its crawl.
func TestCrawlPayloads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.Database(t)
	pool, err := postgres.Open(ctx, dsn, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	st := &postgres.Store{Pool: pool}
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	a, b := runningCrawl(t, ctx, st, t0), runningCrawl(t, ctx, st, t0)
	d1, d2 := "sha256:"+strings.Repeat("1", 64), "sha256:"+strings.Repeat("2", 64)
	p1 := ledger.StoredPayload{Digest: d1, URL: "https://example.com/s.css", Date: t0, Container: "t1_" + a + ".wacz"}
	if err := st.RememberPayloads(ctx, a, []ledger.StoredPayload{p1}); err != nil {
		t.Fatal(err)
	}
	// A later WACZ with the same digest does not replace the first.
	later := ledger.StoredPayload{Digest: d1, URL: "https://example.com/copy.css", Date: t0.Add(time.Minute), Container: "t2_" + a + ".wacz"}
	p2 := ledger.StoredPayload{Digest: d2, URL: "https://example.com/logo.png", Date: t0.Add(time.Minute), Container: "t2_" + a + ".wacz"}
	if err := st.RememberPayloads(ctx, a, []ledger.StoredPayload{later, p2}); err != nil {
		t.Fatal(err)
	}
	// Asked from another pool, as a resumed level's runner would.
	pool2, err := postgres.Open(ctx, dsn, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool2.Close)
	st2 := &postgres.Store{Pool: pool2}
	got, err := st2.StoredPayloads(ctx, a, []string{d1, d2, "sha256:" + strings.Repeat("3", 64)})
	if err != nil || len(got) != 2 || got[d1] != p1 || got[d2] != p2 {
		t.Fatalf("crawl a: %+v %v", got, err)
	}
	if got, err := st2.StoredPayloads(ctx, b, []string{d1, d2}); err != nil || len(got) != 0 {
		t.Errorf("crawl b sees crawl a's payloads: %+v %v", got, err)
	}
	// A crawl that does not exist takes nothing, without an error.
	ghost := uuid.NewString()
	if err := st.RememberPayloads(ctx, ghost, []ledger.StoredPayload{p1}); err != nil {
		t.Errorf("a crawl that does not exist: %v", err)
	}
	before := testenv.TakeSnapshot(t, dsn)
	for _, bad := range []string{"not-a-uuid", "\x00", "\xff"} {
		if _, err := st.StoredPayloads(ctx, bad, []string{d1}); err == nil || !strings.Contains(err.Error(), "crawl id") {
			t.Errorf("StoredPayloads(%q): %v, want an error naming the crawl id", bad, err)
		}
		if err := st.RememberPayloads(ctx, bad, []ledger.StoredPayload{p1}); err == nil || !strings.Contains(err.Error(), "crawl id") {
			t.Errorf("RememberPayloads(%q): %v, want an error naming the crawl id", bad, err)
		}
	}
	// A malformed row (a digest, a URL, a container) is refused whole.
	for _, p := range []ledger.StoredPayload{
		{Digest: "md5:abc", URL: p1.URL, Date: t0, Container: p1.Container},
		{Digest: "sha256:" + strings.Repeat("4", 64), URL: "ftp://x/", Date: t0, Container: p1.Container},
		{Digest: "sha256:" + strings.Repeat("5", 64), URL: p1.URL, Date: t0, Container: "../x.wacz"},
	} {
		if err := st.RememberPayloads(ctx, b, []ledger.StoredPayload{p2, p}); err == nil {
			t.Errorf("%+v was taken", p)
		}
	}
	testenv.Unchanged(t, dsn, before)
	// The index goes with its crawl.
	if _, err := pool.Exec(ctx, `DELETE FROM crawls WHERE id = $1`, a); err != nil {
		t.Fatal(err)
	}
	if got, err := st.StoredPayloads(ctx, a, []string{d1, d2}); err != nil || len(got) != 0 {
		t.Errorf("after the crawl was deleted: %+v %v", got, err)
	}
}
