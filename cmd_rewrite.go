package main

import (
	"context"
	"io"
	"os"
	"runtime"

	"relayout/job"
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
	tuneGC(maxMem)
	logw := io.Writer(os.Stderr)
	if quiet {
		logw = io.Discard
	}
	var shard job.Shard
	if shardS != "" {
		shard, err = job.ParseShard(shardS)
	} else {
		shard, err = job.ShardFromEnv(os.Getenv)
	}
	if err != nil {
		return err
	}
	return job.RewriteShard(ctx, fs.Arg(0), shard, job.Env{Log: logw, Jobs: jobs, MaxMem: maxMem, Version: version, Verb: "rewrite"})
}
