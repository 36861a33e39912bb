package rewriter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	"github.com/sourcegraph/conc/stream"

	"relayout/catalog"
)

// ordered runs work(i) for i in [0, n) on at most jobs goroutines and hands
// each result to use(i, v) in index order, on one goroutine at a time, so
// hashing and writing see slabs in row-major order while assembly runs in
// parallel. At most about 2*jobs results are alive at once (conc's stream
// queues jobs+1 finished tasks). The first error of work or use cancels the
// rest and is returned; jobs = 1 runs the same path.
func ordered[T any](ctx context.Context, jobs, n int, work func(context.Context, int) (T, error), use func(int, T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var firstErr error // only touched by callbacks, which run one at a time
	s := stream.New().WithMaxGoroutines(max(jobs, 1))
	for i := 0; i < n && ctx.Err() == nil; i++ {
		s.Go(func() stream.Callback {
			v, err := work(ctx, i)
			return func() {
				if firstErr != nil {
					return
				}
				if err == nil {
					err = use(i, v)
				}
				if err != nil {
					firstErr = err
					cancel()
				}
			}
		})
	}
	s.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// streamArray assembles the slabs of a (which must pass checkArray) on up to
// jobs goroutines and hands them, in slab order, to sink (nil: hash only). It
// returns the hex sha256 of the slabs' bytes, which is the digest of the
// logical array in row-major little-endian order because planner.Slabs cuts
// along dimension 0 in order.
func streamArray(ctx context.Context, src catalog.Source, a *catalog.Array, slabs []catalog.Box, jobs int,
	sink func(slab catalog.Box, buf []byte) error) (string, error) {
	fill := leFill(a)
	h := sha256.New()
	err := ordered(ctx, jobs, len(slabs), func(ctx context.Context, i int) ([]byte, error) {
		return assembleSlab(ctx, src, a, slabs[i], fill)
	}, func(i int, buf []byte) error {
		h.Write(buf)
		if sink == nil {
			return nil
		}
		return sink(slabs[i], buf)
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
