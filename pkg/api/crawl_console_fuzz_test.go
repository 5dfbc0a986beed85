package api_test

import (
	"errors"
	"net/url"
	"slices"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/politeness"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/rules"
	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// FuzzParsePagesQuery: any query string gives either a 400 or a position
// and a page size within bounds; it never panics.
func FuzzParsePagesQuery(f *testing.F) {
	for _, s := range []string{"", "after=0", "after=12&limit=500", "limit=0", "after=-1", "after=1&after=2", "limit=9999999999999999999", "after=%00", "limit=1e3", "state=failed", "state=pending&state=failed", "state=Failed", "state=%00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, err := api.ParsePagesQuery(v)
		var bad *api.BadRequest
		switch {
		case err != nil && !errors.As(err, &bad):
			t.Fatalf("%q: %v is not a 400", raw, err)
		case err == nil && (q.After < 0 || q.Limit < 1 || q.Limit > politeness.MaxPageRows):
			t.Fatalf("%q: after %d limit %d", raw, q.After, q.Limit)
		case err == nil && q.State != "" && !slices.Contains(politeness.PageStates, q.State):
			t.Fatalf("%q: state %q", raw, q.State)
		}
	})
}

// FuzzParseWhyQuery: any query string is a 400 or one URL the ledger can
// hold, normalised (parsing it again gives it back).
func FuzzParseWhyQuery(f *testing.F) {
	for _, s := range []string{"url=https%3A%2F%2Fa.example%2F", "url=HTTPS%3A%2F%2FA.example%3A443%2Fx%23y", "", "url=", "url=%2Fa",
		"url=javascript%3Aalert(1)", "url=https%3A%2F%2Fa.example%2F%00", "url=https%3A%2F%2Fa.example%2F%ff", "url=https%3A%2F%2Fa.example%2F%ed%a0%80",
		"url=http%3A%2F%2F%5B%3A%3A1%5D%3A8080%2F", "url=a&url=b", "url=https%3A%2F%2Fa.example%2F&x=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		u, err := api.ParseWhyQuery(v)
		var bad *api.BadRequest
		switch {
		case err != nil && !errors.As(err, &bad):
			t.Fatalf("%q: %v is not a 400", raw, err)
		case err != nil:
			return
		case ledger.TextProblem(u.Normalized) != "":
			t.Fatalf("%q: %q cannot be kept", raw, u.Normalized)
		}
		again, err := rules.ParseURL(u.Normalized)
		if err != nil || again != u {
			t.Fatalf("%q: %+v parses again as %+v, %v", raw, u, again, err)
		}
	})
}
