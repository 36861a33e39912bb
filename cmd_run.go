package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"relayout/catalog"
	"relayout/internal/fsinfo"
	"relayout/planner"
	"relayout/reader"
	"relayout/rewriter"
)

type runOptions struct {
	out        string
	layout     string
	chunkShape string
	chunks     string
	vars       []string
	strict     bool
	jobs       int
	maxMem     string
	catalog    string
	force      bool
	noVerify   bool
	digest     string // --digest sha256|none
	quiet      bool
	cpuProfile string
	memProfile string
	resume     bool   // journaled three-step path (jobs.go)
	report     string // --report FILE.json (with --resume)
	unitSize   string
	progress   string
	stats      time.Duration // --stats: interval of progress lines in a log
	compress   string
	readers    int
	stripeCnt  int
	stripeSize string
	noStripe   bool
	align      string
	scope      string // --layout merged: merge scope
	rpn        int    // --layout merged --scope node: ranks per node
	costModel  string // --layout auto: cost-model file (relayout calibrate)
	netcdf     bool   // --netcdf: dimension scales for netCDF-4 and xarray
}

func runRun(ctx context.Context, args []string) (err error) {
	var o runOptions
	fs := newFlags("run", "relayout run IN -o OUT [flags]",
		"relayout run diags/ -o reorganized/ --layout chunked --chunks 2x2x2")
	fs.StringVarP(&o.out, "out", "o", "", "output directory (required; must be empty unless --force)")
	fs.StringVar(&o.layout, "layout", "contiguous", "target layout: contiguous, chunked, merged (the merged cuboids of --scope are the write units; see README), or auto (chosen per array by the read-cost model for --readers; see relayout plan)")
	fs.StringVar(&o.scope, "scope", "rank", "with --layout merged: blocks merged per writer rank, node (--ranks-per-node) or globally")
	fs.StringVar(&o.costModel, "cost-model", "", "with --layout auto: latency and bandwidths from this file (written by relayout calibrate)")
	fs.IntVar(&o.rpn, "ranks-per-node", 0, "with --layout merged --scope node: writer ranks per node")
	fs.IntVar(&o.readers, "readers", defaultReaders, "readers the auto layout optimizes for (1-1024)")
	fs.StringVar(&o.chunkShape, "chunk-shape", "", "chunk shape for --layout chunked, e.g. 64,64,64")
	fs.StringVar(&o.chunks, "chunks", "", "chunk decomposition of the global shape for --layout chunked, e.g. 4x4x4")
	fs.StringVar(&o.compress, "compress", "", "compress chunks: deflate[:level] (level 1-9, default 4), with shuffle; needs --layout chunked")
	fs.IntVar(&o.stripeCnt, "stripe-count", 0, "Lustre: stripes per output file (default: by file size, see relayout plan)")
	fs.StringVar(&o.stripeSize, "stripe-size", "", "Lustre: stripe size, a multiple of 64KiB (default 1MiB, 4MiB for files of 64GiB or more)")
	fs.BoolVar(&o.noStripe, "no-stripe", false, "Lustre: keep the output directory's default striping (e.g. a site PFL)")
	fs.StringVar(&o.align, "align", "", "align HDF5 objects on any file system: SIZE[:THRESHOLD], e.g. 1MiB (default: stripe size on Lustre, block size on GPFS)")
	fs.StringArrayVar(&o.vars, "var", nil, "variable name or glob to rewrite (repeatable; default all)")
	fs.BoolVar(&o.strict, "strict", false, "refuse an incomplete input (steps written but not indexed, as a writer that died leaves them) instead of converting its complete steps with a warning")
	fs.IntVar(&o.jobs, "jobs", runtime.NumCPU(), "parallel pipelines")
	fs.StringVar(&o.maxMem, "max-mem", "1GiB", "memory budget for data buffers")
	fs.StringVar(&o.catalog, "catalog", "", "catalog database path (default OUT/.relayout/catalog.db)")
	fs.BoolVar(&o.force, "force", false, "write into a non-empty OUT, replacing files of the same name")
	fs.StringVar(&o.digest, "digest", "sha256", "digest recorded per dataset in the manifest: sha256 (of the logical array, row-major little-endian; checkable with hashlib), or none (saves a core's worth of hashing; verify still compares every element)")
	fs.BoolVar(&o.netcdf, "netcdf", false, "give every dimension a coordinate (HDF5 dimension scale) for netCDF-4, ncdump and xarray; openPMD-api 0.16 then cannot read the record components (see README)")
	fs.BoolVar(&o.noVerify, "no-verify", false, "skip re-reading the output and comparing it with the input before commit")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing but errors")
	fs.DurationVar(&o.stats, "stats", 30*time.Second, "without a terminal (--progress auto): a progress line at every phase and every interval (0: phases only)")
	fs.StringVar(&o.progress, "progress", "auto", "progress display: auto (a bar when stderr is a terminal), bar, json (typed events, one JSON object per line on stdout, schema relayout-progress/1, see README), none")
	fs.BoolVar(&o.resume, "resume", false, "journaled run: resume a killed run --resume on the same OUT, skipping finished work units (see README: resume)")
	fs.StringVar(&o.report, "report", "", "with --resume: write the job report (JSON, schema relayout-report/1) to this file")
	fs.StringVar(&o.unitSize, "unit-size", "", "with --resume: largest work unit (default 16MiB, smaller for small inputs)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile to this file (for developers)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a Go heap profile taken at the peak of the live heap to this file (for developers)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return usagef("run: --cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	if o.memProfile != "" {
		stop := peakHeapProfile(o.memProfile)
		defer stop()
	}
	if fs.NArg() != 1 {
		return usagef("run: want exactly one input, got %d%s", fs.NArg(), singleDash(fs, args))
	}
	if o.out == "" {
		return usagef("run: -o OUT is required")
	}
	progress, err := progressMode(o.progress, o.quiet)
	if err != nil {
		return err
	}
	if o.stats < 0 {
		return usagef("run: --stats %v: want a positive interval such as 30s, or 0 for none", o.stats)
	}
	in := fs.Arg(0)
	if o.layout != "contiguous" && o.layout != "chunked" && o.layout != planner.Merged && o.layout != planner.AutoLayout {
		return usagef("run: --layout %q: want contiguous, chunked, merged or auto", o.layout)
	}
	merge, err := mergeOptions(fs, o)
	if err != nil {
		return err
	}
	if (fs.Changed("readers") || o.costModel != "") && o.layout != planner.AutoLayout {
		return usagef("run: --readers and --cost-model need --layout auto")
	}
	if o.readers < 1 || o.readers > planner.MaxReaders {
		return usagef("run: --readers %d: want 1 to %d", o.readers, planner.MaxReaders)
	}
	chunkShape, err := parseDims(o.chunkShape)
	if err != nil {
		return err
	}
	chunks, err := parseDims(o.chunks)
	if err != nil {
		return err
	}
	if o.layout == "chunked" && (chunkShape == nil) == (chunks == nil) {
		return usagef("run: --layout chunked needs exactly one of --chunk-shape or --chunks")
	}
	if o.layout != "chunked" && (chunkShape != nil || chunks != nil) {
		return usagef("run: --chunk-shape and --chunks need --layout chunked")
	}
	deflate, err := parseCompress(o.compress)
	if err != nil {
		return err
	}
	if deflate > 0 && (o.layout == "contiguous" || o.layout == planner.Merged) {
		return usagef("run: --compress needs --layout chunked or auto (HDF5 filters apply to chunks; auto compresses the arrays it chunks)")
	}
	maxMem, err := parseBudget("run", "max-mem", o.maxMem)
	if err != nil {
		return err
	}
	if o.jobs < 1 {
		return usagef("run: --jobs must be at least 1")
	}
	storage, err := parseStorage(o.stripeCnt, o.stripeSize, o.noStripe, o.align)
	if err != nil {
		return err
	}
	if o.digest != "sha256" && o.digest != "none" {
		return usagef("run: --digest %q: want sha256 or none", o.digest)
	}
	if o.resume {
		if o.digest != "sha256" {
			return usagef("run: --resume needs --digest sha256: the journal checks every unit by its sha256")
		}
		return runResume(ctx, in, o, progress, chunkShape, chunks, deflate, storage)
	}
	if o.report != "" {
		return usagef("run: --report needs --resume: only the journaled job keeps a per-unit report (a plain run's account is its manifest, OUT/%s)", catalog.ManifestName)
	}
	if o.unitSize != "" {
		return usagef("run: --unit-size needs --resume (a plain run has no work units)")
	}
	// A write that runs out of space names OUT's directory and the way out.
	var need int64
	defer func() { err = withDiskHint(err, o.out, need, "rerun with --resume") }()
	if err := checkOutput(in, o.out, o.force); err != nil {
		return err
	}
	inAbs, err := realPath(in)
	if err != nil {
		return usagef("run: %s: %v", in, err)
	}
	spec := jobSpec{Input: inAbs, Vars: o.vars, Layout: o.layout, ChunkShape: chunkShape, Chunks: chunks,
		Deflate: deflate, Storage: storage, NoDigest: o.digest == "none", NetCDF: o.netcdf}
	if o.layout == planner.AutoLayout {
		spec.Readers = o.readers
		if spec.Cost, err = loadCostModel(o.costModel); err != nil {
			return err
		}
	}
	if o.layout == planner.Merged {
		spec.Scope, spec.RanksPerNode = o.scope, o.rpn
	}
	logw := io.Writer(os.Stderr)
	if o.quiet {
		logw = io.Discard
	}
	disp, logw := newDisplay(progress, o.stats, in, o.out, logw)
	defer func() {
		err = interrupted(ctx, err, o.out, false)
		disp.finish(ctx, err)
	}()
	lock, err := lockOut(o.out, "run", os.Stderr)
	if err != nil {
		return err
	}
	defer lock.Release()
	if done, err := settleOut(inAbs, o.out, spec.signature(), o.force, logw); done || err != nil {
		return err
	}
	if err := checkEmpty(o.out, o.force); err != nil {
		return err
	}
	inputs, err := rewriter.InputFiles(inAbs)
	if err != nil {
		return err
	}

	work := filepath.Join(o.out, ".relayout")
	stage := filepath.Join(work, "stage")
	if err := os.RemoveAll(stage); err != nil {
		return err
	}
	if err := os.MkdirAll(stage, 0o755); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	dbPath := o.catalog
	if dbPath == "" {
		dbPath = filepath.Join(work, "catalog.db")
	}

	start := time.Now()
	disp.phase("catalog")
	ds, store, err := buildCatalog(ctx, in, dbPath, reader.Options{Vars: o.vars, Strict: o.strict})
	if err != nil {
		return err
	}
	defer ds.Close()
	defer store.Close()
	vars, err := store.Variables()
	if err != nil {
		return err
	}
	skipped := ds.Info().Skipped
	if len(vars) == 0 {
		why := ""
		if len(skipped) > 0 {
			why = fmt.Sprintf("%d objects skipped, the first: %s; ", len(skipped), skipped[0])
		}
		return fmt.Errorf("run: %s: no variable to rewrite (%ssee relayout catalog %s): %w", in, why, in, catalog.ErrNotFound)
	}
	fmt.Fprintf(logw, "catalog: %d variables from %s (%s) in %.2fs\n", len(vars), in, ds.Info().Format, time.Since(start).Seconds())
	if len(skipped) > 0 {
		fmt.Fprintf(logw, "skipped: %d objects not rewritten (listed with the reason under \"skipped\" in %s), the first: %s\n",
			len(skipped), catalog.ManifestName, skipped[0])
	}
	if o.layout == "contiguous" {
		// Contiguous datasets are allocated whole: an output the file
		// system cannot hold is refused before it is written.
		need = contiguousBytes(vars)
		if err := checkSpace(o.out, need, "rerun"); err != nil {
			return err
		}
	}
	if o.layout == "chunked" {
		if err := chunkNotes(ctx, store, chunkShape, chunks, logw); err != nil {
			return err
		}
	}
	outFS, err := fsinfo.Detect(o.out)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	largest := int64(0)
	for _, v := range vars {
		largest = max(largest, v.Bytes)
	}
	fmt.Fprintf(logw, "storage: %s is on %s; largest file: %s\n", o.out, outFS.Name, rewriter.FileLayout(outFS, largest, storage))

	mon := disp.monitor()
	ropts := rewriter.Options{
		Layout: o.layout, ChunkShape: chunkShape, Chunks: chunks, Deflate: deflate,
		Jobs: o.jobs, MaxMem: maxMem, Version: version, Progress: logw, NoDigest: o.digest == "none",
		NetCDF: o.netcdf, FS: outFS, Storage: storage, Monitor: mon, Merge: merge,
	}
	if o.layout == planner.AutoLayout {
		ropts.Layout, ropts.LayoutFor = "", autoLayouts(o.readers, spec.Cost, logw)
	}
	disp.phase("rewrite")
	m, err := rewriter.Run(ctx, store, ds, stage, ropts)
	if err != nil {
		return err
	}
	rewriter.WriteIOSummary(logw, m.IO)
	disp.set("variables", len(m.Variables))
	disp.set("bytes", mon.Progress().Done)
	disp.set("verified", !o.noVerify)
	if !o.noVerify {
		disp.phase("verify")
		ok, err := verifyPair(ctx, store, ds, stage, filepath.Join(work, "verify.db"), m, logw, maxMem)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: output left in %s, nothing committed to %s", errVerifyFailed, stage, o.out)
		}
	}
	m.Schema = catalog.ManifestSchema
	m.Options = manifestOptions(spec, maxMem, o.jobs)
	m.Started, m.Finished = utcSecond(start), utcSecond(time.Now())
	verified := !o.noVerify
	m.Verified = &verified
	disp.phase("commit")
	if err := rewriter.CommitStage(work, o.out, m, rewriter.CommitRecord{Signature: spec.signature(), Inputs: inputs}); err != nil {
		return err
	}
	fmt.Fprintf(logw, "done: %d variables written to %s in %.2fs\n", len(m.Variables), o.out, time.Since(start).Seconds())
	return nil
}

// autoLayouts chooses each array's layout with the planner's read-cost model,
// as `relayout plan --layout auto` does, and logs each distinct choice per
// variable once.
func autoLayouts(readers int, cost *planner.CostParams, logw io.Writer) func(*catalog.Array) (planner.Layout, error) {
	opts := planner.PlanOptions{Layout: planner.AutoLayout, Readers: readers, Cost: cost}
	logged := map[string]bool{}
	return func(a *catalog.Array) (planner.Layout, error) {
		l, why, err := planner.LayoutFor(a.Shape, a.DType.Size, opts)
		if err != nil {
			return l, err
		}
		name := l.Kind
		if l.Kind == planner.Chunked {
			name += " " + dimsOrScalar(l.Chunk)
		}
		if key := a.Var + "\x00" + name; !logged[key] {
			logged[key] = true
			fmt.Fprintf(logw, "layout auto: %s: %s (%s)\n", a.Var, name, why)
		}
		return l, nil
	}
}

// parseStorage turns the striping and alignment flags into an override.
func parseStorage(count int, size string, noStripe bool, align string) (fsinfo.Override, error) {
	ov := fsinfo.Override{StripeCount: count, NoStripe: noStripe}
	var err error
	if size != "" {
		if ov.StripeSize, err = parseSize(size); err != nil {
			return ov, usagef("run: --stripe-size %q: not a size", size)
		}
	}
	if align != "" {
		a, th, _ := strings.Cut(align, ":")
		if ov.Align, err = parseSize(a); err != nil {
			return ov, usagef("run: --align %q: want SIZE[:THRESHOLD], e.g. 1MiB or 1MiB:64KiB", align)
		}
		if th != "" {
			if ov.AlignThreshold, err = parseSize(th); err != nil {
				return ov, usagef("run: --align %q: want SIZE[:THRESHOLD], e.g. 1MiB or 1MiB:64KiB", align)
			}
		}
	}
	if err := ov.Check(); err != nil {
		return ov, usagef("run: %v", err)
	}
	return ov, nil
}

// parseCompress parses --compress: "" (none), "deflate" or "deflate:N".
func parseCompress(s string) (int, error) {
	if s == "" || s == "none" {
		return 0, nil
	}
	name, level, found := strings.Cut(s, ":")
	if name != "deflate" && name != "gzip" {
		return 0, usagef("run: --compress %q: relayout writes deflate (gzip) with shuffle, e.g. --compress deflate:4", s)
	}
	if !found {
		return 4, nil
	}
	n, err := strconv.Atoi(level)
	if err != nil || n < 1 || n > 9 {
		return 0, usagef("run: --compress %q: level must be 1-9", s)
	}
	return n, nil
}

// checkOutput refuses an OUT inside the input (or equal to the input's own
// directory) and a non-empty OUT without --force, unless OUT holds a
// relayout output, a commit of one in progress or a prepared job
// (settleOut and checkEmpty decide those under OUT's lock).
func checkOutput(in, out string, force bool) error {
	inAbs, err := realPath(in)
	if err != nil {
		return fmt.Errorf("run: %s: %w", in, catalog.ErrNotFound)
	}
	outAbs, err := realPath(out)
	if err != nil {
		return usagef("run: -o %s: %v", out, err)
	}
	st, err := os.Stat(inAbs)
	if err != nil {
		return fmt.Errorf("run: %s: %w", in, catalog.ErrNotFound)
	}
	inDir := inAbs
	if !st.IsDir() {
		inDir = filepath.Dir(inAbs)
		if outAbs == inDir {
			return usagef("run: -o %s is the input's own directory: relayout never writes into its input", out)
		}
		// A BP3 file NAME.bp keeps its sub-files in NAME.bp.dir/: part of
		// the input.
		if sub := inAbs + ".dir"; outAbs == sub || strings.HasPrefix(outAbs, sub+string(filepath.Separator)) {
			return usagef("run: -o %s is inside %s.dir, the sub-file directory of the input %s: relayout never writes into its input", out, in, in)
		}
	} else if outAbs == inDir || strings.HasPrefix(outAbs, inDir+string(filepath.Separator)) {
		return usagef("run: -o %s is inside the input %s: relayout never writes into its input", out, in)
	}
	if outAbs == inAbs {
		return usagef("run: -o %s is the input", out)
	}
	for _, n := range []string{"committed", "committing", "job.json"} {
		if _, err := os.Stat(filepath.Join(workDir(out), n)); err == nil {
			return nil
		}
	}
	return checkEmpty(out, force)
}

// checkEmpty refuses an OUT with entries other than .relayout, unless force.
func checkEmpty(out string, force bool) error {
	entries, err := os.ReadDir(out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return usagef("run: -o %s: %v", out, err)
	}
	for _, e := range entries {
		if e.Name() != ".relayout" && !force {
			return usagef("run: -o %s is not empty (use --force to write into it)", out)
		}
	}
	return nil
}

// realPath resolves symlinks of the longest existing prefix of p, so that an
// OUT that does not exist yet can still be compared with the input.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for cur := abs; ; cur = filepath.Dir(cur) {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		if cur == filepath.Dir(cur) {
			return abs, nil
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
	}
}

// manifestOptions are the manifest's options of a job planned with spec;
// maxMem and jobs of a plain run (0 for a sharded job: each shard had its own).
func manifestOptions(spec jobSpec, maxMem int64, jobs int) *catalog.ManifestOptions {
	o := &catalog.ManifestOptions{Layout: spec.Layout, ChunkShape: spec.ChunkShape, Chunks: spec.Chunks,
		Vars: spec.Vars, Compression: "none", Digest: "sha256", NetCDF: spec.NetCDF, Readers: spec.Readers,
		Scope: spec.Scope, RanksPerNode: spec.RanksPerNode, MaxMem: maxMem, Jobs: jobs}
	if spec.Deflate > 0 {
		o.Compression = fmt.Sprintf("deflate:%d", spec.Deflate)
	}
	if spec.NoDigest {
		o.Digest = "none"
	}
	if spec.Shards > 0 {
		o.Shards, o.MaxMem, o.Jobs = spec.Shards, 0, 0
	}
	return o
}

// utcSecond is t in UTC to the second (RFC 3339 in JSON).
func utcSecond(t time.Time) *time.Time {
	u := t.UTC().Truncate(time.Second)
	return &u
}

// interrupted adds to the error of an interrupted run what OUT/.relayout
// holds and how to go on (the error still wraps context.Canceled).
func interrupted(ctx context.Context, err error, out string, resume bool) error {
	if err == nil || (ctx.Err() == nil && !errors.Is(err, context.Canceled)) {
		return err
	}
	work := workDir(out)
	var size int64
	filepath.WalkDir(work, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				size += fi.Size()
			}
		}
		return nil
	})
	if rewriter.Committed(work, out) {
		return err
	}
	if _, e := os.Stat(filepath.Join(work, "committing")); e == nil {
		return fmt.Errorf("%w\nthe commit to %s had begun: rerun the same command (or relayout commit %s) to finish it", err, out, out)
	}
	how := "rerun the same command to start again (relayout run --resume keeps finished work across interruptions)"
	if resume {
		how = "rerun the same command to continue: the units already written are kept"
	}
	return fmt.Errorf("%w\nnothing was committed to %s; %s holds the unfinished job (%s): %s, or delete %s", err, out, work, humanBytes(size), how, work)
}
