package cmdutil_test

import (
	"slices"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/cli/cmdutil"
	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

// TestWordsMismatched: a sentence whose two languages take the same
// arguments, in any order, passes; one that drops, adds or retypes an
// argument is named.
func TestWordsMismatched(t *testing.T) {
	w := cmdutil.Words{
		"same":      {"%d of %d", "%d / %d"},
		"reordered": {"%[1]s by %[2]s", "%[2]s による %[1]s"},
		"implicit":  {"%s, %s", "%[1]s、%[2]s"},
		"percent":   {"100%% of %d", "%d の 100%%"},
		"dropped":   {"%d of %d", "%d 件"},
		"added":     {"one", "%d"},
		"retyped":   {"%d pages", "%s ページ"},
		"afterIdx":  {"%[2]s %s", "%[2]s %[3]s"},
		"padded":    {"%-8[1]s  %[2]s", "%[1]s  %[2]s"},
		"widthLost": {"%-8[1]s  %[2]s", "%[2]s"},
	}
	if got, want := w.Mismatched(), []string{"added", "dropped", "retyped", "widthLost"}; !slices.Equal(got, want) {
		t.Errorf("mismatched: %q, want %q", got, want)
	}
	if got := w.Say(i18n.Japanese, "reordered", "crawl", "alice"); got != "alice による crawl" {
		t.Errorf("Say in Japanese: %q", got)
	}
	if got := w.Say(i18n.English, "reordered", "crawl", "alice"); got != "crawl by alice" {
		t.Errorf("Say in English: %q", got)
	}
}

// TestDeliverWordsTakeTheSameArguments: what Deliver says in Japanese
// takes the arguments its English takes.
func TestDeliverWordsTakeTheSameArguments(t *testing.T) {
	if bad := cmdutil.DeliverWords.Mismatched(); len(bad) > 0 {
		t.Errorf("English and Japanese take different arguments: %q", bad)
	}
}
