package calibrate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
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

	// The library read model's figures (planner/libcost.go, issue 19).
	Random4KS     float64 `json:"random_4k_s"`        // random 4 KiB pread, trimmed mean
	Random256KS   float64 `json:"random_256k_s"`      // random 256 KiB pread, trimmed mean
	StreamLatency float64 `json:"stream_latency_s"`   // fitted: t(size) = latency + size/random bandwidth
	RandomBps     float64 `json:"random_bytes_per_s"` // fitted random-read bandwidth
	RandomOverlap float64 `json:"random_overlap"`     // random 4 KiB reads of Streams readers at once: serial time ÷ wall time
	CallS         float64 `json:"call_s"`             // an 8-byte pread from the page cache, median
	CopyBps       float64 `json:"copy_bytes_per_s"`   // memory copy in 512-byte rows
	PageBytes     int64   `json:"page_bytes"`         // the system's page size
	FreshByteS    float64 `json:"fresh_byte_s"`       // seconds a byte of memory the process touches for the first time
	Cores         float64 `json:"cores"`              // CPU work of NumCPU workers at once ÷ one worker's
	CPUShare      float64 `json:"cpu_share"`          // of a core a busy thread got (its CPU time ÷ wall time)
	// Chunks is what a chunk costs a new reader process (MeasureChunks).
	Chunks *ChunkResult `json:"chunks,omitempty"`
}

const (
	smallRead = 4 << 10
	midRead   = 256 << 10
	bigRead   = 8 << 20
)

// trimmedMean is the mean of v without its lowest and highest tenth: a sum
// of many reads is what the model predicts (so not the median), without
// the worst outliers of a shared machine.
func trimmedMean(v []float64) float64 {
	v = slices.Clone(v)
	slices.Sort(v)
	cut := len(v) / 10
	v = v[cut : len(v)-cut]
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

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
	res.Random4KS = max(trimmedMean(lat), 1e-9)
	var serial float64
	for _, v := range lat {
		serial += v
	}
	serial /= float64(len(lat))
	slices.Sort(lat)
	res.LatencyS = max(lat[len(lat)/2], 1e-9)

	// The same reads by Streams readers at once: how many the storage
	// serves together (their latencies overlap).
	drop()
	var wg sync.WaitGroup
	errs := make([]error, o.Streams)
	seeds := make([]uint64, o.Streams)
	for s := range seeds {
		seeds[s] = rng.Uint64()
	}
	t0 := time.Now()
	for s := range o.Streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seeds[s], 1))
			b := make([]byte, smallRead)
			for range o.Samples {
				if _, err := f.ReadAt(b, r.Int64N(blocks)*smallRead); err != nil {
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
	reads := float64(o.Samples * o.Streams)
	res.RandomOverlap = max(1, min(float64(o.Streams), serial*reads/max(time.Since(t0).Seconds(), 1e-9)))

	// Random reads of 256 KiB (a chunk, a block): with the 4 KiB ones, the
	// latency and bandwidth of a read that starts a stream.
	drop()
	mid := make([]byte, midRead)
	mids := make([]float64, o.Samples)
	for i := range mids {
		off := rng.Int64N(max(1, (o.Size-midRead)/smallRead)) * smallRead
		t := time.Now()
		if _, err := f.ReadAt(mid, off); err != nil {
			return res, fmt.Errorf("calibrate: %w", err)
		}
		mids[i] = time.Since(t).Seconds()
	}
	res.Random256KS = max(trimmedMean(mids), 1e-9)

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
	clear(errs)
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

	res.RandomBps = res.ReaderBps
	if d := res.Random256KS - res.Random4KS; d > 0 {
		res.RandomBps = min(float64(midRead-smallRead)/d, res.ReaderBps)
	}
	res.StreamLatency = max(res.Random4KS-smallRead/res.RandomBps, 1e-7)

	// A small read from the page cache: the cost of one call.
	if _, err := f.ReadAt(mid, 0); err != nil {
		return res, fmt.Errorf("calibrate: %w", err)
	}
	calls := make([]float64, 1024)
	tiny := make([]byte, 8)
	for i := range calls {
		off := rng.Int64N(midRead - 8)
		t := time.Now()
		if _, err := f.ReadAt(tiny, off); err != nil {
			return res, fmt.Errorf("calibrate: %w", err)
		}
		calls[i] = time.Since(t).Seconds()
	}
	slices.Sort(calls)
	res.CallS = max(calls[len(calls)/2], 1e-9)
	res.CopyBps = copyRate(buf)
	res.PageBytes = int64(os.Getpagesize())
	if res.FreshByteS, err = freshMemory(res.PageBytes); err != nil {
		return res, fmt.Errorf("calibrate: %w", err)
	}
	res.Cores = freeCores(buf[:1<<20])
	res.CPUShare = cpuShare()
	return res, nil
}

// copyRate is the bytes per second of copying src in 512-byte rows to a
// buffer at a row stride of 4 KiB (a chunk's rows into a larger array, the
// way a library copies out of its chunk cache), best of three passes.
func copyRate(src []byte) float64 {
	const row, stride = 512, 4 << 10
	rows := len(src) / row
	dst := make([]byte, rows*stride/8+stride)
	best := 0.0
	for range 3 {
		t := time.Now()
		for i := range rows {
			o := (i * stride) % (len(dst) - row)
			copy(dst[o:o+row], src[i*row:(i+1)*row])
		}
		best = max(best, float64(rows*row)/max(time.Since(t).Seconds(), 1e-9))
	}
	return best
}

// freeCores is how many cores readers on this machine can use at once: the
// work NumCPU workers do together in a fixed time over what one does alone
// (other load on a shared machine lowers it), at least 1.
func freeCores(b []byte) float64 {
	work := func(workers int) float64 {
		const span = 60 * time.Millisecond
		var wg sync.WaitGroup
		done := make([]int, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				dst := make([]byte, len(b))
				for t := time.Now(); time.Since(t) < span; done[w]++ {
					copy(dst, b)
				}
			}()
		}
		wg.Wait()
		n := 0
		for _, d := range done {
			n += d
		}
		return float64(n)
	}
	one := work(1)
	all := work(runtime.NumCPU())
	return max(1, min(float64(runtime.NumCPU()), all/max(one, 1)))
}

// cpuShare is the share of a core a busy thread gets here now: its CPU time
// over 100 ms of wall time, locked to one OS thread (1 on an idle machine,
// less when other work competes for the cores).
func cpuShare() float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var a, b unix.Rusage
	if unix.Getrusage(unix.RUSAGE_THREAD, &a) != nil {
		return 1
	}
	t := time.Now()
	x := uint64(1)
	for time.Since(t) < 100*time.Millisecond {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	wall := time.Since(t).Seconds()
	if unix.Getrusage(unix.RUSAGE_THREAD, &b) != nil || x == 0 {
		return 1
	}
	cpu := float64(b.Utime.Nano()+b.Stime.Nano()-a.Utime.Nano()-a.Stime.Nano()) / 1e9
	return max(0.01, min(1, cpu/wall))
}

// freshMemory is the seconds a byte of anonymous memory costs the first
// time it is written (the page fault and the kernel's zeroing: what a
// reader pays for the array it reads into; on a virtual machine several
// times a copy's cost), the fastest of three fresh 32 MiB mappings.
func freshMemory(page int64) (float64, error) {
	const size = 32 << 20
	best := math.Inf(1)
	for range 3 {
		m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			return 0, err
		}
		t := time.Now()
		for i := int64(0); i < size; i += page {
			m[i] = 1
		}
		best = min(best, time.Since(t).Seconds())
		if err := unix.Munmap(m); err != nil {
			return 0, err
		}
	}
	return best / size, nil
}
