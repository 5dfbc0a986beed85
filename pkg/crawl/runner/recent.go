package runner

import (
	"context"
	"strings"
	"sync"
)

// Recent is the bucket as the built-in capturer writes it, remembering the
// manifests and links files it put (not the WACZ files) so that the level
// report, which reads them back to admit the level, gets the bytes this
// process just wrote without another round trip to S3. Every other read
// goes to the bucket. Only a Put that S3 acknowledged is remembered; the
// oldest entries are forgotten past Max (default 4,096), so a report of a
// level larger than that reads the rest from S3 as before.
type Recent struct {
	Objects Objects
	Max     int

	mu    sync.Mutex
	m     map[string][]byte
	order []string
}

var _ Objects = (*Recent)(nil)

// DefaultRecent is Recent.Max when unset: more than the largest level a
// crawl's page budget allows at its defaults, a few megabytes of JSON.
const DefaultRecent = 4096

func recentKey(bucket, key string) string { return bucket + "\x00" + key }

// remembered says which objects Recent keeps: the small JSON sidecars the
// level report reads.
func remembered(key string) bool {
	return strings.HasSuffix(key, ".result.json") || strings.HasSuffix(key, ".links.json")
}

// Put writes to the bucket and, once it took the object, remembers a
// sidecar.
func (r *Recent) Put(ctx context.Context, bucket, key, contentType string, body []byte) error {
	if err := r.Objects.Put(ctx, bucket, key, contentType, body); err != nil {
		return err
	}
	if !remembered(key) {
		return nil
	}
	limit := r.Max
	if limit <= 0 {
		limit = DefaultRecent
	}
	k := recentKey(bucket, key)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string][]byte{}
	}
	if _, ok := r.m[k]; !ok {
		r.order = append(r.order, k)
	}
	r.m[k] = append([]byte(nil), body...)
	for len(r.order) > limit {
		delete(r.m, r.order[0])
		r.order = r.order[1:]
	}
	return nil
}

// Get answers a remembered sidecar from memory, anything else from the
// bucket.
func (r *Recent) Get(ctx context.Context, bucket, key string) ([]byte, error) {
	r.mu.Lock()
	body, ok := r.m[recentKey(bucket, key)]
	r.mu.Unlock()
	if ok {
		return append([]byte(nil), body...), nil
	}
	return r.Objects.Get(ctx, bucket, key)
}
