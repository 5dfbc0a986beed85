package blob_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestRecentKeepsWhatThisClientPut: a WACZ the client put is taken once
// from memory, as a copy of what was put (the caller's buffer may be
// reused); other objects, a WACZ deleted or one whose put failed are not
// kept; the cache holds at most its bytes (oldest dropped first) and
// nothing older than its age; and it keeps only while a reader wants
// what it keeps.
func TestRecentKeepsWhatThisClientPut(t *testing.T) {
	t.Parallel()
	c, bucket, _ := testenv.Bucket(t)
	ctx := context.Background()
	r := blob.NewRecent(8<<10, time.Minute)
	c.KeepRecent(r)

	body := bytes.Repeat([]byte("w"), 600)
	// Kept only while a reader wants them (this process indexes).
	if err := c.Put(ctx, bucket, "org/unwanted.wacz", "application/wacz+zip", body); err != nil {
		t.Fatal(err)
	}
	if n, _ := r.Len(); n != 0 {
		t.Fatalf("%d objects kept while no reader wants them", n)
	}
	release := c.WantRecent()
	if err := c.Put(ctx, bucket, "org/a.wacz", "application/wacz+zip", body); err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(body)
	body[0] = 'X' // a pooled buffer reused after the put
	got, ok := c.TakeRecent(bucket, "org/a.wacz")
	if !ok || !bytes.Equal(got, want) {
		t.Fatalf("TakeRecent after the put = %q…, %v; want the put's body", got[:min(len(got), 8)], ok)
	}
	if _, ok := c.TakeRecent(bucket, "org/a.wacz"); ok {
		t.Errorf("taken twice: an object is taken once")
	}
	if _, ok := c.TakeRecent("other-bucket", "org/a.wacz"); ok {
		t.Errorf("the same key in another bucket was taken")
	}

	for _, key := range []string{"org/a.result.json", "org/a.links.json"} {
		if err := c.Put(ctx, bucket, key, "application/json", []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if _, ok := c.TakeRecent(bucket, key); ok {
			t.Errorf("%s was kept: only WACZs are", key)
		}
	}

	if err := c.Put(ctx, bucket, "org/gone.wacz", "", body); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, bucket, "org/gone.wacz"); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.TakeRecent(bucket, "org/gone.wacz"); ok {
		t.Errorf("a deleted WACZ was still kept")
	}

	if err := c.Put(ctx, bucket, "org/b.wacz", "", body); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, "no-such-bucket-"+bucket, "org/b.wacz", "", body); err == nil {
		t.Fatal("a put to a missing bucket succeeded")
	}
	if _, ok := c.TakeRecent("no-such-bucket-"+bucket, "org/b.wacz"); ok {
		t.Errorf("a WACZ whose put failed was kept")
	}
	if _, ok := c.TakeRecent(bucket, "org/b.wacz"); !ok {
		t.Errorf("a failed put elsewhere dropped another bucket's object")
	}

	// 8 KiB at most, an object of at most 1 KiB: the 14th of 600 B drops
	// the first.
	for i := range 14 {
		if err := c.Put(ctx, bucket, "org/n"+string(rune('a'+i))+".wacz", "", body); err != nil {
			t.Fatal(err)
		}
	}
	if n, size := r.Len(); n != 13 || size != 13*600 {
		t.Errorf("after 14 puts of 600 B into 8 KiB: %d objects, %d B; want 13, 7800", n, size)
	}
	if _, ok := c.TakeRecent(bucket, "org/na.wacz"); ok {
		t.Errorf("the oldest object was not dropped for the newest")
	}
	if _, ok := c.TakeRecent(bucket, "org/nn.wacz"); !ok {
		t.Errorf("the newest object was not kept")
	}
	if err := c.Put(ctx, bucket, "org/big.wacz", "", bytes.Repeat([]byte("b"), 1025)); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.TakeRecent(bucket, "org/big.wacz"); ok {
		t.Errorf("an object above an eighth of the cache was kept")
	}

	// A second reader: released once, the first's want still keeps; the
	// last release drops everything.
	second := c.WantRecent()
	second()
	second()
	if n, _ := r.Len(); n != 12 {
		t.Errorf("%d objects kept after a second reader's release, want the 12 still kept", n)
	}
	release()
	if n, size := r.Len(); n != 0 || size != 0 {
		t.Errorf("after the last release: %d objects, %d B kept; want none", n, size)
	}
	if err := c.Put(ctx, bucket, "org/after.wacz", "", body); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.TakeRecent(bucket, "org/after.wacz"); ok {
		t.Errorf("a WACZ put after the last release was kept")
	}
}

// TestRecentForgetsOldObjects: nothing older than the cache's age is
// taken.
func TestRecentForgetsOldObjects(t *testing.T) {
	t.Parallel()
	c, bucket, _ := testenv.Bucket(t)
	ctx := context.Background()
	r := blob.NewRecent(1<<20, 300*time.Millisecond)
	c.KeepRecent(r)
	defer c.WantRecent()()
	if err := c.Put(ctx, bucket, "old.wacz", "", []byte("old")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if err := c.Put(ctx, bucket, "new.wacz", "", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.TakeRecent(bucket, "old.wacz"); ok {
		t.Errorf("an object older than the cache's age was taken")
	}
	if n, _ := r.Len(); n != 1 {
		t.Errorf("%d objects kept, want the new one only", n)
	}
}
