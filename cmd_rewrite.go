package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"relayout/rewriter"
)

func runRewrite(ctx context.Context, args []string) (err error) {
	var shardS string
	var jobs int
	var quiet bool
	var maxMemS string
	fs := newFlags("rewrite", "relayout rewrite OUT [--shard I/N] [flags]",
		"srun relayout rewrite reorganized/      # shard from SLURM_PROCID/SLURM_NTASKS")
	fs.StringVar(&shardS, "shard", "", "shard I of N (0-based), e.g. 2/4; default: from the launcher's environment (SLURM_ARRAY_TASK_ID/COUNT, OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/SIZE, SLURM_PROCID/NTASKS)")
	fs.IntVar(&jobs, "jobs", runtime.NumCPU(), "parallel pipelines")
	fs.StringVar(&maxMemS, "max-mem", "1GiB", "memory budget for data buffers (fewer units in flight when they would not fit)")
	fs.BoolVarP(&quiet, "quiet", "q", false, "print nothing but errors")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("rewrite: want exactly one OUT (prepared by relayout plan IN -o OUT --shards N), got %d%s", fs.NArg(), singleDash(fs, args))
	}
	if jobs < 1 {
		return usagef("rewrite: --jobs must be at least 1")
	}
	maxMem, err := parseBudget("rewrite", "max-mem", maxMemS)
	if err != nil {
		return err
	}
	out := fs.Arg(0)
	defer func() {
		err = withDiskHint(err, out, 0, "rerun the same command (the shard's journal keeps its finished units)")
	}()
	logw := io.Writer(os.Stderr)
	if quiet {
		logw = io.Discard
	}
	var shard, n int
	from := "--shard"
	if shardS != "" {
		shard, n, err = parseShard(shardS)
	} else {
		shard, n, from, err = shardFromEnv(os.Getenv)
	}
	if err != nil {
		return err
	}
	work := workDir(out)
	if rewriter.Committed(work, out) {
		fmt.Fprintf(logw, "%s: done (committed already)\n", out)
		return nil
	}
	job, err := rewriter.LoadJob(work)
	if err != nil {
		return err
	}
	if n != job.Shards {
		return usagef("rewrite: shard %d/%d (from %s) but %s was planned for %d shards", shard, n, from, out, job.Shards)
	}
	// Shards share OUT's lock (plan and commit take it exclusively) and
	// each holds its own: two processes never run the same shard.
	shared, err := rewriter.LockShared(filepath.Join(work, "lock"), "rewrite")
	if err != nil {
		return err
	}
	defer shared.Release()
	own, err := rewriter.LockExclusive(filepath.Join(work, "lock."+rewriter.ShardName(shard, n)), fmt.Sprintf("rewrite --shard %d/%d", shard, n))
	if err != nil {
		return err
	}
	defer own.Release()
	if msg := own.StaleMessage(); msg != "" {
		fmt.Fprintln(logw, "relayout:", msg)
	}
	return rewriteShard(ctx, out, job, shard, jobs, maxMem, logw)
}
