package archives_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/cli/archives"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
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
		head, rows := archives.ArchiveTable(tc.archives, tc.why, i18n.English)
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
	if _, rows := archives.ArchiveTable([]ledger.Archive{labelled}, false, i18n.English); rows[0][3] != "daily,news" {
		t.Errorf("labels cell %q", rows[0][3])
	}
}

// TestArchiveTableInJapanese: with a Japanese locale the table's headings,
// its WACZ state and why each archive is visible are in Japanese, and the
// columns line up under their two-column-wide headings.
func TestArchiveTableInJapanese(t *testing.T) {
	t.Parallel()
	no := false
	until := time.Date(2026, 12, 31, 9, 0, 0, 0, time.UTC)
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	list := []ledger.Archive{
		{ID: "a1", SourceURL: "https://example.com/", CapturedAt: at, WaczComplete: &no,
			Why: &[]ledger.Reason{{Kind: ledger.ReasonOrganization, Organization: "acme"}, {Kind: ledger.ReasonOwner}}},
		{ID: "a2", SourceURL: "https://example.com/b", CapturedAt: at,
			Why: &[]ledger.Reason{{Kind: ledger.ReasonShare, Organization: "globex", Until: &until}}},
	}
	head, rows := archives.ArchiveTable(list, true, i18n.Japanese)
	if want := []string{"ID", "取得日時", "取得元", "WACZ", "見える理由"}; !slices.Equal(head, want) {
		t.Errorf("head %q, want %q", head, want)
	}
	if rows[0][3] != "不完全" || rows[0][4] != "acme のメンバー; 自分の取得" || rows[1][4] != "globex に共有（2026-12-31 09:00Z まで）" {
		t.Errorf("rows %q", rows)
	}
	var buf bytes.Buffer
	(&ui.Printer{W: &buf}).Table(head, rows)
	if first := strings.SplitN(buf.String(), "\n", 2)[0]; strings.Join(strings.Fields(first), " ") != strings.Join(head, " ") {
		t.Errorf("printed header %q", first)
	}
	if bad := archives.ListWords.Mismatched(); len(bad) > 0 {
		t.Errorf("English and Japanese take different arguments: %q", bad)
	}
}
