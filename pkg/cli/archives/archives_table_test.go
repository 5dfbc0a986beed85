package archives_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/cli/archives"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/ui"
)

// TestArchiveTableShowsNoEmptyColumn: archives list's table has no column
// without a name and none that is empty in every row; labels and the WACZ
// state appear when some row has them.
func TestArchiveTableShowsNoEmptyColumn(t *testing.T) {
	t.Parallel()
	no := false
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	plain := ledger.Archive{ID: "a1", SourceURL: "https://example.com/", CapturedAt: at}
	labelled := ledger.Archive{ID: "a2", SourceURL: "https://example.com/b", CapturedAt: at, Labels: []string{"daily", "news"}}
	broken := ledger.Archive{ID: "a3", SourceURL: "https://example.com/c", CapturedAt: at, WaczComplete: &no}
	for _, tc := range []struct {
		name     string
		archives []ledger.Archive
		why      bool
		head     []string
	}{
		{"plain", []ledger.Archive{plain, plain}, false, []string{"id", "captured", "source"}},
		{"labels", []ledger.Archive{plain, labelled}, false, []string{"id", "captured", "source", "labels"}},
		{"incomplete", []ledger.Archive{plain, broken}, false, []string{"id", "captured", "source", "wacz"}},
		{"all and why", []ledger.Archive{labelled, broken}, true, []string{"id", "captured", "source", "labels", "wacz", "why"}},
	} {
		head, rows := archives.ArchiveTable(tc.archives, tc.why)
		if !slices.Equal(head, tc.head) {
			t.Errorf("%s: head %q, want %q", tc.name, head, tc.head)
		}
		for col, name := range head {
			empty := true
			for _, r := range rows {
				if len(r) != len(head) {
					t.Fatalf("%s: row %q has %d cells for %d columns", tc.name, r, len(r), len(head))
				}
				empty = empty && r[col] == ""
			}
			if name == "" || (empty && name != "why") {
				t.Errorf("%s: column %d %q is unnamed or empty in every row", tc.name, col, name)
			}
		}
		var buf bytes.Buffer
		(&ui.Printer{W: &buf}).Table(head, rows)
		if first := strings.SplitN(buf.String(), "\n", 2)[0]; strings.Join(strings.Fields(first), " ") != strings.Join(tc.head, " ") {
			t.Errorf("%s: printed header %q", tc.name, first)
		}
	}
	if _, rows := archives.ArchiveTable([]ledger.Archive{labelled}, false); rows[0][3] != "daily,news" {
		t.Errorf("labels cell %q", rows[0][3])
	}
}
