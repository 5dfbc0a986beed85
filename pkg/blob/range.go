package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// The object vocabulary is the centre's (pkg/ledger/objects.go); the
// adapter answers in it.
type (
	ObjectInfo = ledger.ObjectInfo
	Range      = ledger.Range
	Part       = ledger.Part
)

// ErrUnsatisfiable is ledger.ErrUnsatisfiable: a range with no byte in the
// object (HTTP 416).
var ErrUnsatisfiable = ledger.ErrUnsatisfiable

// Stat reads an object's size, ETag, Last-Modified and type (HeadObject). A
// missing object is ErrNotFound.
func (c *Client) Stat(ctx context.Context, bucket, key string) (ObjectInfo, error) {
	out, err := c.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return ObjectInfo{}, c.wrap(err, "head", bucket, key)
	}
	return ObjectInfo{
		Size: aws.ToInt64(out.ContentLength), ETag: aws.ToString(out.ETag),
		LastModified: aws.ToTime(out.LastModified), ContentType: aws.ToString(out.ContentType),
	}, nil
}

// Open starts reading an object, or the range r of it (nil: all of it), in
// one GetObject: S3 resolves the range, so a read costs one round trip
// whatever its form. A range with no byte in the object is ErrUnsatisfiable;
// a missing object ErrNotFound.
func (c *Client) Open(ctx context.Context, bucket, key string, r *Range) (*Part, error) {
	in := &s3.GetObjectInput{Bucket: &bucket, Key: &key}
	if r != nil && r.First < 0 && r.Suffix <= 0 {
		// "bytes=-0" asks for nothing; S3 servers differ on what they answer.
		return nil, fmt.Errorf("get s3://%s/%s %s: %w", bucket, key, r.Header(), ErrUnsatisfiable)
	}
	if r != nil {
		in.Range = aws.String(r.Header())
	}
	out, err := c.s3.GetObject(ctx, in)
	if err != nil {
		var api smithy.APIError
		if errors.As(err, &api) && api.ErrorCode() == "InvalidRange" {
			return nil, fmt.Errorf("get s3://%s/%s %s: %w", bucket, key, r.Header(), ErrUnsatisfiable)
		}
		return nil, c.wrap(err, "get", bucket, key)
	}
	p := &Part{
		ObjectInfo: ObjectInfo{
			ETag: aws.ToString(out.ETag), LastModified: aws.ToTime(out.LastModified), ContentType: aws.ToString(out.ContentType),
		},
		Body: out.Body,
	}
	n := aws.ToInt64(out.ContentLength)
	if cr := aws.ToString(out.ContentRange); cr != "" {
		first, last, size, err := parseContentRange(cr)
		if err != nil || last-first+1 != n {
			out.Body.Close()
			return nil, fmt.Errorf("get s3://%s/%s: S3 answered Content-Range %q for %d bytes", bucket, key, cr, n)
		}
		p.First, p.Last, p.Size, p.Partial = first, last, size, true
		return p, nil
	}
	// No Content-Range: the whole object came back (S3 does this for a
	// range that covers it; some servers for any range they ignore).
	p.Size, p.First, p.Last = n, 0, n-1
	if r != nil {
		first, last, ok := r.Resolve(n)
		if !ok {
			out.Body.Close()
			return nil, fmt.Errorf("get s3://%s/%s %s: %w", bucket, key, r.Header(), ErrUnsatisfiable)
		}
		// Skip to the range on the body we have rather than ask again.
		if _, err := io.CopyN(io.Discard, out.Body, first); err != nil {
			out.Body.Close()
			return nil, c.wrap(err, "read", bucket, key)
		}
		p.First, p.Last, p.Partial = first, last, true
		p.Body = readCloser{io.LimitReader(out.Body, last-first+1), out.Body}
	}
	return p, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// parseContentRange reads "bytes FIRST-LAST/SIZE".
func parseContentRange(s string) (first, last, size int64, err error) {
	bad := fmt.Errorf("bad Content-Range %q", s)
	rest, ok := strings.CutPrefix(s, "bytes ")
	if !ok {
		return 0, 0, 0, bad
	}
	span, total, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, 0, bad
	}
	a, b, ok := strings.Cut(span, "-")
	if !ok {
		return 0, 0, 0, bad
	}
	nums := [3]int64{}
	for i, v := range []string{a, b, total} {
		if nums[i], err = strconv.ParseInt(v, 10, 64); err != nil || nums[i] < 0 {
			return 0, 0, 0, bad
		}
	}
	if nums[0] > nums[1] || nums[1] >= nums[2] {
		return 0, 0, 0, bad
	}
	return nums[0], nums[1], nums[2], nil
}
