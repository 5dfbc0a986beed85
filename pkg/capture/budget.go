package capture

import (
	"io"
	"sync"
)

// cut says which cap shortened a body.
type cut int

const (
	cutNone cut = iota
	cutBody     // MaxBodyBytes
	cutPage     // MaxPageBytes
)

// budget is one capture's share of the caps: bytes left for the whole page
// and responses left besides the page itself. It is shared by the
// goroutines that record responses, so bytes are granted first come, first
// served, and the page never keeps more than MaxPageBytes.
type budget struct {
	maxBody int64

	mu        sync.Mutex
	pageLeft  int64
	resources int // responses that may still be recorded
}

func newBudget(cfg Config) *budget {
	return &budget{maxBody: cfg.MaxBodyBytes, pageLeft: cfg.MaxPageBytes, resources: cfg.MaxResources}
}

// takeResource claims one subresource slot; false when the count cap is
// reached.
func (b *budget) takeResource() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.resources <= 0 {
		return false
	}
	b.resources--
	return true
}

// grant returns how many of want bytes the body may keep, already counted
// against the page, given that the body already holds have bytes.
func (b *budget) grant(have, want int64) (int64, cut) {
	allowed, why := want, cutNone
	if room := b.maxBody - have; allowed > room {
		allowed, why = max(room, 0), cutBody
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if allowed > b.pageLeft {
		allowed, why = b.pageLeft, cutPage
	}
	b.pageLeft -= allowed
	return allowed, why
}

// exhausted reports whether no body byte is left for the page.
func (b *budget) exhausted() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pageLeft <= 0
}

// read reads r to its end or to the first cap, whichever comes first. The
// bytes read past a cap are not kept (nor read further: the caller closes
// the body, which ends the download).
// sizeHint (the Content-Length, or -1) presizes the body, which is then
// read in place: one allocation and no copy when the length is right.
func (b *budget) read(r io.Reader, sizeHint int64) ([]byte, cut, error) {
	size := int64(512)
	if sizeHint >= 0 {
		// One byte more than announced, so the read that finds the end
		// does not have to grow the body first.
		size = min(sizeHint, b.maxBody) + 1
	}
	body := make([]byte, 0, size)
	for {
		if len(body) == cap(body) {
			body = append(body, 0)[:len(body)] // grow, as io.ReadAll does
		}
		n, err := r.Read(body[len(body):cap(body)])
		if n > 0 {
			keep, why := b.grant(int64(len(body)), int64(n))
			body = body[:len(body)+int(keep)]
			if why != cutNone {
				return body, why, nil
			}
		}
		if err == io.EOF {
			return body, cutNone, nil
		}
		if err != nil {
			return body, cutNone, err
		}
	}
}

// keep cuts a whole body (as the browser hands it over) to what the caps
// allow.
func (b *budget) keep(body []byte) ([]byte, cut) {
	n, why := b.grant(0, int64(len(body)))
	return body[:n], why
}
