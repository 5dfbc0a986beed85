package archive

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

// each runs work for every item, at most n at once (8 when n <= 0), and
// hands each result to record, one call at a time (record needs no lock),
// then to progress when set. The first error of work stops the run and is
// returned; results already recorded stay recorded.
func each[T, R any](ctx context.Context, n int, items []T, work func(context.Context, T) (R, error), record func(T, R), progress func()) error {
	if n <= 0 {
		n = 8
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(n)
	for _, it := range items {
		g.Go(func() error {
			r, err := work(gctx, it)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if progress != nil {
				progress()
			}
			record(it, r)
			return nil
		})
	}
	return g.Wait()
}
