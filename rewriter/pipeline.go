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
	var s func(catalog.Box, []byte, struct{}) error
	if sink != nil {
		s = func(slab catalog.Box, buf []byte, _ struct{}) error { return sink(slab, buf) }
	}
	return streamArrayWith(ctx, src, a, slabs, jobs, nil, s)
}

// streamArrayWith is streamArray with a per-slab step, prep, that runs on the
// workers in parallel after assembly (cutting and encoding chunks, say); its
// result reaches sink with the slab, in slab order.
func streamArrayWith[T any](ctx context.Context, src catalog.Source, a *catalog.Array, slabs []catalog.Box, jobs int,
	prep func(slab catalog.Box, buf []byte) (T, error), sink func(slab catalog.Box, buf []byte, v T) error) (string, error) {
	type slabOut struct {
		buf []byte
		v   T
	}
	fill := leFill(a)
	h := sha256.New()
	err := ordered(ctx, jobs, len(slabs), func(ctx context.Context, i int) (slabOut, error) {
		buf, err := assembleSlab(ctx, src, a, slabs[i], fill)
		if err != nil || prep == nil {
			return slabOut{buf: buf}, err
		}
		v, err := prep(slabs[i], buf)
		return slabOut{buf, v}, err
	}, func(i int, o slabOut) error {
		h.Write(o.buf)
		if sink == nil {
			return nil
		}
		return sink(slabs[i], o.buf, o.v)
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
