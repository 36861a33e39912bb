package rewriter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/planner"
)

// Options controls Run.
type Options struct {
	Layout     string  // "contiguous", "chunked" or "" (see planner.ChooseLayout)
	ChunkShape []int64 // explicit chunk shape, or nil
	Chunks     []int64 // decomposition (chunks per dimension), or nil
	Deflate    int     // 1-9: chunks are shuffled and deflated at this level (chunked layout only); 0: raw
	Jobs       int     // slab workers per array; <= 0 means GOMAXPROCS
	MaxMem     int64   // bytes of slab buffers alive at once; <= 0 means DefaultMaxMem
	Version    string  // relayout version, recorded in files and manifest
	// NoDigest: leave every dataset's sha256 in the manifest empty instead
	// of hashing the arrays (a core's worth of work at disk speed); the
	// verify step still compares every element.
	NoDigest bool
	// NetCDF: give every dimension a coordinate variable (an HDF5 dimension
	// scale) so that netCDF-4 readers and xarray see named dimensions. Off
	// by default: an attached scale writes a DIMENSION_LIST attribute of
	// object references, which openPMD-api (0.16) cannot read, and it then
	// skips the whole record component.
	NetCDF   bool
	Progress io.Writer
	// Monitor, when set, follows the run (progress displays poll it); Run
	// makes one otherwise. Its I/O profile goes into Manifest.IO.
	Monitor *Monitor

	mem *memBudget // MaxMem as a semaphore, made by Run

	// unitCap caps the size of a work unit (a sharded job's unit size:
	// the journal's granularity); 0: the budget's own.
	unitCap int64

	// tiles overrides tileTarget and tileLimit (tests).
	tiles struct{ target, limit int64 }

	// LayoutFor, when set, chooses each array's layout instead of Layout,
	// ChunkShape and Chunks (e.g. planner.LayoutFor with the auto layout); the
	// result is checked like a chunk shape given by the user.
	LayoutFor func(a *catalog.Array) (planner.Layout, error)
	// Units, when set, receives Run's job and unit records (relayout run
	// --report).
	Units *RunUnits
	// Merge configures the merged layout (merged.go).
	Merge MergeOptions

	// FS is the file system of the output (fsinfo.Detect of OUT); the zero
	// value is treated as a local file system: nothing attempted.
	FS fsinfo.Info
	// Storage holds the user's striping and alignment overrides.
	Storage fsinfo.Override
}

// FileLayout is the file-system layout decision for the output file of a
// variable of varBytes logical bytes on fs: relayout run applies it and
// relayout plan prints it. Each output file is written by one process (Run
// writes the variables one after another), so the writer count is 1.
func FileLayout(fs fsinfo.Info, varBytes int64, ov fsinfo.Override) fsinfo.Decision {
	if fs.Kind == "" {
		fs.Kind, fs.Name = fsinfo.Local, "unknown"
	}
	return fsinfo.Decide(fs, varBytes, 1, ov)
}

// DefaultMaxMem is the slab memory budget when Options.MaxMem is unset.
const DefaultMaxMem = 1 << 30

func (o Options) jobs() int {
	if o.Jobs <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return o.Jobs
}

// maxSlabBytes caps a slab well below the memory budget: smaller slabs let
// the workers assemble one array in parallel while earlier slabs are hashed
// and written, and keep the peak RSS low. Large enough that per-slab costs
// (one write call, a scan of the block list) stay negligible.
const maxSlabBytes = 32 << 20

// budget (the size of one slab) is in budget.go.

// Run writes every variable of store, whose blocks src fetches, into one
// HDF5 file per variable in stage, then stage/relayout.json, and returns the
// manifest. It is a job of one shard run in this process: Prepare (the
// files' structure in stage, the work units), the shard's units through the
// engine (engine.go), JoinParts, all under one memory budget; the job's
// own files (part file) live in a work directory beside stage, removed at
// the end. Each file appears under its final name only once complete and
// synced; the manifest is written last.
func Run(ctx context.Context, store *catalog.Store, src catalog.Source, stage string, opts Options) (*catalog.Manifest, error) {
	vars, err := store.Variables()
	if err != nil {
		return nil, fmt.Errorf("rewriter: %w", err)
	}
	work := filepath.Join(filepath.Dir(stage), "."+filepath.Base(stage)+".run")
	defer os.RemoveAll(work)
	opts = opts.withPipeline(src, vars).withMerge()
	defer opts.mem.close()
	log := &memLog{recs: map[int]JournalRecord{}}
	var e *engine
	job, _, err := prepare(ctx, store, src, work, stage, opts, PrepareOptions{Shards: 1}, func(job *Job, vi, first int, st varStats) error {
		if e == nil {
			e = newEngine(store, src, job, stage, partPath(work, 0, 1), opts, log)
			e.digests = true
		}
		return e.addVariable(ctx, vi, first, st)
	})
	if e != nil {
		defer e.close()
		if err == nil {
			err = e.flushVariables(ctx) // the variables written together (interleave.go)
		}
	}
	if err == nil {
		synced := map[string]bool{}
		if e != nil {
			synced = e.synced
		}
		err = joinParts(ctx, work, stage, job, log.recs, synced)
	}
	if err != nil {
		if e != nil {
			e.close()
		}
		removeTemps(stage)
		return nil, err
	}
	m := &job.Manifest
	for di := range job.Datasets {
		d := &job.Datasets[di]
		md := &m.Variables[d.VarIndex].Datasets[d.Entry]
		if s, ok := e.sums[di]; ok {
			md.SHA256 = s
		} else if !opts.NoDigest && product(d.Shape) == 0 {
			s := sha256.Sum256(nil) // no units: the digest of no bytes
			md.SHA256 = hex.EncodeToString(s[:])
		}
	}
	m.IO = opts.Monitor.profile(opts.mem)
	if err := writeManifest(stage, m); err != nil {
		return nil, err
	}
	if opts.Units != nil {
		opts.Units.Job, opts.Units.Records = job, log.recs
	}
	return m, nil
}

// RunUnits is what Run's one in-process shard did, unit by unit (for the
// job report, BuildReport).
type RunUnits struct {
	Job     *Job
	Records map[int]JournalRecord
}

// runVariable writes variable vi, whose units start at job.Units[from]:
// its file synced once when its datasets are written, and Run's line.
func (e *engine) runVariable(ctx context.Context, vi, from int, st varStats) error {
	job := e.job
	mv := job.Manifest.Variables[vi]
	start := time.Now()
	e.opts.Monitor.setVariable(mv.Name)
	for i := from; i < len(job.Units); {
		j := i
		for j < len(job.Units) && job.Units[j].Dataset == job.Units[i].Dataset {
			j++
		}
		group := make([]*Unit, j-i)
		for k := range group {
			group[k] = &job.Units[i+k]
		}
		if err := e.group(ctx, job.Units[i].Dataset, group, true); err != nil {
			return err
		}
		i = j
	}
	return e.finishVariable(vi, st, start)
}

// finishVariable syncs and closes variable vi's file and prints Run's line.
func (e *engine) finishVariable(vi int, st varStats, start time.Time) error {
	mv := e.job.Manifest.Variables[vi]
	if err := e.finishFile(mv.File); err != nil {
		return fmt.Errorf("rewriter: %s: %w", mv.Name, err)
	}
	if p := e.opts.Progress; p != nil {
		striped := ""
		if mv.Storage != nil && mv.Storage.Striped {
			striped = fmt.Sprintf(", %d stripes of %s", mv.Storage.StripeCount, fsinfo.Size(mv.Storage.StripeSize))
		}
		fmt.Fprintf(p, "%s: %d arrays, %.1f MiB, %.2f s%s\n",
			mv.Name, st.arrays, float64(st.bytes)/(1<<20), time.Since(start).Seconds(), striped)
	}
	return nil
}

// removeTemps removes the temporary files a failed Run left in stage: no
// partial file stays, and none under a final name.
func removeTemps(stage string) {
	ents, _ := os.ReadDir(stage)
	for _, e := range ents {
		if n := e.Name(); n == SeriesName || strings.HasPrefix(n, ".") && (strings.HasSuffix(n, ".tmp") || strings.HasSuffix(n, ".join")) {
			os.Remove(filepath.Join(stage, n))
		}
	}
}

// arrayErr wraps err as "rewriter: <var> step <s>[ level <l>]: err".
func arrayErr(k catalog.Key, err error) error {
	if k.Level > 0 {
		return fmt.Errorf("rewriter: %s step %d level %d: %w", k.Var, k.Step, k.Level, err)
	}
	return fmt.Errorf("rewriter: %s step %d: %w", k.Var, k.Step, err)
}

// syncDir makes renames inside dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writeFileAtomic writes data to dir/name through a synced temporary file.
func writeFileAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, "."+name+".tmp")
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}
