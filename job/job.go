package job

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/internal/limits"
	"relayout/planner"
	"relayout/reader"
	"relayout/rewriter"
	"relayout/verify"
)

// Display follows a job: the phases (catalog, rewrite, verify, commit),
// summary fields, and the rewrite's monitor. main's status line and
// --progress json implement it; nil shows nothing.
type Display interface {
	Phase(p string)
	Set(key string, v any)
	Monitor() *rewriter.Monitor
}

// Env is how a job runs, not what it writes (that is the Spec): where its
// notes go, its budgets, and what the user asked of a rerun.
type Env struct {
	// Log receives what a user must see: warnings, decisions, results and
	// the summary; Verbose the diagnostics (-v): each variable's figures,
	// the checks' OK lines, the I/O profile (io: lines, in the manifest's io
	// section either way), informational notes. Nil: discarded.
	Log     io.Writer
	Verbose io.Writer
	Display Display // nil: none
	MaxMem  int64   // memory budget of data buffers and kept block lists (<= 0: the rewriter's default)
	Jobs    int     // parallel pipelines (<= 0: GOMAXPROCS)
	Verify  bool    // compare every element with the input before the commit
	Report  string  // write the job report (JSON, catalog.Report) to this file
	Force   bool    // replace a finished output, plan again over a job, write into a non-empty OUT
	Catalog string  // plain run: the catalog database (default OUT/.relayout/catalog.db)
	Version string  // relayout's version, recorded in the files and the manifest
	Verb    string  // the command, for messages (default "run")
	// OnCatalog, when set, is called by Prepare with the input's catalog
	// before the job is prepared (relayout plan -o prints its plan).
	OnCatalog func(reader.Dataset, *catalog.Store) error
	// Append (run --append): extend OUT's finished output with what the
	// input gained since, refusing a change to what it holds (append.go).
	Append bool

	app *appendState // run --append: what it extends (settleAppend)
	// resident is what an in-memory run's reader keeps to read its blocks
	// (reader.Resident: SCORPIO's decomposition plans), charged to MaxMem.
	resident int64
}

// dataMem is the budget of the rewriter's and the verifier's data
// buffers: MaxMem less the block lists store keeps and what the reader
// keeps to read its blocks (an in-memory run's, frozen once its catalog is
// built; none for a journaled job), at least a quarter of MaxMem.
func (e Env) dataMem(store *catalog.Store) int64 {
	if e.MaxMem <= 0 {
		return e.MaxMem
	}
	return max(e.MaxMem-store.KeptBytes()-e.resident, e.MaxMem/residentFloor)
}

// residentFloor: the data buffers keep at least 1/residentFloor of
// --max-mem, whatever the block lists and the reader's plans take (the
// lists take at most a quarter, keepShare).
const residentFloor = 4

func (e Env) log() io.Writer {
	if e.Log == nil {
		return io.Discard
	}
	return e.Log
}

func (e Env) verbose() io.Writer {
	if e.Verbose == nil {
		return io.Discard
	}
	return e.Verbose
}

// stepLog is where a step's own result goes ("prepared ...", a shard's
// "shard-I-of-N: ..." line, "committed: ..."): to Log for the verb that
// runs that step alone (plan -o, rewrite, commit), to Verbose for run,
// which runs them all and ends with its summary.
func (e Env) stepLog() io.Writer {
	if e.verb() == "run" {
		return e.verbose()
	}
	return e.log()
}

// checkLog is where a check's lines go: its OK lines, its io: line and
// how it compared (compare:, which the summary says too) to Verbose, the
// rest (DIFF) to Log.
func (e Env) checkLog() io.Writer {
	return RouteLines(e.log(), e.verbose(), "OK ", "io: ", "compare: ")
}

func (e Env) verb() string {
	if e.Verb == "" {
		return "run"
	}
	return e.Verb
}

type noDisplay struct{}

func (noDisplay) Phase(string)               {}
func (noDisplay) Set(string, any)            {}
func (noDisplay) Monitor() *rewriter.Monitor { return rewriter.NewMonitor() }

func (e Env) display() Display {
	if e.Display == nil {
		return noDisplay{}
	}
	return e.Display
}

// Run is the whole job of spec on out in this process, relayout run: on
// one path, under OUT's lock, it settles a finished or half-committed OUT
// (done, replaced with Env.Force, or refused naming the difference),
// prepares the job (the catalog, the output files, the work units), runs
// every shard and commits (join, checks, verification, manifest,
// journaled renames). What differs between a plain run and run --resume is
// data: a journaled spec (Shards > 0) keeps its job in OUT/.relayout
// (job.json, one journal per shard) and each step skips what an earlier,
// killed run finished (its manifest's io section: the sums of its units'
// journal records, journalIO); a plain one (Shards 0) keeps its job in memory
// (rewriter.PrepareOptions.InMemory: the pipeline takes the digests, the
// manifest gets the run's I/O profile) and starts again when rerun.
func Run(ctx context.Context, out string, spec Spec, env Env) error {
	journaled := spec.Shards > 0
	var need int64
	err := runJob(ctx, out, spec, env, &need)
	hint := "rerun with --resume"
	if journaled {
		hint = "rerun the same command (--resume keeps the finished units)"
	}
	if env.Append {
		hint = "rerun the same command"
	}
	err = withDiskHint(err, out, need, hint)
	if env.Append && err != nil && (ctx.Err() != nil || errors.Is(err, context.Canceled)) && !committing(workDir(out)) {
		// OUT's commit record was kept: it is the output it was.
		return fmt.Errorf("%w\nnothing was appended: %s is the output it was before; rerun the same command to append", err, out)
	}
	return interrupted(ctx, err, out, journaled)
}

// runJob is Run; *need is the bytes a contiguous output needs (for the
// disk-full hint). The display shows the phases: catalog, rewrite (the
// shards), verify, commit.
func runJob(ctx context.Context, out string, spec Spec, env Env, need *int64) error {
	logw, disp := env.log(), env.display()
	journaled := spec.Shards > 0
	cmd, staleTo := "run", io.Writer(os.Stderr)
	if journaled {
		cmd, staleTo = "run --resume", logw
	}
	start := time.Now()
	disp.Phase("catalog")
	if err := checkOutput(spec.path(), out, env.Force); err != nil { // again under the lock
		return err
	}
	lock, err := lockOut(out, cmd, staleTo)
	if err != nil {
		return err
	}
	defer lock.Release()
	if env.Append {
		if journaled || env.Force {
			return Usagef("run --append: not with --resume or --force")
		}
		app, done, err := settleAppend(spec.Input, out, spec.Signature(), logw)
		if done || err != nil {
			return err
		}
		env.app = app
	} else if done, err := settleOut(spec.Input, out, spec.Signature(), env.Force, logw); done || err != nil {
		return err
	}
	var job *Job
	if journaled {
		if job, err = existingJob(out, spec, env.Force); err != nil {
			return err
		}
	}
	if err := checkEmpty(out, env.Force || job != nil || env.app != nil); err != nil {
		return err
	}
	var ds reader.Dataset
	var store *catalog.Store
	if job == nil {
		ds, store, job, err = prepareRun(ctx, out, spec, &env, need)
	} else {
		fmt.Fprintf(logw, "resuming the job prepared in %s (%d units)\n", workDir(out), len(job.Units))
		ds, store, err = openJobInput(out, job)
	}
	if err != nil {
		if !journaled {
			rewriter.RemoveTemps(stageDir(workDir(out)))
		}
		return err
	}
	defer ds.Close()
	defer store.Close()
	defer job.Release()
	if env.app != nil {
		if err := env.app.checkPlan(out, &job.Manifest); err != nil {
			rewriter.RemoveTemps(stageDir(workDir(out)))
			return err
		}
		fmt.Fprintf(logw, "append: %d new datasets to add to %s's %d variables\n", len(env.app.added), out, len(env.app.old.Variables))
	}
	disp.Phase("rewrite")
	disp.Set("variables", len(job.Manifest.Variables))
	disp.Set("verified", env.Verify)
	mon := disp.Monitor()
	// The verifier sums the small blocks the rewrite reads as it reads
	// them (verify.Tap), and reads again only the others.
	var tap *verify.Tap
	if env.Verify {
		if tap, err = verify.NewTap(store); err != nil {
			return err
		}
	}
	for s := range job.Shards {
		if err := rewriteShard(ctx, out, job, s, env, tap.Source(ds), store, mon); err != nil {
			if !journaled {
				rewriter.RemoveTemps(stageDir(workDir(out)))
			}
			return err
		}
	}
	disp.Set("bytes", mon.Progress().Done)
	if !journaled {
		// The rewrite is done with its buffers: the verifier's bands and
		// blocks get the same --max-mem, not what is left beside them.
		releaseRewrite(job)
	}
	started := job.Created // of a resumed job, the run that prepared it
	if !journaled {
		started = start
	}
	err = commitJob(ctx, out, job, env, ds, store, tap, start, started)
	if err != nil && !journaled && !committing(workDir(out)) {
		rewriter.RemoveTemps(stageDir(workDir(out)))
	}
	if err != nil {
		return err
	}
	took := time.Since(start)
	fmt.Fprintf(logw, "done: %d variables written to %s in %.2fs\n", len(job.Manifest.Variables), out, took.Seconds())
	if env.app != nil {
		fmt.Fprintf(logw, "appended: %d datasets from %d new or grown input files to %s (recorded under \"appends\" in %s)\n",
			len(env.app.added), len(env.app.inputs), out, catalog.ManifestName)
	}
	writeSummary(logw, out, &job.Manifest, took)
	return nil
}

// keepShare is the part of --max-mem an in-memory run may give to the
// decoded block lists it keeps (catalog.Store.KeepBlocks), charged to the
// budget (Env.dataMem): 351,537 blocks of four arrays are 48 MiB, the
// 833,480 mesh blocks of bp_gen.py's BP5 256^3 in 4^3 115 MiB (144 bytes a 3-D
// block). Under an eighth (128 MiB of 1GiB), when a block took 240 bytes,
// half of a million blocks were decoded again in each of the four passes,
// 0.6 CPU-s more.
const keepShare = 4

// prepareRun builds the catalog of spec's input (at Env.Catalog, else
// OUT/.relayout/catalog.db) and prepares run's job from it: in OUT/.relayout
// when journaled, in memory when not. The caller holds OUT's lock and
// closes what it returns.
func prepareRun(ctx context.Context, out string, spec Spec, env *Env, need *int64) (reader.Dataset, *catalog.Store, *Job, error) {
	logw := env.log()
	journaled := spec.Shards > 0
	in := spec.path()
	work := workDir(out)
	os.Remove(filepath.Join(work, JobFile)) // a half-prepared job is never resumed
	dbPath := env.Catalog
	if dbPath == "" {
		dbPath = filepath.Join(work, "catalog.db")
	}
	start := time.Now()
	var keep int64
	if !journaled {
		// The layout check, the units, the rewrite and the verifier each
		// read every array's blocks: kept as the build stores them,
		// within a quarter of the budget, they are never decoded.
		keep = max(env.MaxMem, 0) / keepShare
	}
	ds, store, err := BuildCatalogEach(ctx, in, dbPath, reader.Options{Vars: spec.Vars, Strict: spec.Strict}, keep, false, nil, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	// What is kept now stays, and nothing more is (a list decoded later
	// would take budget the units were already cut for).
	store.KeepBlocks(store.KeptBytes())
	fail := func(err error) (reader.Dataset, *catalog.Store, *Job, error) {
		store.Close()
		ds.Close()
		return nil, nil, nil, err
	}
	vars, err := store.Variables()
	if err != nil {
		return fail(err)
	}
	skipped := ds.Info().Skipped
	if len(vars) == 0 {
		why := ""
		if len(skipped) > 0 {
			why = fmt.Sprintf("%d objects skipped, the first: %s; ", len(skipped), skipped[0])
		}
		return fail(fmt.Errorf("run: %s: no variable to rewrite (%ssee relayout catalog %s): %w", in, why, in, catalog.ErrNotFound))
	}
	fmt.Fprintf(logw, "catalog: %d variables from %s (%s) in %.2fs\n", len(vars), in, ds.Info().Format, time.Since(start).Seconds())
	if n := store.KeptBytes(); n > 0 {
		fmt.Fprintf(env.verbose(), "catalog: %s of block lists kept in memory, of --max-mem\n", HumanBytes(n))
	}
	if !journaled {
		// What the reader keeps to read the blocks (SCORPIO's plans),
		// prepared now and charged like the block lists.
		t0 := time.Now()
		if env.resident, err = reader.Resident(ctx, ds); err != nil {
			return fail(err)
		}
		if env.resident > 0 {
			fmt.Fprintf(env.verbose(), "reader: %s kept in memory to read the blocks (decomposition plans, built in %.2fs), of --max-mem\n",
				HumanBytes(env.resident), time.Since(t0).Seconds())
		}
	}
	// The sizes the rewrite and the check derive from the data budget and
	// --jobs (the shards' and the check's of a journaled job).
	lim := limits.For(env.dataMem(store), env.Jobs)
	fmt.Fprintln(env.verbose(), lim)
	if len(skipped) > 0 {
		fmt.Fprintf(logw, "skipped: %d objects not rewritten (listed with the reason under \"skipped\" in %s), the first: %s\n",
			len(skipped), catalog.ManifestName, skipped[0])
	}
	if spec.Layout == Contiguous || spec.Fill {
		// Contiguous datasets are allocated whole, and so are every
		// layout's chunks when holes are written dense (--fill): an
		// output the file system cannot hold is refused before it is
		// allocated (a 2^40-row array asked chunked with --fill walked
		// every chunk instead).
		if *need, err = contiguousBytes(ctx, store, vars, spec.Fill); err != nil {
			return fail(err)
		}
		if err := checkSpace(out, *need, "rerun the same command"); err != nil {
			return fail(err)
		}
	}
	if spec.Layout == Chunked {
		if err := ChunkNotes(ctx, env.verb(), store, spec.ChunkShape, spec.Chunks, logw); err != nil {
			return fail(err)
		}
	}
	outFS, err := fsinfo.Detect(out)
	if err != nil {
		return fail(fmt.Errorf("run: %w", err))
	}
	largest := int64(0)
	for _, v := range vars {
		largest = max(largest, v.Bytes)
	}
	// The storage decision is the user's to see when one was made:
	// nothing attempted on a local file system is said under -v.
	storage := fsinfo.DecideFile(outFS, largest, spec.Storage)
	storagew := logw
	if storage.FS.Kind == fsinfo.Local && !storage.Striped() && storage.Alignment == 0 {
		storagew = env.verbose()
	}
	fmt.Fprintf(storagew, "storage: %s is on %s; largest file: %s\n", out, outFS.Name, storage)
	ropts := rewriterOptions(spec, *env, outFS, logw)
	ropts.Progress = logw         // layout notes (a refined level's, a partly covered array's)
	ropts.Verbose = env.verbose() // each variable's figures
	if !journaled {
		// The in-memory job runs under the budgets it is prepared with.
		ropts.Jobs, ropts.MaxMem, ropts.Limits = env.Jobs, env.dataMem(store), lim
		ropts.SyncEarly = !env.Verify
	}
	inputs, err := inputFiles(spec.Input)
	if err != nil {
		return fail(err)
	}
	job, err := prepareJob(ctx, store, ds, work, ropts, spec, inputs, rewriter.PrepareOptions{
		Shards: max(spec.Shards, 1), UnitBytes: spec.UnitBytes, InMemory: !journaled}, env.app != nil)
	if err != nil {
		return fail(err)
	}
	if journaled {
		var total int64
		for _, u := range job.Units {
			total += u.Bytes
		}
		fmt.Fprintf(env.stepLog(), "prepared %s: %d variables, %d datasets, %d units of up to %s (%s) in %.2fs\n",
			out, len(vars), len(job.Datasets), len(job.Units), HumanBytes(job.UnitBytes), HumanBytes(total), time.Since(start).Seconds())
	}
	return ds, store, job, nil
}

// rewriterOptions are the rewriter's options of spec's layout (both
// engines): the layouts decided per array go through layoutFor, the
// digest its pipeline takes through planDigests (an in-memory job with
// verification: none, the verifier's).
func rewriterOptions(spec Spec, env Env, outFS fsinfo.Info, logw io.Writer) rewriter.Options {
	digests := planDigests(spec.Shards > 0, env.Verify, spec.Digest)
	ropts := rewriter.Options{Layout: string(spec.Layout), ChunkShape: spec.ChunkShape, Chunks: spec.Chunks, Digest: digests.pipeline,
		Deflate: spec.Deflate, Version: env.Version, FS: outFS, Storage: spec.Storage, NetCDF: spec.NetCDF,
		Fill: spec.Fill, NoViews: spec.NoViews}
	if f := layoutFor(spec, logw); f != nil {
		ropts.Layout, ropts.LayoutFor = "", f
	}
	if spec.Layout == Merged {
		// Validate checked the scope.
		sc, _ := parseScope(spec.Scope)
		ropts.Merge = rewriter.MergeOptions{Scope: sc, RanksPerNode: spec.RanksPerNode}
	}
	return ropts
}

// utcSecond is t in UTC to the second (RFC 3339 in JSON).
func utcSecond(t time.Time) *time.Time {
	u := t.UTC().Truncate(time.Second)
	return &u
}

// Prepare is relayout plan -o: under OUT's lock it settles OUT (a finished
// output is done; an existing job of the same spec is kept, of another one
// refused unless Env.Force), builds the catalog into OUT/.relayout and
// prepares the job (output files created and allocated, units cut for
// spec.Shards). Env.OnCatalog, when set, is called with the catalog before
// the job is prepared (plan prints its plan). It returns nil, nil when
// there was nothing to do.
func Prepare(ctx context.Context, out string, spec Spec, env Env) (*Job, error) {
	logw := env.log()
	if err := checkOutput(spec.path(), out, env.Force); err != nil { // again under the lock
		return nil, err
	}
	lock, err := lockOut(out, "plan -o", os.Stderr)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	if done, err := settleOut(spec.Input, out, "", env.Force, logw); done || err != nil {
		return nil, err
	}
	job, err := existingJob(out, spec, env.Force)
	if err != nil {
		return nil, err
	}
	if job != nil && !env.Force {
		fmt.Fprintf(logw, "%s: already prepared for %d shards (%d units); run relayout rewrite %s --shard I/%d, then relayout commit %s (--force plans again)\n",
			out, job.Shards, len(job.Units), out, job.Shards, out)
		return nil, nil
	}
	if err := checkEmpty(out, env.Force); err != nil {
		return nil, err
	}
	return prepareLocked(ctx, out, spec.path(), spec, env, func(ds reader.Dataset, store *catalog.Store) error {
		// The file-system decisions (striping, alignment) the output files get.
		outFS, err := fsinfo.Detect(out)
		if err != nil {
			return fmt.Errorf("plan: %w", err)
		}
		vars, err := store.Variables()
		if err != nil {
			return err
		}
		for _, v := range vars {
			fmt.Fprintf(logw, "storage: %s (%d bytes) on %s: %s\n", v.Name, v.Bytes, outFS.Name,
				fsinfo.DecideFile(outFS, v.Bytes, spec.Storage))
		}
		if env.OnCatalog != nil {
			return env.OnCatalog(ds, store)
		}
		return nil
	})
}

// prepareLocked builds the catalog of in (spec's input, as given or
// resolved) into OUT/.relayout/catalog.db and prepares the job. The caller
// holds OUT's lock.
func prepareLocked(ctx context.Context, out, in string, spec Spec, env Env, onCatalog func(reader.Dataset, *catalog.Store) error) (*Job, error) {
	work := workDir(out)
	os.Remove(filepath.Join(work, JobFile)) // a half-prepared job is never resumed
	ds, store, err := BuildCatalog(ctx, in, filepath.Join(work, "catalog.db"), reader.Options{Vars: spec.Vars, Strict: spec.Strict})
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	defer store.Close()
	if onCatalog != nil {
		if err := onCatalog(ds, store); err != nil {
			return nil, err
		}
	}
	if spec.Layout == Contiguous {
		// Contiguous datasets are allocated whole at prepare: an output
		// the file system cannot hold is refused before it is allocated.
		vars, err := store.Variables()
		if err != nil {
			return nil, err
		}
		need, err := contiguousBytes(ctx, store, vars, spec.Fill)
		if err != nil {
			return nil, err
		}
		if err := checkSpace(out, need, "rerun the same command"); err != nil {
			return nil, err
		}
	}
	return prepareWith(ctx, out, spec, env, ds, store)
}

// prepareWith prepares the job from the catalog store already built in
// OUT/.relayout/catalog.db.
func prepareWith(ctx context.Context, out string, spec Spec, env Env, ds reader.Dataset, store *catalog.Store) (*Job, error) {
	logw := env.log()
	work := workDir(out)
	start := time.Now()
	vars, err := store.Variables()
	if err != nil {
		return nil, err
	}
	if len(vars) == 0 {
		return nil, fmt.Errorf("plan: %s: no variable to rewrite: %w", spec.Input, catalog.ErrNotFound)
	}
	if spec.Layout == Chunked {
		if err := ChunkNotes(ctx, env.verb(), store, spec.ChunkShape, spec.Chunks, logw); err != nil {
			return nil, err
		}
	}
	outFS, err := fsinfo.Detect(out)
	if err != nil {
		return nil, err
	}
	choices := io.Discard // the auto layout's choices are plan's to show
	if spec.ChunkAuto {
		choices = logw // the chunks --compress alone picked: always said
	}
	ropts := rewriterOptions(spec, env, outFS, choices)
	ropts.Progress = logw // layout notes (a refined level's, a partly covered array's), striping
	inputs, err := inputFiles(spec.Input)
	if err != nil {
		return nil, err
	}
	job, err := prepareJob(ctx, store, ds, work, ropts, spec, inputs, rewriter.PrepareOptions{
		Shards: spec.Shards, UnitBytes: spec.UnitBytes}, false)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, u := range job.Units {
		total += u.Bytes
	}
	fmt.Fprintf(logw, "prepared %s: %d variables, %d datasets, %d units of up to %s (%s) for %d shard(s) in %.2fs\n",
		out, len(vars), len(job.Datasets), len(job.Units), HumanBytes(job.UnitBytes), HumanBytes(total), job.Shards, time.Since(start).Seconds())
	return job, nil
}

// openJobInput opens the catalog plan built and the input it describes.
func openJobInput(out string, job *Job) (reader.Dataset, *catalog.Store, error) {
	store, err := catalog.OpenStore(filepath.Join(workDir(out), "catalog.db"))
	if err != nil {
		return nil, nil, err
	}
	ds, err := reader.Open(job.Input, reader.Options{Vars: job.Vars})
	if err != nil {
		store.Close()
		return nil, nil, err
	}
	return ds, store, nil
}

// RewriteShard is relayout rewrite: it runs shard of OUT's prepared job
// under OUT's shared lock and the shard's own (two processes never run the
// same shard), skipping the units its journal has finished.
func RewriteShard(ctx context.Context, out string, shard Shard, env Env) error {
	err := rewriteVerb(ctx, out, shard, env)
	return withDiskHint(err, out, 0, "rerun the same command (the shard's journal keeps its finished units)")
}

func rewriteVerb(ctx context.Context, out string, shard Shard, env Env) error {
	logw := env.log()
	work := workDir(out)
	if committed(work, out) {
		fmt.Fprintf(logw, "%s: done (committed already)\n", out)
		return nil
	}
	job, err := LoadJob(work)
	if err != nil {
		return err
	}
	if shard, err = shard.planned(job.Shards, out); err != nil {
		return err
	}
	// Shards share OUT's lock (plan and commit take it exclusively) and
	// each holds its own: two processes never run the same shard.
	shared, err := lockShared(filepath.Join(work, "lock"), "rewrite")
	if err != nil {
		return err
	}
	defer shared.Release()
	own, err := lockExclusive(filepath.Join(work, "lock."+shardName(shard.I, shard.N)), fmt.Sprintf("rewrite --shard %d/%d", shard.I, shard.N))
	if err != nil {
		return err
	}
	defer own.Release()
	if msg := own.StaleMessage(); msg != "" {
		fmt.Fprintln(logw, "relayout:", msg)
	}
	ds, store, err := openJobInput(out, job)
	if err != nil {
		return err
	}
	defer ds.Close()
	defer store.Close()
	err = rewriteShard(ctx, out, job, shard.I, env, ds, store, nil)
	return interruptedShard(ctx, err, out, job, shard.I)
}

// rewriteShard runs one shard of OUT's job reading the input through ds
// and store; mon follows it (nil: a new one of the display's). The caller
// holds the locks.
func rewriteShard(ctx context.Context, out string, job *Job, shard int, env Env, src catalog.Source, store *catalog.Store, mon *rewriter.Monitor) error {
	if mon == nil {
		mon = env.display().Monitor()
	}
	start := time.Now()
	work := workDir(out)
	sh := rewriter.Shard{Index: shard, Part: partPath(work, shard, job.Shards)}
	var st rewriter.ShardStatus
	var err error
	if job.InMemory() {
		_, err = rewriter.RewriteShard(ctx, store, src, &job.Plan, stageDir(work), sh, env.Jobs, env.dataMem(store), mon)
		return err // the lines per variable said it
	}
	if st, err = rewriteJournaled(ctx, work, job, sh, env, src, store, mon); err != nil {
		return err
	}
	name, logw := shardName(shard, job.Shards), env.stepLog()
	if st.Skipped == st.Units {
		fmt.Fprintf(logw, "%s: done (%d units, all finished before)\n", name, st.Units)
		return nil
	}
	fmt.Fprintf(logw, "%s: %d units (%d finished before), %s in %.2fs\n", name, st.Units, st.Skipped, HumanBytes(st.Bytes), time.Since(start).Seconds())
	return nil
}

// rewriteJournaled runs shard sh of a journaled job: the units its journal
// lists are skipped, the others recorded in it as they finish, and its
// final record written once all are. Rerunning a finished shard does
// nothing.
func rewriteJournaled(ctx context.Context, work string, job *Job, sh rewriter.Shard, env Env, src catalog.Source, store *catalog.Store, mon *rewriter.Monitor) (rewriter.ShardStatus, error) {
	var st rewriter.ShardStatus
	jpath := journalPath(work, sh.Index, job.Shards)
	if err := os.MkdirAll(filepath.Dir(jpath), 0o755); err != nil {
		return st, fmt.Errorf("job: %w", err)
	}
	recs, err := replayJournal(jpath, job.ID)
	if err != nil {
		return st, err
	}
	finished := false
	sh.Done = map[int]bool{}
	for _, r := range recs {
		if r.Done {
			finished = true
			continue
		}
		sh.Done[r.Unit] = true
		sh.PartEnd = max(sh.PartEnd, r.PartEnd)
	}
	for _, u := range job.Units {
		if u.Shard == sh.Index {
			st.Units++
			if sh.Done[u.ID] {
				st.Skipped++
			}
		}
	}
	if finished && st.Skipped == st.Units {
		return st, nil
	}
	jr, err := openJournal(jpath, job.ID)
	if err != nil {
		return st, err
	}
	sh.Journal = jr
	if st, err = rewriter.RewriteShard(ctx, store, src, &job.Plan, stageDir(work), sh, env.Jobs, env.dataMem(store), mon); err != nil {
		jr.abandon() // RewriteShard flushed what its engine had made durable
		return st, err
	}
	return st, jr.Finish()
}

// Commit is relayout commit: under OUT's lock, it finishes a commit a
// killed relayout had begun, or checks that every shard finished and every
// unit (and with Env.Verify every element), writes the manifest and moves
// the files to their final names, journaled. A committed OUT is done.
func Commit(ctx context.Context, out string, env Env) error {
	err := commitVerb(ctx, out, env)
	return withDiskHint(err, out, 0, "rerun relayout commit")
}

func commitVerb(ctx context.Context, out string, env Env) error {
	logw := env.log()
	work := workDir(out)
	if committed(work, out) {
		fmt.Fprintf(logw, "%s: done (committed already)\n", out)
		return nil
	}
	job, err := LoadJob(work)
	if err != nil {
		return err
	}
	lock, err := lockOut(out, "commit", logw)
	if err != nil {
		return err
	}
	defer lock.Release()
	if rolled, err := rollForward(work, out); err != nil {
		return err
	} else if rolled {
		fmt.Fprintf(logw, "%s: finished the commit a killed relayout had begun\n", out)
	}
	if committed(work, out) { // by a commit that held the lock before us
		fmt.Fprintf(logw, "%s: done (committed already)\n", out)
		return nil
	}
	ds, store, err := openJobInput(out, job)
	if err != nil {
		return err
	}
	defer ds.Close()
	defer store.Close()
	now := time.Now()
	if err := commitJob(ctx, out, job, env, ds, store, nil, now, job.Created); err != nil {
		return err
	}
	writeSummary(logw, out, &job.Manifest, 0)
	return nil
}

// commitJob is relayout commit without the lock (held by the caller, who
// has rolled forward any interrupted commit: settleOut, or commitVerb),
// reading the input through ds and store: it joins the parts, takes the
// digests where planDigests says (the pipeline's, the verifier's, or
// checkUnits', which checks every unit against its journal), verifies
// every element with Env.Verify, writes the report and the manifest and
// commits.
// start is when the command began (the report's seconds), started the
// manifest's.
func commitJob(ctx context.Context, out string, job *Job, env Env, ds reader.Dataset, store *catalog.Store, tap *verify.Tap, start, started time.Time) error {
	logw, disp := env.log(), env.display()
	commitStart := time.Now()
	work := workDir(out)
	stage := filepath.Join(work, "stage")
	recs, err := jobRecords(work, job)
	if err != nil {
		return err
	}
	// An in-memory job's files are synced as each gets its stage name,
	// beside the joining of the others' chunks and the verification (the
	// disk writes back what the verifier reads from the page cache), and
	// before anything is committed.
	files := make(chan string, len(job.Manifest.Variables))
	synced := make(chan error, 1)
	go func() { synced <- syncStage(job, files) }()
	waitSynced := sync.OnceValue(func() error { return <-synced })
	defer waitSynced()
	err = rewriter.JoinParts(ctx, &job.Plan, stage, partPaths(work, job), recs, func(path string) { files <- path })
	close(files)
	if err != nil {
		return err
	}
	// --digest as the user asked it (an in-memory job with verification
	// leaves the digests to the verifier: its Digest is none), and where
	// the manifest's digests come from (planDigests).
	spec, specErr := parseSignature(job.Signature)
	digest := job.Digest
	if specErr == nil {
		digest = spec.Digest
	}
	digests := planDigests(!job.InMemory(), env.Verify, digest)
	inMemory := job.PipelineDigests() // an in-memory job's: the pipeline's digests (digests.pipeline), its I/O profile
	if inMemory {
		writeIOSummary(env.verbose(), job.Manifest.IO)
	} else {
		job.Manifest.IO = journalIO(job, recs)
	}
	if err := stageManifest(work, job); err != nil {
		return err
	}
	// The manifest's options say the digest before the verifier reads
	// them (Manifest.DigestKind: the algorithm it checks and fills).
	if specErr == nil {
		job.Manifest.Options = manifestOptions(spec, env.MaxMem, env.Jobs)
	}
	if err := job.CheckBudget(env.dataMem(store)); err != nil {
		return err
	}
	ok := true
	checks := map[string]string{}
	var verified string
	switch {
	case env.Verify:
		// Every element compared with the input, and the digests the
		// manifest lacks computed from what was compared equal
		// (digests.verifier).
		disp.Phase("verify")
		var summed int
		if ok, summed, err = VerifyOutput(ctx, store, ds, stage, &job.Manifest, env.checkLog(), env.dataMem(store), env.Jobs, disp.Monitor(), digests.verifier, false, tap); err != nil {
			return err
		}
		verified = "every element equals the input"
		if summed > 0 {
			verified += fmt.Sprintf(" (%d arrays of small blocks by positional checksum)", summed)
		}
		for _, v := range job.Manifest.Variables {
			checks[v.Name] = "ok"
		}
	case digests.readBack:
		disp.Phase("verify")
		if checks, ok, err = journalCheck(ctx, out, job, recs, env); err != nil {
			return err
		}
		verified = fmt.Sprintf("every unit's %v equals its journal record", digests.units)
		if digests.units == catalog.NoDigest {
			verified = "every unit present (--digest none: no unit digest)"
		}
	default:
		// Nothing to check the output against but the input.
		verified = "not verified (--no-verify)"
		for _, v := range job.Manifest.Variables {
			checks[v.Name] = "not verified"
		}
	}
	if digest == catalog.NoDigest && ok {
		fmt.Fprintf(logw, "digests: none recorded (--digest none): the digest of every dataset in %s stays empty\n", catalog.ManifestName)
	}
	if !ok {
		verified = "FAILED"
		if !digests.readBack {
			checks = nil
		}
	}
	job.Manifest.Report = buildReport(work, out, job, recs, checks, verified, start)
	if env.Report != "" {
		if err := writeReport(env.Report, job.Manifest.Report); err != nil {
			return err
		}
	}
	if !ok {
		return fmt.Errorf("%w: output left in %s, nothing committed to %s", ErrVerifyFailed, stage, out)
	}
	if env.app != nil {
		// What OUT holds must be what the input holds now, digest for
		// digest, before anything of this append is committed.
		if err := env.app.checkDigests(out, stage, &job.Manifest); err != nil {
			// Nothing of it is kept: the stage's files are copies of
			// OUT's grown by arrays the refusal does not take.
			waitSynced()
			os.RemoveAll(stage)
			return err
		}
	}
	job.Manifest.Schema = catalog.ManifestSchema
	job.Manifest.Started, job.Manifest.Finished = utcSecond(started), utcSecond(time.Now())
	v := env.Verify
	job.Manifest.Verified = &v
	disp.Phase("commit")
	rec := CommitRecord{Job: job.ID, Signature: job.Signature, Inputs: job.Inputs}
	if env.app != nil {
		rec.Removes = env.app.removes
	}
	if err := waitSynced(); err != nil {
		return err
	}
	killHookAt("commit")
	if err := commitStage(work, out, &job.Manifest, rec); err != nil {
		return err
	}
	if !inMemory {
		fmt.Fprintf(env.stepLog(), "committed: %d variables to %s (%d units from %d shard(s)) in %.2fs\n",
			len(job.Manifest.Variables), out, len(job.Units), job.Shards, time.Since(commitStart).Seconds())
	}
	return nil
}

// journalIO is the io section a journaled job's manifest can honestly
// have (catalog.ManifestIO's From "journal"): sums over its units' journal
// records (recs by unit), the logical bytes of the units they name.
func journalIO(job *Job, recs map[int]rewriter.UnitRecord) *catalog.ManifestIO {
	p := &catalog.ManifestIO{From: "journal"}
	var ns int64
	for _, u := range job.Units {
		rec, ok := recs[u.ID]
		if !ok {
			continue
		}
		p.LogicalBytes += u.Bytes
		p.ReadBytes += rec.ReadBytes
		p.WriteBytes += rec.Written
		ns += rec.Nanos
	}
	p.UnitSeconds = time.Duration(ns).Seconds()
	return p
}

// journalCheck is commit's check of a journaled job: the joined stage read
// back through its reader (a catalog in verify.db, removed after), every
// unit against its journal record, and the digests into the manifest
// (checkUnits).
func journalCheck(ctx context.Context, out string, job *Job, recs map[int]rewriter.UnitRecord, env Env) (map[string]string, bool, error) {
	work := workDir(out)
	outDB := filepath.Join(work, "verify.db")
	outDS, outStore, err := BuildCatalog(ctx, filepath.Join(work, "stage"), outDB, reader.Options{})
	if err != nil {
		return nil, false, err
	}
	checks, ok, err := checkUnits(ctx, job, recs, outStore, outDS, env.Jobs, env.MaxMem, env.checkLog())
	outStore.Close()
	outDS.Close()
	os.Remove(outDB)
	return checks, ok, err
}

func writeReport(path string, r *catalog.Report) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

func parseScope(s string) (planner.Scope, error) {
	sc, err := planner.ParseScope(s)
	if err != nil {
		return sc, Usagef("run: --scope: %v", err)
	}
	return sc, nil
}
