package verify

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"relayout/catalog"
	"relayout/internal/limits"
)

// DefaultMaxMem is the budget when Options.MaxMem is not set.
const DefaultMaxMem = limits.DefaultMaxMem

// Options configure Output.
type Options struct {
	// MaxMem bounds the memory of the comparison (output bands, their
	// coverage, chunk caches and input blocks), in bytes; <= 0 means
	// DefaultMaxMem.
	MaxMem int64
	// Jobs is the number of input blocks fetched and compared at once,
	// over every array in flight (at most min(Jobs, 4) arrays); <= 0
	// means GOMAXPROCS.
	Jobs int
	// Progress, when set, is called after every band (and constant
	// record) with the bytes verified so far, the total (the logical
	// bytes of every input array) and the variable being verified, from
	// one goroutine at a time.
	Progress func(Progress)
	// Log receives one line per variable ("OK  B/x  2 steps  ... sha256 ok",
	// "blake3 ok" or "xxh64 ok" when the manifest's options.digest is that, or "DIFF
	// ...") and one for series.h5; nil discards them.
	Log io.Writer
	// FillDigests says the caller records Result.Digests in the manifest
	// (the writer computed none): the digests of constant records are
	// computed even when the manifest records none, and the OK lines say
	// "sha256 computed" instead of "sha256 not recorded" (or xxh64: the
	// algorithm is the manifest's options.digest).
	FillDigests bool
	// Exact compares every element of every block with the output, never
	// by the positional checksum (checksum.go); the checksum path compares
	// again exactly whatever differs, so Exact changes only what a
	// difference costs to find, and the chance (below 2^-30 an array) that
	// a difference is missed.
	Exact bool
	// Tap, when not nil, holds input blocks summed while the rewriter read
	// them (tap.go): the checksum path reads only the others. Its point is
	// the check's.
	Tap *Tap
}

// Result is what Check found.
type Result struct {
	// OK is false on any difference.
	OK bool
	// Digests holds, for every output dataset (and constant record) whose
	// every element was compared equal to the input, the digest (hex, of
	// the manifest's algorithm: Manifest.DigestKind) of its logical array,
	// row-major little-endian (what the manifest's digest means), computed from the bytes read through the HDF5
	// library (a constant record: its value repeated over its shape).
	Digests map[catalog.Key]string
	// IO is what the check read.
	IO IO
	// Checksummed is the arrays compared by positional checksum (the
	// others element by element).
	Checksummed int
}

// IO is what a Check read: the input through its Source, the output
// through the HDF5 library.
type IO struct {
	// Input is the input Source's counters over the check (zero when it
	// counts no reads): the reads that fetched every
	// block, coalesced as the Source coalesces them.
	Input catalog.IOCounters
	// OutputBytes are the bytes of array bands read through the HDF5
	// library (H5Dread, decoded into memory) in OutputReads calls; the
	// small reads of constant records, box tables and attributes are not
	// counted.
	OutputBytes, OutputReads int64
	Seconds                  float64 // the check's wall time
}

// Progress is how far an Output call is.
type Progress struct {
	Done, Total int64  // logical bytes verified, of all
	Variable    string // the variable being verified
}

// difference is a mismatch: a result, not an error.
type difference struct{ msg string }

func (d *difference) Error() string { return d.msg }

func difff(format string, args ...any) error { return &difference{fmt.Sprintf(format, args...)} }

// Output is Check without the digests: ok is Result.OK.
func Output(ctx context.Context, in *catalog.Store, inSrc catalog.Source, outDir string, m *catalog.Manifest, opts Options) (ok bool, err error) {
	res, err := Check(ctx, in, inSrc, outDir, m, opts)
	return res.OK, err
}

// Check compares the output directory outDir (a stage directory or OUT)
// with the input: every array of the catalog in, whose blocks are fetched
// through inSrc, against the dataset the manifest m lists for it (nil: read
// outDir/relayout.json), read through the HDF5 library; then series.h5.
// Result.OK is false on any difference (each variable's first is printed
// to opts.Log); err is for I/O errors, cancellation and corrupt input only.
func Check(ctx context.Context, in *catalog.Store, inSrc catalog.Source, outDir string, m *catalog.Manifest, opts Options) (Result, error) {
	var err error
	if m == nil {
		mp := filepath.Join(outDir, catalog.ManifestName)
		if m, err = catalog.ReadManifest(mp); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// Not an output at all (or IN and OUT swapped): no retry helps.
				return Result{}, fmt.Errorf("verify: %s is not a relayout output (no %s): %w", outDir, catalog.ManifestName, catalog.ErrNotFound)
			}
			return Result{}, fmt.Errorf("verify: %w", err)
		}
	}
	if opts.MaxMem <= 0 {
		opts.MaxMem = DefaultMaxMem
	}
	if opts.Jobs <= 0 {
		opts.Jobs = runtime.GOMAXPROCS(0)
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	vars, err := in.Variables()
	if err != nil {
		return Result{}, fmt.Errorf("verify: %w", err)
	}
	kind, err := m.DigestKind()
	if err != nil {
		return Result{}, fmt.Errorf("verify: manifest: %w", err)
	}
	start, base := time.Now(), inSrc.IOStats()
	r := &run{in: in, src: placing(inSrc), dir: outDir, opts: opts, lim: limits.For(opts.MaxMem, opts.Jobs), out: map[catalog.Key]outRef{}, digests: map[catalog.Key]string{},
		workers: make(chan struct{}, opts.Jobs), digestKind: kind, fields: newFields()}
	if opts.Tap != nil {
		r.fields = opts.Tap.fields
	}
	if info, err := in.Info(); err == nil && strings.HasPrefix(info.Format, "netcdf") {
		r.unlimited = info.Unlimited
	} else if err != nil && !errors.Is(err, catalog.ErrNotFound) { // a catalog without a dataset description: none
		return Result{}, fmt.Errorf("verify: %w", err)
	}
	for _, v := range vars {
		r.total += v.Bytes
	}
	for i := range m.Variables {
		mv := &m.Variables[i]
		for j := range mv.Datasets {
			d := &mv.Datasets[j]
			if !mv.IsCopy(d) { // copies are checked against their array's own dataset (copies.go)
				r.out[catalog.Key{Var: mv.Name, Step: d.Step, Level: d.Level}] = outRef{mv, d}
			}
		}
		for j := range mv.Constants {
			d := &mv.Constants[j]
			r.out[catalog.Key{Var: mv.Name, Step: d.Step, Level: d.Level}] = outRef{mv, d}
		}
	}
	ok, err := r.variables(ctx, vars, log)
	if err != nil {
		return Result{}, err
	}
	if ok {
		if ok, err = r.checkCopies(ctx, m, log); err != nil {
			return Result{}, err
		}
	}
	if n := r.stats.checksummed.Load(); n > 0 {
		// Said, as the chance it leaves is not nil.
		if _, err := fmt.Fprintf(log, "compare: %d arrays by positional checksum (a difference unseen with a chance below 2^-30 each; relayout verify --exact compares every element), the others element by element\n", n); err != nil {
			return Result{}, err
		}
	}
	if statsHook != nil {
		statsHook(&r.stats)
	}
	seriesOK, err := checkSeries(outDir, m, log)
	if err == nil {
		var viewsOK bool
		viewsOK, err = checkViews(outDir, m, log)
		seriesOK = seriesOK && viewsOK
	}
	rio := IO{Input: inSrc.IOStats().Since(base), OutputBytes: r.stats.outBytes.Load(), OutputReads: r.stats.outReads.Load(),
		Seconds: time.Since(start).Seconds()}
	return Result{OK: ok && seriesOK, Digests: r.digests, IO: rio, Checksummed: int(r.stats.checksummed.Load())}, err
}

// TotalBytes is the Progress total of Output for in: the logical bytes of
// every array.
func TotalBytes(in *catalog.Store) (int64, error) {
	vars, err := in.Variables()
	if err != nil {
		return 0, fmt.Errorf("verify: %w", err)
	}
	var n int64
	for _, v := range vars {
		n += v.Bytes
	}
	return n, nil
}

type outRef struct {
	v *catalog.ManifestVariable
	d *catalog.ManifestDataset
}

// run is one Output call.
type run struct {
	in    *catalog.Store
	src   catalog.Source
	dir   string
	opts  Options
	lim   limits.Limits // of opts.MaxMem and opts.Jobs: the slots and their shares
	out   map[catalog.Key]outRef
	total int64
	// unlimited are a netCDF input's unlimited dimensions, which its
	// output keeps unlimited (the datasets over them extendible).
	unlimited []string
	// digestKind is the manifest's algorithm (Manifest.DigestKind): of the
	// digests checked and of Result.Digests.
	digestKind catalog.Digest

	progressMu sync.Mutex
	done       int64

	stats stats

	workers chan struct{} // one token per block fetched and compared (Jobs)

	mu      sync.Mutex
	digests map[catalog.Key]string // of the arrays verified whole
	// spare are band buffers of arrays done, reused by the next ones.
	spare [][]byte
	// stages are the stage buffers of bands done (order.go).
	stages stagePool
	// fields are the checksum path's (checksum.go): one random point.
	fields *fields
}

// work takes one of the Jobs tokens (blocks fetched and compared at once
// over every array in flight); rest gives it back.
func (r *run) work(ctx context.Context) error {
	select {
	case r.workers <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *run) rest() { <-r.workers }

// setDigest records the digest of array k, verified whole.
func (r *run) setDigest(k catalog.Key, sum []byte) {
	r.mu.Lock()
	r.digests[k] = hex.EncodeToString(sum)
	r.mu.Unlock()
}

// takeSpare returns up to n band buffers of earlier arrays.
func (r *run) takeSpare(n int) [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	n = min(n, len(r.spare))
	out := slices.Clone(r.spare[len(r.spare)-n:])
	r.spare = r.spare[:len(r.spare)-n]
	return out
}

// putSpare keeps band buffers for later arrays (at most three per array
// in flight).
func (r *run) putSpare(bufs [][]byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, b := range bufs {
		if b != nil && len(r.spare) < 3*limits.VerifyMaxInFlight {
			r.spare = append(r.spare, b)
		}
	}
}

// stats count what a run compared (for tests: which paths were taken).
type stats struct {
	arrays, bands, blocks               atomic.Int64
	trimmed, cached                     atomic.Int64 // blocks read in part per band, kept across bands
	ordered                             atomic.Int64 // small blocks staged and compared in output order
	joint                               atomic.Int64 // arrays verified in a joint group of several
	checksummed, rechecked              atomic.Int64 // arrays verified by their checksums; compared again exactly
	bigEndian, colMajor, ghost, partial atomic.Int64 // blocks by their placement features
	holes                               atomic.Int64 // elements covered by no block, checked against the fill
	constants, boxTables, gridOffsets   atomic.Int64
	peakMem                             atomic.Int64 // most block bytes held at once
	outBytes, outReads                  atomic.Int64 // bands read through the HDF5 library (Result.IO)
	// Time spent (summed over goroutines, for profiling): HDF5 reads of
	// the output (H5Dread, under the library's lock), input fetches,
	// comparisons, hashing (the manifest's digest).
	readNs, fetchNs, compareNs, hashNs atomic.Int64
}

// times is where the time went (summed over goroutines).
func (s *stats) times() string {
	f := func(v *atomic.Int64) float64 { return float64(v.Load()) / 1e9 }
	return fmt.Sprintf("HDF5 read %.2fs, input fetch %.2fs, compare %.2fs, hash %.2fs", f(&s.readNs), f(&s.fetchNs), f(&s.compareNs), f(&s.hashNs))
}

func (s *stats) String() string {
	return fmt.Sprintf("arrays %d (joint %d checksummed %d rechecked %d) bands %d blocks %d (trimmed %d cached %d ordered %d; big-endian %d col-major %d ghost %d partial %d) holes %d constants %d box tables %d grid offsets %d peak block bytes %d",
		s.arrays.Load(), s.joint.Load(), s.checksummed.Load(), s.rechecked.Load(), s.bands.Load(), s.blocks.Load(), s.trimmed.Load(), s.cached.Load(), s.ordered.Load(), s.bigEndian.Load(), s.colMajor.Load(),
		s.ghost.Load(), s.partial.Load(), s.holes.Load(), s.constants.Load(), s.boxTables.Load(), s.gridOffsets.Load(), s.peakMem.Load()) + "; " + s.times()
}

// counter is the stats counter named as String names it ("col-major", "box-tables").
func (s *stats) counter(name string) int64 {
	return map[string]*atomic.Int64{"arrays": &s.arrays, "joint": &s.joint, "checksummed": &s.checksummed, "rechecked": &s.rechecked, "bands": &s.bands, "blocks": &s.blocks, "trimmed": &s.trimmed,
		"cached": &s.cached, "ordered": &s.ordered, "big-endian": &s.bigEndian, "col-major": &s.colMajor, "ghost": &s.ghost, "partial": &s.partial,
		"holes": &s.holes, "constants": &s.constants, "box-tables": &s.boxTables, "grid-offsets": &s.gridOffsets}[name].Load()
}

// statsHook, when set (tests), receives each Output's stats.
var statsHook func(*stats)

func (r *run) progress(v string, n int64) {
	if r.opts.Progress == nil {
		return
	}
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	r.done += n
	r.opts.Progress(Progress{Done: r.done, Total: r.total, Variable: v})
}

func where(k catalog.Key) string {
	return fmt.Sprintf("%s step %d level %d", k.Var, k.Step, k.Level)
}

// header checks what the manifest says of a against the input: shape,
// offset and element type.
func header(a *catalog.Array, ref outRef) error {
	k := a.Key()
	want := a.DType.LittleEndian().NumPy()
	if ref.v.DType != want {
		return difff("%s: dtype in=%s (output %s) manifest=%s", where(k), a.DType.NumPy(), want, ref.v.DType)
	}
	if !equalInts(ref.d.Shape, a.Shape) {
		return difff("%s: shape in=%v out=%v", where(k), a.Shape, ref.d.Shape)
	}
	if off := ref.d.Offset; off != nil && !equalInts(off, a.Offset) || off == nil && slices.ContainsFunc(a.Offset, func(x int64) bool { return x != 0 }) {
		return difff("%s: offset in=%v out=%v", where(k), a.Offset, ref.d.Offset)
	}
	if a.Constant != (ref.d.Layout == catalog.ConstantLayout) {
		return difff("%s: constant in=%v, output layout %q", where(k), a.Constant, ref.d.Layout)
	}
	return nil
}

func equalInts(a, b []int64) bool { return len(a) == len(b) && (len(a) == 0 || slices.Equal(a, b)) }

// expectedFill is the fill value the output must record for a, as
// little-endian bytes; nil with anyNaN set means "some NaN" (a float input
// without a fill value of its own), nil otherwise means zero.
func expectedFill(a *catalog.Array) (fill []byte, anyNaN bool) {
	if a.Fill == nil {
		if a.DType.Kind == catalog.Float {
			return nil, true
		}
		return make([]byte, a.DType.Size), false
	}
	f := slices.Clone(a.Fill)
	if a.DType.BigEndian {
		slices.Reverse(f)
	}
	return f, false
}

func isNaN(b []byte) bool {
	switch len(b) {
	case 4:
		return math.IsNaN(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
	case 8:
		return math.IsNaN(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	}
	return false
}

// formatElem formats one little-endian element of type dt; a NaN shows
// its bits, so that two NaNs that differ can be told apart.
func formatElem(b []byte, dt catalog.DType) string {
	var u uint64
	for i := len(b) - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	switch dt.Kind {
	case catalog.Char:
		return strconv.QuoteRune(rune(b[0]))
	case catalog.Int:
		shift := 64 - 8*uint(dt.Size)
		return strconv.FormatInt(int64(u<<shift)>>shift, 10)
	case catalog.Uint:
		return strconv.FormatUint(u, 10)
	case catalog.Float:
		var f float64
		if dt.Size == 4 {
			f = float64(math.Float32frombits(uint32(u)))
		} else {
			f = math.Float64frombits(u)
		}
		if math.IsNaN(f) {
			return fmt.Sprintf("NaN(0x%0*x)", 2*dt.Size, u)
		}
		if dt.Size == 4 {
			return strconv.FormatFloat(f, 'g', -1, 32)
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "0x" + strconv.FormatUint(u, 16)
}

func formatIndex(idx []int64) string {
	s := make([]string, len(idx))
	for i, v := range idx {
		s[i] = strconv.FormatInt(v, 10)
	}
	return "[" + strings.Join(s, ",") + "]"
}
