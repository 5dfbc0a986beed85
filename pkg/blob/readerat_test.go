package blob_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	mrand "math/rand/v2"
	"sync"
	"testing"

	"github.com/capture-ledger/ledgerctl/pkg/blob"
	"github.com/capture-ledger/ledgerctl/pkg/testenv"
)

// TestReaderAt reads a real object on the test S3 server through ranged
// GETs: random reads (concurrent too) return the object's bytes, the end of
// the object is io.EOF, and a missing object is ErrNotFound.
func TestReaderAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, bucket, _ := testenv.Bucket(t)
	obj := make([]byte, 300_000)
	_, _ = rand.Read(obj)
	if err := c.Put(ctx, bucket, "x.wacz", "application/wacz", obj); err != nil {
		t.Fatal(err)
	}
	r, err := c.OpenReaderAt(ctx, bucket, "x.wacz")
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != int64(len(obj)) {
		t.Fatalf("size %d, want %d", r.Size(), len(obj))
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		seed := rng.Uint64()
		wg.Go(func() {
			rng := mrand.New(mrand.NewPCG(seed, uint64(w)))
			for range 40 {
				off := rng.Int64N(int64(len(obj)))
				p := make([]byte, rng.IntN(200_000)+1)
				n, err := r.ReadAt(p, off)
				want := obj[off:min(off+int64(len(p)), int64(len(obj)))]
				if n != len(want) || !bytes.Equal(p[:n], want) {
					errs <- errors.New("bytes differ")
					return
				}
				if short := n < len(p); short != errors.Is(err, io.EOF) || (!short && err != nil) {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("read: %v", err)
	}
	if n, err := r.ReadAt(make([]byte, 1), int64(len(obj))); n != 0 || err != io.EOF {
		t.Fatalf("read at the end: %d %v", n, err)
	}
	if _, err := c.OpenReaderAt(ctx, bucket, "missing.wacz"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("missing object: %v", err)
	}
}

// TestReaderAtReadsOnlyWhatItNeeds opens one small entry of a large stored
// ZIP (the shape of a WACZ: a big WARC, a small pages file) and checks the
// GETs brought a small part of the object in a few requests.
func TestReaderAtReadsOnlyWhatItNeeds(t *testing.T) {
	t.Parallel()
	c, bucket, _ := testenv.Bucket(t)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	big := make([]byte, 8<<20)
	_, _ = rand.Read(big)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "archive/data.warc.gz", Method: zip.Store})
	_, _ = w.Write(big)
	pages := bytes.Repeat([]byte(`{"url":"https://example.com/","title":"t","text":"some text"}`+"\n"), 5000)
	w, _ = zw.Create("pages/pages.jsonl")
	_, _ = w.Write(pages)
	_ = zw.Close()
	r, zr := putZIP(t, c, bucket, "big.wacz", buf.Bytes())
	f, err := zr.Open("pages/pages.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(f)
	if err != nil || !bytes.Equal(got, pages) {
		t.Fatalf("pages entry differs (%d bytes, %v)", len(got), err)
	}
	if r.Fetched() > int64(buf.Len())/8 || r.Requests() > 8 {
		t.Fatalf("read %d of %d bytes in %d requests: more than the directory and one entry", r.Fetched(), buf.Len(), r.Requests())
	}
	t.Logf("%d of %d bytes in %d requests", r.Fetched(), buf.Len(), r.Requests())
}

// TestReaderAtReadsASmallObjectInOneGet: an object no larger than HeadRead
// (a crawl's page, a few kilobytes) is read whole by opening it, one GET
// and no HEAD: every entry of its ZIP then reads with no other request. An
// empty object opens with size 0 and reads io.EOF.
func TestReaderAtReadsASmallObjectInOneGet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, bucket, _ := testenv.Bucket(t)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	// 100 KB that do not compress: the ZIP reader reads its directory at
	// the end and its entries from the start, more than one read-ahead
	// apart.
	body := map[string][]byte{}
	for _, name := range []string{"archive/data.warc.gz", "indexes/index.cdxj", "pages/pages.jsonl", "datapackage.json"} {
		body[name] = make([]byte, 25_000)
		_, _ = rand.Read(body[name])
		w, _ := zw.Create(name)
		_, _ = w.Write(body[name])
	}
	_ = zw.Close()
	if buf.Len() > blob.HeadRead {
		t.Fatalf("the small object is %d bytes, more than HeadRead", buf.Len())
	}
	r, zr := putZIP(t, c, bucket, "small.wacz", buf.Bytes())
	if r.Size() != int64(buf.Len()) {
		t.Fatalf("size %d of %d", r.Size(), buf.Len())
	}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, body[f.Name]) {
			t.Fatalf("%s differs: %v", f.Name, err)
		}
	}
	if r.Requests() != 1 || r.Fetched() != int64(buf.Len()) {
		t.Errorf("%d requests, %d bytes fetched; want 1 and the object's %d", r.Requests(), r.Fetched(), buf.Len())
	}
	if err := c.Put(ctx, bucket, "empty", "application/octet-stream", nil); err != nil {
		t.Fatal(err)
	}
	e, err := c.OpenReaderAt(ctx, bucket, "empty")
	if err != nil || e.Size() != 0 {
		t.Fatalf("empty object: size %v, %v", e, err)
	}
	if n, err := e.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF {
		t.Errorf("reading the empty object: %d %v", n, err)
	}
}

// putZIP puts data (a ZIP) in the bucket as key, opens it with a ReaderAt
// and reads its directory.
func putZIP(t *testing.T, c *blob.Client, bucket, key string, data []byte) (*blob.ReaderAt, *zip.Reader) {
	t.Helper()
	ctx := context.Background()
	if err := c.Put(ctx, bucket, key, "application/wacz", data); err != nil {
		t.Fatal(err)
	}
	r, err := c.OpenReaderAt(ctx, bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(r, r.Size())
	if err != nil {
		t.Fatal(err)
	}
	return r, zr
}
