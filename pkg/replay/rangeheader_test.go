package replay

import (
	"math"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		h    string
		want ledger.Range
		ok   bool
	}{
		{"bytes=0-99", ledger.Range{First: 0, Last: 99}, true},
		{"bytes=100-", ledger.Range{First: 100, Last: -1}, true},
		{"bytes=-100", ledger.Range{First: -1, Last: -1, Suffix: 100}, true},
		{"bytes=-0", ledger.Range{First: -1, Last: -1, Suffix: 0}, true}, // unsatisfiable, not ignored
		{"Bytes = 5-5 ", ledger.Range{First: 5, Last: 5}, true},
		{"bytes=99999999999999999999-", ledger.Range{First: math.MaxInt64, Last: -1}, true},
		{"bytes=0-99999999999999999999", ledger.Range{First: 0, Last: math.MaxInt64}, true},
		{"", ledger.Range{}, false},
		{"bytes", ledger.Range{}, false},
		{"bytes=", ledger.Range{}, false},
		{"bytes=-", ledger.Range{}, false},
		{"bytes=5-4", ledger.Range{}, false},
		{"bytes=0-1,5-6", ledger.Range{}, false},
		{"items=0-1", ledger.Range{}, false},
		{"bytes=+1-2", ledger.Range{}, false},
		{"bytes=1 -2", ledger.Range{}, false},
		{"bytes=0x10-", ledger.Range{}, false},
		{"bytes=1-2-3", ledger.Range{}, false},
		{"bytes=\x001-2", ledger.Range{}, false},
		{"bytes=１-2", ledger.Range{}, false}, // full-width digit
	} {
		got, ok := ParseRange(tc.h)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("ParseRange(%q) = %+v %v, want %+v %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

// FuzzParseRange: any header either is ignored or reads as one well-formed
// range, which its own Header form reads back as.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-99", "bytes=-100", "bytes=100-", "bytes=5-4", "bytes=0-1,2-3", "", "bytes=-", "BYTES=1-1", "bytes=99999999999999999999-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r, ok := ParseRange(h)
		if !ok {
			return
		}
		switch {
		case r.First == -1:
			if r.Suffix < 0 || r.Last != -1 {
				t.Fatalf("%q: bad suffix range %+v", h, r)
			}
		case r.First < 0 || (r.Last != -1 && r.Last < r.First):
			t.Fatalf("%q: bad range %+v", h, r)
		}
		back, ok := ParseRange(r.Header())
		if !ok || back != r {
			t.Fatalf("%q: %+v reads back from %q as %+v %v", h, r, r.Header(), back, ok)
		}
	})
}
