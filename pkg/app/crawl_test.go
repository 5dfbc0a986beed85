package app_test

import (
	"context"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/apptest"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// TestCrawlsFindWhatADeadRunnerLeft: the crawl use-case every process
// builds (serve, `crawl stop`, `crawl run`) finds, when it closes a crawl,
// a capture the built-in capturer wrote for a runner that died before
// keeping it; with BrowserHive capturing or Windmill running the crawls,
// the manifests are theirs, and it looks for none.
func TestCrawlsFindWhatADeadRunnerLeft(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		edit func(a *app.App)
		want bool
	}{
		{"the built-in capturer", func(*app.App) {}, true},
		{"BrowserHive", func(a *app.App) { a.Settings.BrowserHiveEndpoints = []string{"http://127.0.0.1:1"} }, false},
		{"Windmill", func(a *app.App) { a.Settings.WebhookURL = "http://127.0.0.1:1/hook" }, false},
	} {
		a := app.New(env.App.Settings, nil)
		a.SetAuthz(env.FGA)
		t.Cleanup(a.Close)
		tc.edit(a)
		svc, err := a.Crawls(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, ok := svc.InFlight.(runner.InFlight)
		if ok != tc.want || (svc.InFlight != nil) != tc.want {
			t.Errorf("%s: InFlight %T, want found: %v", tc.name, svc.InFlight, tc.want)
		}
	}
}
