package calibrate

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"relayout/catalog"
	"relayout/internal/h5"
)

// What a chunk costs a reader, measured through the library in a fresh
// process. Reading a chunked dataset through HDF5's chunk cache costs more
// per chunk than the library's own work on a warm process suggests: a new
// reader process (h5py in a fresh interpreter, each of R reader processes)
// gets its chunk buffers from malloc as memory it has never touched, and
// on a virtual machine the first touch of a page is what a chunk costs
// most (one 2-core guest: 25-35 µs a 4 KiB chunk and 0.3-1 ms a MiB,
// against 3.3 µs a chunk warm). The library model (planner/libcost.go)
// takes the measured cost as ChunkCost + size·ChunkByteCost per chunk
// touched, besides the first fill of each reader's cache (fresh memory,
// Result.FreshByteS):
//
//	scratch file (16 MiB a dataset, 128³ float64, random bytes):
//	  /contiguous   /chunks-8 (4 KiB)  /chunks-16 (32 KiB)
//	  /chunks-32 (256 KiB)   /chunks-48 (864 KiB, the largest under the
//	  1 MiB default chunk cache)
//	per dataset, ProbeRuns times: drop the file from the page cache, run
//	  Probe in a new process (open, read the whole dataset, close: what a
//	  reader of the read benchmark does), keep the median
//	per chunk: (median − contiguous median − the cache's first fill) ÷
//	           chunks, for each chunk size
//	fit:       per chunk = ChunkS + bytes·ChunkByteS (least squares, both ≥ 0)

const probeSide = 128

// probeType is the probe datasets' element type (float64, the usual field).
var probeType = catalog.DType{Kind: catalog.Float, Size: 8}

// probeSides are the chunk edges measured: 4 KiB to 864 KiB chunks of
// float64, all held by HDF5's default 1 MiB chunk cache (larger chunks are
// read run by run, which the model costs as reads).
var probeSides = []int64{8, 16, 32, 48}

func probeDataset(side int64) string {
	if side == 0 {
		return "/contiguous"
	}
	return fmt.Sprintf("/chunks-%d", side)
}

// ChunkResult is the chunk cost measured through the library.
type ChunkResult struct {
	ChunkS     float64            `json:"chunk_s"`      // fitted seconds a chunk touched
	ChunkByteS float64            `json:"chunk_byte_s"` // fitted seconds a byte of a chunk touched
	ReadS      map[string]float64 `json:"read_s"`       // median seconds of each probe read (dataset → s)
	Runs       int                `json:"runs"`
}

// ProbeFunc reads dataset dset of the HDF5 file whole in a new process (the
// caller's executable, which then calls Probe) and returns the seconds
// Probe reported.
type ProbeFunc func(file, dset string) (float64, error)

// Probe opens file, reads dataset dset whole into memory and closes the
// file: the seconds it took. It runs in the process ProbeFunc started.
func Probe(file, dset string) (float64, error) {
	t := time.Now()
	f, err := h5.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := f.OpenSlabReader(dset, probeType, 0)
	if err != nil {
		return 0, err
	}
	shape := r.Shape()
	n := int64(8)
	for _, v := range shape {
		n *= v
	}
	if n > 1<<30 {
		r.Close()
		return 0, fmt.Errorf("calibrate: %s:%s: %d bytes is not a probe dataset", file, dset, n)
	}
	dst := make([]byte, n)
	err = r.Read(make([]int64, len(shape)), shape, dst)
	r.Close()
	if err != nil {
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	return time.Since(t).Seconds(), nil
}

// MeasureChunks writes the scratch file in dir, times the probes and fits
// the chunk cost, less the first fill of the chunk cache (cacheBytes of
// memory new to the process at freshByteS a byte, which the model counts
// once per reader). The scratch file is removed whatever happens.
func MeasureChunks(dir string, runs int, probe ProbeFunc, seed uint64, cacheBytes int64, freshByteS float64) (res ChunkResult, err error) {
	if runs <= 0 {
		runs = 3
	}
	res = ChunkResult{ReadS: map[string]float64{}, Runs: runs}
	tmp, err := os.CreateTemp(dir, ".relayout-calibrate-*.h5")
	if err != nil {
		return res, fmt.Errorf("calibrate: %w", err)
	}
	name := tmp.Name()
	tmp.Close()
	defer func() {
		if rerr := os.Remove(name); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = fmt.Errorf("calibrate: %w", rerr)
		}
	}()
	if err := writeProbeFile(name, seed); err != nil {
		return res, err
	}
	f, err := os.Open(name)
	if err != nil {
		return res, fmt.Errorf("calibrate: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return res, fmt.Errorf("calibrate: %w", err)
	}
	// Rounds over every dataset, so a slow moment of a shared machine
	// spreads over all of them rather than one.
	sides := append([]int64{0}, probeSides...)
	times := make([][]float64, len(sides))
	for range runs {
		for i, s := range sides {
			_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
			t, err := probe(name, probeDataset(s))
			if err != nil {
				return res, fmt.Errorf("calibrate: probe of %s:%s: %w", name, probeDataset(s), err)
			}
			times[i] = append(times[i], t)
		}
	}
	med := make([]float64, len(sides))
	for i, s := range sides {
		slices.Sort(times[i])
		med[i] = times[i][len(times[i])/2]
		res.ReadS[probeDataset(s)] = med[i]
	}
	// Least squares of per-chunk = a + b·bytes over the chunk sizes.
	var xs, ys []float64
	for i, s := range sides[1:] {
		per := (probeSide + s - 1) / s
		chunks := float64(per * per * per)
		xs = append(xs, float64(s*s*s*8))
		fill := float64(min(cacheBytes, per*per*per*s*s*s*8)) * freshByteS
		ys = append(ys, max(0, med[i+1]-med[0]-fill)/chunks)
	}
	res.ChunkS, res.ChunkByteS = fitLine(xs, ys)
	return res, nil
}

// fitLine is the least-squares a + b·x through the points, both clamped to
// at least 0 (a negative fitted term is noise: the other one refitted alone).
func fitLine(xs, ys []float64) (a, b float64) {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	if d := n*sxx - sx*sx; d > 0 {
		b = (n*sxy - sx*sy) / d
		a = (sy - b*sx) / n
	} else {
		a = sy / n
	}
	switch {
	case b < 0:
		return sy / n, 0
	case a < 0:
		return 0, max(0, sxy/sxx)
	}
	return a, b
}

// writeProbeFile writes the scratch HDF5 file: a contiguous dataset and one
// per chunk edge, each probeSide³ float64 of random bytes (no filters, so
// nothing compresses).
func writeProbeFile(name string, seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 0xc4c))
	shape := []int64{probeSide, probeSide, probeSide}
	w, err := h5.Create(name)
	if err != nil {
		return err
	}
	closed := false
	defer func() {
		if !closed {
			w.Close()
		}
	}()
	fill := func(b []byte) {
		for i := 0; i+8 <= len(b); i += 8 {
			v := rng.Uint64()
			for k := range 8 {
				b[i+k] = byte(v >> (8 * k))
			}
		}
	}
	cont, err := w.CreateDataset(probeDataset(0), h5.DatasetSpec{DType: probeType, Shape: shape})
	if err != nil {
		return err
	}
	addr := cont.Address()
	if err := cont.Close(); err != nil {
		return err
	}
	for _, s := range probeSides {
		d, err := w.CreateDataset(probeDataset(s), h5.DatasetSpec{DType: probeType, Shape: shape, Chunk: []int64{s, s, s}})
		if err != nil {
			return err
		}
		chunk := make([]byte, s*s*s*8)
		for i := int64(0); i < probeSide; i += s {
			for j := int64(0); j < probeSide; j += s {
				for k := int64(0); k < probeSide; k += s {
					fill(chunk)
					if err := d.WriteChunk([]int64{i, j, k}, chunk); err != nil {
						d.Close()
						return err
					}
				}
			}
		}
		if err := d.Close(); err != nil {
			return err
		}
	}
	closed = true
	if err := w.Close(); err != nil {
		return err
	}
	if addr < 0 {
		return fmt.Errorf("calibrate: %s: contiguous probe dataset has no address", name)
	}
	// The contiguous dataset's bytes, written where the library allocated them.
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("calibrate: %w", err)
	}
	buf := make([]byte, 1<<20)
	total := probeSide * probeSide * probeSide * int64(8)
	for off := int64(0); off < total; off += int64(len(buf)) {
		fill(buf)
		if _, err := f.WriteAt(buf[:min(int64(len(buf)), total-off)], addr+off); err != nil {
			f.Close()
			return fmt.Errorf("calibrate: %w", err)
		}
	}
	return f.Close() // MeasureChunks syncs the whole file before dropping it from the cache
}
