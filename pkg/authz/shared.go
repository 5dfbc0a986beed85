package authz

import (
	"context"
	"errors"

	"golang.org/x/sync/errgroup"
)

// writer is the one primitive both implementations provide: a single atomic
// Write call, optionally asking the server to ignore tuples already in the
// desired state (on_duplicate / on_missing: ignore, OpenFGA ≥ 1.10).
type writer interface {
	write(ctx context.Context, writes, deletes []Tuple, ignore bool) error
}

// writeIdempotent delivers writes and deletes where tuples already in the
// desired state are not errors. It asks the server to ignore them in one
// atomic call; a server that does not know the option answers "already
// exists" for the whole batch, and then every tuple is written on its own
// (writes first, then deletes) so an existing tuple never hides a new one.
func writeIdempotent(ctx context.Context, w writer, writes, deletes []Tuple) error {
	err := w.write(ctx, writes, deletes, true)
	if err == nil || !errors.Is(err, ErrAlreadyInState) {
		return err
	}
	return writeOneByOne(ctx, w, writes, deletes)
}

// writeOneByOne is the fallback of writeIdempotent: one call per tuple,
// "already exists" and "does not exist" ignored, any other error returned.
func writeOneByOne(ctx context.Context, w writer, writes, deletes []Tuple) error {
	for _, t := range writes {
		if err := w.write(ctx, []Tuple{t}, nil, false); err != nil && !errors.Is(err, ErrAlreadyInState) {
			return err
		}
	}
	for _, t := range deletes {
		if err := w.write(ctx, nil, []Tuple{t}, false); err != nil && !errors.Is(err, ErrAlreadyInState) {
			return err
		}
	}
	return nil
}

// batchInChunks answers reqs in chunks of at most size, a few chunks at a
// time, keeping the answers in the order asked.
func batchInChunks(ctx context.Context, reqs []CheckRequest, size int, one func(context.Context, []CheckRequest) ([]bool, error)) ([]bool, error) {
	out := make([]bool, len(reqs))
	if len(reqs) == 0 {
		return out, nil
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for start := 0; start < len(reqs); start += size {
		end := min(start+size, len(reqs))
		g.Go(func() error {
			got, err := one(ctx, reqs[start:end])
			if err != nil {
				return err
			}
			copy(out[start:end], got)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}
