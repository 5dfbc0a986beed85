package api_test

import (
	"errors"
	"net/url"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
)

// FuzzParsePagesQuery: any query string gives either a 400 or a position
// and a page size within bounds; it never panics.
func FuzzParsePagesQuery(f *testing.F) {
	for _, s := range []string{"", "after=0", "after=12&limit=500", "limit=0", "after=-1", "after=1&after=2", "limit=9999999999999999999", "after=%00", "limit=1e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		after, limit, err := api.ParsePagesQuery(v)
		var bad *api.BadRequest
		switch {
		case err != nil && !errors.As(err, &bad):
			t.Fatalf("%q: %v is not a 400", raw, err)
		case err == nil && (after < 0 || limit < 1 || limit > politeness.MaxPageRows):
			t.Fatalf("%q: after %d limit %d", raw, after, limit)
		}
	})
}
