package rewriter

import (
	"context"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"relayout/catalog"
	"relayout/internal/limits"
	"relayout/planner"
)

// The execution engine. A job (Prepare) is a list of output datasets, each
// of one kind, and a list of work units (boxes of a dataset) assigned to
// shards. Every unit of every kind goes through the one ordered pipeline
// (streamJoint): admitted in order against the one memory budget
// (memBudget, Options.MaxMem, at most Jobs+1 units alive), its reads
// announced ahead (catalog.Prefetcher), assembled on up to Jobs workers,
// then written, hashed and journaled in order:
//
//	kind        worker (after assembly)        ordered sink            nothing else
//	contiguous  (unit digest), pwrite at Addr  -                       -
//	chunks      pwrite(v) each chunk at the    -                       -
//	            address the chunk index lists
//	parts       cut and encode chunks          append to the part file JoinParts: H5Dwrite_chunk
//	merged      (unit digest)                  pwrite at Addr, or at
//	            the cuboid dataset's address
//
// Only compressed and sparse (partly covered: unwritten chunks take no
// bytes) chunked datasets go through part files. The digest of a dataset
// (Plan.Digest of the logical array, row-major little-endian) is taken
// where digestSite chooses, by the dataset's kind and its units (its
// table gives the reasons): by the pipeline when the units are row-major
// runs of the array, or gathered band by band from the units in memory
// when they come band by band (tiles, boxes of chunks; banddigest.go) and the band buffers fit the budget, else read back from
// the file (contiguous tiles, chunk rows), else (encoded chunks, cuboids)
// from a read-only pass over the input. An in-memory job asks for it (one
// shard holds every unit); sharded jobs journal each unit's digest instead
// and commit (job's CheckUnits, through ReadBack) hashes the joined output.
// Whether a job's pipeline takes digests at all is package job's decision
// (planDigests).

// Dataset kinds (Dataset.Kind).
const (
	kindContiguous = "contiguous"
	kindChunks     = "chunks" // raw chunks allocated when the file is prepared
	kindParts      = "parts"  // encoded chunks via the part files and JoinParts
	kindMerged     = "merged"
)

// JobCuboid is one cuboid dataset of a partially covered merged array.
type Cuboid struct {
	Lower []int64 `json:"lower"`
	Count []int64 `json:"count"`
	Addr  int64   `json:"addr"`
}

// kind is d.Kind, or what a job from before kinds meant.
func (d *Dataset) kind() string {
	switch {
	case d.Kind != "":
		return d.Kind
	case d.Chunk != nil:
		return kindParts
	}
	return kindContiguous
}

// StoredBlocks is how many blocks d's data is stored as, but for the
// chunks of kindParts units (their records list them): every chunk of
// kindChunks, each cuboid dataset of a merged array (or its one dataset),
// one contiguous dataset. The report's blocks_out.
func (d *Dataset) StoredBlocks() int {
	switch d.kind() {
	case kindParts:
		return 0
	case kindChunks:
		return int(product(chunkGrid(d.Shape, d.Chunk)))
	case kindMerged:
		return max(len(d.Cuboids), 1)
	}
	return 1
}

// UnitRecord is what the engine records of one finished unit: its
// digest, where its encoded chunks went, what it cost. A journaled shard's
// records go to its Journal (package job writes them to the shard's
// journal file), an in-memory job's stay in memory.
type UnitRecord struct {
	Unit      int        `json:"u"`
	Sum       string     `json:"sha,omitempty"` // digest (Plan.Digest) of the unit's logical bytes (row-major little-endian)
	Chunks    []ChunkRef `json:"c,omitempty"`
	PartEnd   int64      `json:"pe,omitempty"` // part file length after this unit
	Nanos     int64      `json:"ns,omitempty"`
	BlocksIn  int        `json:"bi,omitempty"`
	ReadBytes int64      `json:"rb,omitempty"`
	Written   int64      `json:"wb,omitempty"`
}

// ChunkRef locates one encoded chunk a shard wrote to its part file.
type ChunkRef struct {
	Offset []int64 `json:"o"` // chunk's first element in the dataset
	Pos    int64   `json:"p"` // byte position in the part file
	Len    int64   `json:"l"`
}

// Journal takes the record of every unit a journaled shard finishes (the
// shard's journal, package job's). Records may be kept and written in
// batches: before a batch is made durable the journal calls the function
// RewriteShard gave it (SetSync), which makes the data of the batch's
// units durable, so that a record never names data a crash can lose.
// RewriteShard flushes it before it returns, and gives it a nil sync then.
type Journal interface {
	SetSync(sync func() error)
	Add(UnitRecord) error
	Flush() error
}

// memLog keeps the records in memory (an in-memory job: nothing to resume).
type memLog struct{ recs map[int]UnitRecord }

func (l *memLog) SetSync(func() error)   {}
func (l *memLog) Add(r UnitRecord) error { l.recs[r.Unit] = r; return nil }
func (l *memLog) Flush() error           { return nil }

// engine executes one shard's units.
type engine struct {
	store *catalog.Store
	src   catalog.Source
	job   *Plan
	stage string
	part  string // the shard's part file
	opts  Options
	mem   *memBudget // the shard's memory budget (Limits.MaxMem)
	log   Journal
	// unitSums: journal each unit's digest (commit checks the output
	// against them). digests: take each dataset's digest (in memory).
	unitSums, digests bool
	// syncEach: sync the journal's data before its records (a sharded
	// job); an in-memory one syncs each file once when its datasets are done.
	syncEach bool

	partFile *os.File
	partEnd  int64
	files    map[string]*os.File
	dirty    map[*os.File]bool
	sums     map[int]string // dataset -> digest (digests)
	// deferSync: an in-memory job's files are closed unsynced, and synced
	// by SyncStage while the output is verified.
	deferSync bool
	early     *earlySync // Options.SyncEarly of an in-memory job, else nil
	st        ShardStatus
	// bandLeft: what the band buffers of the pipeline being set up may
	// still hold (Limits.BandAllowance, less the largest bandReserve of
	// its arrays so far: bandReserved; the reads of jobs units at once,
	// whichever arrays they are of).
	bandLeft, bandReserved int64
}

func (e *engine) close() {
	e.early.wait() // a failed run: its error is the run's
	for _, f := range e.files {
		f.Close()
	}
	if e.partFile != nil {
		e.partFile.Close()
	}
}

// syncDirty syncs every file written since the last call.
func (e *engine) syncDirty() error {
	for f := range e.dirty {
		t := time.Now()
		err := f.Sync()
		if e.opts.Monitor != nil {
			e.opts.Monitor.since(stageSync, t)
		}
		if err != nil {
			return err
		}
		delete(e.dirty, f)
	}
	return nil
}

// finishFile syncs and closes the prepared file (in memory, after its last
// dataset).
func (e *engine) finishFile(name string) error {
	f := e.files[name]
	if f == nil {
		return nil
	}
	delete(e.files, name)
	var err error
	if !e.deferSync {
		t := time.Now()
		err = f.Sync() // its data and the structure prepare wrote
		if e.opts.Monitor != nil {
			e.opts.Monitor.since(stageSync, t)
		}
	}
	delete(e.dirty, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (e *engine) file(d *Dataset) (*os.File, int64, error) {
	f := e.files[d.File]
	if f == nil {
		var err error
		if f, err = os.OpenFile(filepath.Join(e.stage, "."+d.File+".tmp"), os.O_RDWR, 0); err != nil {
			return nil, 0, fmt.Errorf("rewriter: %s: prepared file: %w", d.Var, err)
		}
		e.files[d.File] = f
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

func (e *engine) partOut() (*os.File, error) {
	if e.partFile == nil {
		f, err := os.OpenFile(e.part, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("rewriter: %w", err)
		}
		if err := f.Truncate(e.partEnd); err != nil { // drop chunks no record names
			f.Close()
			return nil, fmt.Errorf("rewriter: %w", err)
		}
		e.partFile = f
	}
	return e.partFile, nil
}

// env is the pipeline environment of the engine's units: its budget, the
// reads' limit and the Monitor.
func (e *engine) env() pipeEnv {
	return pipeEnv{mem: e.mem, readLimit: e.opts.Limits.ReadLimit, mon: e.opts.Monitor}
}

// checkUnitBudget refuses units that cannot fit the budget one at a time
// with their largest read (twice: a second copy, the encoded chunks or the
// input beside the output).
func checkUnitBudget(l limits.Limits, largest int64, twice bool) error {
	need := largest + l.ReadLimit
	if twice {
		need += largest
	}
	if need > l.MaxMem {
		return fmt.Errorf("work units of %d bytes need %d bytes of buffers each: --max-mem %d is too small; raise it or plan with a smaller --unit-size: %w",
			largest, need, l.MaxMem, catalog.ErrUnsupported)
	}
	return nil
}

// rowMajorRun reports whether boxes, in order, are consecutive row-major
// ranges of an array of shape (so that their bytes, in order, are the
// array's).
func rowMajorRun(shape []int64, boxes []catalog.Box) bool {
	if len(shape) == 0 {
		return len(boxes) <= 1
	}
	strides := rowMajorStrides(shape)
	var next int64
	for _, b := range boxes {
		k := 0
		for k < len(shape)-1 && b.Count[k] == 1 {
			k++
		}
		for d := k + 1; d < len(shape); d++ {
			if b.Lower[d] != 0 || b.Count[d] != shape[d] {
				return false
			}
		}
		var start int64
		for d := range shape {
			start += b.Lower[d] * strides[d]
		}
		if start != next {
			return false
		}
		next = start + b.Elements()
	}
	return next == product(shape)
}

type chunkOut struct {
	off  []int64
	data []byte
}

type unitOut struct {
	sum    string
	chunks []chunkOut
}

// unitGroup is units of dataset di in job order; whole: every unit of it.
type unitGroup struct {
	di    int
	us    []*Unit
	whole bool
}

// pass is one group readied for the pipeline: its part, and what is left
// once its units are written (the digest).
type pass struct {
	part    *jointPart
	finish  func(sum string) error
	cleanup []func()
}

// groups writes the groups (of distinct datasets) through one pipeline:
// their units in items (jointItems), so that datasets whose blocks
// interleave in the input are read once together (interleave.go).
func (e *engine) groups(ctx context.Context, gs []unitGroup) error {
	passes := make([]*pass, 0, len(gs))
	defer func() {
		for _, p := range passes {
			for _, c := range p.cleanup {
				c()
			}
		}
	}()
	parts := make([]*jointPart, len(gs))
	byPart := make([]*pass, len(gs))
	e.bandLeft, e.bandReserved = e.opts.Limits.BandAllowance, 0
	// Datasets whose digest would otherwise need a second pass over the
	// input (encoded chunks, cuboids) are set up first: their band digests
	// come before those that could read the file back instead.
	order := make([]int, 0, len(gs))
	for round := range 2 {
		for i, g := range gs {
			k := e.job.Datasets[g.di].kind()
			if (k == kindParts || k == kindMerged) == (round == 0) {
				order = append(order, i)
			}
		}
	}
	arrays, disjoint, err := e.loadArrays(ctx, gs)
	if err != nil {
		return err
	}
	for _, i := range order {
		g := gs[i]
		p, err := e.setupPass(ctx, g.di, arrays[i], g.us, g.whole)
		arrays[i] = nil // the pass holds it
		if err != nil {
			return err
		}
		passes = append(passes, p)
		byPart[i] = p
		parts[i] = p.part
	}
	// Each part's blocks indexed on a core of its own, beside the items'
	// cut, which needs none of the indexes (351,537 blocks of four arrays:
	// 0.08 s and 0.07 s on one core, before the first read).
	var indexing sync.WaitGroup
	for i, p := range parts {
		indexing.Go(func() {
			p.reads = newSlabReads(e.src, p.a, p.slabs)
			p.reads.blocks.knowDisjoint(disjoint[i])
		})
	}
	items, gaps := jointItems(parts, e.opts.Limits.ItemLimit, e.opts.Limits.ReadLimit, minItemRead)
	indexing.Wait()
	passes = byPart // in part order, for the digests below
	sums, err := streamJoint(ctx, e.env(), e.src, parts, items, gaps, e.opts.Limits.Jobs)
	if err != nil {
		if len(gs) == 1 {
			k := e.job.Datasets[gs[0].di].key()
			return arrayErr(k, err)
		}
		return fmt.Errorf("rewriter: %s: %w", e.groupName(gs), err)
	}
	for i, p := range passes {
		if err := p.finish(sums[i]); err != nil {
			return err
		}
	}
	return nil
}

// groupName names the datasets of gs in an error.
func (e *engine) groupName(gs []unitGroup) string {
	names := make([]string, len(gs))
	for i, g := range gs {
		d := &e.job.Datasets[g.di]
		names[i] = fmt.Sprintf("%s step %d", d.Var, d.Step)
		if d.Level > 0 {
			names[i] += fmt.Sprintf(" level %d", d.Level)
		}
	}
	return strings.Join(names, ", ")
}

// loadArrays reads the arrays of gs from the catalog and checks them
// (checkArray, checkOverlaps: whether each one's blocks are disjoint), up to
// Options.Jobs at once: decoding a catalog's block list costs about half a
// microsecond a block, and the datasets of a joint group (the variables of
// a step) are all needed before their pass starts.
func (e *engine) loadArrays(ctx context.Context, gs []unitGroup) ([]*catalog.Array, []bool, error) {
	arrays, disjoint := make([]*catalog.Array, len(gs)), make([]bool, len(gs))
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(e.opts.Limits.Jobs)
	for i, g := range gs {
		eg.Go(func() error {
			k := e.job.Datasets[g.di].key()
			a, err := e.store.Array(k)
			if err != nil {
				return arrayErr(k, err)
			}
			if err := checkArray(a); err != nil {
				return arrayErr(k, err)
			}
			if disjoint[i], err = checkOverlaps(gctx, e.src, a); err != nil {
				return arrayErr(k, err)
			}
			arrays[i] = a
			return nil
		})
	}
	return arrays, disjoint, eg.Wait()
}

// setupPass readies the units us of dataset di (whole: all of them; a: its
// array, checked by loadArrays) for the pipeline: the prepared file opened,
// each unit's step after assembly (prep) and its ordered write and journal
// record (sink).
func (e *engine) setupPass(ctx context.Context, di int, a *catalog.Array, us []*Unit, whole bool) (*pass, error) {
	ps := &pass{}
	job := e.job
	d := &job.Datasets[di]
	k := d.key()
	var err error
	kind := d.kind()
	if kind == kindMerged {
		a = disjointBlocks(a) // cuboids (and a virtual dataset's sources) must not overlap
	}
	size := int64(a.DType.Size)
	mon := e.opts.Monitor
	boxes := make([]catalog.Box, len(us))
	for i, u := range us {
		boxes[i] = job.box(u)
		if err := job.checkUnit(u, a.Shape); err != nil {
			return nil, arrayErr(k, err)
		}
	}
	if err := checkUnitBudget(e.opts.Limits, job.largestUnit(us), kind == kindParts); err != nil {
		return nil, arrayErr(k, err)
	}
	if r := bandReserve(a, e.opts.Limits.Jobs); r > e.bandReserved {
		e.bandLeft, e.bandReserved = max(0, e.bandLeft-(r-e.bandReserved)), r
	}
	site, bands := e.digestSite(kind, a, boxes, whole)
	env := e.env()
	digest := e.opts.Digest
	if site != digestInOrder && site != digestBands { // the pipeline takes no digest
		digest = catalog.NoDigest
	}
	var keep int64      // bytes kept per unit byte beyond its buffer
	var prepWrites bool // prep writes the unit: not timed as encoding
	if d.Split && mon != nil {
		mon.splits.Add(1)
	}

	var f *os.File
	var fsize int64
	if kind != kindParts {
		if f, fsize, err = e.file(d); err != nil {
			return nil, err
		}
	}
	outside := func(addr, n int64) error {
		if n > 0 && (addr < 0 || addr+n > fsize) {
			return arrayErr(k, fmt.Errorf("%s: data at %d+%d outside the prepared file (%d bytes)", f.Name(), addr, n, fsize))
		}
		return nil
	}
	var back *readbackHash
	var prep func(catalog.Box, []byte) (unitOut, error)
	sumOf := func(buf []byte, o *unitOut) {
		if e.unitSums {
			o.sum = e.opts.Digest.Hex(buf)
		}
	}
	switch kind {
	case kindContiguous:
		if err := outside(d.Addr, product(a.Shape)*size); err != nil {
			return nil, err
		}
		if site == digestReadBack {
			if back, err = startReadbackHash(ctx, f, env.mem, min(e.opts.Limits.ReadLimit, readbackBytes), e.opts.Digest, readBytes(f)); err != nil {
				return nil, arrayErr(k, err)
			}
			ps.cleanup = append(ps.cleanup, back.abort)
		}
		// Written by the worker that assembled the unit (its place in the
		// file is fixed), the units of an item in parallel: the ordered
		// sink only records them, so that writing does not wait its turn.
		prepWrites = true
		prep = func(slab catalog.Box, buf []byte) (unitOut, error) {
			var o unitOut
			sumOf(buf, &o)
			return o, writeBox(f, d.Addr, a.Shape, slab, buf, a.DType.Size, mon)
		}
	case kindMerged:
		if d.Cuboids == nil {
			err = outside(d.Addr, product(a.Shape)*size)
		}
		for _, c := range d.Cuboids {
			if err == nil {
				err = outside(c.Addr, product(c.Count)*size)
			}
		}
		if err != nil {
			return nil, err
		}
	case kindChunks:
		chunk := d.Chunk
		if err := e.opts.checkChunkBudget(chunk, a.DType.Size); err != nil {
			return nil, arrayErr(k, err)
		}
		grid := chunkGrid(a.Shape, chunk)
		chunkBytes := product(chunk) * size
		addrs, err := allocatedChunks(f, d.ObjAddr, grid, chunk, chunkBytes)
		if err != nil {
			return nil, arrayErr(k, err)
		}
		if site == digestChunkRows {
			read := func(h hash.Hash, buf []byte, lo, hi int64) error {
				return hashChunkRows(f, h, buf, a.Shape, chunk, size, addrs, lo, hi)
			}
			if back, err = startReadbackHash(ctx, f, env.mem, e.opts.Limits.ReadLimit, e.opts.Digest, read); err != nil {
				return nil, arrayErr(k, err)
			}
			ps.cleanup = append(ps.cleanup, back.abort)
		}
		prepWrites = true
		zeros := make([]byte, chunk[len(chunk)-1]*size) // padding of edge chunks, only read
		// Short rows: the kernel's cost per vector entry exceeds a copy, so
		// such chunks are cut (cutChunks) and written with one pwrite each.
		gather := chunk[len(chunk)-1]*size < gatherRow && chunkBytes <= gatherChunk
		prep = func(slab catalog.Box, buf []byte) (unitOut, error) {
			var o unitOut
			sumOf(buf, &o)
			if gather {
				return o, cutChunks(buf, slab, a.Shape, chunk, a.DType.Size, func(off []int64, data []byte) error {
					tw := time.Now()
					addr := addrs[chunkIndex(off, chunk, grid)]
					n, err := writeAt(f, data, addr)
					if mon != nil {
						mon.wrote(n, tw)
					}
					if err != nil {
						return fmt.Errorf("%s: writing a chunk at %d: %w", f.Name(), addr, err)
					}
					return nil
				})
			}
			return o, eachChunk(slab, chunk, func(c []int64) error {
				tw := time.Now()
				k := int64(0) // the chunk's index in the grid
				for d := range c {
					k = k*grid[d] + c[d]
				}
				n, err := writeChunkFrom(f, addrs[k], buf, slab, a.Shape, chunk, c, size, zeros)
				if mon != nil {
					mon.wrote(int(n), tw)
				}
				return err
			})
		}
	case kindParts:
		if err := e.opts.checkChunkBudget(d.Chunk, a.DType.Size); err != nil {
			return nil, arrayErr(k, err)
		}
		if _, err := e.partOut(); err != nil {
			return nil, err
		}
		keep = 1 // the chunks cut from a unit
		touched, grid := touchedChunks(a, d.Chunk), chunkGrid(a.Shape, d.Chunk)
		prep = func(slab catalog.Box, buf []byte) (unitOut, error) {
			var o unitOut
			sumOf(buf, &o)
			if slab.Lower[0]%d.Chunk[0] != 0 {
				return o, fmt.Errorf("unit %v not aligned to chunk %v", slab, d.Chunk) // planner bug
			}
			err := cutChunks(buf, slab, a.Shape, d.Chunk, a.DType.Size, func(off []int64, data []byte) error {
				if _, ok := touched[chunkIndex(off, d.Chunk, grid)]; touched != nil && !ok {
					return nil
				}
				enc, err := encodeChunk(data, a.DType.Size, d.Deflate)
				o.chunks = append(o.chunks, chunkOut{append([]int64(nil), off...), enc})
				return err
			})
			return o, err
		}
	}
	if prep == nil {
		prepWrites = true // a unit digest at most: not encoding
		prep = func(_ catalog.Box, buf []byte) (unitOut, error) {
			var o unitOut
			sumOf(buf, &o)
			return o, nil
		}
	}
	var x *blockIndex
	if e.job.mem == nil {
		// Journaled: each unit's record counts the input blocks it needs
		// and their stored bytes (with --digest none too: the manifest's
		// io section of a journaled job sums them).
		x = indexBlocks(a)
	}
	last := time.Now()
	var rowsDone int64 // rows of dimension 0 written whole
	i := 0
	ps.part = &jointPart{a: a, slabs: boxes, keep: keep, digest: digest, prepWrites: prepWrites, prep: prep, bands: bands}
	ps.part.sink = func(slab catalog.Box, buf []byte, o unitOut) error {
		u := us[i]
		i++
		rec := UnitRecord{Unit: u.ID, Sum: o.sum}
		if x != nil {
			x.each(slab, func(b int) {
				rec.BlocksIn++
				rec.ReadBytes += a.Blocks[b].Length
			})
		}
		var err error
		switch kind {
		case kindMerged:
			if d.Cuboids == nil {
				err = writeBox(f, d.Addr, a.Shape, slab, buf, a.DType.Size, mon)
				break
			}
			c := d.Cuboids[u.Cuboid]
			rel := catalog.Box{Lower: make([]int64, len(c.Lower)), Count: slab.Count}
			for d := range rel.Lower {
				rel.Lower[d] = slab.Lower[d] - c.Lower[d]
			}
			err = writeBox(f, c.Addr, c.Count, rel, buf, a.DType.Size, mon)
		case kindParts:
			for _, c := range o.chunks {
				t := time.Now()
				if _, err = writeAt(e.partFile, c.data, e.partEnd); err != nil {
					break
				}
				if mon != nil {
					mon.wrote(len(c.data), t)
				}
				rec.Chunks = append(rec.Chunks, ChunkRef{Offset: c.off, Pos: e.partEnd, Len: int64(len(c.data))})
				e.partEnd += int64(len(c.data))
				rec.Written += int64(len(c.data))
			}
			if e.syncEach {
				e.dirty[e.partFile] = true
			}
		}
		if err != nil {
			return err
		}
		if kind != kindParts {
			e.dirty[f] = true
			rec.Written = int64(len(buf))
			e.early.wrote(f, rec.Written)
		}
		if (kind == kindContiguous || kind == kindChunks) && endsRows(slab, a.Shape) {
			// rows up to this unit's end are all written
			end := slab.Lower[0] + slab.Count[0]
			if kind == kindChunks {
				startWriteback(f, 0, 0) // the chunks are spread over the file
				if back != nil {
					back.add(rowsDone, end)
				}
			} else {
				rowBytes := product(a.Shape[1:]) * size
				off, n := d.Addr+rowsDone*rowBytes, (end-rowsDone)*rowBytes
				startWriteback(f, off, n)
				if back != nil {
					back.add(off, n)
				}
			}
			rowsDone = end
		}
		rec.PartEnd = e.partEnd
		now := time.Now()
		rec.Nanos, last = int64(now.Sub(last)), now
		e.st.Bytes += int64(len(buf))
		return e.log.Add(rec)
	}
	ps.finish = func(sum string) error {
		if site == digestNone {
			return nil
		}
		return e.finishDigest(ctx, di, a, site, back, sum)
	}
	return ps, nil
}

// digestSite is where the engine takes a dataset's digest (Plan.Digest of
// its logical array, row-major little-endian) in a job whose pipeline
// takes the datasets' digests (an in-memory one; package job's
// planDigests decides that).
type digestSite int

const (
	digestNone      digestSite = iota // none taken here
	digestInOrder                     // the pipeline hashes the units in order as they are written
	digestBands                       // gathered band by band from the units in memory (banddigest.go)
	digestReadBack                    // read back from the written file through readbackBytes (write.go)
	digestChunkRows                   // read back chunk row by chunk row (hashChunkRows, chunkwrite.go)
	digestInput                       // a read-only pass over the input in row-major units (finishDigest)
)

// digestSite chooses, in one place, where the digest of dataset kind's
// array a, written as the units boxes (in order; whole: all of its units),
// is taken, and returns the band digest it charged to the pipeline's band
// allowance (e.bandLeft) when it chose digestBands:
//
//	units of the dataset            contiguous  chunks      parts       merged
//	not whole, or no dataset digest none        none        none        none
//	row-major runs of the array     in order    in order    in order    in order
//	band by band, the band fits     read back   bands       bands       bands
//	otherwise                       read back   chunk rows  input       input
//
// Why:
//   - none: a journaled shard journals each unit's digest instead (commit
//     reads the joined output back: ReadBack), a shard holding part of a
//     dataset cannot hash it in order, and --digest none or a verified
//     in-memory job (whose verifier hashes what it compares) want none.
//   - in order: the units' bytes, in order, are the array's: the digest
//     costs the hash alone, beside the write.
//   - bands: a copy of the array's bytes from memory into one band buffer
//     charged to the budget (at most an eighth of it; groups sets up the
//     encoded chunks and cuboids first, so the allowance goes to those
//     that would otherwise need an input pass), where the alternative is
//     reading back or a second pass over the input: issue 19's BP4 448³
//     --no-verify read 1493 MiB in 1051 calls instead of 1613 MiB in 2199
//     (6ee1095).
//   - read back, contiguous tiles: a pread from the page cache costs what
//     the band's copy does, without the band's memory (a band of 448³
//     float64 is 51 MB): peak RSS 657-690 -> 281-292 MB on the same input,
//     reads unchanged (fbff8d3).
//   - chunk rows: raw chunks pwritten straight from the unit buffers,
//     units smaller than a chunk row whose band does not fit: the written
//     chunks are read back from the page cache a chunk row at a time
//     (93eb28f).
//   - input: encoded chunks (the file holds them deflated, and in part
//     files until JoinParts) and cuboids whose band does not fit have no
//     row-major copy to read back: a read-only pass over the input.
func (e *engine) digestSite(kind string, a *catalog.Array, boxes []catalog.Box, whole bool) (digestSite, *bandDigest) {
	if !e.digests || !whole || e.opts.Digest == catalog.NoDigest {
		return digestNone, nil
	}
	if rowMajorRun(a.Shape, boxes) {
		return digestInOrder, nil
	}
	if kind == kindContiguous {
		return digestReadBack, nil
	}
	if bd := newBandDigest(a.Shape, a.DType.Size, boxes); bd != nil && bd.bytes <= e.bandLeft {
		e.bandLeft -= bd.bytes
		return digestBands, bd
	}
	if kind == kindChunks {
		return digestChunkRows, nil
	}
	return digestInput, nil
}

// finishDigest records dataset di's digest once its units are written,
// from where digestSite chose: sum from the pipeline (in order, bands),
// the file read back (back), or a read-only pass over the input.
func (e *engine) finishDigest(ctx context.Context, di int, a *catalog.Array, site digestSite, back *readbackHash, sum string) error {
	k := e.job.Datasets[di].key()
	var err error
	switch site {
	case digestInOrder, digestBands:
	case digestReadBack, digestChunkRows:
		if sum, err = back.stop(); err != nil {
			return arrayErr(k, err)
		}
	default:
		// Encoded chunks and cuboids: a read-only pass over the input in
		// row-major units that fit the budget.
		hashUnits, _, err := units(a.Shape, planner.Layout{Kind: planner.Contiguous}, a.DType.Size, e.opts.Limits.UnitTarget)
		if err != nil {
			return arrayErr(k, err)
		}
		if sum, err = hashArray(ctx, e.env(), e.src, a, hashUnits, e.opts.Digest, e.opts.Limits.Jobs); err != nil {
			return arrayErr(k, err)
		}
	}
	e.sums[di] = sum
	return nil
}

// endsRows reports whether slab ends where the rows of shape end (every
// dimension after the first reaches its end): with units in order, the rows
// before the slab's end are then all written. A scalar has no rows.
func endsRows(slab catalog.Box, shape []int64) bool {
	if len(shape) == 0 {
		return false
	}
	for d := 1; d < len(shape); d++ {
		if slab.Lower[d]+slab.Count[d] != shape[d] {
			return false
		}
	}
	return true
}

// checkUnit refuses a unit of a damaged job.json: a box outside the dataset
// (or its cuboid), of another rank, or a cuboid that does not exist.
func (j *Plan) checkUnit(u *Unit, shape []int64) error {
	d := &j.Datasets[u.Dataset]
	b := j.box(u)
	bad := func(what string) error {
		return fmt.Errorf("job.json: unit %d %v: %s: %w", u.ID, b, what, catalog.ErrCorrupt)
	}
	if len(b.Lower) != len(shape) || len(b.Count) != len(shape) {
		return bad(fmt.Sprintf("not of rank %d", len(shape)))
	}
	within := catalog.Box{Lower: make([]int64, len(shape)), Count: shape}
	if d.kind() == kindMerged && d.Cuboids != nil {
		if u.Cuboid < 0 || u.Cuboid >= len(d.Cuboids) {
			return bad(fmt.Sprintf("cuboid %d of %d", u.Cuboid, len(d.Cuboids)))
		}
		c := d.Cuboids[u.Cuboid]
		within = catalog.Box{Lower: c.Lower, Count: c.Count}
		if len(c.Lower) != len(shape) || len(c.Count) != len(shape) || !inside(within, catalog.Box{Lower: make([]int64, len(shape)), Count: shape}) {
			return bad(fmt.Sprintf("cuboid %v outside the shape %v", within, shape))
		}
	}
	for i := range b.Count {
		if b.Count[i] < 0 || b.Lower[i] < 0 {
			return bad("negative")
		}
	}
	if len(shape) > 0 && !inside(b, within) {
		return bad(fmt.Sprintf("outside %v", within))
	}
	return nil
}
