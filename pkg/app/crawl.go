package app

import (
	"context"

	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/windmill"
)

// CrawlsEnabled says whether crawls can run: a runner is configured (the
// Windmill webhook; the embedded runner is not built yet).
func (a *App) CrawlsEnabled() bool { return a.Settings.WebhookURL != "" }

// Crawls is the crawl use-case wired to the ledger, the bucket, OpenFGA and
// the configured runner (none when crawls are not enabled).
func (a *App) Crawls(ctx context.Context) (*crawl.Service, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	perms, err := a.Permissions(ctx)
	if err != nil {
		return nil, err
	}
	svc := &crawl.Service{
		Store: st, Targets: st, Objects: a.Blob(), Bucket: a.Settings.S3Bucket,
		CaptureFormats: a.Settings.CaptureFormats, Signing: a.Settings.CaptureSigning,
		Permissions: perms, Log: a.Log,
	}
	if a.CrawlsEnabled() {
		svc.Dispatcher = &windmill.Dispatcher{URL: a.Settings.WebhookURL, Token: a.Settings.WebhookToken, Timeout: a.Settings.WebhookTimeout}
	}
	return svc, nil
}

// Targets is the capture-target use-case; it needs only the database.
func (a *App) Targets(ctx context.Context) (*crawl.Service, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	return &crawl.Service{Store: st, Targets: st, Log: a.Log}, nil
}
