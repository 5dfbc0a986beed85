package runner_test

import (
	"context"
	"errors"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestRecentServesWhatItWrote: against the real bucket, the sidecars put
// through Recent read back from memory even once S3 lost them; a WACZ is
// never remembered; a put S3 refused is not remembered; past Max the oldest
// sidecar is forgotten and read from S3 again.
func TestRecentServesWhatItWrote(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	client, bucket, _ := testenv.Bucket(t)
	r := &runner.Recent{Objects: client, Max: 2}
	for _, k := range []string{"a.result.json", "a.links.json", "a.wacz"} {
		if err := r.Put(ctx, bucket, k, "application/json", []byte("body of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"a.result.json", "a.links.json", "a.wacz"} {
		if err := client.Delete(ctx, bucket, k); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"a.result.json", "a.links.json"} {
		if got, err := r.Get(ctx, bucket, k); err != nil || string(got) != "body of "+k {
			t.Errorf("%s: %q %v, want it from memory", k, got, err)
		}
	}
	if _, err := r.Get(ctx, bucket, "a.wacz"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("a.wacz: %v, want S3's not found (never remembered)", err)
	}

	if err := r.Put(ctx, "no-such-bucket-"+bucket, "b.result.json", "application/json", []byte("x")); err == nil {
		t.Fatal("a put into a missing bucket succeeded")
	}
	if _, err := r.Get(ctx, "no-such-bucket-"+bucket, "b.result.json"); err == nil {
		t.Error("a refused put was remembered")
	}

	// A third sidecar pushes out the first.
	if err := r.Put(ctx, bucket, "c.result.json", "application/json", []byte("c")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get(ctx, bucket, "a.result.json"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("the oldest sidecar: %v, want it forgotten (and gone from S3)", err)
	}
	if got, err := r.Get(ctx, bucket, "a.links.json"); err != nil || string(got) != "body of a.links.json" {
		t.Errorf("the second sidecar: %q %v, want it still remembered", got, err)
	}
}
