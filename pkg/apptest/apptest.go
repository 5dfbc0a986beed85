// Package apptest builds a complete application for integration tests: a
// fresh migrated database and bucket on the dev stack, and an embedded
// OpenFGA (memory datastore) holding the project's model. Nothing is mocked.
package apptest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/fga"
	"github.com/capture-ledger/ledgerctl/pkg/app"
	"github.com/capture-ledger/ledgerctl/pkg/authz"
	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/config"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// Env is one test's application and the handles behind it.
type Env struct {
	App    *app.App
	FGA    authz.Client
	Blob   *blob.Client
	Bucket string
	DSN    string
}

// New builds an Env whose resources are released when the test ends.
func New(t testing.TB) *Env {
	t.Helper()
	return NewWith(t, nil)
}

// NewWith is New with the settings changed by tweak (when not nil) before
// the application is built from them.
func NewWith(t testing.TB, tweak func(*config.Settings)) *Env {
	t.Helper()
	ctx := context.Background()
	dsn := testenv.Database(t)
	bc, bucket, s3 := testenv.Bucket(t)
	fgaClient := NewFGA(t)
	storeID, modelID := fgaClient.Target()
	s := config.Settings{
		DatabaseURL: dsn,
		S3Endpoint:  s3.Endpoint, S3Bucket: bucket, S3AccessKeyID: s3.AccessKeyID, S3SecretAccessKey: s3.SecretAccessKey,
		S3Region: "us-east-1", S3ForcePathStyle: true,
		FGAStoreID: storeID, FGAModelID: modelID,
		OIDCAudience: "capture-ledger", APIHost: "127.0.0.1",
		DrainInterval: time.Second, OutboxMaxAttempts: 10,
		CaptureFormats: map[string]bool{"wacz": true}, LogLevel: "info",
	}
	if tweak != nil {
		tweak(&s)
	}
	a := app.New(s, nil)
	a.SetAuthz(fgaClient)
	t.Cleanup(a.Close)
	if _, err := a.Store(ctx); err != nil {
		t.Fatal(err)
	}
	return &Env{App: a, FGA: fgaClient, Blob: bc, Bucket: bucket, DSN: dsn}
}

// NewFGA starts an embedded OpenFGA on a memory datastore with a store and
// the project's model.
func NewFGA(t testing.TB) authz.Client {
	t.Helper()
	ctx := context.Background()
	c, err := authz.NewMemory(authz.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.FindOrCreateStore(ctx, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteModel(ctx, fga.Model); err != nil {
		t.Fatal(err)
	}
	return c
}

// Manifest is a BrowserHive v12 success report for taskID whose WACZ is at
// waczKey in bucket (no artifacts when waczKey is empty), with the
// correlationId c0ffee00.
func Manifest(taskID, status, sourceURL, bucket, waczKey string, capturedAt time.Time) []byte {
	return ManifestFor(taskID, "c0ffee00", status, sourceURL, bucket, waczKey, capturedAt)
}

// ManifestFor is Manifest with the given correlationId (a crawl's captures
// carry the crawl id).
func ManifestFor(taskID, correlationID, status, sourceURL, bucket, waczKey string, capturedAt time.Time) []byte {
	m := map[string]any{
		"taskId": taskID, "correlationId": correlationID, "url": sourceURL, "labels": []string{},
		"status": status, "timestamp": capturedAt.UTC().Format(time.RFC3339Nano), "captureProcessingTimeMs": 900,
		"completeness": map[string]any{"complete": true, "bodylessUrls": []string{}, "truncatedUrls": []string{}},
	}
	if waczKey != "" {
		m["artifacts"] = map[string]any{"wacz": fmt.Sprintf("s3://%s/%s", bucket, waczKey)}
	}
	b, _ := json.Marshal(m)
	return b
}
