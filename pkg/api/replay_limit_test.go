package api_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/api"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
)

// TestCrawlReplayPastTheCollectionLimit: a crawl's collection lists its
// first captures only (replay.MaxCollection); when the crawl has more, the
// replay link says so — limit, beside how many archives the collection
// opened with — so the console and the terminal can tell the person that
// the collection is not the whole crawl. A crawl of exactly the limit says
// nothing, and neither does one whose capture past the limit the caller
// may not view: that the crawl goes on is said only of what they may see.
func TestCrawlReplayPastTheCollectionLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		limit, archives, wantLimit int
		losePast                   bool
	}{
		{limit: 2, archives: 2, wantLimit: 0},
		{limit: 1, archives: 1, wantLimit: 1},
		{limit: 1, archives: 1, wantLimit: 0, losePast: true},
	} {
		f := newReplayFixture(t, replayOptions{cache: -1, collectionLimit: tc.limit})
		crawlID := fixtureCrawl(t, f, f.tasks...)
		if tc.losePast {
			// acme loses the newer capture, the one past the collection.
			if err := f.env.FGA.Write(context.Background(), nil, []authz.Tuple{{User: "organization:acme", Relation: "parent", Object: "capture_job:" + f.tasks[0]}}); err != nil {
				t.Fatal(err)
			}
		}
		r := f.do(t, "POST", "/api/crawls/"+crawlID+"/replay", as("alice", "acme"), "")
		var l api.ReplayLink
		if err := json.Unmarshal(r.body, &l); err != nil || r.status != 200 {
			t.Fatalf("limit %d: %d %s", tc.limit, r.status, r.body)
		}
		if l.Archives != tc.archives || l.Limit != tc.wantLimit || strings.Contains(string(r.body), `"limit"`) != (tc.wantLimit > 0) {
			t.Errorf("limit %d: %s, want %d archives and limit %d", tc.limit, r.body, tc.archives, tc.wantLimit)
		}
		// The listing holds what the link counted: the crawl's first
		// captures (oldest first: the fixture's second archive).
		tok := tokenOf(t, l.URL)
		c := f.do(t, "GET", f.origins.Origin(labelOf(t, tok))+"/collection.json?t="+url.QueryEscape(tok), nil, "")
		var listing struct {
			Resources []struct{ Name string } `json:"resources"`
		}
		if err := json.Unmarshal(c.body, &listing); err != nil || len(listing.Resources) != tc.archives || !strings.HasPrefix(listing.Resources[0].Name, f.tasks[1]) {
			t.Errorf("limit %d: the listing %d %s, want %d archives, the oldest first", tc.limit, c.status, c.body, tc.archives)
		}
	}
}
