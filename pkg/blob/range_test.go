package blob_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestOpenRanges reads ranges of a real object on the test S3 server
// (versitygw) in every form an HTTP Range header has, and compares the
// bytes with the object's.
func TestOpenRanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, bucket, _ := testenv.Bucket(t)
	obj := make([]byte, 10_000)
	_, _ = rand.Read(obj)
	if err := c.Put(ctx, bucket, "a/b.wacz", "application/wacz", obj); err != nil {
		t.Fatal(err)
	}
	if err := c.Put(ctx, bucket, "empty.wacz", "application/wacz", nil); err != nil {
		t.Fatal(err)
	}
	info, err := c.Stat(ctx, bucket, "a/b.wacz")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size != int64(len(obj)) || info.ETag == "" || info.LastModified.IsZero() || time.Since(info.LastModified) > time.Hour {
		t.Fatalf("stat: %+v", info)
	}
	for _, tc := range []struct {
		name        string
		r           *blob.Range
		first, last int64
		partial     bool
	}{
		{"whole", nil, 0, 9999, false},
		{"first bytes", &blob.Range{First: 0, Last: 99}, 0, 99, true},
		{"middle", &blob.Range{First: 4000, Last: 5999}, 4000, 5999, true},
		{"one byte", &blob.Range{First: 7, Last: 7}, 7, 7, true},
		{"to the end", &blob.Range{First: 9990, Last: -1}, 9990, 9999, true},
		{"last past the end", &blob.Range{First: 9000, Last: 20000}, 9000, 9999, true},
		{"suffix", &blob.Range{First: -1, Suffix: 100}, 9900, 9999, true},
		{"suffix longer than the object", &blob.Range{First: -1, Suffix: 50000}, 0, 9999, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := c.Open(ctx, bucket, "a/b.wacz", tc.r)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Body.Close()
			got, err := io.ReadAll(p.Body)
			if err != nil {
				t.Fatal(err)
			}
			if p.First != tc.first || p.Last != tc.last || p.Size != int64(len(obj)) || p.ETag != info.ETag || !p.LastModified.Equal(info.LastModified) {
				t.Fatalf("part %d-%d of %d etag %s, want %d-%d of %d etag %s", p.First, p.Last, p.Size, p.ETag, tc.first, tc.last, len(obj), info.ETag)
			}
			if p.Length() != int64(len(got)) || !bytes.Equal(got, obj[tc.first:tc.last+1]) {
				t.Fatalf("read %d bytes, not the object's %d-%d", len(got), tc.first, tc.last)
			}
		})
	}
	for _, tc := range []struct {
		name, key string
		r         blob.Range
	}{
		{"starts at the end", "a/b.wacz", blob.Range{First: 10000, Last: -1}},
		{"starts past the end", "a/b.wacz", blob.Range{First: 20000, Last: 20010}},
		{"empty suffix", "a/b.wacz", blob.Range{First: -1, Suffix: 0}},
		{"empty object", "empty.wacz", blob.Range{First: 0, Last: 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := c.Open(ctx, bucket, tc.key, &tc.r)
			if err == nil {
				p.Body.Close()
			}
			if !errors.Is(err, blob.ErrUnsatisfiable) {
				t.Fatalf("Open(%s) = %v, want ErrUnsatisfiable", tc.r.Header(), err)
			}
		})
	}
	if _, err := c.Open(ctx, bucket, "no/such.wacz", &blob.Range{First: 0, Last: 1}); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("missing object: %v", err)
	}
	if _, err := c.Stat(ctx, bucket, "no/such.wacz"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("stat missing object: %v", err)
	}
}

// TestResolve pins RFC 9110's arithmetic without a server.
func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		r           blob.Range
		size        int64
		first, last int64
		ok          bool
	}{
		{blob.Range{First: 0, Last: 0}, 1, 0, 0, true},
		{blob.Range{First: 0, Last: -1}, 0, 0, 0, false},
		{blob.Range{First: 5, Last: 3}, 10, 0, 0, false},
		{blob.Range{First: 9, Last: 100}, 10, 9, 9, true},
		{blob.Range{First: 10, Last: -1}, 10, 0, 0, false},
		{blob.Range{First: -1, Suffix: 3}, 10, 7, 9, true},
		{blob.Range{First: -1, Suffix: 30}, 10, 0, 9, true},
		{blob.Range{First: -1, Suffix: 0}, 10, 0, 0, false},
	} {
		first, last, ok := tc.r.Resolve(tc.size)
		if ok != tc.ok || (ok && (first != tc.first || last != tc.last)) {
			t.Errorf("%s of %d: %d-%d %v, want %d-%d %v", tc.r.Header(), tc.size, first, last, ok, tc.first, tc.last, tc.ok)
		}
	}
	if h := (blob.Range{First: -1, Suffix: 100}).Header(); !strings.HasPrefix(h, "bytes=-100") {
		t.Error(h)
	}
}
