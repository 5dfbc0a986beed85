package capture

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// putLog is an uploader that records the order of its puts; hold, when
// set, is asked before each put and may wait or fail it.
type putLog struct {
	Collect
	hold func(name string) error

	mu    sync.Mutex
	order []string
}

func (p *putLog) Put(ctx context.Context, name, ct string, body []byte) (string, error) {
	if p.hold != nil {
		if err := p.hold(name); err != nil {
			return "", err
		}
	}
	p.mu.Lock()
	p.order = append(p.order, name)
	p.mu.Unlock()
	return p.Collect.Put(ctx, name, ct, body)
}

func (p *putLog) index(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, n := range p.order {
		if n == name {
			return i
		}
	}
	return -1
}

// fetchTwo fetches the shared site's two pages as two captures of one
// crawl.
func fetchTwo(t *testing.T) (first, second *Fetched) {
	t.Helper()
	s := sharedSite(t)
	e := NewHTTP(localConfig())
	t.Cleanup(func() { e.Close() })
	crawl := NewTaskID()
	var err error
	if first, err = Fetch(context.Background(), e, Job{TaskID: NewTaskID(), CorrelationID: crawl, URL: s.URL + "/one"}); err != nil {
		t.Fatal(err)
	}
	if second, err = Fetch(context.Background(), e, Job{TaskID: NewTaskID(), CorrelationID: crawl, URL: s.URL + "/two"}); err != nil {
		t.Fatal(err)
	}
	return first, second
}

type stored struct {
	out *Outcome
	err error
}

// together is two captures of the shared site's pages written at once,
// the second after the first in the series.
type together struct {
	first, second *Fetched
	a, b          stored
	idx           *memPayloads
	up            *putLog
}

// writtenTogether fetches the two pages and writes them at once; hold is
// asked before each put, with secondWACZ closed once the second capture's
// WACZ is being put.
func writtenTogether(t *testing.T, hold func(w *together, secondWACZ <-chan struct{}, name string) error) *together {
	t.Helper()
	w := &together{idx: &memPayloads{}, up: &putLog{}}
	w.first, w.second = fetchTwo(t)
	secondWACZ := make(chan struct{})
	w.up.hold = func(name string) error {
		if name == w.second.Job.WACZName() {
			close(secondWACZ)
		}
		return hold(w, secondWACZ, name)
	}
	t1, t2 := NewTurn(), NewTurn()
	var wg sync.WaitGroup
	wg.Go(func() {
		w.a.out, w.a.err = w.first.Store(context.Background(), w.up, Options{Payloads: w.idx, Turn: t1})
	})
	wg.Go(func() {
		w.b.out, w.b.err = w.second.Store(context.Background(), w.up, Options{Payloads: w.idx, Turn: t2, After: t1})
	})
	wg.Wait()
	return w
}

// TestTurnsWrittenTogether: two captures of a crawl written at the same
// time share their files as if written one after the other: the second's
// WACZ is uploaded while the first's manifest is not yet written, holds
// revisits of the first's stylesheet and logo, and its manifest is written
// after the first's.
func TestTurnsWrittenTogether(t *testing.T) {
	t.Parallel()
	w := writtenTogether(t, func(w *together, secondWACZ <-chan struct{}, name string) error {
		if name == w.first.Job.ManifestName() {
			// The first capture counts only once the second's WACZ is
			// on its way: both are written at once.
			select {
			case <-secondWACZ:
			case <-time.After(20 * time.Second):
				return errors.New("the second WACZ was not written while the first capture was")
			}
		}
		return nil
	})
	first, second, a, b, idx, up := w.first, w.second, w.a, w.b, w.idx, w.up
	if a.err != nil || !a.out.OK() || b.err != nil || !b.out.OK() {
		t.Fatalf("first: %v %+v; second: %v %+v", a.err, a.out.Failure, b.err, b.out.Failure)
	}
	warc := warcOf(t, b.out)
	if b.out.Dedup.Revisits != 3 || !strings.Contains(warc, "WARC-Refers-To-Container: "+first.Job.WACZName()+"\r\n") {
		t.Errorf("the second capture: %+v; want 3 revisits, of the first WACZ's stylesheet and logo", b.out.Dedup)
	}
	if strings.Contains(warc, strings.Repeat("p { margin: 0; }\n", 200)) {
		t.Error("the second WACZ stores the stylesheet again")
	}
	if m1, m2 := up.index(first.Job.ManifestName()), up.index(second.Job.ManifestName()); m1 < 0 || m2 < m1 {
		t.Errorf("puts %v: the second manifest must come after the first", up.order)
	}
	if idx.remembered != 2 {
		t.Errorf("%d payloads in the index, want the first capture's 2", idx.remembered)
	}
}

// TestTurnAfterAFailedWriteCountsNothing: when the first capture's WACZ
// cannot be written, the second, which refers to its files, writes no
// manifest and says why (its page is to be captured again); nothing is
// offered to the index.
func TestTurnAfterAFailedWriteCountsNothing(t *testing.T) {
	t.Parallel()
	w := writtenTogether(t, func(w *together, secondWACZ <-chan struct{}, name string) error {
		if name == w.first.Job.WACZName() {
			<-secondWACZ // the second has decided to refer to it
			return errors.New("bucket said no")
		}
		return nil
	})
	second, a, b, idx, up := w.second, w.a, w.b, w.idx, w.up
	if a.err != nil || a.out.OK() {
		t.Fatalf("first: %v %+v; want its failed upload in its manifest", a.err, a.out.Failure)
	}
	if b.err == nil || !strings.Contains(b.err.Error(), "could not be written") {
		t.Fatalf("second: %v %+v; want an error saying a capture it refers to was not written", b.err, b.out.Failure)
	}
	if b.out.Dedup.Revisits == 0 {
		t.Error("the second capture referred to nothing of the first: the test proves nothing")
	}
	if i := up.index(second.Job.ManifestName()); i >= 0 {
		t.Errorf("puts %v: the second capture's manifest was written", up.order)
	}
	if idx.remembered != 0 {
		t.Errorf("%d payloads offered", idx.remembered)
	}
}
