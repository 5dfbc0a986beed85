package capture

import (
	"context"
	"fmt"
	"sync"
)

// Turn is one capture's place among captures of a crawl that are written
// at the same time and share their files: a crawl host's pages, each
// written while the host's next page is fetched (Options.Turn,
// Options.After).
//
// A capture asks the crawl's payload index only once the capture before it
// has decided what it stores in full, and it may refer to those payloads
// before they are in the index (they are pending). A capture that refers to
// a pending payload writes its manifest (what makes a capture count) only
// after the capture holding that payload has written its own; when that
// capture could not be written whole, this one writes no manifest and
// Store's error says so, and the page is to be captured again. So a
// revisit never names a record that is not in a written archive, whatever
// fails, and a process that dies leaves no manifest naming one.
type Turn struct {
	asked, done chan struct{}
	once        sync.Once
	// pending, set before asked closes: the payloads of this capture and
	// of the captures before it that were not yet written when it asked,
	// by digest, each with the capture storing it.
	pending map[string]pendingPayload
	// ok, set before done closes: the capture's objects and manifest were
	// written, so its payloads may be referred to.
	ok bool
}

type pendingPayload struct {
	StoredPayload
	by *Turn
}

// NewTurn returns a capture's turn, to be given to its Store (Options.Turn)
// and to the Store of the capture written after it (Options.After).
func NewTurn() *Turn {
	return &Turn{asked: make(chan struct{}), done: make(chan struct{})}
}

// settled reports whether t's capture is written (ok) or failed, without
// waiting.
func (t *Turn) settled() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// decided closes asked with what is pending after t's capture: the
// payloads it stores and those of the captures before it still being
// written (once after, the turn before, has decided). It is called once;
// later calls do nothing.
func (t *Turn) decided(after *Turn, stored []StoredPayload) {
	t.once.Do(func() {
		p := map[string]pendingPayload{}
		if after != nil {
			<-after.asked
			for d, v := range after.pending {
				if !v.by.settled() {
					p[d] = v
				}
			}
		}
		for _, s := range stored {
			if _, ok := p[s.Digest]; !ok {
				p[s.Digest] = pendingPayload{s, t}
			}
		}
		t.pending = p
		close(t.asked)
	})
}

// finish closes done with ok (and asked, when Store ended before it
// asked).
func (t *Turn) finish(ok bool) {
	t.decided(nil, nil)
	t.ok = ok
	close(t.done)
}

// withPending is a payload index that also knows the payloads pending
// before a capture: what the index does not know is taken from them, and
// the captures holding those taken are noted.
type withPending struct {
	Payloads
	pending map[string]pendingPayload
	used    map[*Turn]bool
}

func (w *withPending) StoredPayloads(ctx context.Context, crawlID string, digests []string) (map[string]StoredPayload, error) {
	known, err := w.Payloads.StoredPayloads(ctx, crawlID, digests)
	if err != nil {
		return nil, err
	}
	for _, d := range digests {
		if _, ok := known[d]; ok {
			continue
		}
		p, ok := w.pending[d]
		if !ok || (p.by.settled() && !p.by.ok) {
			continue
		}
		if known == nil {
			known = map[string]StoredPayload{}
		}
		known[d] = p.StoredPayload
		w.used[p.by] = true
	}
	return known, nil
}

// waitFor waits until every capture in used is written; its error names
// the first that could not be.
func waitFor(used map[*Turn]bool) error {
	for t := range used {
		<-t.done
		if !t.ok {
			return fmt.Errorf("capture: a capture written at the same time, whose files this one refers to, could not be written")
		}
	}
	return nil
}
