package rewriter

import (
	"context"
	"fmt"
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
// stored through one target (target.go: contiguous, raw chunks, encoded
// chunks, merged), and a list of work units (boxes of a dataset) assigned
// to shards. Every unit of every target goes through the one ordered
// pipeline (streamJoint): admitted in order against the one memory budget
// (memBudget, Options.MaxMem, at most Jobs+1 units alive), its reads
// announced ahead (catalog.Source.Prefetch), assembled on up to Jobs workers,
// prepared by the target on the worker (encoded, or written where its
// place is fixed), then put by the target, hashed and journaled in order.
//
// The digest of a dataset (Plan.Digest of the logical array, row-major
// little-endian) is taken where digestSite chooses, by the target's traits
// and the units (its table gives the reasons): by the pipeline when the
// units are row-major runs of the array, or gathered band by band from the
// units in memory when they come band by band (tiles, boxes of chunks;
// banddigest.go) and the band buffers fit the budget, else read back by
// the target from its file (contiguous tiles, chunk rows), else (encoded
// chunks, cuboids) from a read-only pass over the input. An in-memory job
// asks for it (one shard holds every unit); sharded jobs journal each
// unit's digest instead and commit (job's checkUnits, through ReadBack)
// hashes the joined output. Whether a job's pipeline takes digests at all
// is package job's decision (planDigests).

// Cuboid is one cuboid dataset of a partially covered merged array.
type Cuboid struct {
	Lower []int64 `json:"lower"`
	Count []int64 `json:"count"`
	Addr  int64   `json:"addr"`
}

// StoredBlocks is how many blocks d's data is stored as, but for the
// encoded chunks of its units (their records list them): every chunk of
// raw chunks, each cuboid dataset of a merged array (or its one dataset),
// one contiguous dataset. The report's blocks_out.
func (d *Dataset) StoredBlocks() int { return targetOf(d).traits().storedBlocks }

// UnitRecord is what the engine records of one finished unit: its
// digest, where its encoded chunks went, what it cost. A journaled shard's
// records go to its Journal (package job writes them to the shard's
// journal file), an in-memory job's stay in memory.
type UnitRecord struct {
	Unit      int        `json:"u"`
	Sum       string     `json:"sha,omitempty"` // digest (Plan.Digest) of the unit's logical bytes (row-major little-endian)
	Chunks    []chunkRef `json:"c,omitempty"`
	PartEnd   int64      `json:"pe,omitempty"` // part file length after this unit
	Nanos     int64      `json:"ns,omitempty"`
	BlocksIn  int        `json:"bi,omitempty"`
	ReadBytes int64      `json:"rb,omitempty"`
	Written   int64      `json:"wb,omitempty"`
}

// chunkRef locates one encoded chunk a shard wrote to its part file.
type chunkRef struct {
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
	// by syncStage while the output is verified.
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

func (p *pass) close() {
	for _, c := range p.cleanup {
		c()
	}
}

// groups writes the groups (of distinct datasets) through one pipeline:
// their units in items (jointItems), so that datasets whose blocks
// interleave in the input are read once together (interleave.go).
func (e *engine) groups(ctx context.Context, gs []unitGroup) error {
	passes := make([]*pass, 0, len(gs))
	defer func() {
		for _, p := range passes {
			p.close()
		}
	}()
	parts := make([]*jointPart, len(gs))
	byPart := make([]*pass, len(gs))
	e.bandLeft, e.bandReserved = e.opts.Limits.BandAllowance, 0
	// Datasets whose digest would otherwise need a second pass over the
	// input (targets that cannot read back: encoded chunks, cuboids) are
	// set up first: their band digests come before those that could read
	// the file back instead.
	order := make([]int, 0, len(gs))
	for round := range 2 {
		for i, g := range gs {
			noReadBack := targetOf(&e.job.Datasets[g.di]).traits().readBack == readBackNone
			if noReadBack == (round == 0) {
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
// array, checked by loadArrays) for the pipeline through the dataset's
// target: opened, each unit's step after assembly (prep: the target's,
// with the unit's digest when journaled) and its ordered write and journal
// record (sink).
func (e *engine) setupPass(ctx context.Context, di int, a *catalog.Array, us []*Unit, whole bool) (*pass, error) {
	job := e.job
	d := &job.Datasets[di]
	k := d.key()
	t := targetOf(d)
	tr := t.traits()
	if tr.disjoint {
		a = disjointBlocks(a)
	}
	mon := e.opts.Monitor
	boxes := make([]catalog.Box, len(us))
	for i, u := range us {
		boxes[i] = job.box(u)
		if err := job.checkUnit(u, a.Shape); err != nil {
			return nil, arrayErr(k, err)
		}
	}
	if err := checkUnitBudget(e.opts.Limits, job.largestUnit(us), tr.encoded); err != nil {
		return nil, arrayErr(k, err)
	}
	if r := bandReserve(a, e.opts.Limits.Jobs); r > e.bandReserved {
		e.bandLeft, e.bandReserved = max(0, e.bandLeft-(r-e.bandReserved)), r
	}
	site, bands := e.digestSite(tr, a, boxes, whole)
	digest := e.opts.Digest
	if site != digestInOrder && site != digestBands { // the pipeline takes no digest
		digest = catalog.NoDigest
	}
	if d.Split && mon != nil {
		mon.splits.Add(1)
	}
	ps := &pass{cleanup: []func(){t.close}}
	if err := t.open(ctx, e, a, site == digestReadBack || site == digestStoredChunks); err != nil {
		ps.close()
		return nil, arrayErr(k, err)
	}
	prep := t.prep
	if e.unitSums {
		prep = func(slab catalog.Box, buf []byte) (unitOut, error) {
			o, err := t.prep(slab, buf)
			o.sum = e.opts.Digest.Hex(buf)
			return o, err
		}
	}
	last := time.Now()
	i := 0
	keep := int64(0) // bytes kept per unit byte beyond its buffer
	if tr.encoded {
		keep = 1 // the chunks cut from it
	}
	ps.part = &jointPart{a: a, slabs: boxes, keep: keep, digest: digest, prepWrites: !tr.encoded, prep: prep, bands: bands}
	ps.part.sink = func(slab catalog.Box, buf []byte, o unitOut) error {
		u := us[i]
		i++
		// The input blocks the unit needed and their stored bytes, as the
		// pipeline read them (with --digest none too: the manifest's io
		// section and the report sum them).
		rec := UnitRecord{Unit: u.ID, Sum: o.sum, BlocksIn: ps.part.reads.blocksIn[i-1], ReadBytes: ps.part.reads.bytesIn[i-1]}
		if err := t.put(u, slab, buf, o, &rec); err != nil {
			return err
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
		return e.finishDigest(ctx, di, a, site, t, sum)
	}
	return ps, nil
}

// wroteFile records n bytes of a unit written to prepared file f: the
// file to sync, the early sync's count, the unit's record.
func (e *engine) wroteFile(f *os.File, n int, rec *UnitRecord) {
	e.dirty[f] = true
	rec.Written = int64(n)
	e.early.wrote(f, rec.Written)
}

// digestSite is where the engine takes a dataset's digest (Plan.Digest of
// its logical array, row-major little-endian) in a job whose pipeline
// takes the datasets' digests (an in-memory one; package job's
// planDigests decides that).
type digestSite int

const (
	digestNone     digestSite = iota // none taken here
	digestInOrder                    // the pipeline hashes the units in order as they are written
	digestBands                      // gathered band by band from the units in memory (banddigest.go)
	digestReadBack                   // the target reads its written bytes back (targetTraits.readBack)
	digestInput                      // a read-only pass over the input in row-major units (finishDigest)
	// digestStoredChunks: a sparse array's digest over its stored chunks
	// (catalog.DigestStoredChunks), which the target hashes as it puts them
	// in order: its holes are never hashed, nor read.
	digestStoredChunks
)

// digestSite chooses, in one place, where the digest of array a, written
// through a target of traits tr as the units boxes (in order; whole: all
// of its units), is taken, and returns the band digest it charged to the
// pipeline's band allowance (e.bandLeft) when it chose digestBands. By
// the target's readBack (contiguous: bytes; raw chunks: rows; encoded
// chunks and merged: none):
//
//	units of the dataset            bytes       rows        none
//	not whole, or no dataset digest none        none        none
//	row-major runs of the array     in order    in order    in order
//	band by band, the band fits     read back   bands       bands
//	otherwise                       read back   read back*  input
//
// (*: when a plane of a chunk row fits the read-back buffer, else input.)
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
//     targets that cannot read back first, so the allowance goes to those
//     that would otherwise need an input pass), where the alternative is
//     reading back or a second pass over the input: issue 19's BP4 448³
//     --no-verify read 1493 MiB in 1051 calls instead of 1613 MiB in 2199
//     (6ee1095).
//   - read back, contiguous (bytes): a pread from the page cache costs
//     what the band's copy does, without the band's memory (a band of
//     448³ float64 is 51 MB): peak RSS 657-690 -> 281-292 MB on the same
//     input, reads unchanged (fbff8d3).
//   - read back, raw chunks (rows): chunks pwritten straight from the unit
//     buffers, units smaller than a chunk row whose band does not fit: the
//     written chunks are read back from the page cache a chunk row at a
//     time (93eb28f).
//   - input: encoded chunks (the file holds them deflated, and in part
//     files until JoinParts) and cuboids whose band does not fit have no
//     row-major copy to read back: a read-only pass over the input.
func (e *engine) digestSite(tr targetTraits, a *catalog.Array, boxes []catalog.Box, whole bool) (digestSite, *bandDigest) {
	if !e.digests || !whole || e.opts.Digest == catalog.NoDigest {
		return digestNone, nil
	}
	if tr.storedChunks {
		return digestStoredChunks, nil
	}
	if rowMajorRun(a.Shape, boxes) {
		return digestInOrder, nil
	}
	if tr.readBack == readBackBytes {
		return digestReadBack, nil
	}
	if bd := newBandDigest(a.Shape, a.DType.Size, boxes); bd != nil && bd.bytes <= e.bandLeft {
		e.bandLeft -= bd.bytes
		return digestBands, bd
	}
	if tr.readBack == readBackRows && tr.rowPlane <= e.opts.Limits.ReadLimit {
		return digestReadBack, nil
	}
	return digestInput, nil
}

// finishDigest records dataset di's digest once its units are written,
// from where digestSite chose: sum from the pipeline (in order, bands),
// target t's read-back, or a read-only pass over the input.
func (e *engine) finishDigest(ctx context.Context, di int, a *catalog.Array, site digestSite, t target, sum string) error {
	k := e.job.Datasets[di].key()
	var err error
	switch site {
	case digestInOrder, digestBands:
	case digestReadBack, digestStoredChunks:
		if sum, err = t.finish(); err != nil {
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
	b := j.box(u)
	bad := func(what string) error {
		return fmt.Errorf("job.json: unit %d %v: %s: %w", u.ID, b, what, catalog.ErrCorrupt)
	}
	if len(b.Lower) != len(shape) || len(b.Count) != len(shape) {
		return bad(fmt.Sprintf("not of rank %d", len(shape)))
	}
	within, err := targetOf(&j.Datasets[u.Dataset]).within(u, shape)
	if err != nil {
		return bad(err.Error())
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
