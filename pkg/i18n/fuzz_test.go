package i18n_test

import (
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/i18n"
)

// FuzzFromAcceptLanguage: any header gives a supported language, never a
// panic.
func FuzzFromAcceptLanguage(f *testing.F) {
	for _, s := range []string{"", "ja", "ja-JP, ja;q=0.9", "en-US,en;q=0.9", "*", "*;q=0", "ja;q=1e400", "ja;q=-0", ";;;,,,", "ja;q=0.5;q=2", "\x00ja", "日本語", "ja;q=0x1p-2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got := i18n.FromAcceptLanguage(header)
		if got != i18n.English && got != i18n.Japanese {
			t.Fatalf("%q: %q is not a supported language", header, got)
		}
	})
}
