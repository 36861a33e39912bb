package main

import (
	"context"
	"io"
	"os"
	"runtime"

	"relayout/job"
)

func runCommit(ctx context.Context, args []string) (err error) {
	var report string
	var noVerify, quiet, verbose bool
	var jobs int
	var maxMemS string
	fs := newFlags("commit", "relayout commit OUT [flags]",
		"relayout commit reorganized/ --report report.json")
	fs.StringVar(&report, "report", "", "write the job report (JSON, schema relayout-report/1) to this file")
	fs.BoolVar(&noVerify, "no-verify", false, "check each unit's digest (the job's --digest) against the shards' journals only, not every element against the input")
	fs.IntVar(&jobs, "jobs", runtime.NumCPU(), "parallel readers while checking")
	fs.StringVar(&maxMemS, "max-mem", "1GiB", "memory budget for the units read back (fewer in flight when they would not fit)")
	fs.BoolVarP(&quiet, "quiet", "q", false, "print nothing but errors")
	verboseFlag(fs, &verbose, "also print the diagnostics: the checks' OK lines per variable, the verification's io: line")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("commit: want exactly one OUT, got %d%s", fs.NArg(), singleDash(fs, args))
	}
	if jobs < 1 {
		return usagef("commit: --jobs must be at least 1")
	}
	if err := checkVerbosity("commit", quiet, verbose); err != nil {
		return err
	}
	maxMem, err := parseBudget("commit", "max-mem", maxMemS)
	if err != nil {
		return err
	}
	tuneGC(maxMem)
	logw := io.Writer(os.Stderr)
	if quiet {
		logw = io.Discard
	}
	env := job.Env{Log: logw, Verify: !noVerify, Report: report, Jobs: jobs, MaxMem: maxMem, Version: version, Verb: "commit"}
	if verbose {
		env.Verbose = logw
	}
	return job.Commit(ctx, fs.Arg(0), env)
}
