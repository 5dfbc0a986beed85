package api_test

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/identity"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// BenchmarkNotAllowedVsAbsent: for each route that answers 404 to both, the
// median time of "not allowed" (another organization's archive) and of
// "absent" (an id the ledger never had), 1,000 requests each, interleaved
// one by one so that both see the same load. OpenFGA is embedded on its
// PostgreSQL datastore, with 2,000 archives of two organizations. It logs
// the numbers for docs/benchmarks.md and asserts no timing.
//
//	go test ./pkg/api -run '^$' -bench NotAllowedVsAbsent -benchtime 1x -v
func BenchmarkNotAllowedVsAbsent(b *testing.B) {
	s := newBenchStack(b)
	rng := rand.New(rand.NewPCG(3, 4))
	rows := benchRows(2_000, rng, func(r *rand.Rand) string {
		if r.IntN(2) == 0 {
			return "acme"
		}
		return "contoso"
	})
	s.load(b, rows)
	var hidden []string
	for _, r := range rows {
		if r.org == "contoso" {
			hidden = append(hidden, r.id)
		}
	}
	signer, err := replay.NewSigner([]byte("a benchmark key that is long enough to sign with"))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer((&api.Server{
		Access: s.access, Identity: identity.Headers{}, Submitters: s.perms,
		Shares: &archive.Shares{Perms: authz.Managers{Client: s.fga}, Store: s.store},
		Replay: &api.Replay{Service: &replay.Service{Perms: s.perms, Catalog: s.store, Signer: signer}},
	}).Handler())
	b.Cleanup(srv.Close)
	ctx := context.Background()
	do := func(method, path string) (time.Duration, int) {
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, strings.NewReader(""))
		req.Header.Set("X-Capture-ledger-Subject", "bob")
		req.Header.Set("X-Capture-ledger-Organizations", "acme")
		start := time.Now()
		res, err := s.client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return time.Since(start), res.StatusCode
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return ms(d[len(d)/2])
	}
	routes := []struct{ name, method, suffix string }{
		{"POST /api/archives/{id}/url", "POST", "/url"},
		{"POST /api/archives/{id}/replay", "POST", "/replay"},
		{"GET /api/archives/{id}/shares", "GET", "/shares"},
	}
	const n = 1000
	for range b.N {
		for _, rt := range routes {
			// Warm up both.
			for i := range 50 {
				do(rt.method, "/api/archives/"+hidden[i%len(hidden)]+rt.suffix)
				do(rt.method, "/api/archives/"+uuid.NewString()+rt.suffix)
			}
			var denied, absent []time.Duration
			for i := range n {
				hiddenPath := "/api/archives/" + hidden[rng.IntN(len(hidden))] + rt.suffix
				absentPath := "/api/archives/" + uuid.NewString() + rt.suffix
				var d1, d2 time.Duration
				var st1, st2 int
				if i%2 == 0 { // alternate which goes first
					d1, st1 = do(rt.method, hiddenPath)
					d2, st2 = do(rt.method, absentPath)
				} else {
					d2, st2 = do(rt.method, absentPath)
					d1, st1 = do(rt.method, hiddenPath)
				}
				if st1 != 404 || st2 != 404 {
					b.Fatalf("%s: %d and %d, want 404 for both", rt.name, st1, st2)
				}
				denied, absent = append(denied, d1), append(absent, d2)
			}
			md, ma := median(denied), median(absent)
			b.Logf("| %s | %.3f ms | %.3f ms | %+.3f ms | %.2f× |", rt.name, md, ma, md-ma, md/ma)
		}
	}
}
