// Package blob is the S3 adapter: reading manifests, links files and WACZ
// objects, writing captures, and presigning GET URLs (aws-sdk-go-v2).
package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/capture-ledger/ledgerctl/pkg/ledger"
)

// ErrNotFound is ledger.ErrNoObject: the object (or bucket) does not exist.
var ErrNotFound = ledger.ErrNoObject

// ErrRejected is ledger.ErrObjectRejected: the S3 server refused one
// request (a 4xx other than 408 and 429, or a 500/501).
var ErrRejected = ledger.ErrObjectRejected

// Config says how to reach the S3 API.
type Config struct {
	Endpoint, Region, AccessKeyID, SecretAccessKey string
	ForcePathStyle                                 bool
}

// Client reads, writes and presigns objects.
type Client struct {
	s3      *s3.Client
	presign *s3.PresignClient
	cfg     Config
	// recent, when set, keeps the WACZ objects put last (KeepRecent).
	recent *Recent
}

// KeepRecent makes the client keep a copy of each WACZ it puts in r, for
// TakeRecent; call it before the client is used.
func (c *Client) KeepRecent(r *Recent) { c.recent = r }

// WantRecent says a reader of this process takes what the client keeps
// (Recent.Want); without KeepRecent it keeps nothing and the release does
// nothing.
func (c *Client) WantRecent() (release func()) { return c.recent.Want() }

// TakeRecent returns the body of a WACZ this client put moments ago, and
// forgets it; false when it is not kept (then read it from S3).
func (c *Client) TakeRecent(bucket, key string) ([]byte, bool) {
	return c.recent.take(bucket, key)
}

// New builds a client; it does not contact the server.
func New(cfg Config) *Client {
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	c := s3.New(s3.Options{
		Region:       cfg.Region,
		BaseEndpoint: aws.String(cfg.Endpoint),
		UsePathStyle: cfg.ForcePathStyle,
		Credentials:  credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
		// Checksums only when the operation requires them: S3-compatible
		// servers differ in what they accept.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
		HTTPClient:                 &http.Client{Timeout: 5 * time.Minute, Transport: transport()},
	})
	return &Client{s3: c, presign: s3.NewPresignClient(c), cfg: cfg}
}

// transport keeps enough idle connections for the concurrent reads of a
// level report or a reconcile: the default keeps 2 per host, so every read
// beyond them opened a new connection.
func transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 64
	return t
}

// Endpoint is the configured S3 URL, for messages.
func (c *Client) Endpoint() string { return c.cfg.Endpoint }

// Get reads a whole object; a missing object is ErrNotFound.
func (c *Client) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	out, err := c.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		return nil, c.wrap(err, "get", bucket, key)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, c.wrap(err, "read", bucket, key) // cut mid-body: no answer
	}
	return data, nil
}

// List returns every key of bucket that starts with prefix, in the order
// S3 lists them (all pages). A missing bucket is ErrNotFound; errors are
// classified like Get's.
func (c *Client) List(ctx context.Context, bucket, prefix string) ([]string, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(c.s3, &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, c.wrap(err, "list", bucket, prefix)
		}
		for _, o := range page.Contents {
			if o.Key != nil {
				keys = append(keys, *o.Key)
			}
		}
	}
	return keys, nil
}

// Put writes an object.
func (c *Client) Put(ctx context.Context, bucket, key, contentType string, body []byte) error {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	_, err := c.s3.PutObject(ctx, &s3.PutObjectInput{
		Bucket: &bucket, Key: &key, ContentType: &contentType,
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
	})
	if err != nil {
		c.recent.forget(bucket, key) // what S3 holds now is not known
		return c.wrap(err, "put", bucket, key)
	}
	c.recent.keep(bucket, key, body)
	return nil
}

// Delete removes an object. S3 answers a missing key like a removed one, so
// a repeated delete succeeds; a missing bucket is ErrNotFound.
func (c *Client) Delete(ctx context.Context, bucket, key string) error {
	c.recent.forget(bucket, key)
	_, err := c.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: &key})
	return c.wrap(err, "delete", bucket, key)
}

// PresignGet returns a SigV4 query-signed GET URL valid for ttl. Signing is
// pure computation: it does not check the object exists.
func (c *Client) PresignGet(ctx context.Context, bucket, key string, ttl time.Duration) (string, error) {
	req, err := c.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &bucket, Key: &key}, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("presign %s/%s: %w", bucket, key, err)
	}
	return req.URL, nil
}

// HeadBucket asks whether bucket exists and the credentials may use it,
// reading nothing: a missing bucket is ErrNotFound, a refusal ErrRejected,
// no answer an *UnreachableError.
func (c *Client) HeadBucket(ctx context.Context, bucket string) error {
	_, err := c.s3.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &bucket})
	return c.wrap(err, "head bucket", bucket, "")
}

// CreateBucket creates bucket; one that already exists and is ours is fine.
func (c *Client) CreateBucket(ctx context.Context, bucket string) error {
	_, err := c.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket})
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return c.wrap(err, "create bucket", bucket, "")
	}
	return nil
}

// DeleteBucket removes every object of bucket, then the bucket.
func (c *Client) DeleteBucket(ctx context.Context, bucket string) error {
	p := s3.NewListObjectsV2Paginator(c.s3, &s3.ListObjectsV2Input{Bucket: &bucket})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return c.wrap(err, "list", bucket, "")
		}
		for _, o := range page.Contents {
			if _, err := c.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &bucket, Key: o.Key}); err != nil {
				return c.wrap(err, "delete", bucket, *o.Key)
			}
		}
	}
	_, err := c.s3.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: &bucket})
	return c.wrap(err, "delete bucket", bucket, "")
}

func (c *Client) wrap(err error, op, bucket, key string) error {
	if err == nil {
		return nil
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "NoSuchKey", "NoSuchBucket", "NotFound":
			return fmt.Errorf("%s s3://%s/%s: %w", op, bucket, key, ErrNotFound)
		}
	}
	if rejected(err) {
		return fmt.Errorf("%s s3://%s/%s: %w: %w", op, bucket, key, ErrRejected, err)
	}
	if unanswered(err) {
		return &UnreachableError{Endpoint: c.cfg.Endpoint, Err: fmt.Errorf("%s s3://%s/%s: %w", op, bucket, key, err)}
	}
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return fmt.Errorf("%s s3://%s/%s: %w", op, bucket, key, ErrNotFound)
	}
	return fmt.Errorf("%s s3://%s/%s: %w", op, bucket, key, err)
}

// rejected reports whether S3 answered with a refusal of this one request
// (see ErrRejected).
func rejected(err error) bool {
	var hs interface{ HTTPStatusCode() int }
	if !errors.As(err, &hs) {
		return false
	}
	switch code := hs.HTTPStatusCode(); {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return false
	case code >= 400 && code <= 501:
		return true
	}
	return false
}

// UnreachableError is an S3 request nothing answered (a network failure),
// or one the service answered for everyone (502-504, 408, 429). It matches
// ledger.ErrUnreachable.
type UnreachableError struct {
	Endpoint string
	Err      error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach S3 at %s: %v", e.Endpoint, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ledger.ErrUnreachable) true.
func (e *UnreachableError) Is(target error) bool { return target == ledger.ErrUnreachable }

// unanswered reports whether S3 did not answer this request for anyone:
// no answer at all, or a gateway failure, a timeout or throttling.
func unanswered(err error) bool {
	var hs interface{ HTTPStatusCode() int }
	// The SDK wraps a failed dial in a response error of status 0: no answer.
	if errors.As(err, &hs) && hs.HTTPStatusCode() != 0 {
		switch hs.HTTPStatusCode() {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout,
			http.StatusRequestTimeout, http.StatusTooManyRequests:
			return true
		}
		return false
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded)
}
