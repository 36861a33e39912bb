package verify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"relayout/catalog"
	"relayout/internal/chunkindex"
	"relayout/internal/h5"
	"relayout/internal/membudget"
)

// A sparse array's output (the manifest's digest_of is "stored chunks",
// catalog.DigestStoredChunks: a netCDF-4 variable of 2^40 elements with one
// chunk written) is checked over chunks, never over its logical extent,
// which band by band would be terabytes of fill values read through HDF5:
//
//	chunk grid of the output dataset
//	+--+--+--+--+--+-- ... --+--+
//	|AT|A |T |  |  |   ...   |  |   A: allocated (the file's chunk index)
//	+--+--+--+--+--+-- ... --+--+   T: touched by an input block (our own
//	 read, compared, hashed if A     computation from the blocks' boxes)
//	                                 blank: neither: unallocated, so HDF5
//	                                 reads it as the dataset's fill value
//
// Every chunk that is allocated or touched is read through the library and
// compared like a band: each input block's elements in it, and its other
// elements against the fill value (holes); an allocated chunk that no block
// touches, even of fill values alone, breaks the promise that holes cost
// nothing. Every other element is in an unallocated chunk, which the
// library reads as the fill value, checked to be the input's (openMember);
// one element of such a chunk is read to show it. The digest is over the allocated chunks, as DigestStoredChunks
// defines it, computed here from the bytes read and compared: the writer's
// code is not used, only the definition.
//
// Memory: the chunk sets and the runs of chunks read at once (consecutive
// along the grid's last axis, at most maxBand bytes or one chunk), in
// proportion to the chunks, not to the shape.

// sparse checks m, the output of a sparse array, as above.
func (r *run) sparse(ctx context.Context, m *member) error {
	a, k, info := m.a, m.k, m.info
	if info.Layout != "chunked" || len(info.Chunk) != m.rank || m.rank == 0 {
		return difff("%s: manifest says its digest is over stored chunks, %s:%s is %s %v", where(k), m.ref.v.File, m.ref.d.Path, info.Layout, info.Chunk)
	}
	rank, chunk := m.rank, info.Chunk
	grid := make([]int64, rank)
	for d := range rank {
		grid[d] = (a.Shape[d] + chunk[d] - 1) / chunk[d]
	}
	key := func(lower []int64) int64 {
		var n int64
		for d := range rank {
			n = n*grid[d] + lower[d]/chunk[d]
		}
		return n
	}
	boxOf := func(n int64) catalog.Box {
		b := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
		for d := rank - 1; d >= 0; d-- {
			b.Lower[d] = n % grid[d] * chunk[d]
			b.Count[d] = min(chunk[d], a.Shape[d]-b.Lower[d])
			n /= grid[d]
		}
		return b
	}
	stored, err := r.allocated(m, grid, key)
	if err != nil {
		return err
	}
	// The blocks meeting each touched chunk.
	touched := map[int64][]int{}
	lo, hi := make([]int64, rank), make([]int64, rank)
blocks:
	for i := range a.Blocks {
		b := &a.Blocks[i].Box
		for d := range rank {
			l, h := max(b.Lower[d], 0), min(b.Lower[d]+b.Count[d], a.Shape[d])-1
			if h < l {
				continue blocks
			}
			lo[d], hi[d] = l/chunk[d], h/chunk[d]
		}
		at := slices.Clone(lo)
		for {
			var n int64
			for d := range rank {
				n = n*grid[d] + at[d]
			}
			touched[n] = append(touched[n], i)
			d := rank - 1
			for ; d >= 0; d-- {
				if at[d]++; at[d] <= hi[d] {
					break
				}
				at[d] = lo[d]
			}
			if d < 0 {
				break
			}
		}
	}
	keys := slices.Collect(maps.Keys(touched))
	for n := range stored {
		if _, ok := touched[n]; !ok {
			keys = append(keys, n)
		}
	}
	slices.Sort(keys)

	sr, err := m.f.OpenSlabReader(m.ref.d.Path, m.dt, h5.NoChunkCache)
	if err != nil {
		return fmt.Errorf("verify: output %s: %w", where(k), err)
	}
	defer sr.Close()
	mem := membudget.Overcommit(r.lim.VerifyShare)
	chunkBytes := m.size
	for _, c := range chunk {
		chunkBytes *= c
	}
	perRun := max(maxBand/chunkBytes, 1)
	last := rank - 1
	// The runs, each with the blocks meeting it (once each), and how many
	// runs each block meets: one over several is fetched once, kept from
	// its first run to its last (blockCache), not once a run.
	type chunkRun struct {
		i, j   int // keys[i:j]: consecutive along the last axis, in one row of the grid
		blocks []int
	}
	var runs []chunkRun
	span := map[int]int{}
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j] == keys[j-1]+1 && keys[j]/grid[last] == keys[i]/grid[last] && int64(j-i) < perRun {
			j++
		}
		var bs []int
		for _, n := range keys[i:j] {
			bs = append(bs, touched[n]...)
		}
		slices.Sort(bs)
		bs = slices.Compact(bs)
		for _, b := range bs {
			span[b]++
		}
		runs = append(runs, chunkRun{i, j, bs})
		i = j
	}
	m.cache = &blockCache{entries: map[int]*cached{}}
	defer m.cache.drop(mem)
	var out []byte
	var reported int64 // progress: the chunks' bytes, then the holes' at the end
	for _, cr := range runs {
		run := keys[cr.i:cr.j]
		band := boxOf(run[0])
		band.Count[last] = min(int64(len(run))*chunk[last], a.Shape[last]-band.Lower[last])
		if n := band.Elements() * m.size; int64(cap(out)) < n {
			out = make([]byte, n)
		} else {
			out = out[:n]
		}
		if err := sr.Read(band.Lower, band.Count, out); err != nil {
			return fmt.Errorf("verify: output %s: %w", where(k), err)
		}
		first, err := r.sparseBand(ctx, m, band, cr.blocks, span, out, mem)
		if err != nil {
			return err
		}
		if first != nil {
			return m.mismatchErr(first)
		}
		for _, n := range run {
			_, isStored := stored[n]
			if _, isTouched := touched[n]; isStored && !isTouched {
				return difff("%s: chunk at %s of %s:%s is stored, but no input block touches it (holds only the fill value): a sparse array stores its touched chunks alone",
					where(k), formatIndex(boxOf(n).Lower), m.ref.v.File, m.ref.d.Path)
			}
		}
		if m.h != nil {
			for _, n := range run {
				if _, ok := stored[n]; ok {
					catalog.HashStoredChunk(m.h, out, band, boxOf(n), m.size)
				}
			}
		}
		r.progress(a.Var, band.Elements()*m.size)
		reported += band.Elements() * m.size
	}
	if err := r.sparseHole(m, keys, grid, boxOf); err != nil {
		return err
	}
	r.progress(a.Var, a.Elements()*m.size-reported)
	return r.digest(k, m.ref, m.h)
}

// sparseBand compares band (a run of chunks) of m's output, out, with the
// blocks bs meeting it and its holes with the fill value: the first
// difference, row-major, or nil. A block meeting several runs (span) is
// taken from m's block cache.
func (r *run) sparseBand(ctx context.Context, m *member, band catalog.Box, bs []int, span map[int]int, out []byte, mem *membudget.Budget) (*mismatch, error) {
	var first *mismatch
	for _, i := range bs {
		b := &m.a.Blocks[i]
		region, ok := b.Box.Intersect(band)
		if !ok {
			continue
		}
		r.count(m.a, b)
		var mm *mismatch
		if span[i] > 1 {
			data, p, err := m.cache.get(ctx, r, m.a, i, span[i], mem)
			if err != nil {
				return nil, err
			}
			mm = p.compare(data, region, band, out)
			m.cache.done(i, mem)
		} else {
			var err error
			if mm, err = r.fetchCompare(ctx, m.a, b, region, band, out, mem); err != nil {
				return nil, err
			}
		}
		if mm != nil && (first == nil || before(mm.index, first.index)) {
			first = mm
		}
	}
	hole, err := r.holes(m.a, band, bs, out, m.recorded)
	if err != nil {
		return nil, fmt.Errorf("verify: input %s: %w", where(m.k), err)
	}
	if hole != nil && (first == nil || before(hole.index, first.index)) {
		first = hole
	}
	return first, nil
}

// allocated is the set of m's allocated chunks (grid keys), from the
// file's chunk index parsed natively (linear in the chunks), else, for an
// index that parser does not read, from the library.
func (r *run) allocated(m *member, grid []int64, key func([]int64) int64) (map[int64]struct{}, error) {
	set := map[int64]struct{}{}
	add := func(off []int64) error {
		if len(off) != len(grid) {
			return fmt.Errorf("chunk at %v in a dataset of rank %d", off, len(grid))
		}
		for d, o := range off {
			if o < 0 || o%m.info.Chunk[d] != 0 || o/m.info.Chunk[d] >= grid[d] {
				return fmt.Errorf("chunk at %v off the grid of %v", off, m.info.Chunk)
			}
		}
		set[key(off)] = struct{}{}
		return nil
	}
	f, err := os.Open(m.f.Path())
	if err != nil {
		return nil, fmt.Errorf("verify: output: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("verify: output: %w", err)
	}
	err = chunkindex.List(f, fi.Size(), m.info.ObjAddr, func(c chunkindex.Chunk) error { return add(c.Offset) })
	if errors.Is(err, catalog.ErrUnsupported) {
		clear(set)
		err = m.f.Chunks(m.ref.d.Path, func(c h5.Chunk) error { return add(c.Offset) })
	}
	if err != nil {
		return nil, fmt.Errorf("verify: output %s: %s:%s: chunk index: %w", where(m.k), m.ref.v.File, m.ref.d.Path, err)
	}
	return set, nil
}

// sparseHole reads the first element of the first chunk that is neither
// allocated nor touched (keys, sorted, are those that are), if any: it
// must be the fill value recorded, as every element of such chunks.
func (r *run) sparseHole(m *member, keys, grid []int64, boxOf func(int64) catalog.Box) error {
	total := int64(1)
	for _, g := range grid {
		total *= g
	}
	hole := int64(len(keys)) // the first key missing from keys
	for i, n := range keys {
		if n != int64(i) {
			hole = int64(i)
			break
		}
	}
	if hole >= total || m.recorded == nil {
		return nil
	}
	b := boxOf(hole)
	one := slices.Repeat([]int64{1}, m.rank)
	got := make([]byte, m.size)
	if err := m.f.ReadHyperslab(m.ref.d.Path, b.Lower, one, m.dt, got); err != nil {
		return fmt.Errorf("verify: output %s: %w", where(m.k), err)
	}
	if !bytes.Equal(got, m.recorded) {
		return m.mismatchErr(holeAt(b.Lower, got, m.recorded))
	}
	return nil
}
