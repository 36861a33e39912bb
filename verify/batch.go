package verify

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"relayout/catalog"
	"relayout/internal/membudget"
)

// Batched fetches: the blocks of a band read whole (or by their rows of
// the band) go to a catalog.BatchSource in file order, a few lists of
// neighbours at once, so that many small blocks cost a few coalesced reads
// and no goroutine, buffer or budget request each:
//
//	band's blocks (file order)  b0 b1 b2 b3 | b4 b5 b6 b7 | ...   (one part per job)
//	part: one Acquire (run limit + largest decoded codec block),
//	      ReadBlocks -> fn(block bytes) -> placement.compare
//
// Blocks spanning several bands that cannot be cut by rows keep the
// per-block path (the block cache).

// batchRead caps one coalesced read of a part (bytes).
const batchRead = 4 << 20

// batched is one block of a part: the block to read (b, or its rows of the
// band) and the region of the band it is compared over.
type batched struct {
	b      *catalog.Block
	region catalog.Box
}

// batchable splits the band's blocks into those read whole or by rows
// (returned first, in the order of blocks: file order) and the rest.
func (r *run) batchable(a *catalog.Array, band catalog.Box, blocks []int, span []int) (batch []batched, rest []int) {
	for _, i := range blocks {
		b := &a.Blocks[i]
		if len(band.Lower) == 0 {
			batch = append(batch, batched{b, catalog.Box{Lower: []int64{}, Count: []int64{}}})
			r.count(a, b)
			continue
		}
		region, ok := b.Box.Intersect(band)
		if !ok {
			continue
		}
		if span[i] == 1 {
			batch = append(batch, batched{b, region})
			r.count(a, b)
			continue
		}
		if t, ok := trimRows(b, a.DType, band.Lower[0], band.Lower[0]+band.Count[0]); ok {
			r.stats.trimmed.Add(1)
			batch = append(batch, batched{t, region})
			r.count(a, b)
			continue
		}
		rest = append(rest, i)
	}
	return batch, rest
}

// batches starts on g the reads and comparisons of batch, cut into at most
// Jobs parts of neighbouring blocks; each mismatch goes to keep. Blocks st
// stages are placed there instead of compared.
func (r *run) batches(ctx context.Context, g *errgroup.Group, bs catalog.BatchSource, a *catalog.Array, band catalog.Box,
	batch []batched, st *staging, out []byte, mem *membudget.Budget, keep func(*mismatch)) {
	if len(batch) == 0 {
		return
	}
	var total int64
	for _, e := range batch {
		total += e.b.Length
	}
	parts := min(r.opts.Jobs, len(batch))
	per := max(total/int64(parts), 1)
	for lo := 0; lo < len(batch); {
		hi, n := lo, int64(0)
		for hi < len(batch) && (hi == lo || n < per) {
			n += batch[hi].b.Length
			hi++
		}
		part, first := batch[lo:hi], lo
		lo = hi
		g.Go(func() error { return r.part(ctx, bs, a, band, part, first, st, out, mem, keep) })
	}
}

// part reads the blocks of part (batch[first:first+len(part)]) with one
// ReadBlocks call and compares each, or places it in st.
func (r *run) part(ctx context.Context, bs catalog.BatchSource, a *catalog.Array, band catalog.Box,
	part []batched, first int, st *staging, out []byte, mem *membudget.Budget, keep func(*mismatch)) error {
	select {
	case r.workers <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.workers }()
	// The budget: the largest coalesced read and the largest decoded block
	// of a codec (raw blocks are slices of the read).
	var raw, decoded int64
	blocks := make([]*catalog.Block, len(part))
	for k, e := range part {
		blocks[k] = e.b
		raw += e.b.Length
		if len(e.b.Codecs) != 0 || e.b.Inline != nil {
			decoded = max(decoded, newPlacement(e.b, a.DType).storedBytes())
		}
	}
	limit := min(raw, batchRead)
	for _, b := range blocks {
		limit = max(limit, b.Length) // a run holds at least one block
	}
	n := limit + decoded
	if err := mem.Acquire(ctx, n); err != nil {
		return err
	}
	defer mem.Release(n)
	var g []int64 // the stage's scratch index
	if st != nil {
		g = make([]int64, len(band.Lower))
	}
	var compareNs int64
	t0 := time.Now()
	err := bs.ReadBlocks(catalog.WithReadLimit(ctx, limit), blocks, a.DType, func(k int, data []byte) error {
		t1 := time.Now()
		b := part[k].b
		seg := -1
		if st != nil {
			seg = st.plan.at[first+k]
		}
		var p placement
		if seg >= 0 {
			p = st.plan.segs[seg].p
		} else {
			p = newPlacement(b, a.DType)
		}
		if want := p.storedBytes(); int64(len(data)) != want {
			return catalog.Corrupt("", b.File, b.Offset, "block %v: decoded %d bytes, want %d for stored shape %v of %v",
				b.Box, len(data), want, b.StoredShape(), a.DType)
		}
		if seg >= 0 {
			st.plan.place(seg, data, st.buf, g)
		} else if m := p.compare(data, part[k].region, band, out); m != nil {
			keep(m)
		}
		compareNs += int64(time.Since(t1))
		return nil
	})
	r.stats.fetchNs.Add(int64(time.Since(t0)) - compareNs)
	r.stats.compareNs.Add(compareNs)
	return err
}
