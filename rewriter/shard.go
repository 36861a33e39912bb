package rewriter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/internal/h5"
	"relayout/planner"
)

// A plan is the work of a job cut into units, each assigned to a shard;
// package job keeps it in OUT/.relayout/job.json, with its journals and
// locks (the work directory is the job's, job/workdir.go). What the
// rewriter writes of it, and where:
//
//	<stage>/.<f>.h5.tmp   each variable's file, HDF5 structure written by Prepare:
//	                      contiguous and merged datasets and raw chunks of
//	                      covered arrays allocated early at known offsets,
//	                      compressed or sparse chunked datasets created empty
//	<stage>/series.h5     the series file (external links), written by Prepare
//	<part>                encoded chunks written by one shard (Shard.Part)
//
// A work unit is a box of one dataset of at most UnitBytes: a run of whole
// rows (dimension 0), whole chunk rows when chunked, or where those do not
// fit, block-aligned tiles, boxes of whole chunks, pieces of a merged
// cuboid; the same row bands for the datasets of one step, level and shape
// (datasetUnits, jointGrain). Shards write contiguous,
// merged and raw chunked units (of arrays their blocks cover: chunks
// allocated by Prepare) with pwrite straight into the prepared file (disjoint
// byte ranges, no HDF5 call; engine.go), and compressed or sparse chunked
// units as encoded chunks appended to their own part file: no shard ever
// touches HDF5 metadata. JoinParts joins the chunks into a copy of each file
// with H5Dwrite_chunk
// (a copy, so that a commit killed half-way leaves the prepared file intact
// and is simply redone) and renames each file to its final stage name;
// ReadBack reads every unit back for the job's check against its record. The commit that moves
// the files to OUT is the job's.

// Plan is the prepared work of a job: the output datasets (their files'
// structure written by Prepare), the work units, the shard of each, and
// the manifest to be. Package job keeps it in job.json (its Job record
// embeds it); an in-memory plan (PrepareOptions.InMemory) also holds the
// state of its run until Release.
type Plan struct {
	Shards    int              `json:"shards"`
	UnitBytes int64            `json:"unit_bytes"`
	Datasets  []Dataset        `json:"datasets"`
	Units     []Unit           `json:"units"`
	Manifest  catalog.Manifest `json:"manifest"` // digests and report filled at commit
	// Digest is the algorithm of the units' digests in the journals and of
	// the datasets' in the manifest (Options.Digest; the zero value,
	// sha256, is left out). NoDigest (--digest none, or an in-memory job
	// whose verifier takes them): none; commit checks the units' presence
	// and shape.
	Digest catalog.Digest `json:"digest,omitempty"`

	mem *memJob // an in-memory job's state (PrepareOptions.InMemory)
}

// memJob is what an in-memory job keeps between its steps instead of
// job.json, journals and the stage's manifest.
type memJob struct {
	opts  Options    // with the run's Limits and Monitor
	mem   *memBudget // the run's memory budget (Limits.MaxMem)
	log   *memLog
	stats []varStats     // by variable, for the per-variable lines
	sums  map[int]string // dataset -> digest taken by the pipeline
}

// Release frees what an in-memory job holds (its memory budget's kept
// buffers); a journaled job holds nothing. The job is not run after.
func (j *Plan) Release() {
	if j != nil && j.mem != nil && j.mem.mem != nil {
		j.mem.mem.close()
	}
}

// Finished is the record of every unit an in-memory plan's RewriteShard
// finished, by unit (a journaled plan's are in the journals: nil).
func (j *Plan) Finished() map[int]UnitRecord {
	if j.mem == nil {
		return nil
	}
	return j.mem.log.recs
}

// PipelineDigests gives the manifest of an in-memory job the digests its
// pipeline took (with NoDigest none; an empty dataset the digest of no
// bytes) and the run's I/O profile (Manifest.IO). It reports false and
// does nothing for a journaled job, whose digests commit takes from the
// joined output (ReadBack).
func (j *Plan) PipelineDigests() bool {
	if j.mem == nil {
		return false
	}
	m := &j.Manifest
	for di := range j.Datasets {
		d := &j.Datasets[di]
		md := &m.Variables[d.VarIndex].Datasets[d.Entry]
		if s, ok := j.mem.sums[di]; ok {
			md.SetSum(j.Digest, s)
		} else if product(d.Shape) == 0 {
			md.SetSum(j.Digest, j.Digest.Hex(nil)) // no units: the digest of no bytes
		}
	}
	m.IO = j.mem.opts.Monitor.profile(j.mem.mem)
	return true
}

// JobDataset is one output dataset.
type Dataset struct {
	Var      string  `json:"var"`
	Step     int64   `json:"step"`
	Level    int     `json:"level"`
	VarIndex int     `json:"var_index"` // into Manifest.Variables
	Entry    int     `json:"entry"`     // into Manifest.Variables[VarIndex].Datasets
	File     string  `json:"file"`
	Path     string  `json:"path"`
	Shape    []int64 `json:"shape"`
	Chunk    []int64 `json:"chunk,omitempty"` // chunked when set
	ElemSize int     `json:"elem_size"`
	Deflate  int     `json:"deflate,omitempty"`
	Shuffle  bool    `json:"shuffle,omitempty"`
	Addr     int64   `json:"addr"` // contiguous (or covered merged) data's file offset
	// Kind says how units reach the file (engine.go); "": parts when
	// Chunk is set, else contiguous.
	Kind    string   `json:"kind,omitempty"`
	ObjAddr uint64   `json:"obj_addr,omitempty"` // chunks: the dataset's object header (its chunk index)
	Cuboids []Cuboid `json:"cuboids,omitempty"`  // merged, partially covered: the cuboid datasets
	Split   bool     `json:"split,omitempty"`    // units smaller than a row (or a chunk row)
	// Sparse: a sparse array (planner's sparse.go, parts only): its units
	// are its touched chunks, its digest over its stored chunks.
	Sparse   bool  `json:"sparse,omitempty"`
	BlocksIn int   `json:"blocks_in"`
	BytesIn  int64 `json:"bytes_in"`
}

func (d *Dataset) key() catalog.Key { return catalog.Key{Var: d.Var, Step: d.Step, Level: d.Level} }

// Unit is rows [Lo, Lo+Rows) of one dataset (a scalar: Rows 0, the whole),
// or the box Lower, Count when set (a tile, a box of chunks, a piece of a
// cuboid; Cuboid is the cuboid dataset of a partially covered merged array).
type Unit struct {
	ID      int     `json:"id"`
	Dataset int     `json:"ds"`
	Lo      int64   `json:"lo"`
	Rows    int64   `json:"rows"`
	Lower   []int64 `json:"lower,omitempty"`
	Count   []int64 `json:"count,omitempty"`
	Cuboid  int     `json:"cuboid,omitempty"`
	Bytes   int64   `json:"bytes"`
	Source  string  `json:"src,omitempty"`
	Shard   int     `json:"shard"`
}

func (j *Plan) box(u *Unit) catalog.Box {
	shape := j.Datasets[u.Dataset].Shape
	if u.Count != nil {
		return catalog.Box{Lower: u.Lower, Count: u.Count}
	}
	if len(shape) == 0 {
		return catalog.Box{Lower: []int64{}, Count: []int64{}}
	}
	b := catalog.Box{Lower: make([]int64, len(shape)), Count: append([]int64(nil), shape...)}
	b.Lower[0], b.Count[0] = u.Lo, u.Rows
	return b
}

// PrepareOptions says how to cut the job.
type PrepareOptions struct {
	Shards    int
	UnitBytes int64 // cap on a unit's size; 0: 16MiB
	// InMemory: the job is run at once in this process and never resumed
	// (relayout run): units as large as the budget allows
	// (not the journal's granularity), the finished units recorded in
	// memory, each dataset's digest taken by the pipeline (no unit
	// sha256), the parts joined in place and each file synced once, while
	// the output is verified (package job's syncStage). The plan holds the memory budget and the
	// Monitor (Options) of the whole run, in force until Release.
	InMemory bool
}

// defaultUnitBytes caps a work unit: the journal's granularity, and what a
// shard redoes at most per unit after a crash.
const defaultUnitBytes = 16 << 20

// Prepare writes every variable's file structure into stage (created if
// missing), cuts the arrays into units and assigns them to shards. What
// the job keeps of it (job.json) and when is package job's.
func Prepare(ctx context.Context, store *catalog.Store, src catalog.Source, stage string, opts Options, p PrepareOptions) (job *Plan, err error) {
	if p.Shards < 1 {
		return nil, fmt.Errorf("rewriter: prepare: %d shards", p.Shards)
	}
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return nil, fmt.Errorf("rewriter: prepare: %w", err)
	}
	info, err := store.Info()
	if err != nil {
		return nil, fmt.Errorf("rewriter: %w", err)
	}
	vars, err := store.Variables()
	if err != nil {
		return nil, fmt.Errorf("rewriter: %w", err)
	}
	opts = opts.withLimits()
	if isNetCDF(info.Format) {
		opts.unlimited = info.Unlimited
	}
	holes := newHoleLayouts(store) // checkPlan and writeStructure share HoleLayout's answers
	if err := checkPlan(ctx, holes, vars, opts); err != nil {
		return nil, err
	}
	names := make([]string, len(vars))
	var total int64
	for i, v := range vars {
		names[i] = v.Name
		total += v.Bytes
	}
	fc := newFileConfig(info, vars, opts)
	fc.holes = holes
	if fc.netCDF {
		if fc.ncHeaders, err = loadNCHeaders(ctx, store, vars); err != nil {
			return nil, err
		}
	}
	files := fileNames(names, fc.ext())
	job = &Plan{Shards: p.Shards, Digest: opts.Digest}
	var mem *memBudget
	if p.InMemory {
		// One budget and Monitor for the whole run (Release closes it).
		opts = opts.withMonitor(src, vars)
		mem = newMemBudget(opts.Limits.MaxMem)
		defer func() {
			if err != nil {
				mem.close()
			}
		}()
		job.UnitBytes = opts.Limits.UnitTarget
	} else {
		job.UnitBytes = planner.UnitBytesFor(total, p.Shards, cmpOr(p.UnitBytes, defaultUnitBytes))
		opts.Limits = opts.Limits.CapUnits(job.UnitBytes)
	}
	opts = opts.withMerge()
	job.Manifest = catalog.Manifest{Tool: "relayout", Version: opts.Version,
		Input: catalog.ManifestInput{Path: info.Path, Format: info.Format}, Variables: []catalog.ManifestVariable{}, Skipped: info.Skipped}
	links := make([][]seriesLink, len(vars))
	stats := make([]varStats, len(vars))
	// Every variable's structure first (the datasets' kinds), then the
	// units: those of joinable datasets are cut in a common grain.
	varTargets := make([]map[catalog.Key]contigTarget, len(vars))
	varKeys := make([]map[catalog.Key]int, len(vars))
	for i, v := range vars {
		dec := fsinfo.DecideFile(opts.FS, v.Bytes, opts.Storage)
		mv, st, targets, err := prepareVariable(ctx, store, src, stage, files[i], v, fc, dec, opts)
		if err != nil {
			return nil, err
		}
		links[i], stats[i] = st.links, st
		byKey := map[catalog.Key]int{}
		for e := range mv.Datasets {
			md := &mv.Datasets[e]
			k := mv.Key(md) // a netCDF file's coordinates are other variables' arrays
			d := Dataset{Var: k.Var, Step: md.Step, Level: md.Level, VarIndex: i, Entry: e, File: files[i],
				Path: md.Path, Shape: md.Shape, Addr: -1, Kind: kindContiguous}
			t, ok := targets[d.key()]
			if !ok {
				return nil, arrayErr(d.key(), fmt.Errorf("no prepared dataset"))
			}
			d.ElemSize = t.elemSize
			switch {
			case t.merged != nil:
				d.Kind, d.Addr = kindMerged, t.merged.addr
				if !t.merged.full {
					d.Cuboids = []Cuboid{}
					for c, u := range t.merged.plan.Units {
						d.Cuboids = append(d.Cuboids, Cuboid{Lower: u.Box.Lower, Count: u.Box.Count, Addr: t.merged.addrs[c]})
					}
				}
			case t.chunks != nil:
				d.Kind, d.Chunk, d.ObjAddr = kindChunks, md.Chunk, t.chunks.objAddr
			case md.Layout == planner.Chunked:
				d.Kind, d.Chunk, d.Sparse = kindParts, md.Chunk, md.DigestOf == catalog.DigestStoredChunks
				if opts.Deflate > 0 {
					d.Deflate, d.Shuffle = opts.Deflate, v.DType.Size > 1
				}
			default:
				d.Addr = t.addr
			}
			byKey[d.key()] = len(job.Datasets)
			job.Datasets = append(job.Datasets, d)
		}
		job.Manifest.Variables = append(job.Manifest.Variables, mv)
		varTargets[i], varKeys[i] = targets, byKey
	}
	grains := jointGrains(job.Datasets)
	copies := map[catalog.Key]*catalog.Array{} // netCDF: the arrays copied beside others (eachFileArray)
	for i := range vars {
		targets, byKey := varTargets[i], varKeys[i]
		err = eachFileArray(ctx, store, &job.Manifest.Variables[i], copies, func(a *catalog.Array) error {
			if a.Constant {
				return nil // attributes only, written by prepareVariable
			}
			di, ok := byKey[a.Key()]
			if !ok {
				return arrayErr(a.Key(), fmt.Errorf("not in the prepared file"))
			}
			d := &job.Datasets[di]
			d.BlocksIn = len(a.Blocks)
			for k := range a.Blocks {
				d.BytesIn += a.Blocks[k].Length
			}
			if err := checkArray(a); err != nil {
				return arrayErr(a.Key(), err)
			}
			boxes, cuboid, split, err := targetOf(d).units(a, targets[a.Key()], grains[jointKey(d)], opts)
			if err != nil {
				return arrayErr(a.Key(), err)
			}
			d.Split = split
			var x *blockIndex
			if p.Shards > 1 {
				x = indexBlocks(a) // for the shard assignment
			}
			for n, b := range boxes {
				u := Unit{ID: len(job.Units), Dataset: di, Bytes: b.Elements() * int64(a.DType.Size)}
				if x != nil {
					u.Source = dominantSource(x, b)
				}
				if cuboid != nil {
					u.Cuboid = cuboid[n]
				}
				if len(b.Lower) > 0 {
					if wholeRows(b, a.Shape) {
						u.Lo, u.Rows = b.Lower[0], b.Count[0]
					} else {
						u.Lower, u.Count = b.Lower, b.Count
					}
				}
				job.Units = append(job.Units, u)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if !fc.netCDF { // netCDF time series are files of their own
		skipped, seriesFiles, err := writeSeries(stage, fc.root, files, links)
		if err != nil {
			return nil, err
		}
		job.Manifest.Series, job.Manifest.SeriesFiles = seriesName, seriesFiles
		job.Manifest.Skipped = append(job.Manifest.Skipped, skipped...)
	}
	switch {
	case opts.NoViews:
		job.Manifest.ViewsSkipped = []string{"no ParaView views: --no-views"}
	case fc.netCDF:
		job.Manifest.ViewsSkipped = []string{"no ParaView views: the output is netCDF time series, not meshes (open them in ParaView with its netCDF reader)"}
	default:
		var arrays []viewArray
		var amr []amrArray
		var particles []particleArray
		for i := range stats {
			arrays = append(arrays, stats[i].views...)
			amr = append(amr, stats[i].amr...)
			particles = append(particles, stats[i].particles...)
			for _, l := range stats[i].noView { // a species' records say the same
				if !slices.Contains(job.Manifest.ViewsSkipped, l) {
					job.Manifest.ViewsSkipped = append(job.Manifest.ViewsSkipped, l)
				}
			}
		}
		if job.Manifest.Views, err = writeViews(stage, arrays); err != nil {
			return nil, err
		}
		amrViews, skipped, err := writeAMRViews(stage, amr)
		if err != nil {
			return nil, err
		}
		job.Manifest.Views = append(job.Manifest.Views, amrViews...)
		job.Manifest.ViewsSkipped = append(job.Manifest.ViewsSkipped, skipped...)
		particleViews, skipped, err := writeParticleViews(stage, particles)
		if err != nil {
			return nil, err
		}
		job.Manifest.Views = append(job.Manifest.Views, particleViews...)
		job.Manifest.ViewsSkipped = append(job.Manifest.ViewsSkipped, skipped...)
	}

	su := make([]planner.ShardUnit, len(job.Units))
	for i, u := range job.Units {
		su[i] = planner.ShardUnit{Bytes: u.Bytes, Source: u.Source, Order: i}
	}
	for i, s := range planner.AssignShards(su, p.Shards) {
		job.Units[i].Shard = s
	}
	if p.InMemory {
		job.mem = &memJob{opts: opts, mem: mem, log: &memLog{recs: map[int]UnitRecord{}}, stats: stats,
			sums: map[int]string{}}
	}
	return job, nil
}

func cmpOr(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// dominantSource is the input file holding most of the bytes of the blocks
// of x's array that meet box s.
func dominantSource(x *blockIndex, s catalog.Box) string {
	by := map[string]int64{}
	best, bestN := "", int64(-1)
	x.each(s, func(k int) {
		b := &x.a.Blocks[k]
		by[b.File] += b.Length
		if n := by[b.File]; n > bestN || n == bestN && b.File < best {
			best, bestN = b.File, n
		}
	})
	return best
}

// prepareVariable writes v's file structure into stage/.<file>.tmp:
//
//  0. On Lustre, create the file with its stripes set (dec) before any
//     write; HDF5 then truncates it, which keeps the layout.
//  1. HDF5 open (aligned per dec): create every dataset (contiguous ones
//     and raw chunks of covered arrays allocated early at known
//     addresses), set the attributes; compressed and sparse chunked
//     datasets are left empty (JoinParts writes their chunks).
//
// It returns each dataset's target by array key.
func prepareVariable(ctx context.Context, store *catalog.Store, src catalog.Source, stage, file string,
	v catalog.VarSummary, fc fileConfig, dec fsinfo.Decision, opts Options) (catalog.ManifestVariable, varStats, map[catalog.Key]contigTarget, error) {
	mv := catalog.ManifestVariable{Name: v.Name, DType: v.DType.LittleEndian().NumPy(), File: file, Datasets: []catalog.ManifestDataset{}}
	var st varStats
	tmp := filepath.Join(stage, "."+file+".tmp")
	mv.Storage = manifestStorage(dec)
	if dec.Striped() {
		if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
			return mv, st, nil, fmt.Errorf("rewriter: %s: %w", v.Name, err)
		}
		if err := fsinfo.SetStripe(tmp, dec.StripeCount, dec.StripeSize); err != nil {
			// The directory's default layout stays; say so and go on.
			mv.Storage.StripeError = err.Error()
			if opts.Progress != nil {
				fmt.Fprintf(opts.Progress, "%s: striping not applied, default layout kept: %v\n", v.Name, err)
			}
		} else {
			mv.Storage.Striped = true
		}
	}
	w, err := h5.CreateWith(tmp, h5.CreateOptions{Alignment: dec.Alignment, AlignThreshold: dec.AlignThreshold})
	if err != nil {
		return mv, st, nil, fmt.Errorf("rewriter: %s: %w", v.Name, err)
	}
	contig, err := writeStructure(ctx, w, store, src, v.Name, fc, opts, &mv, &st)
	if cerr := w.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("rewriter: %s: %w", v.Name, cerr)
	}
	return mv, st, contig, err
}

// ShardStatus is what RewriteShard did.
type ShardStatus struct {
	Units, Skipped int   // units of the shard, and those already journaled
	Bytes          int64 // logical bytes written now
}

// largestUnit is the bytes of the largest of units.
func (j *Plan) largestUnit(units []*Unit) int64 {
	var n int64
	for _, u := range units {
		n = max(n, j.box(u).Elements()*int64(j.Datasets[u.Dataset].ElemSize))
	}
	return n
}

// Shard is one shard of a plan as RewriteShard runs it. For a journaled
// plan package job fills it from its work directory: the shard's journal
// (what it finished before, and where the next records go) and its part
// file. An in-memory plan keeps its records itself: Done, PartEnd and
// Journal are left unset.
type Shard struct {
	Index   int
	Part    string       // the shard's part file: encoded chunks are appended at PartEnd
	Done    map[int]bool // units finished before (the journal's), skipped
	PartEnd int64        // the part file's length after them
	Journal Journal      // takes the record of every unit finished now (journaled)
}

// RewriteShard runs the units of shard sh that it does not list as done
// through the engine (engine.go), writing into the prepared files in
// stage, with at most jobs units assembled at once
// and every buffer charged to one budget of maxMem bytes (<= 0:
// limits.DefaultMaxMem). mon, when set, follows it as it follows an in-memory job: the bytes of
// the units to write now, the variable being written, the I/O profile.
// Each finished unit's record goes to sh.Journal, after the unit's data
// is durable; the journal is flushed before RewriteShard returns, whether
// it fails or not. The caller holds the locks.
//
// An in-memory job (PrepareOptions.InMemory) records its units in memory
// instead of a journal (Finished), under the budget it was prepared with (jobs and
// maxMem are those of Prepare's Options; mon, when set, takes over from
// Prepare's Monitor and its I/O profile goes into the manifest), takes each
// dataset's digest in the pipeline instead of each unit's, and syncs each
// file once, when its last dataset is written, with a line per variable
// on Options.Verbose. Rerunning it does nothing.
func RewriteShard(ctx context.Context, store *catalog.Store, src catalog.Source, job *Plan, stage string,
	sh Shard, jobs int, maxMem int64, mon *Monitor) (ShardStatus, error) {
	var st ShardStatus
	done := sh.Done
	partEnd := sh.PartEnd
	jr := sh.Journal
	var log Journal = jr
	opts := Options{Jobs: jobs, MaxMem: maxMem, Monitor: mon}.withLimits()
	var mem *memBudget
	if m := job.mem; m != nil {
		if mon != nil && mon != m.opts.Monitor {
			// mon takes over from the Monitor of Prepare (a display
			// follows each phase with its own).
			var total int64
			for i := range job.Units {
				total += job.Units[i].Bytes
			}
			mon.begin(src, total)
			m.opts.Monitor = mon
		}
		opts, mem, log, jr = m.opts, m.mem, m.log, nil
		done = map[int]bool{}
		for _, r := range m.log.recs {
			done[r.Unit] = true
			partEnd = max(partEnd, r.PartEnd)
		}
	} else if jr == nil {
		return st, fmt.Errorf("rewriter: shard %d of a journaled plan without a journal", sh.Index)
	}
	mine, whole := job.shardGroups(sh.Index, done, &st)
	if len(mine) == 0 && job.mem != nil && len(done) > 0 {
		return st, nil
	}
	if err := os.MkdirAll(filepath.Dir(sh.Part), 0o755); err != nil {
		return st, fmt.Errorf("rewriter: %w", err)
	}
	if job.mem == nil {
		mem = newMemBudget(opts.Limits.MaxMem)
		defer mem.close()
		if mon != nil {
			var total int64
			for _, group := range mine {
				for _, u := range group {
					total += u.Bytes
				}
			}
			mon.begin(src, total)
		}
	}
	mon = opts.Monitor
	e := newEngine(store, src, job, stage, sh.Part, opts, mem, log)
	// In memory: the dataset digests (where digestSite says), files synced
	// at commit. Journaled: each unit's digest (unless --digest none), the
	// data synced before the journal records naming it. The job's Digest
	// (none: nothing hashed) is package job's planDigests' pipeline.
	e.partEnd, e.digests, e.syncEach, e.deferSync = partEnd, job.mem != nil, job.mem == nil, job.mem != nil
	e.unitSums = job.mem == nil && job.Digest != catalog.NoDigest
	if job.mem != nil && opts.SyncEarly {
		e.early = &earlySync{}
	}
	defer e.close()
	if jr != nil {
		// The journal syncs the engine's files before its records, while
		// the engine lives.
		jr.SetSync(e.syncDirty)
		defer jr.SetSync(nil)
	}
	fail := func(err error) (ShardStatus, error) {
		if jr != nil {
			if ferr := jr.Flush(); ferr != nil && ctx.Err() == nil {
				return e.st, errors.Join(err, ferr)
			}
		}
		return e.st, err
	}
	// The groups of joinable datasets (one step, level and shape: the
	// variables interleaved in the sub-files) go through one pipeline
	// each (interleave.go). An in-memory job syncs a variable's file once,
	// when the last set holding one of its datasets is written.
	left := make([]int, len(job.Manifest.Variables))
	for _, g := range mine {
		left[job.Datasets[g[0].Dataset].VarIndex]++
	}
	began := make([]time.Time, len(job.Manifest.Variables))
	finish := func(vi int) error {
		mv := job.Manifest.Variables[vi]
		if err := e.finishFile(mv.File); err != nil {
			return fmt.Errorf("rewriter: %s: %w", mv.Name, err)
		}
		if p := opts.Verbose; p != nil {
			vs := job.mem.stats[vi]
			striped := ""
			if mv.Storage != nil && mv.Storage.Striped {
				striped = fmt.Sprintf(", %d stripes of %s", mv.Storage.StripeCount, fsinfo.Size(mv.Storage.StripeSize))
			}
			took := 0.0
			if !began[vi].IsZero() {
				took = time.Since(began[vi]).Seconds()
			}
			fmt.Fprintf(p, "%s: %d arrays, %.1f MiB, %.2f s%s\n",
				mv.Name, vs.arrays, float64(vs.bytes)/(1<<20), took, striped)
		}
		return nil
	}
	for _, gs := range joinGroups(job, mine, whole) {
		if mon != nil {
			mon.setVariable(e.groupVars(gs))
		}
		now := time.Now()
		for _, g := range gs {
			if vi := job.Datasets[g.di].VarIndex; began[vi].IsZero() {
				began[vi] = now
			}
		}
		if err := e.groups(ctx, gs); err != nil {
			return fail(err)
		}
		for _, g := range gs {
			vi := job.Datasets[g.di].VarIndex
			if left[vi]--; left[vi] == 0 && !e.syncEach {
				if err := finish(vi); err != nil {
					return fail(err)
				}
			}
		}
	}
	for vi := range job.Manifest.Variables {
		if began[vi].IsZero() && !e.syncEach { // no dataset written now (constants only)
			if err := finish(vi); err != nil {
				return fail(err)
			}
		}
	}
	if err := e.early.wait(); err != nil {
		return fail(err)
	}
	e.st.Units, e.st.Skipped = st.Units, st.Skipped
	if m := job.mem; m != nil {
		for di, s := range e.sums {
			m.sums[di] = s
		}
		return e.st, nil
	}
	return e.st, jr.Flush()
}

func newEngine(store *catalog.Store, src catalog.Source, job *Plan, stage, part string, opts Options, mem *memBudget, log Journal) *engine {
	opts.Digest = job.Digest // the job's, in every pipeline and digest pass (a shard's opts carry only its budget)
	return &engine{store: store, src: src, job: job, stage: stage, part: part, opts: opts, mem: mem, log: log,
		files: map[string]*os.File{}, dirty: map[*os.File]bool{}, sums: map[int]string{}}
}

// shardGroups is shard's units not in done, grouped by dataset in job
// order, and for each group whether it holds every unit of its dataset. It
// counts the shard's units and those done in st.
func (j *Plan) shardGroups(shard int, done map[int]bool, st *ShardStatus) ([][]*Unit, []bool) {
	per := map[int]int{}
	for i := range j.Units {
		per[j.Units[i].Dataset]++
	}
	var mine [][]*Unit
	for i := range j.Units {
		u := &j.Units[i]
		if u.Shard != shard {
			continue
		}
		st.Units++
		if done[u.ID] {
			st.Skipped++
			continue
		}
		if n := len(mine); n == 0 || mine[n-1][0].Dataset != u.Dataset {
			mine = append(mine, nil)
		}
		mine[len(mine)-1] = append(mine[len(mine)-1], u)
	}
	whole := make([]bool, len(mine))
	for i, g := range mine {
		whole[i] = len(g) == per[g[0].Dataset]
	}
	return mine, whole
}

// InMemory reports whether the job is an in-memory one
// (PrepareOptions.InMemory).
func (j *Plan) InMemory() bool { return j.mem != nil }
