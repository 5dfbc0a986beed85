package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestBatcherSharesStatements: calls that arrive while a batch is written
// go out together in the next one, a key never twice in one batch, a
// refused batch is answered call by call, and a call whose context ended
// is left out.
func TestBatcherSharesStatements(t *testing.T) {
	t.Parallel()
	var (
		b       batcher[testCall]
		mu      sync.Mutex
		batches [][]testCall
		hold    = make(chan struct{})
		first   = true
	)
	write := func(_ context.Context, items []testCall) ([]bool, error) {
		mu.Lock()
		batches = append(batches, append([]testCall(nil), items...))
		wait := first
		first = false
		mu.Unlock()
		if wait {
			<-hold // the first batch is written while the others queue
		}
		oks := make([]bool, len(items))
		for i, it := range items {
			if it == "bad" {
				return nil, errors.New("refused")
			}
			oks[i] = it != "closed"
		}
		return oks, nil
	}
	type answer struct {
		ok  bool
		err error
	}
	answers := map[string]answer{}
	var amu sync.Mutex
	var wg sync.WaitGroup
	call := func(ctx context.Context, item string) {
		defer wg.Done()
		ok, err := b.do(ctx, testCall(item), write)
		amu.Lock()
		answers[item] = answer{ok, err}
		amu.Unlock()
	}
	wg.Add(1)
	go call(context.Background(), "lead")
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(batches) == 1 })
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	// Queued in this order while the first batch is written.
	for i, it := range []string{"gone", "a", "closed", "c", "a-again", "bad"} {
		ctx := context.Background()
		if it == "gone" {
			ctx = cancelled
		}
		wg.Add(1)
		go call(ctx, it)
		waitFor(t, func() bool { b.mu.Lock(); defer b.mu.Unlock(); return len(b.queue) == i+1 })
	}
	close(hold)
	wg.Wait()

	// The calls queued during the first write go out together up to the
	// repeated key; the batch holding "bad" is refused and answered call by
	// call; "gone" is in none.
	wantBatches := "[[lead] [a closed c] [a-again bad] [a-again] [bad]]"
	if got := fmt.Sprint(batches); got != wantBatches {
		t.Errorf("batches %s, want %s", got, wantBatches)
	}
	want := map[string]answer{"lead": {true, nil}, "a": {true, nil}, "a-again": {true, nil}, "closed": {false, nil}, "c": {true, nil}}
	for it, w := range want {
		if got := answers[it]; got != w {
			t.Errorf("%s answered %+v, want %+v", it, got, w)
		}
	}
	if a := answers["bad"]; a.err == nil {
		t.Errorf("bad answered %+v, want its own error", a)
	}
	if a := answers["gone"]; !errors.Is(a.err, context.Canceled) {
		t.Errorf("gone answered %+v, want context.Canceled", a)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.writing || len(b.queue) != 0 {
		t.Errorf("after the calls: writing %v, %d queued", b.writing, len(b.queue))
	}
}

// testCall is a call whose key is itself, but "a-again"'s is "a".
type testCall string

func (c testCall) key() string {
	if c == "a-again" {
		return "a"
	}
	return string(c)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
