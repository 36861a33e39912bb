package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"relayout/job"
	"relayout/reader"
)

func runVerify(ctx context.Context, args []string) error {
	var vars []string
	var maxMemS string
	var quiet, verbose, exact bool
	fs := newFlags("verify", "relayout verify IN OUT",
		"relayout verify diags/ reorganized/   # exit 0: every element equal; 1: a difference")
	fs.StringArrayVar(&vars, "var", nil, "verify only these variables (name or glob, repeatable)")
	fs.StringVar(&maxMemS, "max-mem", "1GiB", "memory for the input and output copies being compared")
	fs.BoolVarP(&quiet, "quiet", "q", false, "print only the differences (DIFF lines), not the OK lines")
	verboseFlag(fs, &verbose, "also print what the verifier read (the io: verify line)")
	fs.BoolVar(&exact, "exact", false, "compare every element, none by positional checksum (arrays of small blocks are otherwise compared by one, exact but for a chance below 2^-30 an array)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkVerbosity("verify", quiet, verbose); err != nil {
		return err
	}
	maxMem, err := parseBudget("verify", "max-mem", maxMemS)
	if err != nil {
		return err
	}
	tuneGC(maxMem)
	if fs.NArg() != 2 {
		return usagef("verify: want IN and OUT, got %d arguments%s", fs.NArg(), singleDash(fs, args))
	}
	in, out := fs.Arg(0), fs.Arg(1)
	tmp, err := os.MkdirTemp("", "relayout-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ds, store, err := job.BuildCatalog(ctx, in, filepath.Join(tmp, "in.db"), reader.Options{Vars: vars})
	if err != nil {
		return err
	}
	defer ds.Close()
	defer store.Close()
	// OK and DIFF lines are verify's result; the io: line is a
	// diagnostic (-v); -q keeps the DIFF lines alone.
	w := io.Writer(os.Stdout)
	switch {
	case quiet:
		w = job.RouteLines(os.Stdout, io.Discard, "OK ", "io: ")
	case !verbose:
		w = job.RouteLines(os.Stdout, io.Discard, "io: ")
	}
	ok, _, err := job.VerifyOutput(ctx, store, ds, out, nil, w, maxMem, 0, nil, false, exact, nil)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %s differs from %s", errVerifyFailed, out, in)
	}
	return nil
}
