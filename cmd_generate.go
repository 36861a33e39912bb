package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"relayout/internal/gen"
)

func runGenerate(ctx context.Context, args []string) error {
	var shapeS, chunkS, stepsS string
	var seed uint64
	var force, quiet bool
	fs := newFlags("generate", "relayout generate DIR [flags]",
		"relayout generate sample/ --shape 64,64,64 --chunk-shape 16,16,16 --steps 0,100")
	fs.StringVar(&shapeS, "shape", "64,64,64", "global mesh shape NX,NY,NZ")
	fs.StringVar(&chunkS, "chunk-shape", "16,16,16", "stored chunk shape (written in scattered order)")
	fs.StringVar(&chunkS, "chunk", "16,16,16", "")
	_ = fs.MarkDeprecated("chunk", "use --chunk-shape")
	fs.StringVar(&stepsS, "steps", "0,100", "iterations, one file each")
	fs.Uint64Var(&seed, "seed", 1, "seed of the scattered chunk order")
	fs.BoolVar(&force, "force", false, "write into a non-empty DIR, replacing files of the same name")
	fs.BoolVarP(&quiet, "quiet", "q", false, "print nothing but errors")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("generate: want exactly one output directory")
	}
	shape, err := parseDims(shapeS)
	if err != nil {
		return err
	}
	chunk, err := parseDims(chunkS)
	if err != nil {
		return err
	}
	if len(shape) != 3 || len(chunk) != 3 {
		return usagef("generate: --shape and --chunk-shape need three dimensions")
	}
	var steps []int64
	for _, s := range strings.Split(stepsS, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || v < 0 {
			return usagef("generate: --steps %q: want non-negative integers like 0,100", stepsS)
		}
		steps = append(steps, v)
	}
	if entries, err := os.ReadDir(fs.Arg(0)); err == nil && len(entries) > 0 && !force {
		return usagef("generate: %s is not empty (%s, e.g. %s); use --force to write into it, replacing files of the same name",
			fs.Arg(0), plural(int64(len(entries)), "entry"), entries[0].Name())
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return usagef("generate: %s: %v", fs.Arg(0), err)
	}
	files, err := gen.WriteOpenPMD(gen.OpenPMDSpec{
		Dir: fs.Arg(0), Shape: [3]int64(shape), Chunk: [3]int64(chunk), Steps: steps, Seed: seed,
	})
	if err != nil {
		return err
	}
	if quiet {
		return nil
	}
	fmt.Printf("wrote %d files to %s (openPMD file-based series, %v chunks of %v, values: %s)\n",
		len(files), fs.Arg(0), shape, chunk, gen.ValueRule)
	return nil
}
