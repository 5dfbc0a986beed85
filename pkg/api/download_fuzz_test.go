package api_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/replay"
)

// FuzzDownloadQuery: whatever path id and query reach an archive's or a
// crawl's download, it answers 400 (not an id) or 404 (no valid link),
// never 200, 500 or a panic: a token that was not signed by the server
// opens nothing, and nothing else is consulted before it verifies (the
// server has no ledger to ask). A path that is not clean is redirected to
// its clean form, as on every route.
func FuzzDownloadQuery(f *testing.F) {
	signer, err := replay.NewSigner(bytes.Repeat([]byte("k"), 48))
	if err != nil {
		f.Fatal(err)
	}
	origins, err := replay.ParseDomain("", 7070)
	if err != nil {
		f.Fatal(err)
	}
	s := &api.Server{Replay: &api.Replay{Service: &replay.Service{Signer: signer}, Origins: origins}, Access: &archive.Access{}}
	h := s.Handler()
	for _, seed := range [][2]string{
		{"00000000-0000-4000-8000-000000000000", "l=aaaaaaaaaaaaaaaaaaaaaaaaaa&t=x"},
		{"00000000-0000-4000-8000-000000000000", "t=a&t=b&l=c"},
		{"not-a-uuid", ""},
		{"00000000-0000-4000-8000-000000000000", "l=%00&t=%ff%fe"},
		{"00000000-0000-4000-8000-000000000000", "l=abcdefghijklmnopqrstuvwxyz&t=eyJsIjoiIn0.AAAA"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, id, query string) {
		req, err := http.NewRequest("GET", "http://127.0.0.1/", nil)
		if err != nil {
			t.Skip()
		}
		for _, base := range []string{"/api/archives/", "/api/crawls/"} {
			req.URL.Path = base + id + "/wacz"
			req.URL.RawPath = ""
			req.URL.RawQuery = query
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			// A path that is not clean ("0/" as the id) is sent to its
			// clean form first, as every route's is: no download either.
			redirect := rec.Code == http.StatusTemporaryRedirect && path.Clean(req.URL.Path) != req.URL.Path
			if rec.Code != 400 && rec.Code != 404 && !redirect {
				t.Fatalf("%s: id %q query %q: %d %s", base, id, query, rec.Code, rec.Body)
			}
		}
	})
}
