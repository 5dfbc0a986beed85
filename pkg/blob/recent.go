package blob

import (
	"bytes"
	"strings"
	"sync"
	"time"
)

// Recent keeps copies of the WACZ objects this client put last, so that a
// reader in the same process — the search indexer, which reads an archive
// moments after its capture was registered — takes it from memory instead
// of asking S3 for it again (a HEAD and two ranged GETs per archive). It
// holds at most maxBytes, drops what is older than maxAge, and forgets an
// object once it is taken or deleted; a miss reads S3 as before.
type Recent struct {
	maxBytes int64
	maxAge   time.Duration
	now      func() time.Time

	mu    sync.Mutex
	size  int64
	items map[recentKey]*recentItem
	order []recentKey // oldest first; keys taken or replaced are skipped
	// wanted counts the readers that take from it (Want): with none, it
	// keeps nothing (a process that does not index: another serve holds
	// the index, or the command writes but does not index).
	wanted int
}

type recentKey struct{ bucket, key string }

type recentItem struct {
	body []byte
	at   time.Time
}

// NewRecent returns a cache of at most maxBytes of objects, each kept for
// at most maxAge.
func NewRecent(maxBytes int64, maxAge time.Duration) *Recent {
	return &Recent{maxBytes: maxBytes, maxAge: maxAge, now: time.Now, items: map[recentKey]*recentItem{}}
}

// DefaultRecentBytes and DefaultRecentAge bound the recent objects a
// process keeps: a few seconds of a crawl's captures, at most a minute.
const (
	DefaultRecentBytes = 64 << 20
	DefaultRecentAge   = time.Minute
)

// keeps says whether key is an object Recent keeps: a WACZ.
func keeps(key string) bool { return strings.HasSuffix(key, ".wacz") }

// keep stores a copy of body (the caller may reuse its buffer), replacing
// what was kept for the key; an object larger than an eighth of the cache
// is not kept.
func (r *Recent) keep(bucket, key string, body []byte) {
	if r == nil || !keeps(key) {
		return
	}
	k := recentKey{bucket, key}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.wanted == 0 {
		return
	}
	r.dropLocked(k)
	if int64(len(body)) > r.maxBytes/8 {
		return
	}
	r.expireLocked()
	for r.size+int64(len(body)) > r.maxBytes && len(r.order) > 0 {
		r.dropLocked(r.order[0])
		r.order = r.order[1:]
	}
	r.items[k] = &recentItem{body: bytes.Clone(body), at: r.now()}
	r.size += int64(len(body))
	r.order = append(r.order, k)
}

// take returns the object kept for the key and forgets it.
func (r *Recent) take(bucket, key string) ([]byte, bool) {
	if r == nil {
		return nil, false
	}
	k := recentKey{bucket, key}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireLocked()
	it, ok := r.items[k]
	if !ok {
		return nil, false
	}
	r.dropLocked(k)
	return it.body, true
}

// forget drops what is kept for the key.
func (r *Recent) forget(bucket, key string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropLocked(recentKey{bucket, key})
}

// Want says a reader of this process will take what is kept (the search
// indexer, for as long as it runs here); Recent keeps objects only while
// one wants them. The release it returns ends that reader's want (once;
// it may be called more than once), and with the last one, everything
// kept is dropped.
func (r *Recent) Want() (release func()) {
	if r == nil {
		return func() {}
	}
	r.mu.Lock()
	r.wanted++
	r.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.wanted--; r.wanted == 0 {
				r.items, r.order, r.size = map[recentKey]*recentItem{}, nil, 0
			}
		})
	}
}

// Len reports how many objects are kept and their bytes.
func (r *Recent) Len() (objects int, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.items), r.size
}

func (r *Recent) dropLocked(k recentKey) {
	if it, ok := r.items[k]; ok {
		r.size -= int64(len(it.body))
		delete(r.items, k)
	}
}

// expireLocked drops the objects older than maxAge from the front of the
// order, and compacts the order when most of it names nothing.
func (r *Recent) expireLocked() {
	cut := r.now().Add(-r.maxAge)
	for len(r.order) > 0 {
		k := r.order[0]
		if it, ok := r.items[k]; ok && it.at.After(cut) {
			break
		}
		r.dropLocked(k)
		r.order = r.order[1:]
	}
	if len(r.order) > 64 && len(r.order) > 2*len(r.items) {
		live := make([]recentKey, 0, len(r.items))
		seen := make(map[recentKey]bool, len(r.items))
		for _, k := range r.order {
			if _, ok := r.items[k]; ok && !seen[k] {
				seen[k] = true
				live = append(live, k)
			}
		}
		r.order = live
	}
}
