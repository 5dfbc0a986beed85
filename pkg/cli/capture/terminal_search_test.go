package capture_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/cli/clitest"
)

// TestTerminalPathSearchable: with no serve running and no drain, what
// `capture` and `crawl run` registered is listable and searchable when
// they exit (`crawl start --wait` is TestCrawlStartWait's).
func TestTerminalPathSearchable(t *testing.T) {
	t.Parallel()
	dir, env := clitest.LocalCaptureStack(t)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		// Each page carries a word of its own: "word" + its path.
		word := "word" + strings.Trim(r.URL.Path, "/")
		fmt.Fprintf(w, `<html><title>%s</title><body><p>%s</p><a href="/crawled">next</a></body></html>`, r.URL.Path, word)
	}))
	defer site.Close()

	searchFinds := func(word, url string) bool {
		t.Helper()
		out, errs, code := clitest.Run(t, dir, env, "search", word, "--as", "alice", "--org", "acme", "--json")
		if code != 0 {
			t.Fatalf("search %s: exit %d %s", word, code, errs)
		}
		var page struct {
			Hits []struct {
				URL string `json:"url"`
			} `json:"hits"`
		}
		if err := json.Unmarshal([]byte(out), &page); err != nil {
			t.Fatalf("search %s: %v: %s", word, err, out)
		}
		for _, h := range page.Hits {
			if h.URL == url {
				return true
			}
		}
		t.Logf("search %s: %s", word, out)
		return false
	}
	listed := func(url string) bool {
		t.Helper()
		out, errs, code := clitest.Run(t, dir, env, "archives", "list", "--as", "alice", "--org", "acme", "--json")
		if code != 0 {
			t.Fatalf("archives list: exit %d %s", code, errs)
		}
		return strings.Contains(out, `"sourceUrl":"`+url+`"`)
	}

	// capture: one page, then list and search in new processes.
	captured := site.URL + "/captured"
	if out, errs, code := clitest.Run(t, dir, env, "capture", captured, "--as", "alice", "--org", "acme"); code != 0 {
		t.Fatalf("capture: exit %d %s %s", code, out, errs)
	}
	if !listed(captured) {
		t.Errorf("archives list after capture does not show %s", captured)
	}
	if !searchFinds("wordcaptured", captured) {
		t.Errorf("search after capture does not find %s", captured)
	}

	// crawl run: a crawl started without --wait, run to its end here.
	out, errs, code := clitest.Run(t, dir, env, "crawl", "start", "--as", "alice", "--org", "acme", "--seed", site.URL+"/seed", "--max-depth", "1", "--per-host-delay-ms", "0")
	id, _, _ := strings.Cut(out, "\n")
	if code != 0 || len(id) != 36 {
		t.Fatalf("crawl start: exit %d %q %s", code, out, errs)
	}
	if out, errs, code := clitest.Run(t, dir, env, "crawl", "run", id, "--as", "alice", "--org", "acme"); code != 0 {
		t.Fatalf("crawl run: exit %d %s %s", code, out, errs)
	}
	for _, p := range []string{"seed", "crawled"} {
		u := site.URL + "/" + p
		if !listed(u) {
			t.Errorf("archives list after crawl run does not show %s", u)
		}
		if !searchFinds("word"+p, u) {
			t.Errorf("search after crawl run does not find %s", u)
		}
	}
}
