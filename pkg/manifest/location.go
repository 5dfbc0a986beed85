package manifest

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrNotS3Location is the cause of every location that is not
// `s3://<bucket>/<key>` with a non-empty bucket and key. Its text is the one
// the level report handler records as manifest_error.
var ErrNotS3Location = errors.New("not an s3:// location the ledger can read")

// BucketMismatchError is a location inside a bucket other than the one the
// ledger reads. The ledger never reads from a bucket chosen by whoever
// reported the location.
type BucketMismatchError struct {
	Location   string
	Bucket     string // the bucket in Location
	Configured string // the bucket the ledger reads
}

// Error reads "written to bucket <b>, but the ledger reads <configured>: <loc>".
func (e *BucketMismatchError) Error() string {
	return fmt.Sprintf("written to bucket %s, but the ledger reads %s: %s", e.Bucket, e.Configured, e.Location)
}

// ParseS3Location splits `s3://<bucket>/<key>` at the first `/` after the
// bucket. The key is returned verbatim: it may contain `/`, spaces, `+` and
// non-ASCII, and nothing is percent-decoded. A location that does not start
// with `s3://`, or has an empty bucket or key, gives an error wrapping
// ErrNotS3Location whose text ends with the location.
func ParseS3Location(loc string) (bucket, key string, err error) {
	rest, ok := strings.CutPrefix(loc, "s3://")
	if !ok {
		return "", "", notS3(loc)
	}
	bucket, key, ok = strings.Cut(rest, "/")
	if !ok || bucket == "" || key == "" {
		return "", "", notS3(loc)
	}
	return bucket, key, nil
}

func notS3(loc string) error {
	return fmt.Errorf("%w: %s", ErrNotS3Location, loc)
}

// KeyInBucket returns the key of loc when loc is an s3:// location inside
// configuredBucket whose key the ledger reads (see CheckKey). Otherwise the
// error wraps ErrNotS3Location (a *KeyError for a key the ledger refuses)
// or is a *BucketMismatchError. It is the rule for every location the ledger
// is told about: manifests, links files and (unlike the original) WACZ
// archives.
func KeyInBucket(loc, configuredBucket string) (string, error) {
	bucket, key, err := ParseS3Location(loc)
	if err != nil {
		return "", err
	}
	if bucket != configuredBucket {
		return "", &BucketMismatchError{Location: loc, Bucket: bucket, Configured: configuredBucket}
	}
	if reason := keyProblem(key); reason != "" {
		return "", &KeyError{Location: loc, Reason: reason}
	}
	return key, nil
}

// MaxKeyBytes is the longest object key the ledger reads: S3's limit.
const MaxKeyBytes = 1024

// KeyError is an s3:// location whose key the ledger refuses to read or
// record: a key with an empty, "." or ".." segment (which some stores
// resolve as a path, so it can name an object other than the one it
// spells), longer than MaxKeyBytes, holding U+0000 or not valid UTF-8. It
// wraps ErrNotS3Location.
type KeyError struct {
	Location string // the location as given ("" when only a key was)
	Reason   string // e.g. `a ".." segment`
}

// Error reads "not an s3:// location the ledger can read (<reason>): <loc>"
// ("… object key the ledger can read (<reason>)" for a bare key).
func (e *KeyError) Error() string {
	if e.Location == "" {
		return fmt.Sprintf("not an object key the ledger can read (%s)", e.Reason)
	}
	return fmt.Sprintf("%s (%s): %s", ErrNotS3Location, e.Reason, e.Location)
}

// Unwrap makes errors.Is(err, ErrNotS3Location) true.
func (e *KeyError) Unwrap() error { return ErrNotS3Location }

// CheckKey refuses an object key the ledger does not read (a *KeyError
// without a location): one with an empty segment (a leading, trailing or
// doubled "/"), a "." or ".." segment, more than MaxKeyBytes bytes, U+0000,
// or bytes that are not UTF-8. It is how a key recorded before these rules
// is checked again before it is read.
func CheckKey(key string) error {
	if reason := keyProblem(key); reason != "" {
		return &KeyError{Reason: reason}
	}
	return nil
}

func keyProblem(key string) string {
	switch {
	case key == "":
		return "an empty key"
	case len(key) > MaxKeyBytes:
		return fmt.Sprintf("a key of %d bytes, longer than %d", len(key), MaxKeyBytes)
	case !utf8.ValidString(key):
		return "a key that is not UTF-8"
	case strings.IndexByte(key, 0) >= 0:
		return "a key holding U+0000"
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return "an empty key segment"
		case ".", "..":
			return fmt.Sprintf("a %q key segment", seg)
		}
	}
	return ""
}

// Outcome is where the ledger may read a capture's manifest, as recorded in
// capture_submissions: exactly one of Key (manifest_key) and Error
// (manifest_error) is non-empty.
type Outcome struct {
	Key   string
	Error string
}

// ManifestOutcome turns one level-report entry's manifestLocation or
// manifestError into what the ledger records. A reported manifestError is
// kept as it is. Otherwise the location must be inside configuredBucket, and
// when it is not, the reason becomes the error:
//
//	not an s3:// location the ledger can read: <loc>
//	written to bucket <b>, but the ledger reads <configured>: <loc>
//	not an s3:// location the ledger can read (a ".." key segment): <loc>
func ManifestOutcome(manifestLocation, manifestError, configuredBucket string) Outcome {
	if manifestError != "" {
		return Outcome{Error: manifestError}
	}
	key, err := KeyInBucket(manifestLocation, configuredBucket)
	if err != nil {
		return Outcome{Error: err.Error()}
	}
	return Outcome{Key: key}
}
