package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"relayout/internal/calibrate"
	"relayout/planner"
)

// costModelSchema names the cost-model file format written by `relayout
// calibrate` and read by --cost-model (fields are only ever added).
const costModelSchema = "relayout-cost-model/1"

// costModelFile is the --cost-model document.
type costModelFile struct {
	Schema          string            `json:"schema"`
	LatencySeconds  float64           `json:"latency_s"`
	ReaderBandwidth float64           `json:"reader_bytes_per_s"`
	AggBandwidth    float64           `json:"aggregate_bytes_per_s"`
	SieveBytes      int64             `json:"sieve_bytes"`
	Measured        *calibrate.Result `json:"measured,omitempty"`
}

// defaultCostModelPath is where calibrate writes by default:
// $XDG_CONFIG_HOME/relayout/cost-model.json (~/.config/... on Linux). plan
// and run read it only when given with --cost-model.
func defaultCostModelPath() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "relayout", "cost-model.json"), nil
}

// loadCostModel reads a --cost-model file (nil for an empty path).
func loadCostModel(path string) (*planner.CostParams, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--cost-model: %v", err)
	}
	var f costModelFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, usagef("--cost-model %s: %v", path, err)
	}
	if f.Schema != costModelSchema {
		return nil, usagef("--cost-model %s: schema %q, want %q", path, f.Schema, costModelSchema)
	}
	cp := planner.CostParams{Latency: f.LatencySeconds, ReaderBW: f.ReaderBandwidth, AggBW: f.AggBandwidth, Sieve: f.SieveBytes}
	if err := cp.Check(); err != nil {
		return nil, usagef("--cost-model %s: %v", path, err)
	}
	return &cp, nil
}

func runCalibrate(ctx context.Context, args []string) error {
	var size, out string
	var samples, streams int
	fs := newFlags("calibrate", "relayout calibrate DIR [-o FILE] [--size 256MiB]",
		"relayout calibrate /scratch/me/ && relayout plan diags/ --cost-model ~/.config/relayout/cost-model.json")
	var quiet bool
	fs.StringVarP(&out, "out", "o", "", "cost-model file to write (default $XDG_CONFIG_HOME/relayout/cost-model.json); use it with plan/run/inspect --cost-model")
	fs.StringVar(&out, "output", "", "")
	_ = fs.MarkDeprecated("output", "use -o/--out")
	fs.StringVar(&size, "size", "256MiB", "scratch file size (written in DIR, then removed)")
	fs.IntVar(&samples, "samples", 256, "random 4 KiB reads timed for the latency (median)")
	fs.IntVar(&streams, "streams", 4, "parallel readers for the aggregate bandwidth")
	fs.BoolVarP(&quiet, "quiet", "q", false, "print nothing but errors (the file is still written)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("calibrate: want exactly one directory, got %d%s", fs.NArg(), singleDash(fs, args))
	}
	dir := fs.Arg(0)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return usagef("calibrate: %s is not a directory", dir)
	}
	n, err := parseBudget("calibrate", "size", size) // a scratch file below 64KiB measures nothing
	if err != nil {
		return err
	}
	if samples < 1 || streams < 1 {
		return usagef("calibrate: --samples and --streams must be at least 1")
	}
	if out == "" {
		if out, err = defaultCostModelPath(); err != nil {
			return fmt.Errorf("calibrate: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r, err := calibrate.Measure(dir, calibrate.Options{Size: n, Samples: samples, Streams: streams})
	if err != nil {
		return err
	}
	f := costModelFile{Schema: costModelSchema, LatencySeconds: r.LatencyS, ReaderBandwidth: r.ReaderBps,
		AggBandwidth: r.AggregateBps, SieveBytes: planner.DefaultCostParams().Sieve, Measured: &r}
	b, err := jsonIndent(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	if quiet {
		return nil
	}
	note := ""
	if !r.CacheDropped {
		note = " (page cache could not be dropped: figures may be the cache's)"
	}
	fmt.Printf("directory:  %s (%s scratch file, removed)%s\n", dir, humanBytes(r.FileBytes), note)
	fmt.Printf("latency:    %.3g s per request (median of %d random 4 KiB reads)\n", r.LatencyS, r.Samples)
	fmt.Printf("bandwidth:  %s/s one reader, %s/s with %d readers\n", humanBytes(int64(r.ReaderBps)), humanBytes(int64(r.AggregateBps)), r.Streams)
	fmt.Printf("written:    %s (use: relayout plan IN --cost-model %s)\n", out, out)
	return nil
}
