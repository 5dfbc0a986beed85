package runner_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// TestRobotsFetchHoldsTheAddressPolicy: robots.txt is fetched under the
// capture engines' address policy: a loopback site is refused (no rules,
// outcome unreachable) unless private addresses are allowed.
func TestRobotsFetchHoldsTheAddressPolicy(t *testing.T) {
	t.Parallel()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" || r.Header.Get("User-Agent") != "test-agent/1" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "User-agent: *\nDisallow: /\n")
	}))
	defer site.Close()
	host := strings.TrimPrefix(site.URL, "http://")
	ctx := context.Background()
	refused := runner.FetchRobots(ctx, capture.NewClient(capture.Defaults(), runner.RobotsTimeout), "http", host, "test-agent/1", "ledgerctl")
	if refused.Outcome != runner.RobotsUnreachable || !strings.Contains(refused.Error, "refused") {
		t.Errorf("loopback with the default policy: %+v", refused)
	}
	allowed := capture.Defaults()
	allowed.AllowPrivate = true
	got := runner.FetchRobots(ctx, capture.NewClient(allowed, runner.RobotsTimeout), "http", host, "test-agent/1", "ledgerctl")
	if got.Outcome != runner.RobotsFetched || got.Allowed(&url.URL{Path: "/x"}) {
		t.Errorf("loopback allowed: %+v", got)
	}
	gone := runner.FetchRobots(ctx, capture.NewClient(allowed, runner.RobotsTimeout), "http", "127.0.0.1:1", "test-agent/1", "ledgerctl")
	if gone.Outcome != runner.RobotsUnreachable || !gone.Allowed(&url.URL{Path: "/x"}) {
		t.Errorf("nothing listening: %+v", gone)
	}
}
