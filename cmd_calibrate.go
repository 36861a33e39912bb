package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"relayout/internal/calibrate"
	"relayout/planner"
)

// costModelSchema names the cost-model file format written by `relayout
// calibrate` and read by --cost-model (fields are only ever added).
const costModelSchema = "relayout-cost-model/1"

// costModelFile is the --cost-model document.
type costModelFile struct {
	Schema string `json:"schema"`
	planner.CostDoc
	Measured *calibrate.Result `json:"measured,omitempty"`
}

// HDF5's default data sieve buffer and chunk cache (H5Pset_sieve_buf_size,
// H5Pset_cache: 64 KiB and 1 MiB), which h5py and most readers keep.
const (
	hdf5SieveBuffer = 64 << 10
	hdf5ChunkCache  = 1 << 20
)

// hdf5ChunkSeconds is HDF5's work per chunk a read touches (B-tree lookup,
// chunk cache entry), measured, not calibrated: h5py reading 192³ float64
// from the page cache took 0.240 s in 13,824 chunks of 8³ against 0.056 s
// contiguous (HDF5 1.10.8, this project's 2-core machine, under a load that
// left a reader about a quarter of a core): 13 µs a chunk, 3.3 µs on an idle
// core (the model stretches it by the measured CPU share). It is the floor
// of the chunk cost calibrate measures in a new process (MeasureChunks),
// which adds what a cold chunk costs a reader that has just started.
const hdf5ChunkSeconds = 3.3e-6

// hdf5CallSeconds is HDF5's work per read beyond the system call, measured
// likewise: whole reads of 448³ float64 in 64³ and 112³ chunks (above the
// chunk cache: one read per 512- or 896-byte row, 1.4 and 0.8 million reads)
// took 1.7 and 2.0 µs a read more than contiguous, the pread itself 1.2 µs:
// 0.6 µs under the same load, 0.15 µs on an idle core.
const hdf5CallSeconds = 0.15e-6

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
	cp := f.Params()
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
	var probe string
	fs.StringVarP(&out, "out", "o", "", "cost-model file to write (default $XDG_CONFIG_HOME/relayout/cost-model.json); use it with plan/run/inspect --cost-model")
	fs.StringVar(&out, "output", "", "")
	_ = fs.MarkDeprecated("output", "use -o/--out")
	fs.StringVar(&size, "size", "256MiB", "scratch file size (written in DIR, then removed)")
	fs.IntVar(&samples, "samples", 256, "random 4 KiB reads timed for the latency (median)")
	fs.IntVar(&streams, "streams", 4, "parallel readers for the aggregate bandwidth")
	fs.BoolVarP(&quiet, "quiet", "q", false, "print nothing but errors (the file is still written)")
	// The chunk probe's reader process (internal/calibrate/chunks.go):
	// relayout calibrate --probe-read DSET FILE prints the seconds reading
	// dataset DSET of FILE whole took.
	fs.StringVar(&probe, "probe-read", "", "")
	_ = fs.MarkHidden("probe-read")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if probe != "" {
		if fs.NArg() != 1 {
			return usagef("calibrate --probe-read DSET FILE: want one file")
		}
		s, err := calibrate.Probe(fs.Arg(0), probe)
		if err != nil {
			return err
		}
		fmt.Println(strconv.FormatFloat(s, 'g', -1, 64))
		return nil
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
	ch, err := calibrate.MeasureChunks(dir, 3, probeInNewProcess, 0, hdf5ChunkCache, r.FreshByteS)
	if err != nil {
		return err
	}
	r.Chunks = &ch
	f := costModelFile{Schema: costModelSchema, Measured: &r, CostDoc: planner.CostDoc{LatencySeconds: r.StreamLatency, ReaderBandwidth: r.ReaderBps,
		AggBandwidth: r.AggregateBps, SieveBytes: planner.DefaultCostParams().Sieve, ChunkSeconds: max(hdf5ChunkSeconds, ch.ChunkS*r.CPUShare), ChunkByteSeconds: ch.ChunkByteS * r.CPUShare, Cores: r.Cores, CPUShare: r.CPUShare,
		SieveBufferBytes: hdf5SieveBuffer, ChunkCacheBytes: hdf5ChunkCache, PageBytes: r.PageBytes,
		CallSeconds: r.CallS + hdf5CallSeconds, RandomBandwidth: r.RandomBps, RandomOverlap: r.RandomOverlap, FreshByteSeconds: r.FreshByteS * r.CPUShare, CopyBandwidth: r.CopyBps}}
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
	fmt.Printf("latency:    %.3g s per request (median of %d random 4 KiB reads; the model takes the fitted latency below)\n", r.LatencyS, r.Samples)
	fmt.Printf("bandwidth:  %s/s one reader, %s/s with %d readers\n", humanBytes(int64(r.ReaderBps)), humanBytes(int64(r.AggregateBps)), r.Streams)
	fmt.Printf("random:     %.3g s + size at %s/s per read starting a stream (4 KiB %.3g s, 256 KiB %.3g s, trimmed means); %.2g served at once to %d readers\n",
		r.StreamLatency, humanBytes(int64(r.RandomBps)), r.Random4KS, r.Random256KS, r.RandomOverlap, r.Streams)
	fmt.Printf("library:    %.3g s per call (+%.2g s HDF5), copies at %s/s, fresh memory %.3g s a MiB, %.3g cores free, %.2g of a core per reader; HDF5 sieve buffer %s, chunk cache %s\n",
		r.CallS, hdf5CallSeconds, humanBytes(int64(r.CopyBps)), r.FreshByteS*(1<<20), r.Cores, r.CPUShare, humanBytes(hdf5SieveBuffer), humanBytes(hdf5ChunkCache))
	fmt.Printf("chunks:     %.3g s + %.3g s a MiB per chunk a new reader process reads through HDF5's chunk cache (cold reads of %s in 4 KiB to 864 KiB chunks against contiguous, medians of %d)\n",
		ch.ChunkS, ch.ChunkByteS*(1<<20), humanBytes(16<<20), ch.Runs)
	fmt.Printf("written:    %s (use: relayout plan IN --cost-model %s)\n", out, out)
	return nil
}

// probeInNewProcess is calibrate's ProbeFunc: this executable, run as
// `relayout calibrate --probe-read DSET FILE`, reads the dataset in a
// process of its own, as a reader does.
func probeInNewProcess(file, dset string) (float64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(exe, "calibrate", "--probe-read", dset, file)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	s, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || s < 0 {
		return 0, fmt.Errorf("probe printed %q", out)
	}
	return s, nil
}
