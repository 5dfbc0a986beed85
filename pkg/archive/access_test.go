package archive_test

import (
	"context"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
)

type row struct {
	id string
	at time.Time
}

// seed inserts n archives, a third of them sharing one captured_at, and
// makes every third one visible to acme's members (the rest belong to
// contoso). It returns the visible ones in list order.
func seed(t *testing.T, env *apptest.Env, n int) []row {
	t.Helper()
	var visible []row
	for _, r := range apptest.SeedArchives(t, env, n, func(i int) string {
		if i%3 == 0 {
			return "acme"
		}
		return "contoso"
	}) {
		if r.Org == "acme" {
			visible = append(visible, row{r.ID, r.At})
		}
	}
	return visible
}

func TestListFillsPagesAndNeverSkipsTiedRows(t *testing.T) {
	ctx := context.Background()
	env := apptest.New(t)
	want := seed(t, env, 450) // 150 visible to acme
	store, _ := env.App.Store(ctx)
	access := &archive.Access{Perms: app.Permissions{Client: env.FGA}, Catalog: store}

	var got []string
	var cursor *archive.Cursor
	pages := 0
	for {
		p, err := access.List(ctx, "bob", []string{"acme"}, cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if p.Truncated {
			t.Fatalf("page %d truncated with the default bound", pages)
		}
		if p.Next != nil && len(p.Archives) != 50 {
			t.Errorf("page %d has %d rows but is not the last: pages must be full", pages, len(p.Archives))
		}
		for _, a := range p.Archives {
			got = append(got, a.ID)
		}
		if p.Next == nil {
			break
		}
		cursor = p.Next
		if pages > 10 {
			t.Fatal("no end")
		}
	}
	if len(got) != len(want) {
		t.Fatalf("listed %d visible archives, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i].id {
			t.Fatalf("row %d: %s, want %s (order or a skipped/duplicated tied row)", i, got[i], want[i].id)
		}
	}

	// An outsider gets an empty list, not an error.
	p, err := access.List(ctx, "carol", []string{"nobody"}, nil)
	if err != nil || len(p.Archives) != 0 || p.Next != nil {
		t.Errorf("outsider: %+v %v", p, err)
	}

	// A small scan bound: short pages say truncated and resume where the
	// scan stopped, and together still list everything exactly once.
	access.ScanLimit = 60
	access.Source = archive.SourceScan // the scan is what the bound cuts
	got = got[:0]
	cursor = nil
	truncated := 0
	for i := 0; i < 50; i++ {
		p, err := access.List(ctx, "bob", []string{"acme"}, cursor)
		if err != nil {
			t.Fatal(err)
		}
		if p.Truncated {
			truncated++
			if p.Scanned > 60 {
				t.Errorf("scanned %d rows past the bound", p.Scanned)
			}
		}
		for _, a := range p.Archives {
			got = append(got, a.ID)
		}
		if p.Next == nil {
			break
		}
		cursor = p.Next
	}
	if truncated == 0 || len(got) != len(want) {
		t.Errorf("with ScanLimit 60: %d truncated pages, %d rows (want %d)", truncated, len(got), len(want))
	}
	for i := range want {
		if i < len(got) && got[i] != want[i].id {
			t.Fatalf("bounded row %d differs", i)
		}
	}
}
