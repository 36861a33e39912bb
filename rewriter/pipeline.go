package rewriter

import (
	"context"
	"encoding/hex"
	"hash"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/conc/stream"
	"golang.org/x/sync/errgroup"

	"relayout/catalog"
	"relayout/internal/membudget"
)

// orderedAdmit runs work(i) for i in [0, n) on at most jobs goroutines and
// hands each result to use(i, v) in index order, on one goroutine at a
// time, so hashing and writing see units in order while assembly runs in
// parallel. The first error of work or use cancels the rest and is
// returned; jobs = 1 runs the same path. Admission control: admit(i) runs on the
// dispatching goroutine, in index order, before task i starts (it charges
// the memory budget and may block); release(i) runs after task i's callback,
// whatever happened. An error from admit stops dispatching and is returned.
func orderedAdmit[T any](ctx context.Context, jobs, n int, admit func(context.Context, int) error, release func(int),
	work func(context.Context, int) (T, error), use func(int, T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var firstErr error // only touched by callbacks, which run one at a time
	var admitErr error // only touched by the dispatching loop
	s := stream.New().WithMaxGoroutines(max(jobs, 1))
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if admit != nil {
			if err := admit(ctx, i); err != nil {
				if ctx.Err() == nil {
					admitErr = err
					cancel()
				}
				break
			}
		}
		s.Go(func() stream.Callback {
			v, err := work(ctx, i)
			return func() {
				if release != nil {
					defer release(i)
				}
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
	if admitErr != nil {
		return admitErr
	}
	return ctx.Err()
}

// hashArray is the pipeline with nothing to write: the digest of a's
// slabs in order (hex; "" with catalog.NoDigest), which is the digest of
// the logical array, row-major little-endian, when the slabs are row-major
// runs of it (rowMajorRun).
func hashArray(ctx context.Context, env pipeEnv, src catalog.Source, a *catalog.Array, slabs []catalog.Box, digest catalog.Digest, jobs int) (string, error) {
	sums, err := streamJoint(ctx, env, src, []*jointPart{{a: a, slabs: slabs, digest: digest}}, singleItems(0, len(slabs)), nil, jobs)
	if err != nil {
		return "", err
	}
	return sums[0], nil
}

// singleItems is n items of one unit each, the units of part in order.
func singleItems(part, n int) [][]jointRef {
	items := make([][]jointRef, n)
	for i := range items {
		items[i] = []jointRef{{part, i}}
	}
	return items
}

// pipeEnv is what the pipeline charges and reports to: the memory budget
// (nil: unlimited), the largest coalesced read and the Monitor (nil: none).
type pipeEnv struct {
	mem       *memBudget
	readLimit int64
	mon       *Monitor
}

// pipelineDepth is the most units alive at once in a budgeted pipeline:
// jobs being assembled and one being written and hashed. Deeper queues add
// no throughput (the stages share the same cores) but touch more memory,
// which on the virtual machines measured made the kernel's copies in and
// out of the page cache markedly slower (bench/RESULTS.md, 2026-12-01).
func pipelineDepth(jobs int) int { return jobs + 1 }

// prefetchAhead is how many slabs past the one being admitted have their
// reads announced to the kernel (catalog.Source.Prefetch) when admitted: the
// disk then has more requests in flight than there are workers. Measured on
// the 1 GiB bench input (bench/RESULTS.md, 2026-12-01): --chunks 4x4x4
// 2.41 -> 2.05 s (its units read blocks in runs of ~330 KiB), contiguous
// tiles 1.94 -> 1.71 s, 256 MiB 0.57 -> 0.52 s; 2 and 4 ran alike.
const prefetchAhead = 2

// slabReads are the reads of an array's slabs, each listed once (when first
// needed) and dropped once assembled; admit also announces the reads of the
// slabs up to prefetchAhead past the one admitted to the source, if it can
// prefetch. admit runs on the dispatching goroutine, of and drop on the
// worker that has slab i.
type slabReads struct {
	blocks    *blockIndex
	slabs     []catalog.Box
	reads     [][]*catalog.Block
	src       catalog.Source // announces reads ahead (Prefetch)
	announced int            // the last slab whose reads were announced
	// blocksIn and bytesIn: slab i's blocks and their stored bytes, noted
	// when its reads are dropped (its unit's record).
	blocksIn []int
	bytesIn  []int64
}

func newSlabReads(src catalog.Source, a *catalog.Array, slabs []catalog.Box) *slabReads {
	return &slabReads{blocks: indexBlocks(a), slabs: slabs, reads: make([][]*catalog.Block, len(slabs)), src: src, announced: -1,
		blocksIn: make([]int, len(slabs)), bytesIn: make([]int64, len(slabs))}
}

func (r *slabReads) of(i int) []*catalog.Block {
	if r.reads[i] == nil {
		r.reads[i] = r.blocks.reads(r.slabs[i])
	}
	return r.reads[i]
}

// drop forgets slab i's reads once assembled, noting their count and bytes.
func (r *slabReads) drop(i int) {
	var n int64
	for _, b := range r.reads[i] {
		n += b.Length
	}
	r.blocksIn[i], r.bytesIn[i] = len(r.reads[i]), n
	r.reads[i] = nil
}

func (r *slabReads) admit(ctx context.Context, i int) {
	for k := max(i, r.announced+1); k <= min(i+prefetchAhead, len(r.slabs)-1); k++ {
		r.src.Prefetch(ctx, r.of(k))
		r.announced = k
	}
}

// jointPart is one dataset's share of a joint pipeline (streamJoint): its
// array, its units in order, and what the engine does with each of them.
type jointPart struct {
	a     *catalog.Array
	slabs []catalog.Box
	// keep: slab bytes kept beyond the buffer per slab (1: the encoded
	// chunks cut from it); digest: of the slabs in order (NoDigest: none);
	// prepWrites: prep writes the slab (not counted as encoding).
	keep       int64
	digest     catalog.Digest
	prepWrites bool
	prep       func(slab catalog.Box, buf []byte) (unitOut, error)
	sink       func(slab catalog.Box, buf []byte, v unitOut) error

	// bands: the digest is gathered band by band (units not row-major
	// runs of the array); nil: each unit is hashed as it comes.
	bands *bandDigest

	reads *slabReads
	fill  []byte
	h     hash.Hash
}

// jointRef is unit slab of part part.
type jointRef struct{ part, slab int }

// streamJoint is the engine's ordered pipeline over the units of several
// datasets at once: items[i] lists units of parts (each part's units in
// order over the items) that are admitted, assembled, prepped, written and
// hashed together. An item of several units reads its blocks in one
// pass over the union of their reads in file order (assembleJoint, when the
// one ReadBlocks call reads blocks of several arrays):
// where the datasets' blocks interleave in the input, each byte is read
// once. Every buffer and the item's reads are
// charged to env.mem before they exist; at most pipelineDepth(jobs) items
// are alive at once, and at most jobs units or files (of any items) are
// being read and assembled at once. gaps (nil: none) tells an item's pass
// which gaps hold other items' blocks. It returns each part's digest ("" with NoDigest).
func streamJoint(ctx context.Context, env pipeEnv, src catalog.Source, parts []*jointPart, items [][]jointRef, gaps *jointIndex, jobs int) ([]string, error) {
	in := input{src, env.readLimit}
	batch := src.Caps().Coalesces
	for _, p := range parts {
		if p.reads == nil {
			p.reads = newSlabReads(src, p.a, p.slabs)
		}
		p.fill = leFill(p.a)
		p.h = p.digest.New() // nil: no digest
	}
	// Flat state per unit: ref k of item i is unit base[i]+k.
	base := make([]int, len(items)+1)
	for i, it := range items {
		base[i+1] = base[i] + len(it)
	}
	n := base[len(items)]
	keep := make([]int64, n)
	bufs := make([][]byte, n)
	transient := make([]int64, len(items))
	depth := make(chan struct{}, pipelineDepth(jobs))
	asm := make(chan struct{}, max(jobs, 1))   // units being assembled, over all items
	preps := make(chan struct{}, max(jobs, 1)) // units being encoded or written, over all items
	var admit func(context.Context, int) error
	if env.mem != nil {
		admit = func(ctx context.Context, i int) error {
			select {
			case depth <- struct{}{}:
			case <-ctx.Done():
				return ctx.Err()
			}
			// The item's reads: what its largest unit's reads need at
			// once, and with several units one more run (the union's runs
			// mix the datasets' blocks), for each unit or file read at once.
			files := map[string]bool{}
			for _, r := range items[i] {
				p := parts[r.part]
				p.reads.admit(ctx, r.slab)
				transient[i] = max(transient[i], readNeed(p.reads.of(r.slab), p.a.DType, max(env.readLimit, 1), batch))
				for _, b := range p.reads.of(r.slab) {
					files[b.File] = true
				}
			}
			if n := len(items[i]); n > 1 {
				if batch {
					transient[i] += max(env.readLimit, 1)
				}
				transient[i] *= int64(min(max(n, len(files)), max(jobs, 1)))
			}
			for k, r := range items[i] {
				p := parts[r.part]
				u := base[i] + k
				sz := p.slabs[r.slab].Elements() * int64(p.a.DType.Size)
				keep[u] = sz * (1 + p.keep)
				extra := keep[u] - sz
				if k == 0 {
					extra += transient[i]
				}
				b, err := env.mem.acquireBuf(ctx, sz, extra)
				if err != nil {
					for j := base[i]; j < u; j++ {
						releaseUnitBuf(env.mem, bufs[j], keep[j])
						bufs[j], keep[j] = nil, 0
					}
					if k > 0 {
						env.mem.release(transient[i])
					}
					transient[i] = 0
					<-depth // not admitted: release is not called for it
					return err
				}
				if b != nil { // a kept buffer, charged for its cap
					bufs[u] = b
					keep[u] += int64(cap(b)) - sz
				}
			}
			return nil
		}
	}
	// The band buffers of parts whose digest is gathered band by band,
	// charged for the pipeline's length.
	for _, p := range parts {
		if p.bands == nil || p.h == nil {
			continue
		}
		if env.mem != nil {
			if err := env.mem.acquire(ctx, p.bands.bytes); err != nil {
				return nil, err
			}
		}
		b, err := membudget.Map(p.bands.bytes)
		if err != nil {
			if env.mem != nil {
				env.mem.release(p.bands.bytes)
			}
			return nil, err
		}
		p.bands.buf = b
		defer func() {
			membudget.Unmap(b)
			p.bands.buf = nil
			if env.mem != nil {
				env.mem.release(p.bands.bytes)
			}
		}()
	}
	// One hasher per part, fed in the part's unit order: the datasets'
	// digests (and band copies) proceed in parallel, and a unit's buffer is
	// freed once written and hashed.
	type hashJob struct {
		h    hash.Hash
		slab int
		buf  []byte
		done func()
	}
	hashqs := make([]chan hashJob, len(parts))
	var hashers sync.WaitGroup
	for pi, p := range parts {
		q := make(chan hashJob, len(p.slabs))
		hashqs[pi] = q
		hashers.Go(func() {
			for j := range q {
				switch {
				case j.h == nil:
				case p.bands != nil:
					p.bands.add(j.h, j.slab, p.slabs[j.slab], j.buf)
				default:
					j.h.Write(j.buf)
				}
				j.done()
			}
		})
	}
	refs := make([]atomic.Int32, n)
	left := make([]atomic.Int32, len(items)) // units of item i not yet freed
	for i, it := range items {
		left[i].Store(int32(len(it)))
	}
	free := func(i, u int) { // the last of write and hash to finish with unit u of item i
		if refs[u].Add(-1) != 0 {
			return
		}
		if env.mem != nil {
			releaseUnitBuf(env.mem, bufs[u], keep[u])
			keep[u] = 0
		}
		bufs[u] = nil
		if left[i].Add(-1) == 0 && env.mem != nil {
			<-depth
		}
	}
	type out struct {
		bufs [][]byte
		v    []unitOut
	}
	// unitBuf is unit k of item i's buffer: its kept one, or a new one.
	unitBuf := func(i, k int) (buf []byte, dirty bool, err error) {
		r, u := items[i][k], base[i]+k
		if bufs[u] != nil {
			return bufs[u], true, nil
		}
		sz := parts[r.part].slabs[r.slab].Elements() * int64(parts[r.part].a.DType.Size)
		if env.mem == nil {
			buf = make([]byte, sz)
		} else if buf, err = membudget.Map(sz); err != nil {
			return nil, false, err
		}
		bufs[u] = buf
		return buf, false, nil
	}
	// assembleEach assembles item i's units one by one, each reading its
	// own blocks, in parallel (at most jobs units at once, over all items).
	assembleEach := func(ctx context.Context, i int, out [][]byte) error {
		var g errgroup.Group
		for k, r := range items[i] {
			g.Go(func() error {
				select {
				case asm <- struct{}{}:
				case <-ctx.Done():
					return ctx.Err()
				}
				defer func() { <-asm }()
				p := parts[r.part]
				buf, dirty, err := unitBuf(i, k)
				if err != nil {
					return err
				}
				out[k] = buf
				err = assembleInto(ctx, env.mon, in, p.a, p.slabs[r.slab], p.reads.of(r.slab), p.fill, buf, dirty, p.reads.blocks.disjoint())
				p.reads.drop(r.slab)
				return err
			})
		}
		return g.Wait()
	}
	// assembleItem assembles item i's units with one pass over the union
	// of their reads (assembleJoint).
	assembleItem := func(ctx context.Context, i int, out [][]byte) error {
		us := make([]jointUnit, len(items[i]))
		for k, r := range items[i] {
			p := parts[r.part]
			buf, dirty, err := unitBuf(i, k)
			if err != nil {
				return err
			}
			out[k] = buf
			us[k] = jointUnit{a: p.a, slab: p.slabs[r.slab], reads: p.reads.of(r.slab), fill: p.fill, buf: buf, dirty: dirty, disjoint: p.reads.blocks.disjoint()}
		}
		var foreign func(file string, from, to int64) bool
		if gaps != nil {
			foreign = func(file string, from, to int64) bool { return gaps.foreign(i, file, from, to) }
		}
		err := assembleJoint(ctx, env.mon, in, us, asm, foreign)
		for _, r := range items[i] {
			parts[r.part].reads.drop(r.slab)
		}
		return err
	}
	err := orderedAdmit(ctx, jobs, len(items), admit, func(i int) {
		for k := range items[i] {
			u := base[i] + k
			if refs[u].Load() == 0 { // never reached the sink: nothing hashing it
				refs[u].Store(1)
			}
			free(i, u)
		}
	}, func(ctx context.Context, i int) (o out, err error) {
		it := items[i]
		o.bufs, o.v = make([][]byte, len(it)), make([]unitOut, len(it))
		if len(it) > 1 || len(parts) > 1 {
			err = assembleItem(ctx, i, o.bufs)
		} else {
			err = assembleEach(ctx, i, o.bufs)
		}
		if env.mem != nil { // the reads are done with
			env.mem.release(transient[i])
			transient[i] = 0
		}
		if err != nil {
			return o, err
		}
		// The units' preps (encoding, writes at fixed places) in
		// parallel, at most jobs at once over all the items in flight.
		var g errgroup.Group
		for k, r := range it {
			p := parts[r.part]
			if p.prep == nil {
				continue
			}
			g.Go(func() error {
				select {
				case preps <- struct{}{}:
				case <-ctx.Done():
					return ctx.Err()
				}
				defer func() { <-preps }()
				t := time.Now()
				v, err := p.prep(p.slabs[r.slab], o.bufs[k])
				o.v[k] = v
				if env.mon != nil && !p.prepWrites {
					env.mon.since(stageEncode, t)
				}
				return err
			})
		}
		return o, g.Wait()
	}, func(i int, o out) error {
		for k, r := range items[i] {
			p, u := parts[r.part], base[i]+k
			refs[u].Store(2) // the hasher and the release after this callback
			hashqs[r.part] <- hashJob{p.h, r.slab, o.bufs[k], func() { free(i, u) }}
			if p.sink == nil {
				continue
			}
			if err := p.sink(p.slabs[r.slab], o.bufs[k], o.v[k]); err != nil {
				return err
			}
			if env.mon != nil {
				env.mon.done.Add(int64(len(o.bufs[k])))
			}
		}
		return nil
	})
	for _, q := range hashqs {
		close(q)
	}
	hashers.Wait()
	if err != nil {
		return nil, err
	}
	sums := make([]string, len(parts))
	for pi, p := range parts {
		if p.h != nil {
			sums[pi] = hex.EncodeToString(p.h.Sum(nil))
		}
	}
	return sums, nil
}

// releaseUnitBuf gives back a unit's charge of keep bytes, keeping its
// buffer b (charged for its cap) for reuse when it fits.
func releaseUnitBuf(m *memBudget, b []byte, keep int64) {
	if b != nil && int64(cap(b)) <= keep {
		m.release(keep - int64(cap(b)))
		m.keepBuf(b) // still charged
		return
	}
	m.release(keep)
	membudget.Unmap(b)
}
