package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ReaderAt is an io.ReaderAt over one S3 object: every read the cache below
// cannot answer is one ranged GET, so a reader that needs a few parts of a
// large object (the ZIP directory at the end of a WACZ, then one entry)
// fetches those parts and never the whole object.
//
// A ZIP reader reads in small pieces: the directory through a 4 KiB buffer
// and an entry's data through its decompressor's buffer. So a miss fetches
// at least ReadAhead bytes, and reads that continue where the last fetch
// ended double it (up to MaxReadAhead); the last two fetched spans are kept.
// A sequential read of n bytes thus costs about log2(n/ReadAhead) requests.
//
// The context given to OpenReaderAt is used by every read: io.ReaderAt has
// no context of its own. A ReaderAt is safe for concurrent use.
type ReaderAt struct {
	c           *Client
	ctx         context.Context
	bucket, key string
	size        int64

	mu       sync.Mutex
	spans    [2]span // most recent first
	next     int64   // read-ahead size of the next miss
	requests int
	fetched  int64
}

// span is bytes [off, off+len(data)) of the object.
type span struct {
	off  int64
	data []byte
}

func (s span) contains(off, end int64) bool {
	return s.data != nil && off >= s.off && end <= s.off+int64(len(s.data))
}

// ReadAhead is the least a ReaderAt's GET asks for; MaxReadAhead the most
// it grows to on sequential reads.
const (
	ReadAhead    = 64 << 10
	MaxReadAhead = 8 << 20
)

// HeadRead is how much of an object OpenReaderAt reads at once: all of a
// crawl's page captured over HTTP, whose WACZ is a few kilobytes, and of
// most others the ZIP entries written first.
const HeadRead = 2 * ReadAhead

// OpenReaderAt reads the object's first HeadRead bytes, and so its size, in
// one GET, and returns a reader of it whose reads use ctx: an object no
// larger is then read with no other request (a HEAD and the ZIP reader's
// reads of its directory and entries were one request each). A missing
// object is ErrNotFound.
func (c *Client) OpenReaderAt(ctx context.Context, bucket, key string) (*ReaderAt, error) {
	r := &ReaderAt{c: c, ctx: ctx, bucket: bucket, key: key, next: ReadAhead}
	part, err := c.Open(ctx, bucket, key, &Range{First: 0, Last: HeadRead - 1})
	if errors.Is(err, ErrUnsatisfiable) {
		// An empty object has no first byte to read: its size alone.
		info, err := c.Stat(ctx, bucket, key)
		if err != nil {
			return nil, err
		}
		r.size = info.Size
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	defer part.Body.Close()
	r.requests++
	if part.First != 0 || part.Last >= part.Size || part.Length() > HeadRead {
		return nil, fmt.Errorf("read s3://%s/%s: asked for its first %d bytes, S3 answered %d-%d of %d", bucket, key, HeadRead, part.First, part.Last, part.Size)
	}
	data := make([]byte, part.Length())
	n, err := io.ReadFull(part.Body, data)
	r.fetched += int64(n)
	if err != nil {
		return nil, c.wrap(err, "read", bucket, key)
	}
	r.size = part.Size
	if len(data) > 0 {
		r.spans[0] = span{off: 0, data: data}
	}
	return r, nil
}

// Size is the object's length in bytes.
func (r *ReaderAt) Size() int64 { return r.size }

// Requests is how many GETs the reader has made so far.
func (r *ReaderAt) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Fetched is how many bytes those GETs brought.
func (r *ReaderAt) Fetched() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fetched
}

// ReadAt reads len(p) bytes at off; fewer only at the end of the object,
// with io.EOF.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("read s3://%s/%s: negative offset %d", r.bucket, r.key, off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	end := min(off+int64(len(p)), r.size)
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.spans {
		if s.contains(off, end) {
			return r.done(p, copy(p, s.data[off-s.off:end-s.off]))
		}
	}
	// A miss: fetch from off, at least the read-ahead. A read that starts
	// where the last fetch ended is sequential and earns a larger one.
	want := r.next
	if last := r.spans[0]; last.data != nil && off == last.off+int64(len(last.data)) {
		r.next = min(2*r.next, MaxReadAhead)
		want = r.next
	} else {
		r.next = ReadAhead
	}
	stop := min(max(end, off+want), r.size)
	data, err := r.fetch(off, stop)
	if err != nil {
		return 0, err
	}
	r.spans[1], r.spans[0] = r.spans[0], span{off: off, data: data}
	return r.done(p, copy(p, data[:end-off]))
}

func (r *ReaderAt) done(p []byte, n int) (int, error) {
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fetch GETs bytes [off, stop) of the object.
func (r *ReaderAt) fetch(off, stop int64) ([]byte, error) {
	part, err := r.c.Open(r.ctx, r.bucket, r.key, &Range{First: off, Last: stop - 1})
	if err != nil {
		return nil, err
	}
	defer part.Body.Close()
	r.requests++
	if part.First != off || part.Length() != stop-off {
		return nil, fmt.Errorf("read s3://%s/%s: asked for bytes %d-%d, S3 answered %d-%d (did the object change?)",
			r.bucket, r.key, off, stop-1, part.First, part.Last)
	}
	data := make([]byte, stop-off)
	n, err := io.ReadFull(part.Body, data)
	r.fetched += int64(n)
	if err != nil {
		return nil, r.c.wrap(err, "read", r.bucket, r.key)
	}
	return data, nil
}
