package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"relayout/reader"
)

func runVerify(ctx context.Context, args []string) error {
	var vars []string
	var maxMemS string
	fs := newFlags("verify", "relayout verify IN OUT",
		"relayout verify diags/ reorganized/   # exit 0: every element equal; 1: a difference")
	fs.StringArrayVar(&vars, "var", nil, "verify only these variables (name or glob, repeatable)")
	fs.StringVar(&maxMemS, "max-mem", "1GiB", "memory for the input and output copies being compared")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	maxMem, err := parseSize(maxMemS)
	if err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("verify: want IN and OUT, got %d arguments (see relayout verify --help)", fs.NArg())
	}
	in, out := fs.Arg(0), fs.Arg(1)
	tmp, err := os.MkdirTemp("", "relayout-verify-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	ds, store, err := buildCatalog(ctx, in, filepath.Join(tmp, "in.db"), reader.Options{Vars: vars})
	if err != nil {
		return err
	}
	defer ds.Close()
	defer store.Close()
	ok, err := verifyPair(ctx, store, ds, out, filepath.Join(tmp, "out.db"), nil, os.Stdout, maxMem)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: %s differs from %s", errVerifyFailed, out, in)
	}
	return nil
}
