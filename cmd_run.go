package main

import (
	"context"
	"io"
	"os"
	"runtime"
	"time"

	"relayout/catalog"
	"relayout/job"
)

type runOptions struct {
	out        string
	layout     layoutFlags
	jobs       int
	maxMem     string
	catalog    string
	force      bool
	noVerify   bool
	quiet      bool
	verbose    bool
	cpuProfile string
	memProfile string
	tracePath  string
	resume     bool   // the journaled job (plan + rewrite + commit in one process)
	appendNew  bool   // --append: extend OUT's finished output with what the input gained
	report     string // --report FILE.json (with --resume)
	unitSize   string
	progress   string
	stats      time.Duration // --stats: interval of progress lines in a log
	stripeCnt  int
	stripeSize string
	noStripe   bool
	align      string
}

func runRun(ctx context.Context, args []string) (err error) {
	var o runOptions
	fs := newFlags("run", "relayout run IN -o OUT [flags]",
		"relayout run diags/ -o reorganized/ --layout chunked --chunks 2x2x2")
	fs.StringVarP(&o.out, "out", "o", "", "output directory (required; must be empty unless --force)")
	lf := &o.layout
	fs.StringVar(&lf.layout, "layout", string(job.DefaultLayout), "target layout: contiguous, chunked, merged (the merged cuboids of --scope are the write units; see docs/layouts.md), or auto (chosen per array by the read-cost model for --readers; see relayout plan); relayout plan previews the same default")
	fs.StringVar(&lf.scope, "scope", "rank", "with --layout merged: blocks merged per writer rank, node (--ranks-per-node) or globally")
	fs.StringVar(&lf.costModel, "cost-model", "", "with --layout auto (or --compress alone): latency and bandwidths from this file (written by relayout calibrate)")
	fs.IntVar(&lf.rpn, "ranks-per-node", 0, "with --layout merged --scope node: writer ranks per node")
	fs.IntVar(&lf.readers, "readers", job.DefaultReaders, "readers the auto layout (and the chunks of --compress alone) optimize for (1-1024)")
	fs.StringVar(&lf.chunkShape, "chunk-shape", "", "chunk shape for --layout chunked, e.g. 64,64,64")
	fs.StringVar(&lf.chunks, "chunks", "", "chunk decomposition of the global shape for --layout chunked, e.g. 4x4x4")
	fs.StringVar(&lf.compress, "compress", "", "compress chunks: deflate[:level] (level 1-9, default 4), with shuffle; with --layout chunked or auto, or alone: then chunked, the chunk shape of each array chosen and printed (the auto layout's chunks, else at most 1MiB)")
	fs.IntVar(&o.stripeCnt, "stripe-count", 0, "Lustre: stripes per output file (default: by file size, see relayout plan)")
	fs.StringVar(&o.stripeSize, "stripe-size", "", "Lustre: stripe size, a multiple of 64KiB (default 1MiB, 4MiB for files of 64GiB or more)")
	fs.BoolVar(&o.noStripe, "no-stripe", false, "Lustre: keep the output directory's default striping (e.g. a site PFL)")
	fs.StringVar(&o.align, "align", "", "align HDF5 objects on any file system: SIZE[:THRESHOLD], e.g. 1MiB (default: stripe size on Lustre, block size on GPFS)")
	fs.StringArrayVar(&lf.vars, "var", nil, "variable name or glob to rewrite (repeatable; default all)")
	fs.BoolVar(&lf.strict, "strict", false, "refuse an incomplete input (steps written but not indexed, as a writer that died leaves them) instead of converting its complete steps with a warning")
	fs.IntVar(&o.jobs, "jobs", runtime.NumCPU(), "parallel pipelines")
	fs.StringVar(&o.maxMem, "max-mem", "1GiB", "memory budget for data buffers")
	fs.StringVar(&o.catalog, "catalog", "", "catalog database path (default OUT/.relayout/catalog.db)")
	fs.BoolVar(&o.force, "force", false, "write into a non-empty OUT, replacing files of the same name")
	fs.StringVar(&lf.digest, "digest", catalog.SHA256.String(), "digest recorded per dataset in the manifest (and per unit in the journals of --resume), of the logical array as row-major little-endian bytes: sha256 (checkable with hashlib or sha256sum), blake3 (cryptographic, about half sha256's CPU; checkable with b3sum), xxh64 (XXH64 seed 0, not cryptographic, about 5x less CPU; checkable with python3-xxhash or xxhsum), or none (verify still compares every element); see docs/verification.md: Digests")
	fs.BoolVar(&lf.fill, "fill", false, "write partly covered arrays dense when contiguous, holes as the fill value (NaN, 0 or the input's), instead of chunked with the holes unallocated (they read as the fill value either way; see docs/performance.md: How big and how long)")
	fs.BoolVar(&lf.netcdf, "netcdf", false, "give every dimension a coordinate (HDF5 dimension scale) for netCDF-4, ncdump and xarray; openPMD-api 0.16 then cannot read the record components (see docs/output.md)")
	fs.BoolVar(&lf.noViews, "no-views", false, "make no ParaView views (the view_<step>.hdf files: VTKHDF ImageData of every step's uniform meshes over the variables' datasets, a few KiB each; see docs/output.md: ParaView views)")
	fs.BoolVar(&o.noVerify, "no-verify", false, "skip re-reading the output and comparing it with the input before commit")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "print nothing but errors")
	verboseFlag(fs, &o.verbose, "also print the diagnostics: each variable's figures, the verification's OK lines, the I/O profile (io: lines, also in the manifest's io section), informational notes")
	fs.DurationVar(&o.stats, "stats", 30*time.Second, "without a terminal (--progress auto): a progress line at every phase and every interval (0: phases only)")
	fs.StringVar(&o.progress, "progress", "auto", "progress display: auto (a bar when stderr is a terminal), bar, json (typed events, one JSON object per line on stdout, schema relayout-progress/1, see docs/usage.md: Progress), none")
	fs.BoolVar(&o.resume, "resume", false, "journaled run: resume a killed run --resume on the same OUT, skipping finished work units (see docs/batch-jobs.md: Resume)")
	fs.BoolVar(&o.appendNew, "append", false, "extend OUT's finished output with what the input gained since (new openPMD iterations, new BP steps: new datasets), verified, committed atomically, refusing a change to what OUT holds, naming it (see docs/usage.md: Incremental runs)")
	fs.StringVar(&o.report, "report", "", "write the job report (JSON, schema relayout-report/1: per variable blocks, bytes, seconds, verification) to this file")
	fs.StringVar(&o.unitSize, "unit-size", "", "with --resume: largest work unit (default 16MiB, smaller for small inputs)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a Go CPU profile to this file (for developers)")
	fs.StringVar(&o.tracePath, "trace", "", "write a Go execution trace to this file (for developers: go tool trace)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a Go heap profile taken at the peak of the live heap to this file (for developers)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	stopProfile, err := startCPUProfile("run", o.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	stopTrace, err := startTrace("run", o.tracePath)
	if err != nil {
		return err
	}
	defer stopTrace()
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
	if err := checkVerbosity("run", o.quiet, o.verbose); err != nil {
		return err
	}
	progress, err := progressMode(o.progress, o.quiet)
	if err != nil {
		return err
	}
	if o.stats < 0 {
		return usagef("run: --stats %v: want a positive interval such as 30s, or 0 for none", o.stats)
	}
	in := fs.Arg(0)
	spec, err := lf.spec(fs, "run", in, true)
	if err != nil {
		return err
	}
	maxMem, err := parseBudget("run", "max-mem", o.maxMem)
	if err != nil {
		return err
	}
	tuneGC(maxMem)
	if o.jobs < 1 {
		return usagef("run: --jobs must be at least 1")
	}
	if spec.Storage, err = parseStorage(o.stripeCnt, o.stripeSize, o.noStripe, o.align); err != nil {
		return err
	}
	if o.resume {
		spec.Shards = 1
		if o.unitSize != "" {
			if spec.UnitBytes, err = parseSize(o.unitSize); err != nil {
				return err
			}
		}
	} else if o.unitSize != "" {
		return usagef("run: --unit-size needs --resume (a plain run has no work units)")
	}
	if o.appendNew && (o.resume || o.force) {
		return usagef("run: --append is not for --resume or --force (it extends a finished output with a plain run)")
	}
	if err := spec.Validate("run"); err != nil {
		return err
	}
	logw := io.Writer(os.Stderr)
	if o.quiet {
		logw = io.Discard
	}
	env := job.Env{MaxMem: maxMem, Jobs: o.jobs, Verify: !o.noVerify, Report: o.report, Force: o.force,
		Catalog: o.catalog, Version: version, Verb: "run", Append: o.appendNew}
	if o.resume && o.catalog != "" {
		env.Catalog = "" // the journaled job keeps its catalog in OUT/.relayout
	}
	disp, logw := newDisplay(progress, o.stats, in, o.out, logw)
	env.Log, env.Display = logw, disp
	if o.verbose {
		env.Verbose = logw
	}
	err = cliError(job.Run(ctx, o.out, spec, env))
	disp.finish(ctx, err)
	return err
}
