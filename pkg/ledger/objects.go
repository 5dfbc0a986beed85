package ledger

import (
	"errors"
	"fmt"
	"io"
	"time"
)

// The vocabulary of stored objects (WACZ files, manifests, links files):
// the use-cases declare their object-store ports in these types and errors,
// and the S3 adapter (pkg/blob) answers in them.

// ErrNoObject is an object (or its bucket) that does not exist.
var ErrNoObject = errors.New("no such object")

// ErrObjectRejected is an answer of the object store refusing one request (a
// key it will not take, access denied, …: a 4xx other than 408 and 429, or a
// 500/501): the store is up, and the failure belongs to that object, not
// to the whole run. No answer, 502-504, 408 and 429 say the service is not
// there for anyone, and are not ErrObjectRejected.
var ErrObjectRejected = errors.New("the S3 server refused the request")

// ErrUnsatisfiable is a range that starts past the end of the object (or
// any range of an empty one): HTTP 416.
var ErrUnsatisfiable = errors.New("range not satisfiable")

// ObjectInfo is what the object store says about an object without its bytes.
type ObjectInfo struct {
	Size         int64
	ETag         string // as S3 sends it, quotes included ("" when absent)
	LastModified time.Time
	ContentType  string
}

// Range is one byte range of an object, in the three forms of an HTTP
// Range header: First-Last, First- (to the end) and -SuffixLength (the
// last bytes). A nil *Range is the whole object.
type Range struct {
	First int64 // -1 for a suffix range
	Last  int64 // inclusive; -1 for "to the end"
	// Suffix is the number of last bytes wanted when First is -1.
	Suffix int64
}

// Header is the range as an HTTP Range header value.
func (r Range) Header() string {
	switch {
	case r.First < 0:
		return fmt.Sprintf("bytes=-%d", r.Suffix)
	case r.Last < 0:
		return fmt.Sprintf("bytes=%d-", r.First)
	}
	return fmt.Sprintf("bytes=%d-%d", r.First, r.Last)
}

// Resolve is the range's first and last byte in an object of size bytes, or
// ok=false when no byte of it is there (RFC 9110 §14.1.1: a range that
// starts at or past the end, a zero-length suffix, anything of an empty
// object, a last byte before the first). A last byte past the end is cut to the end; a suffix longer than
// the object is the whole object.
func (r Range) Resolve(size int64) (first, last int64, ok bool) {
	if size <= 0 {
		return 0, 0, false
	}
	if r.First < 0 {
		if r.Suffix <= 0 {
			return 0, 0, false
		}
		return max(size-r.Suffix, 0), size - 1, true
	}
	if r.First >= size || (r.Last >= 0 && r.Last < r.First) {
		return 0, 0, false
	}
	last = size - 1
	if r.Last >= 0 && r.Last < last {
		last = r.Last
	}
	return r.First, last, true
}

// Part is an open read of an object or of one range of it. Body must be
// closed; it streams from S3 and is never held in memory whole.
type Part struct {
	ObjectInfo
	// First and Last are the bytes Body holds (inclusive); for a whole
	// object 0 and Size-1.
	First, Last int64
	// Partial says a range was asked for and answered (HTTP 206).
	Partial bool
	Body    io.ReadCloser
}

// Length is how many bytes Body holds.
func (p *Part) Length() int64 { return p.Last - p.First + 1 }
