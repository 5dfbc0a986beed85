package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capture-ledger/ledgerctl/pkg/capture"
	"github.com/capture-ledger/ledgerctl/pkg/crawl"
	"github.com/capture-ledger/ledgerctl/pkg/crawl/runner"
)

// TestHostFreedOnceFetched: with the built-in capturer's two steps, a
// host's next page is captured while the previous page's objects are
// still being written, the politeness record holds the capture from the
// host's side (its end before the next one's start), and every result is
// kept.
func TestHostFreedOnceFetched(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := threePageHost(t)
	capt := newCounter(e)
	var (
		mu       sync.Mutex
		first    string    // the first level-1 page written
		written  time.Time // when its objects were written
		fetching = make(chan string, 8)
	)
	capt.before = func(_ context.Context, u string) error {
		if u != a.URL+"/" {
			fetching <- u
		}
		return nil
	}
	capt.after = func(_ context.Context, u string) error {
		if u == a.URL+"/" {
			return nil
		}
		mu.Lock()
		isFirst := first == ""
		if isFirst {
			first = u
		}
		mu.Unlock()
		if !isFirst {
			return nil
		}
		// The first page's writing waits for another page of the host to
		// be fetched: a runner that keeps the host until the objects are
		// written never gets there.
		deadline := time.After(20 * time.Second)
		for {
			select {
			case v := <-fetching:
				if v == u {
					continue
				}
				mu.Lock()
				written = time.Now()
				mu.Unlock()
				return nil
			case <-deadline:
				return errors.New("no other page of the host was fetched while " + u + " was written")
			}
		}
	}
	id := crawlToTheEnd(t, e, a, capt, 4)
	for i := range 3 {
		if n := capt.count(fmt.Sprintf("%s/p%d", a.URL, i)); n != 1 {
			t.Errorf("p%d captured %d times, want once (a page whose writing waited was captured again)", i, n)
		}
	}
	kept, err := e.store.RunnerResults(e.ctx, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	var spans [][2]time.Time
	var firstEnd time.Time
	for _, k := range kept {
		if k.Result == nil || k.SubmittedAt == nil || k.FinishedAt == nil {
			t.Fatalf("%s has no kept result with its times", k.URL)
		}
		spans = append(spans, [2]time.Time{*k.SubmittedAt, *k.FinishedAt})
		if k.URL == first {
			firstEnd = *k.FinishedAt
		}
	}
	if len(spans) != 3 {
		t.Fatalf("%d results kept at depth 1, want 3", len(spans))
	}
	// No two captures of the host overlap, as the host saw them.
	for i, s := range spans {
		for j, o := range spans {
			if i != j && s[0].Before(o[1]) && o[0].Before(s[1]) {
				t.Errorf("captures %v and %v of the host overlap", s, o)
			}
		}
	}
	// The first page's capture ended, for the host, before its objects
	// were written.
	if firstEnd.IsZero() || !firstEnd.Before(written) {
		t.Errorf("%s is recorded as ending at %v, its objects written at %v: want the end of the fetch", first, firstEnd, written)
	}
}

// TestCaptureNotWrittenIsMadeAgain: a capture whose objects could not be
// written (the bucket refused them) is made again, and the crawl ends with
// every page.
func TestCaptureNotWrittenIsMadeAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := threePageHost(t)
	capt := newCounter(e)
	var once sync.Once
	capt.after = func(_ context.Context, u string) error {
		var err error
		if u == a.URL+"/p1" {
			once.Do(func() { err = errors.New("the bucket took no manifest") })
		}
		return err
	}
	crawlToTheEnd(t, e, a, capt, 4)
	if n := capt.count(a.URL + "/p1"); n != 2 {
		t.Errorf("p1 captured %d times, want twice (once more after its objects were not written)", n)
	}
	for _, p := range []string{"/p0", "/p2"} {
		if n := capt.count(a.URL + p); n != 1 {
			t.Errorf("%s captured %d times, want once", p, n)
		}
	}
}

// threePageHost serves a front page linking /p0, /p1 and /p2.
func threePageHost(t testing.TB) *host {
	a := newHost(t)
	a.page("/", "home", `<a href="/p0">0</a> <a href="/p1">1</a> <a href="/p2">2</a>`)
	for i := range 3 {
		a.page(fmt.Sprintf("/p%d", i), "p", "")
	}
	return a
}

// crawlToTheEnd crawls a's front page at depth 1, delay 0, with capt, and
// checks the crawl succeeded with want pages captured; it returns the
// crawl's id.
func crawlToTheEnd(t *testing.T, e *env, a *host, capt runner.Capturer, want int) string {
	t.Helper()
	levels := make(chan runner.LevelEvent, 4)
	svc, r := e.service(capt, runner.Config{OnLevel: func(ev runner.LevelEvent) { levels <- ev }})
	maxDepth, delay := 1, 0
	id, err := svc.Start(e.ctx, alice, crawl.StartRequest{Seeds: []string{a.URL + "/"}, MaxDepth: &maxDepth, PerHostDelayMs: &delay})
	if err != nil {
		t.Fatal(err)
	}
	runUntilDone(t, r, levels, time.Minute)
	v, err := svc.Get(e.ctx, alice, id)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != crawl.StateSucceeded || v.PagesCaptured != want {
		t.Fatalf("crawl %s with %d pages captured, want succeeded with %d", v.State, v.PagesCaptured, want)
	}
	return id
}

// refuseHeldWACZ is a bucket whose second WACZ put (the first page of the
// level after the seed's) waits for the next WACZ put and is then refused,
// once: a capture fails while a later one of the host, written at the same
// time, refers to its files.
type refuseHeldWACZ struct {
	capture.Objects
	mu             sync.Mutex
	puts           int
	arrived, later chan struct{}
}

func (o *refuseHeldWACZ) Put(ctx context.Context, bucket, key, ct string, body []byte) error {
	if strings.HasSuffix(key, ".wacz") {
		o.mu.Lock()
		o.puts++
		n := o.puts
		o.mu.Unlock()
		switch n {
		case 2:
			close(o.arrived)
			select {
			case <-o.later:
			case <-time.After(20 * time.Second):
			}
			return errors.New("the bucket refused the WACZ")
		case 3:
			close(o.later)
		}
	}
	return o.Objects.Put(ctx, bucket, key, ct, body)
}

// TestWrittenTogetherRefersOnlyToWrittenArchives: a host's captures are
// written at the same time and share a stylesheet. The first page's WACZ
// is refused after the second page, written beside it, decided to refer to
// its stylesheet: both pages are captured again, the crawl ends with every
// page, and every revisit in the crawl's archives names one of them.
func TestWrittenTogetherRefersOnlyToWrittenArchives(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := newHost(t)
	a.file("/style.css", "text/css", []byte(sharedStyle))
	a.page("/", "home", `<a href="/p0">0</a> <a href="/p1">1</a> <a href="/p2">2</a>`)
	for i := range 3 {
		a.page(fmt.Sprintf("/p%d", i), "p", `<link rel="stylesheet" href="/style.css">`)
	}
	capt := newCounter(e)
	objs := &refuseHeldWACZ{Objects: e.blob, arrived: make(chan struct{}), later: make(chan struct{})}
	capt.inner.Objects, capt.inner.Payloads = objs, e.runnerStore()
	capt.before = func(ctx context.Context, u string) error {
		if u == a.URL+"/p1" && capt.count(u) == 0 {
			// p1 is fetched once p0's WACZ is being put: it is written
			// beside p0 and refers to p0's stylesheet.
			select {
			case <-objs.arrived:
			case <-time.After(20 * time.Second):
				return errors.New("p0's WACZ was never put")
			}
		}
		return nil
	}
	id := crawlToTheEnd(t, e, a, capt, 4)
	for _, p := range []string{"/p0", "/p1"} {
		if n := capt.count(a.URL + p); n != 2 {
			t.Errorf("%s captured %d times, want twice (its capture, or one it referred to, was not written)", p, n)
		}
	}
	names, files := e.crawlWACZs(id, 4)
	admitted := map[string]bool{}
	for _, n := range names {
		admitted[n] = true
	}
	revisits := 0
	for _, name := range names {
		for _, line := range strings.Split(warcText(t, files[name]), "\r\n") {
			if c, ok := strings.CutPrefix(line, "WARC-Refers-To-Container: "); ok {
				revisits++
				if !admitted[c] {
					t.Errorf("%s has a revisit of %s, which is not one of the crawl's archives %v", name, c, names)
				}
			}
		}
	}
	if revisits == 0 {
		t.Error("no archive refers to another's stylesheet: the test proves nothing")
	}
}
