package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"relayout/internal/fsinfo"
)

// runResume is relayout run --resume: plan -o, rewrite --shard 0/1 and
// commit in one process under OUT's lock, each step skipping what an earlier
// (killed) run --resume finished: a prepared job is kept when planned with
// the same input and options, finished units are skipped by the journal,
// a commit that began moving files finishes its moves, and a committed OUT
// is reported as done.
func runResume(ctx context.Context, in string, o runOptions, progress string, chunkShape, chunks []int64, deflate int, storage fsinfo.Override) error {
	logw := io.Writer(os.Stderr)
	if o.quiet {
		logw = io.Discard
	}
	inAbs, err := realPath(in)
	if err != nil {
		return usagef("run: %s: %v", in, err)
	}
	spec := jobSpec{Input: inAbs, Vars: o.vars, Layout: o.layout, ChunkShape: chunkShape, Chunks: chunks,
		Deflate: deflate, Storage: storage, Shards: 1, NetCDF: o.netcdf, Strict: o.strict}
	if o.layout == "auto" {
		spec.Readers = o.readers
		if spec.Cost, err = loadCostModel(o.costModel); err != nil { // was ignored by run --resume
			return err
		}
	}
	if o.layout == "merged" {
		spec.Scope, spec.RanksPerNode = o.scope, o.rpn
	}
	if o.unitSize != "" {
		if spec.UnitBytes, err = parseSize(o.unitSize); err != nil {
			return err
		}
	}
	maxMem, err := parseBudget("run", "max-mem", o.maxMem)
	if err != nil {
		return err
	}
	disp, logw := newDisplay(progress, o.stats, in, o.out, logw)
	err = runJob(ctx, in, o.out, spec, o.force, !o.noVerify, o.report, o.jobs, maxMem, logw, disp)
	err = withDiskHint(err, o.out, 0, "rerun the same command (--resume keeps the finished units)")
	err = interrupted(ctx, err, o.out, true)
	disp.finish(ctx, err)
	return err
}

// runJob runs the three steps of spec's job on out in this process.
//
// disp (nil: none) shows the phases: catalog (planning the job), rewrite
// (the shards), verify (commit's check, then its renames).
func runJob(ctx context.Context, in, out string, spec jobSpec, force, verify bool, report string, jobs int, maxMem int64, logw io.Writer, disp *display) error {
	disp.phase("catalog")
	if err := checkOutput(in, out, force); err != nil { // again under the lock
		return err
	}
	lock, err := lockOut(out, "run --resume", logw)
	if err != nil {
		return err
	}
	defer lock.Release()
	if done, err := settleOut(spec.Input, out, spec.signature(), force, logw); done || err != nil {
		return err
	}
	job, err := existingJob(out, spec, force)
	if err != nil {
		return err
	}
	if err := checkEmpty(out, force || job != nil); err != nil {
		return err
	}
	if job == nil {
		if job, err = prepareJob(ctx, out, spec, logw); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(logw, "resuming the job prepared in %s (%d units)\n", workDir(out), len(job.Units))
	}
	disp.phase("rewrite")
	disp.set("variables", len(job.Manifest.Variables))
	disp.set("verified", verify)
	for s := range job.Shards {
		if err := rewriteShard(ctx, out, job, s, jobs, maxMem, logw); err != nil {
			return err
		}
	}
	disp.phase("verify")
	return commitJob(ctx, out, job, verify, report, jobs, maxMem, logw)
}
