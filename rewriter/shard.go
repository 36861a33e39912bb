package rewriter

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/internal/h5"
	"relayout/planner"
)

// A sharded job splits Run into three steps that may run in different
// processes on different nodes sharing OUT (relayout plan -o, rewrite
// --shard I/N, commit; relayout run --resume runs all three in one process):
//
//	OUT/.relayout/job.json            the job: datasets, work units, shard of each unit
//	OUT/.relayout/catalog.db          the input catalog, built once by plan
//	OUT/.relayout/stage/.<f>.h5.tmp   each variable's file, HDF5 structure written by plan:
//	                                  contiguous datasets allocated early at known offsets,
//	                                  chunked datasets created empty
//	OUT/.relayout/stage/series.h5     the series file (external links), written by plan
//	OUT/.relayout/parts/shard-I-of-N.part     encoded chunks written by shard I
//	OUT/.relayout/journal/shard-I-of-N.log    finished units of shard I (journal.go)
//	OUT/.relayout/lock, lock.shard-I-of-N     flocks (lock.go)
//
// A work unit is a run of whole rows (dimension 0) of one dataset — whole
// chunk rows when chunked — of about UnitBytes. Shards write contiguous
// units with pwrite straight into the prepared file (disjoint byte ranges,
// no HDF5 call), and chunked units (raw or compressed) as encoded chunks
// appended to their own part file: no shard ever touches HDF5 metadata.
// Commit joins the chunks into a copy of each file with H5Dwrite_chunk
// (a copy, so that a commit killed half-way leaves the prepared file intact
// and is simply redone), renames each file to its final stage name, checks
// every unit against the journal and (unless told not to) every element
// against the input, writes the manifest and moves the files to OUT.

// JobSchema names the job.json format.
const JobSchema = "relayout-job/1"

// File names under OUT/.relayout.
const (
	JobFile        = "job.json"
	committedFile  = "committed"
	committingFile = "committing"
)

// ErrIncomplete reports that some shard has not finished its units.
var ErrIncomplete = errors.New("job not finished")

// Job is OUT/.relayout/job.json.
type Job struct {
	Schema    string           `json:"schema"`
	ID        string           `json:"id"`
	Input     string           `json:"input"`
	Vars      []string         `json:"vars,omitempty"` // the reader's variable selection
	Signature string           `json:"signature"`      // the options planned with, compared on resume
	Shards    int              `json:"shards"`
	UnitBytes int64            `json:"unit_bytes"`
	Created   time.Time        `json:"created"`
	Datasets  []JobDataset     `json:"datasets"`
	Units     []Unit           `json:"units"`
	Manifest  catalog.Manifest `json:"manifest"` // sha256 and report filled at commit
	// Inputs are the input files as planned (sizes, modification times),
	// recorded by the commit so that a rerun can tell the output is current.
	Inputs []InputFile `json:"inputs,omitempty"`
}

// JobDataset is one output dataset.
type JobDataset struct {
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
	Addr     int64   `json:"addr"` // contiguous data's file offset
	BlocksIn int     `json:"blocks_in"`
	BytesIn  int64   `json:"bytes_in"`
}

func (d *JobDataset) key() catalog.Key { return catalog.Key{Var: d.Var, Step: d.Step, Level: d.Level} }

// Unit is rows [Lo, Lo+Rows) of one dataset (a scalar: Rows 0, the whole).
type Unit struct {
	ID      int    `json:"id"`
	Dataset int    `json:"ds"`
	Lo      int64  `json:"lo"`
	Rows    int64  `json:"rows"`
	Bytes   int64  `json:"bytes"`
	Source  string `json:"src,omitempty"`
	Shard   int    `json:"shard"`
}

func (j *Job) box(u *Unit) catalog.Box {
	shape := j.Datasets[u.Dataset].Shape
	if len(shape) == 0 {
		return catalog.Box{Lower: []int64{}, Count: []int64{}}
	}
	b := catalog.Box{Lower: make([]int64, len(shape)), Count: append([]int64(nil), shape...)}
	b.Lower[0], b.Count[0] = u.Lo, u.Rows
	return b
}

// PrepareOptions says how to cut the job.
type PrepareOptions struct {
	Input     string
	Vars      []string
	Signature string
	Shards    int
	UnitBytes int64 // cap on a unit's size; 0: 16MiB
	Inputs    []InputFile
}

// DefaultUnitBytes caps a work unit: the journal's granularity, and what a
// shard redoes at most per unit after a crash.
const DefaultUnitBytes = 16 << 20

// Prepare is relayout plan -o: it empties work's job state, writes every
// variable's file structure into work/stage, cuts the arrays into units,
// assigns them to shards and writes work/job.json last (a crash before that
// leaves no job, and the next plan starts over).
func Prepare(ctx context.Context, store *catalog.Store, src catalog.Source, work string, opts Options, p PrepareOptions) (*Job, error) {
	if p.Shards < 1 {
		return nil, fmt.Errorf("rewriter: prepare: %d shards", p.Shards)
	}
	for _, n := range []string{JobFile, committedFile, committingFile, "stage", "parts", "journal"} {
		if err := os.RemoveAll(filepath.Join(work, n)); err != nil {
			return nil, fmt.Errorf("rewriter: prepare: %w", err)
		}
	}
	stage := filepath.Join(work, "stage")
	for _, d := range []string{stage, filepath.Join(work, "parts"), filepath.Join(work, "journal")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("rewriter: prepare: %w", err)
		}
	}
	info, err := store.Info()
	if err != nil {
		return nil, fmt.Errorf("rewriter: %w", err)
	}
	vars, err := store.Variables()
	if err != nil {
		return nil, fmt.Errorf("rewriter: %w", err)
	}
	if err := checkPlan(ctx, store, vars, opts); err != nil {
		return nil, err
	}
	names := make([]string, len(vars))
	var total int64
	for i, v := range vars {
		names[i] = v.Name
		total += v.Bytes
	}
	files := FileNames(names)
	var id [8]byte
	rand.Read(id[:])
	job := &Job{Schema: JobSchema, ID: hex.EncodeToString(id[:]), Input: p.Input, Vars: p.Vars,
		Signature: p.Signature, Shards: p.Shards, Inputs: p.Inputs, Created: time.Now().UTC().Truncate(time.Second),
		UnitBytes: planner.UnitBytesFor(total, p.Shards, cmpOr(p.UnitBytes, DefaultUnitBytes))}
	job.Manifest = catalog.Manifest{Tool: "relayout", Version: opts.Version,
		Input: catalog.ManifestInput{Path: info.Path, Format: info.Format}, Variables: []catalog.ManifestVariable{}, Skipped: info.Skipped}
	fc := newFileConfig(info, vars, opts, true)
	links := make([][]seriesLink, len(vars))
	for i, v := range vars {
		dec := FileLayout(opts.FS, v.Bytes, opts.Storage)
		mv, st, contig, err := prepareVariable(ctx, store, src, stage, files[i], v, fc, dec, opts)
		if err != nil {
			return nil, err
		}
		links[i] = st.links
		byKey := map[catalog.Key]int{}
		for e, md := range mv.Datasets {
			d := JobDataset{Var: v.Name, Step: md.Step, Level: md.Level, VarIndex: i, Entry: e, File: files[i],
				Path: md.Path, Shape: md.Shape, ElemSize: v.DType.Size, Addr: -1}
			if md.Layout == planner.Chunked {
				d.Chunk = md.Chunk
				if opts.Deflate > 0 {
					d.Deflate, d.Shuffle = opts.Deflate, v.DType.Size > 1
				}
			} else if t, ok := contig[d.key()]; ok {
				d.Addr = t.addr
			}
			byKey[d.key()] = len(job.Datasets)
			job.Datasets = append(job.Datasets, d)
		}
		job.Manifest.Variables = append(job.Manifest.Variables, mv)
		err = store.EachArray(ctx, v.Name, func(a *catalog.Array) error {
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
			layout := planner.Layout{Kind: planner.Contiguous}
			if d.Chunk != nil {
				layout = planner.Layout{Kind: planner.Chunked, Chunk: d.Chunk}
			}
			for _, s := range planner.Slabs(a.Shape, layout, a.DType.Size, job.UnitBytes) {
				u := Unit{ID: len(job.Units), Dataset: di, Bytes: s.Elements() * int64(a.DType.Size), Source: dominantSource(a, s)}
				if len(s.Lower) > 0 {
					u.Lo, u.Rows = s.Lower[0], s.Count[0]
				}
				job.Units = append(job.Units, u)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	skipped, seriesFiles, err := writeSeries(stage, fc.root, files, links)
	if err != nil {
		return nil, err
	}
	job.Manifest.Series, job.Manifest.SeriesFiles = SeriesName, seriesFiles
	job.Manifest.Skipped = append(job.Manifest.Skipped, skipped...)

	su := make([]planner.ShardUnit, len(job.Units))
	for i, u := range job.Units {
		su[i] = planner.ShardUnit{Bytes: u.Bytes, Source: u.Source, Order: i}
	}
	for i, s := range planner.AssignShards(su, p.Shards) {
		job.Units[i].Shard = s
	}
	b, err := json.Marshal(job)
	if err != nil {
		return nil, fmt.Errorf("rewriter: prepare: %w", err)
	}
	if err := writeFileAtomic(work, JobFile, b); err != nil {
		return nil, fmt.Errorf("rewriter: prepare: %w", err)
	}
	return job, nil
}

func cmpOr(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// dominantSource is the input file holding most of the bytes of a's blocks
// that meet slab's rows.
func dominantSource(a *catalog.Array, s catalog.Box) string {
	by := map[string]int64{}
	best, bestN := "", int64(-1)
	for k := range a.Blocks {
		b := &a.Blocks[k]
		if len(s.Lower) > 0 && (b.Box.Lower[0] >= s.Lower[0]+s.Count[0] || b.Box.Lower[0]+b.Box.Count[0] <= s.Lower[0]) {
			continue
		}
		by[b.File] += b.Length
		if n := by[b.File]; n > bestN || n == bestN && b.File < best {
			best, bestN = b.File, n
		}
	}
	return best
}

// prepareVariable is phases 0 and 1 of writeVariable with chunked datasets
// left empty; the file stays at stage/.<file>.tmp.
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
			mv.Storage.StripeError = err.Error()
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

// LoadJob reads work/job.json; a missing job wraps catalog.ErrNotFound.
func LoadJob(work string) (*Job, error) {
	b, err := os.ReadFile(filepath.Join(work, JobFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("rewriter: %s: no prepared job (run relayout plan IN -o OUT --shards N first): %w",
			filepath.Join(work, JobFile), catalog.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("rewriter: %w", err)
	}
	var j Job
	if err := json.Unmarshal(b, &j); err != nil || j.Schema != JobSchema {
		return nil, fmt.Errorf("rewriter: %s: not a %s job: %w", filepath.Join(work, JobFile), JobSchema, catalog.ErrCorrupt)
	}
	return &j, nil
}

// Committed reports whether the job in work was committed to out.
func Committed(work, out string) bool {
	_, err1 := os.Stat(filepath.Join(work, committedFile))
	_, err2 := os.Stat(filepath.Join(out, catalog.ManifestName))
	return err1 == nil && err2 == nil
}

// Committing reports whether a commit began moving files to their final
// names (a killed commit; RollForward finishes the moves).
func Committing(work string) bool {
	_, err := os.Stat(filepath.Join(work, committingFile))
	return err == nil
}

// ShardName is "shard-I-of-N".
func ShardName(shard, n int) string { return fmt.Sprintf("shard-%d-of-%d", shard, n) }

func journalPath(work string, shard, n int) string {
	return filepath.Join(work, "journal", ShardName(shard, n)+".log")
}

func partPath(work string, shard, n int) string {
	return filepath.Join(work, "parts", ShardName(shard, n)+".part")
}

// ShardStatus is what RewriteShard did.
type ShardStatus struct {
	Units, Skipped int   // units of the shard, and those already journaled
	Bytes          int64 // logical bytes written now
}

// largestUnit is the bytes of the largest of units.
func (j *Job) largestUnit(units []*Unit) int64 {
	var n int64
	for _, u := range units {
		n = max(n, j.box(u).Elements()*int64(j.Datasets[u.Dataset].ElemSize))
	}
	return n
}

// shardReadLimit is the largest coalesced read of a shard's units, charged
// to every unit in flight.
const shardReadLimit = 4 << 20

// shardJobs is how many of a dataset's units a shard assembles at once
// within maxMem (<= 0: DefaultMaxMem): up to 2*jobs+1 units are alive in
// the ordered pipeline (jobs assembling, jobs+1 finished and waiting for
// their turn to be written), each with its buffer, a second copy when twice
// (encoded chunks; the input beside the output when commit compares), and
// its largest read. An error when even one at a time does not
// fit.
func shardJobs(jobs int, maxMem, unitBytes int64, twice bool) (int, error) {
	if maxMem <= 0 {
		maxMem = DefaultMaxMem
	}
	cost := unitBytes + shardReadLimit
	if twice {
		cost += unitBytes
	}
	n := (maxMem/cost - 1) / 2
	if n < 1 {
		return 0, fmt.Errorf("work units of %d bytes need %d bytes of buffers each (three in flight): --max-mem %d is too small; raise it or plan with a smaller --unit-size: %w",
			unitBytes, cost, maxMem, catalog.ErrUnsupported)
	}
	return int(min(int64(jobs), n)), nil
}

// RewriteShard runs shard's units that its journal does not list yet,
// with at most jobs units assembled at once and their buffers within
// maxMem (shardJobs). Rerunning a finished shard does nothing. The caller
// holds the locks.
func RewriteShard(ctx context.Context, store *catalog.Store, src catalog.Source, work string, job *Job,
	shard, jobs int, maxMem int64, progress io.Writer) (ShardStatus, error) {
	var st ShardStatus
	ctx = catalog.WithReadLimit(ctx, shardReadLimit)
	jpath := journalPath(work, shard, job.Shards)
	if err := os.MkdirAll(filepath.Dir(jpath), 0o755); err != nil {
		return st, fmt.Errorf("rewriter: %w", err)
	}
	recs, err := ReplayJournal(jpath, job.ID)
	if err != nil {
		return st, err
	}
	done := map[int]bool{}
	finished := false
	var partEnd int64
	for _, r := range recs {
		if r.Done {
			finished = true
			continue
		}
		done[r.Unit] = true
		partEnd = max(partEnd, r.PartEnd)
	}
	var mine [][]*Unit // grouped by dataset, in job order
	for i := range job.Units {
		u := &job.Units[i]
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
	if len(mine) == 0 && finished {
		return st, nil
	}
	if err := os.MkdirAll(filepath.Join(work, "parts"), 0o755); err != nil {
		return st, fmt.Errorf("rewriter: %w", err)
	}
	part, err := os.OpenFile(partPath(work, shard, job.Shards), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return st, fmt.Errorf("rewriter: %w", err)
	}
	defer part.Close()
	if err := part.Truncate(partEnd); err != nil { // drop chunks no record names
		return st, fmt.Errorf("rewriter: %w", err)
	}
	files := map[string]*os.File{}
	dirty := map[*os.File]bool{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	jr, err := OpenJournal(jpath, job.ID)
	if err != nil {
		return st, err
	}
	defer jr.Close()
	jr.Sync = func() error {
		for f := range dirty {
			if err := f.Sync(); err != nil {
				return err
			}
			delete(dirty, f)
		}
		return nil
	}
	stage := filepath.Join(work, "stage")
	for _, group := range mine {
		d := &job.Datasets[group[0].Dataset]
		a, err := store.Array(d.key())
		if err != nil {
			return st, arrayErr(d.key(), err)
		}
		if err := checkArray(a); err != nil {
			return st, arrayErr(d.key(), err)
		}
		if err := checkOverlaps(ctx, src, a); err != nil {
			return st, arrayErr(d.key(), err)
		}
		var out *os.File
		var size int64
		if d.Chunk == nil {
			if out = files[d.File]; out == nil {
				if out, err = os.OpenFile(filepath.Join(stage, "."+d.File+".tmp"), os.O_RDWR, 0); err != nil {
					return st, fmt.Errorf("rewriter: %s: prepared file: %w", d.Var, err)
				}
				files[d.File] = out
			}
			fi, err := out.Stat()
			if err != nil {
				return st, err
			}
			size = fi.Size()
		}
		var touched map[int64]bool
		var grid []int64
		if d.Chunk != nil {
			touched, grid = touchedChunks(a, d.Chunk), chunkGrid(a.Shape, d.Chunk)
		}
		rowBytes := int64(a.DType.Size)
		if len(a.Shape) > 0 {
			rowBytes *= product(a.Shape[1:])
		}
		fill := leFill(a)
		blocks := indexBlocks(a)
		n, err := shardJobs(jobs, maxMem, job.largestUnit(group), d.Chunk != nil)
		if err != nil {
			return st, arrayErr(d.key(), err)
		}
		type chunkOut struct {
			off  []int64
			data []byte
		}
		type unitOut struct {
			buf    []byte
			sum    string
			chunks []chunkOut
			start  time.Time
			blocks int
			read   int64
		}
		err = ordered(ctx, n, len(group), func(ctx context.Context, i int) (unitOut, error) {
			o := unitOut{start: time.Now()}
			box := job.box(group[i])
			blocks.each(box, func(k int) { // units are whole rows: overlapping rows is overlapping
				o.blocks++
				o.read += a.Blocks[k].Length
			})
			buf, err := assembleSlab(ctx, src, blocks, box, fill)
			if err != nil {
				return o, err
			}
			s := sha256.Sum256(buf)
			o.buf, o.sum = buf, hex.EncodeToString(s[:])
			if d.Chunk != nil {
				err = cutChunks(buf, box, a.Shape, d.Chunk, a.DType.Size, func(off []int64, data []byte) error {
					if touched != nil && !touched[chunkIndex(off, d.Chunk, grid)] {
						return nil
					}
					enc, err := encodeChunk(data, a.DType.Size, d.Deflate)
					o.chunks = append(o.chunks, chunkOut{append([]int64(nil), off...), enc})
					return err
				})
			}
			return o, err
		}, func(i int, o unitOut) error {
			u := group[i]
			rec := JournalRecord{Unit: u.ID, SHA256: o.sum, BlocksIn: o.blocks, ReadBytes: o.read}
			if d.Chunk == nil {
				off := d.Addr + u.Lo*rowBytes
				if n := int64(len(o.buf)); n > 0 && (d.Addr < 0 || off+n > size) {
					return arrayErr(d.key(), fmt.Errorf("%s: unit at %d+%d outside the prepared file (%d bytes)", out.Name(), off, n, size))
				}
				if _, err := out.WriteAt(o.buf, off); err != nil {
					return arrayErr(d.key(), err)
				}
				dirty[out] = true
				rec.Written = int64(len(o.buf))
			} else {
				for _, c := range o.chunks {
					if _, err := part.WriteAt(c.data, partEnd); err != nil {
						return arrayErr(d.key(), err)
					}
					rec.Chunks = append(rec.Chunks, ChunkRef{Offset: c.off, Pos: partEnd, Len: int64(len(c.data))})
					partEnd += int64(len(c.data))
					rec.Written += int64(len(c.data))
				}
				dirty[part] = true
			}
			rec.PartEnd = partEnd
			rec.Nanos = int64(time.Since(o.start))
			st.Bytes += int64(len(o.buf))
			return jr.Add(rec)
		})
		if err != nil {
			if ferr := jr.Flush(); ferr != nil && ctx.Err() == nil {
				return st, errors.Join(err, ferr)
			}
			return st, err
		}
		if progress != nil {
			fmt.Fprintf(progress, "%s %s step %d level %d: %d units\n", ShardName(shard, job.Shards), d.Var, d.Step, d.Level, len(group))
		}
	}
	if err := jr.Add(JournalRecord{Done: true}); err != nil {
		return st, err
	}
	return st, jr.Close()
}
