package postgres

import (
	"context"
	"sync"
	"time"
)

// batcher writes the calls that arrive while one batch is being written as
// the next batch: one statement and one commit for all of them instead of
// one each. A lone call is written at once (nothing waits for company), so
// it costs one round trip as before; under load (ten hosts of a crawl
// each starting and keeping captures) the calls of the same moment share
// their statement. The zero value is ready.
//
// A caller still gets its own answer and its own error: when a batch of
// more than one fails, its calls are written one by one, so one bad call
// does not fail the others.
type batcher[T keyed] struct {
	mu      sync.Mutex
	queue   []*batchCall[T]
	writing bool
}

// keyed is a call that writes one row, named by its key: two calls of one
// key never share a statement (a statement cannot write one row twice), the
// later waits for the next batch.
type keyed interface{ key() string }

type batchCall[T keyed] struct {
	ctx  context.Context
	item T
	ok   bool
	err  error
	done chan struct{}
}

// maxBatch bounds the calls one statement carries.
const maxBatch = 256

// batchTimeout bounds one batch's statement: the batch outlives the caller
// that started it (others wait on it too), so it is not bound to a caller's
// context.
const batchTimeout = 30 * time.Second

// do queues item and waits for its answer. write writes a batch and answers
// each call, in order (a batcher is always given the same write); a call
// whose context ended before its batch was written is left out of it.
func (b *batcher[T]) do(ctx context.Context, item T, write func(context.Context, []T) ([]bool, error)) (bool, error) {
	c := &batchCall[T]{ctx: ctx, item: item, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	if !b.writing {
		b.writing = true
		go b.run(write)
	}
	b.mu.Unlock()
	select {
	case <-c.done:
		return c.ok, c.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// run writes batches until the queue is empty.
func (b *batcher[T]) run(write func(context.Context, []T) ([]bool, error)) {
	for {
		batch := b.take()
		if batch == nil {
			return
		}
		b.write(batch, write)
	}
}

// take removes the next batch from the queue: the calls still waiting, up
// to maxBatch and up to the first key already in it. nil (and the writer
// stopped) when the queue is empty.
func (b *batcher[T]) take() []*batchCall[T] {
	b.mu.Lock()
	defer b.mu.Unlock()
	var batch []*batchCall[T]
	seen := map[string]bool{}
	n := 0
	for ; n < len(b.queue) && len(batch) < maxBatch; n++ {
		c := b.queue[n]
		if c.ctx.Err() != nil {
			c.err = c.ctx.Err()
			close(c.done)
			continue
		}
		k := c.item.key()
		if seen[k] {
			break
		}
		seen[k] = true
		batch = append(batch, c)
	}
	b.queue = b.queue[n:]
	if len(batch) == 0 && len(b.queue) == 0 {
		b.queue = nil
		b.writing = false
		return nil
	}
	return batch
}

func (b *batcher[T]) write(batch []*batchCall[T], write func(context.Context, []T) ([]bool, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	items := make([]T, len(batch))
	for i, c := range batch {
		items[i] = c.item
	}
	oks, err := write(ctx, items)
	if err != nil && len(batch) > 1 {
		// One call may be what the statement refused: each its own.
		for _, c := range batch {
			one, err := write(ctx, []T{c.item})
			c.err = err
			if err == nil {
				c.ok = one[0]
			}
			close(c.done)
		}
		return
	}
	for i, c := range batch {
		c.err = err
		if err == nil {
			c.ok = oks[i]
		}
		close(c.done)
	}
}
