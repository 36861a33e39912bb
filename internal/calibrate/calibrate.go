package calibrate

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Options control Measure; zero values take the defaults.
type Options struct {
	Size    int64 // scratch file bytes (default 256 MiB, at least 1 MiB)
	Samples int   // random reads for latency (default 256)
	Streams int   // parallel readers for the aggregate bandwidth (default 4)
	Seed    uint64
}

// Result is one measurement.
type Result struct {
	Dir          string  `json:"dir"`
	FileBytes    int64   `json:"file_bytes"`
	LatencyS     float64 `json:"latency_s"`             // median 4 KiB random pread
	ReaderBps    float64 `json:"reader_bytes_per_s"`    // one sequential reader
	AggregateBps float64 `json:"aggregate_bytes_per_s"` // Streams readers at once
	Streams      int     `json:"streams"`
	Samples      int     `json:"samples"`
	CacheDropped bool    `json:"cache_dropped"` // posix_fadvise DONTNEED succeeded
}

const (
	smallRead = 4 << 10
	bigRead   = 8 << 20
)

// Measure runs the measurement in dir.
func Measure(dir string, o Options) (res Result, err error) {
	if o.Size <= 0 {
		o.Size = 256 << 20
	}
	o.Size = max(o.Size, 1<<20) / smallRead * smallRead
	if o.Samples <= 0 {
		o.Samples = 256
	}
	if o.Streams <= 0 {
		o.Streams = 4
	}
	res = Result{Dir: dir, FileBytes: o.Size, Streams: o.Streams, Samples: o.Samples}
	f, err := os.CreateTemp(dir, ".relayout-calibrate-*")
	if err != nil {
		return res, fmt.Errorf("calibrate: %w", err)
	}
	name := f.Name()
	defer func() {
		f.Close()
		if rerr := os.Remove(name); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = fmt.Errorf("calibrate: %w", rerr)
		}
	}()
	// Incompressible content (deduplicating or compressing storage would
	// otherwise flatter the bandwidth).
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	buf := make([]byte, bigRead)
	for i := 0; i+8 <= len(buf); i += 8 {
		v := rng.Uint64()
		for k := range 8 {
			buf[i+k] = byte(v >> (8 * k))
		}
	}
	for off := int64(0); off < o.Size; off += bigRead {
		n := min(int64(bigRead), o.Size-off)
		buf[0] ^= byte(off >> 23) // no two blocks alike
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return res, fmt.Errorf("calibrate: %w", err)
		}
	}
	if err := f.Sync(); err != nil {
		return res, fmt.Errorf("calibrate: %w", err)
	}
	drop := func() bool { return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED) == nil }

	// Latency: random small reads, median.
	res.CacheDropped = drop()
	lat := make([]float64, o.Samples)
	small := make([]byte, smallRead)
	blocks := o.Size / smallRead
	for i := range lat {
		off := rng.Int64N(blocks) * smallRead
		t := time.Now()
		if _, err := f.ReadAt(small, off); err != nil {
			return res, fmt.Errorf("calibrate: %w", err)
		}
		lat[i] = time.Since(t).Seconds()
	}
	slices.Sort(lat)
	res.LatencyS = max(lat[len(lat)/2], 1e-9)

	// One sequential reader.
	drop()
	t := time.Now()
	for off := int64(0); off < o.Size; off += bigRead {
		n := min(int64(bigRead), o.Size-off)
		if _, err := f.ReadAt(buf[:n], off); err != nil {
			return res, fmt.Errorf("calibrate: %w", err)
		}
	}
	res.ReaderBps = float64(o.Size) / max(time.Since(t).Seconds(), 1e-9)

	// Streams readers at once, each on its own part.
	drop()
	part := (o.Size + int64(o.Streams) - 1) / int64(o.Streams)
	var wg sync.WaitGroup
	errs := make([]error, o.Streams)
	t = time.Now()
	for s := range o.Streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := make([]byte, bigRead)
			for off := int64(s) * part; off < min(int64(s+1)*part, o.Size); off += bigRead {
				n := min(int64(bigRead), min(int64(s+1)*part, o.Size)-off)
				if _, err := f.ReadAt(b[:n], off); err != nil {
					errs[s] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("calibrate: %w", err)
	}
	res.AggregateBps = max(float64(o.Size)/max(time.Since(t).Seconds(), 1e-9), res.ReaderBps)
	return res, nil
}
