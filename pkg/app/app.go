// Package app is the one place concrete adapters are wired together from the
// settings: the PostgreSQL store, the S3 client, OpenFGA, identity. `serve`
// and every offline command build their use-cases from an App. Each part is
// opened lazily, so a command opens only what it uses.
package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/capture-ledger/ledgerctl/pkg/archive"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/store/postgres"
)

// App holds the settings and the adapters opened so far.
type App struct {
	Settings config.Settings
	Log      *slog.Logger

	mu      sync.Mutex
	store   *postgres.Store
	blob    *blob.Client
	authz   authz.Client
	closers []func()
	// recentWant is the App's own want of the WACZs its S3 client keeps
	// (Blob): a command indexes what it wrote; a serve whose index is
	// elected releases it and wants them only while it holds the index.
	recentWant func()
	// searchState holds the search backend (search.go).
	searchState *searchState
	// quota bounds the captures of this process (CaptureQuota).
	quota *archive.CaptureQuota
	// gate bounds the lists and searches of this process together
	// (ScanGate).
	gate *archive.ScanGate
	// background is the work started for a request that outlives it (a
	// crawl level's indexing); Close waits for it.
	background sync.WaitGroup
}

// New returns an App; nothing is opened yet.
func New(s config.Settings, log *slog.Logger) *App {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &App{Settings: s, Log: log}
}

// Config returns the settings the App was built from.
func (a *App) Config() config.Settings { return a.Settings }

// Store opens the ledger database on first use.
func (a *App) Store(ctx context.Context) (*postgres.Store, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.store != nil {
		return a.store, nil
	}
	pool, err := postgres.Open(ctx, a.Settings.DatabaseURL, 0)
	if err != nil {
		return nil, err
	}
	a.store = &postgres.Store{Pool: pool}
	a.closers = append(a.closers, pool.Close)
	return a.store, nil
}

// Blob returns the S3 client (it does not contact the server).
func (a *App) Blob() *blob.Client {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.blob == nil {
		a.blob = blob.New(blob.Config{
			Endpoint: a.Settings.S3Endpoint, Region: a.Settings.S3Region,
			AccessKeyID: a.Settings.S3AccessKeyID, SecretAccessKey: a.Settings.S3SecretAccessKey,
			ForcePathStyle: a.Settings.S3ForcePathStyle,
		})
		// The indexer of this process reads the WACZs its captures just
		// wrote from memory (blobObjects).
		a.blob.KeepRecent(blob.NewRecent(blob.DefaultRecentBytes, blob.DefaultRecentAge))
		a.recentWant = a.blob.WantRecent()
	}
	return a.blob
}

// keepRecentOnlyWhileIndexing ends the App's own want of the WACZs its S3
// client keeps: from then on they are kept only while an indexer of this
// process wants them (a serve that holds the search index).
func (a *App) keepRecentOnlyWhileIndexing() {
	a.Blob()
	a.mu.Lock()
	release := a.recentWant
	a.mu.Unlock()
	release()
}

// Admitter admits manifests into the configured bucket's ledger.
func (a *App) Admitter(ctx context.Context) (*archive.Admitter, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	return &archive.Admitter{Store: st, Bucket: a.Settings.S3Bucket, Log: a.Log}, nil
}

// Adder registers manifests already in the configured bucket (`ledgerctl
// archives add`); the caller sets its concurrency and progress.
func (a *App) Adder(ctx context.Context) (*archive.Adder, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	return &archive.Adder{Store: st, Objects: a.Blob(), Bucket: a.Settings.S3Bucket, Log: a.Log}, nil
}

// Close releases whatever was opened, last first.
func (a *App) Close() {
	a.background.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
	a.closers = nil
}
