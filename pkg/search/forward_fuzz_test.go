package search_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
	"github.com/capture-ledger/ledgerctl/pkg/search"
)

// FuzzDecodeForward: whatever body reaches the index holder's peer
// address, the decoder never panics; what it refuses is a field error
// naming a member; what it accepts holds names OpenFGA can hold, a query
// the API would accept, and encodes back to a body that decodes the same.
func FuzzDecodeForward(f *testing.F) {
	for _, seed := range []string{
		`{"subject":"alice","orgs":["acme"],"q":"quince","limit":5}`,
		`{"subject":"alice","orgs":[],"q":"\"responsive design\" tokyo","limit":20,"crawl":"0b0a4c53-7c0e-4a8f-9d0e-2a4f3b1c5d6e","host":"example.com","from":"2026-11-20T00:00:00Z","to":"2026-11-21T00:00:00.000001Z"}`,
		`{"subject":"al\u0000ice","orgs":["acme"],"q":"x","limit":5}`,
		`{"subject":"alice","orgs":["ac#me"],"q":"x","limit":5}`,
		`{"subject":"alice","orgs":null,"q":"\ud800","limit":5}`,
		"{\"subject\":\"\xff\",\"q\":\"x\",\"limit\":1}",
		`{"subject":"alice","q":"x","limit":1,"cursor":"s1.AAAA"}`,
		`{"subject":"alice","q":"x","limit":1} {}`,
		`[]`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		subject, orgs, req, err := search.DecodeForward(body)
		if err != nil {
			var fe *ledger.FieldError
			if !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("refusal %v is not a field error naming a member", err)
			}
			return
		}
		if ledger.CheckSubject(subject) != nil || orgs == nil {
			t.Fatalf("accepted subject %q, orgs %v", subject, orgs)
		}
		for _, o := range orgs {
			if ledger.CheckOrganization(o) != nil {
				t.Fatalf("accepted organization %q", o)
			}
		}
		if req.Limit < 1 || req.Limit > search.MaxLimit || len(req.Query.Terms) == 0 {
			t.Fatalf("accepted request %+v", req)
		}
		again, err := search.EncodeForward(subject, orgs, req)
		if err != nil {
			t.Fatal(err)
		}
		s2, o2, r2, err := search.DecodeForward(again)
		if err != nil || s2 != subject || !reflect.DeepEqual(o2, orgs) || !reflect.DeepEqual(r2.Query, req.Query) ||
			r2.Limit != req.Limit || r2.Cursor != req.Cursor || r2.Filter.CrawlID != req.Filter.CrawlID || r2.Filter.Host != req.Filter.Host ||
			!r2.Filter.From.Equal(req.Filter.From) || !r2.Filter.To.Equal(req.Filter.To) {
			t.Fatalf("%s decoded as %q %v %+v, encoded %s, decoded again %q %v %+v %v", body, subject, orgs, req, again, s2, o2, r2, err)
		}
	})
}
