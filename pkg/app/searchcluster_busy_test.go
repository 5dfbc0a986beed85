package app

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/search"
	"github.com/capture-ledger/ledgerctl/pkg/visible"
)

// TestForwardedSearchKeepsWhichBoundWasFull: a search forwarded to the
// serve holding the index and refused by that serve's gate comes back as
// the same refusal (the caller's bound, its organization's or the
// server's, and when to come back), so the forwarding serve answers it as
// the holder would have: 429 for a share, 503 for the server's.
func TestForwardedSearchKeepsWhichBoundWasFull(t *testing.T) {
	t.Parallel()
	q, err := search.ParseQuery("plum")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*visible.BusyError{
		{What: "searches", Limit: 2, PerCaller: true, RetryAfter: 3 * time.Second},
		{What: "searches", Limit: 3, Org: "acme", RetryAfter: 2 * time.Second},
		{What: "searches", Limit: 4, RetryAfter: time.Second},
	} {
		peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", strconv.Itoa(want.RetrySeconds()))
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(busyAnswer(want))
		}))
		_, err := forwardSearch(context.Background(), peer.Client(), search.IndexerLease{Live: true, Address: peer.URL, Secret: "s"},
			"alice", []string{"acme"}, search.Request{Query: q}, time.Minute)
		peer.Close()
		var got *visible.BusyError
		if !errors.As(err, &got) || *got != *want || got.Share() != want.Share() {
			t.Errorf("forwarded %+v: got %T %+v", want, err, err)
		}
	}
}
