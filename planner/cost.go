package planner

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"relayout/catalog"
)

// The read-cost model: for a stored layout, a read pattern and N readers,
// predict requests, bytes read (with read amplification) and time.
//
// Axis convention: arrays are row-major (C order, catalog.RowMajor) with
// dimensions named (x, y, z) = (0, 1, 2): z varies fastest, x slowest. So
//   - a yz-plane (fixed x) is one contiguous run in a contiguous layout,
//   - an xz-plane (fixed y) is NX runs of NZ elements,
//   - an xy-plane (fixed z) is NX·NY runs of one element: the slow plane, which
//     is what the seed paper reports for its "xy-plane" (the exception to
//     "contiguous is best for few readers").
//
// Storage model. A layout is a set of stored pieces, each a box stored
// row-major on its own:
//   - contiguous: one piece, the whole array; a reader issues one request per
//     contiguous run of its selection, except that runs separated by at most
//     Sieve bytes are read as one request through the gap (HDF5's data sieve);
//   - chunked: one piece per chunk, always read whole (the chunk is HDF5's unit
//     of I/O and of filtering), full chunk size even at the array's edge;
//   - merged cuboids or the original blocks: pieces read like small contiguous
//     arrays (uncompressed), or whole when compressed.
//
// Time. Reader r spends T_r = requests_r·Latency + bytes_r/ReaderBW. A piece
// read whole serves one reader at a time (it is read and decoded as a unit;
// readers sharing it queue), so it is busy T_p = Σ over its readers of
// (Latency + size/ReaderBW). All readers share AggBW. The predicted time is
// max(max_r T_r, max_p T_p, total bytes/AggBW). Contention appears when
// readers outnumber the chunks they read: several readers read the same whole
// chunk (amplification) one after the other (queueing).

// CostParams are the machine constants of the model.
type CostParams struct {
	Latency  float64 // seconds per request
	ReaderBW float64 // bytes per second one reader can stream
	AggBW    float64 // bytes per second of all readers together (the file system)
	Sieve    int64   // gaps up to this many bytes are read through, not skipped

	// The readers' library (libcost.go; zero: the paper's model). A
	// calibrated model sets them: HDF5's buffers as h5py leaves them and
	// what `relayout calibrate` measures. Omitted when zero, so a job
	// spec's signature without them is what it was.
	SieveBuf   int64   `json:",omitempty"` // HDF5's data sieve buffer (contiguous data); replaces Sieve
	ChunkCache int64   `json:",omitempty"` // chunks up to this size are read whole; larger ones run by run
	Page       int64   `json:",omitempty"` // a read starting within this many bytes of the previous one's end streams
	CallCost   float64 `json:",omitempty"` // seconds per read (system call and library work)
	RandomBW   float64 `json:",omitempty"` // bytes per second of a read that starts a stream (0: ReaderBW)
	CopyBW     float64 `json:",omitempty"` // bytes per second copied out of the sieve buffer or chunk cache (0: free)
	ChunkCost  float64 `json:",omitempty"` // seconds of library work per chunk touched (index lookup, cache)
	// ChunkByteCost is seconds per byte of a chunk read through the chunk
	// cache, besides its read: the buffer a new reader process gets it in
	// is memory it touches for the first time (measured by calibrate).
	ChunkByteCost float64 `json:",omitempty"`
	// FreshByteCost is seconds per byte of memory a reader process touches
	// for the first time (measured by calibrate): the array it reads into
	// (the same for every layout, it weighs against the work the readers
	// share the cores for) and its chunk cache as it fills.
	FreshByteCost float64 `json:",omitempty"`
	// RandomOverlap is how many random reads of several readers the
	// storage serves at once (their latencies overlap; 0 or 1: none).
	RandomOverlap float64 `json:",omitempty"`
	Cores         float64 `json:",omitempty"` // the readers share this many cores (0: each its own)
	CPUShare      float64 `json:",omitempty"` // of a core one reader gets on a loaded machine: its work takes 1/CPUShare longer (0: all)
}

// DefaultCostParams are plausible for a parallel file system seen from one
// compute node per reader: 50 µs per request (a small read served by a
// storage server over a fast network, plus library overhead), 1 GiB/s per
// reader, 20 GiB/s aggregate, and a 64 KiB read-through window (HDF5's
// default sieve buffer; client read-ahead behaves alike: a reader streaming
// through a file does not pay a round trip for every small run). `relayout
// calibrate` is meant to replace them with measured values.
func DefaultCostParams() CostParams {
	return CostParams{Latency: 50e-6, ReaderBW: 1 << 30, AggBW: 20 << 30, Sieve: 64 << 10}
}

// Storage is a stored layout of one array, described as pieces.
type Storage struct {
	Name  string
	Shape []int64
	chunk []int64 // chunked: chunk shape (pieces enumerated arithmetically)
	// pieces is the general form of contiguous, merged or blocks storage
	// (pieces of mixed or zero rank, and the tests' hand-made storages);
	// flat the usual one, which the constructors build instead.
	pieces []StoredPiece
	flat   flatPieces
	span   bool // blocks read by ADIOS2: one read from a block's first to last byte needed
}

// flatPieces holds n pieces of one rank dims >= 1 with their corners side by
// side, lower then count (coords[2·dims·i:][:dims] and [dims:2·dims]), so that
// a cost prediction streams through one slice per storage instead of
// following a box's two slices per piece into wherever they were allocated
// (the 351,537-block case of issue 19 predicts about 14 patterns over each
// storage of every geometry).
type flatPieces struct {
	dims   int
	n      int
	coords []int64
	whole  []bool // nil: no piece is whole
}

// box is piece i's box, its slices in f.coords (not to be modified).
func (f *flatPieces) box(i int) catalog.Box {
	c := f.coords[2*f.dims*i : 2*f.dims*(i+1) : 2*f.dims*(i+1)]
	return catalog.Box{Lower: c[:f.dims:f.dims], Count: c[f.dims:]}
}

func (f *flatPieces) isWhole(i int) bool { return f.whole != nil && f.whole[i] }

// newStorage lays out n pieces, piece i being box(i) and read only entirely
// when whole(i) (whole nil: never): flat when they share a rank of at least
// 1, else as a list of StoredPiece.
func newStorage(name string, shape []int64, n int, box func(int) catalog.Box, whole func(int) bool) Storage {
	st := Storage{Name: name, Shape: shape}
	dims := -1
	for i := 0; i < n; i++ {
		b := box(i)
		if len(b.Lower) != len(b.Count) || (dims >= 0 && len(b.Lower) != dims) || len(b.Lower) == 0 {
			dims = -1
			break
		}
		dims = len(b.Lower)
	}
	if n > 0 && dims < 1 {
		st.pieces = make([]StoredPiece, n)
		for i := range st.pieces {
			st.pieces[i] = StoredPiece{Box: box(i), Whole: whole != nil && whole(i)}
		}
		return st
	}
	f := flatPieces{dims: max(dims, 1), n: n, coords: make([]int64, 0, 2*max(dims, 1)*n)}
	catalog.Populate(f.coords)
	for i := 0; i < n; i++ {
		b := box(i)
		f.coords = append(f.coords, b.Lower...)
		f.coords = append(f.coords, b.Count...)
		if whole != nil && whole(i) {
			if f.whole == nil {
				f.whole = make([]bool, n)
			}
			f.whole[i] = true
		}
	}
	st.flat = f
	return st
}

// StoredPiece is one separately stored box. Whole means it can only be read
// entirely (a chunk, a compressed block).
type StoredPiece struct {
	Box   catalog.Box
	Whole bool
}

// ContiguousStorage is the array stored row-major in one extent.
func ContiguousStorage(shape []int64) Storage {
	full := catalog.Box{Lower: make([]int64, len(shape)), Count: slices.Clone(shape)}
	return newStorage(Contiguous, shape, 1, func(int) catalog.Box { return full }, nil)
}

// ChunkedStorage is the array stored in chunks of the given shape.
func ChunkedStorage(shape, chunk []int64) Storage {
	return Storage{Name: Chunked + " " + dimsString(chunk), Shape: shape, chunk: slices.Clone(chunk)}
}

// PiecesStorage is the array stored as the given boxes (merged cuboids: name
// "merged"), each readable in part unless whole.
func PiecesStorage(name string, shape []int64, boxes []catalog.Box, whole bool) Storage {
	var w func(int) bool
	if whole {
		w = func(int) bool { return true }
	}
	return newStorage(name, shape, len(boxes), func(i int) catalog.Box { return boxes[i] }, w)
}

// BlocksStorage is the array as written: its source blocks, each read whole
// when it is encoded (codecs) or stored larger than its box (edge chunks).
func BlocksStorage(shape []int64, blocks []catalog.Block) Storage {
	st := newStorage("blocks", shape, len(blocks), func(i int) catalog.Box { return blocks[i].Box },
		func(i int) bool { return len(blocks[i].Codecs) > 0 || blocks[i].Stored() != nil })
	st.span = true
	return st
}

// npieces is the number of stored pieces of contiguous, merged or blocks
// storage, piece(i) each.
func (s Storage) npieces() int {
	if s.pieces != nil {
		return len(s.pieces)
	}
	return s.flat.n
}

func (s Storage) piece(i int) StoredPiece {
	if s.pieces != nil {
		return s.pieces[i]
	}
	return StoredPiece{Box: s.flat.box(i), Whole: s.flat.isWhole(i)}
}

// flatOf is the pieces of s in flat form for rank dims: s.flat, or built
// from s.pieces (a hand-made storage).
func (s Storage) flatOf(dims int) flatPieces {
	if s.pieces == nil && s.flat.dims == dims {
		return s.flat
	}
	n := s.npieces()
	return newStorage(s.Name, s.Shape, n, func(i int) catalog.Box {
		b := s.piece(i).Box
		return catalog.Box{Lower: b.Lower[:dims], Count: b.Count[:dims]}
	}, func(i int) bool { return s.piece(i).Whole }).flat
}

// Pieces returns the number of stored pieces.
func (s Storage) Pieces() int64 {
	if s.chunk == nil {
		return int64(s.npieces())
	}
	n := int64(1)
	for i, c := range s.chunk {
		n *= (s.Shape[i] + c - 1) / c
	}
	return n
}

// each calls fn for every stored piece (by index) intersecting region
// (contiguous, merged and blocks storage; chunks are handled arithmetically).
func (s Storage) each(region catalog.Box, fn func(i int, p StoredPiece)) {
	for i := range s.npieces() {
		if p := s.piece(i); Overlaps(p.Box, region) {
			fn(i, p)
		}
	}
}

// Pattern is a read pattern: a region read by N readers arranged in a grid
// over the axes with a non-zero Split weight (readers are spread over those
// axes as evenly as their extents allow).
type Pattern struct {
	Name   string
	Region catalog.Box
	Split  []int64
}

// StandardPatterns returns the seed paper's read patterns for an array of
// the given shape (3-D; for other ranks the planes are skipped):
//   - whole: the array in N slabs along x (each reader reads consecutive rows);
//   - xy, xz, yz: the middle plane (fixed z, y, x) split over its two axes;
//   - sub: the central box of half the extent per axis, split over all axes;
//   - 2x1x1, 1x2x1, 1x1x2, 2x2x2: the whole array decomposed along x, y, z or
//     all three (the readers' domain decomposition).
func StandardPatterns(shape []int64) []Pattern {
	dims := len(shape)
	full := catalog.Box{Lower: make([]int64, dims), Count: slices.Clone(shape)}
	axes := func(ws ...int64) []int64 { return ws }
	all := make([]int64, dims)
	for i := range all {
		all[i] = 1
	}
	x := make([]int64, dims)
	if dims > 0 {
		x[0] = 1
	}
	ps := []Pattern{{Name: "whole", Region: full, Split: x}}
	if dims == 3 {
		plane := func(name string, axis int, split []int64) Pattern {
			r := catalog.Box{Lower: make([]int64, 3), Count: slices.Clone(shape)}
			r.Lower[axis], r.Count[axis] = shape[axis]/2, 1
			return Pattern{Name: name, Region: r, Split: split}
		}
		ps = append(ps,
			plane("xy", 2, axes(1, 1, 0)),
			plane("xz", 1, axes(1, 0, 1)),
			plane("yz", 0, axes(0, 1, 1)))
	}
	sub := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
	for i, n := range shape {
		sub.Count[i] = max(1, n/2)
		sub.Lower[i] = (n - sub.Count[i]) / 2
	}
	ps = append(ps, Pattern{Name: "sub", Region: sub, Split: all})
	if dims == 3 {
		for _, d := range [][]int64{{2, 1, 1}, {1, 2, 1}, {1, 1, 2}, {2, 2, 2}} {
			split := make([]int64, 3)
			for i, v := range d {
				if v > 1 {
					split[i] = 1
				}
			}
			ps = append(ps, Pattern{Name: dimsString(d), Region: full, Split: split})
		}
	}
	return ps
}

// SeriesPatterns are the reads climate analysis makes of a variable over
// its record axis (dimension 0: time), for arrays of two or more
// dimensions (StandardPatterns otherwise):
//   - whole: every record, readers split along time;
//   - map: one record (the middle one) whole, readers split over the other
//     axes — a field at one time, the map users plot;
//   - series: every record at one horizontal place, one reader: for
//     [time, ncol] one column index, for [time, ..., y, x] the last two axes
//     at their middle and those between whole — the time series of a point
//     or of a column (every level).
func SeriesPatterns(shape []int64) []Pattern {
	dims := len(shape)
	if dims < 2 {
		return StandardPatterns(shape)
	}
	full := catalog.Box{Lower: make([]int64, dims), Count: slices.Clone(shape)}
	x := make([]int64, dims)
	x[0] = 1
	ps := []Pattern{{Name: "whole", Region: full, Split: x}}
	m := catalog.Box{Lower: make([]int64, dims), Count: slices.Clone(shape)}
	m.Lower[0], m.Count[0] = shape[0]/2, 1
	split := make([]int64, dims)
	for i := 1; i < dims; i++ {
		split[i] = 1
	}
	ps = append(ps, Pattern{Name: "map", Region: m, Split: split})
	s := catalog.Box{Lower: make([]int64, dims), Count: slices.Clone(shape)}
	first := max(1, dims-2) // the horizontal axes: the last one or two
	for i := first; i < dims; i++ {
		s.Lower[i], s.Count[i] = shape[i]/2, 1
	}
	return append(ps, Pattern{Name: "series", Region: s, Split: make([]int64, dims)})
}

// ReaderGrid spreads n readers over the axes of region with a non-zero split
// weight: the prime factors of n, largest first, each go to the axis whose
// parts are currently largest (never more parts than elements). The product
// may be below n when the region is too small; the other readers idle.
func ReaderGrid(region catalog.Box, split []int64, n int) []int64 {
	g := make([]int64, len(region.Count))
	for i := range g {
		g[i] = 1
	}
	var factors []int64
	for m, p := int64(n), int64(2); m > 1; {
		if p*p > m {
			factors = append(factors, m)
			break
		}
		if m%p == 0 {
			factors = append(factors, p)
			m /= p
		} else {
			p++
		}
	}
	slices.Reverse(factors)
	for _, f := range factors {
		best, bestPart := -1, int64(0)
		for a := range g {
			if a >= len(split) || split[a] == 0 || g[a]*f > region.Count[a] {
				continue
			}
			if part := region.Count[a] / g[a]; part > bestPart {
				best, bestPart = a, part
			}
		}
		if best >= 0 {
			g[best] *= f
		}
	}
	return g
}

// Cost is the predicted cost of one pattern.
type Cost struct {
	Pattern     string
	Readers     int   // readers given
	Active      int   // readers with something to read
	Requests    int64 // total over readers
	Bytes       int64 // read from storage, total over readers
	UsefulBytes int64 // the pattern's own bytes
	MaxSharing  int   // most readers reading one whole piece (contention when > 1)
	Seconds     float64
}

// Amplification is bytes read per useful byte.
func (c Cost) Amplification() float64 {
	if c.UsefulBytes == 0 {
		return 0
	}
	return float64(c.Bytes) / float64(c.UsefulBytes)
}

// PredictRead predicts the cost of reading pattern p from storage st with n
// readers (n < 1 counts as 1). Chunked storage costs O(dims · (readers +
// chunks) per axis), other storage O(pieces · dims + the piece-part pairs)
// (predictPieces).
func PredictRead(st Storage, elemSize int, p Pattern, n int, cp CostParams) Cost {
	n = max(n, 1)
	c := Cost{Pattern: p.Name, Readers: n, UsefulBytes: p.Region.Elements() * int64(elemSize)}
	grid := ReaderGrid(p.Region, p.Split, n)
	if st.chunk != nil {
		if cp.Library() && len(grid) <= MaxDims {
			return predictChunkedLib(st, elemSize, p, grid, c, cp)
		}
		return predictChunked(st, elemSize, p, grid, c, cp)
	}
	if dims := len(p.Region.Count); dims <= MaxDims && len(grid) == dims {
		return predictPieces(st, elemSize, p, grid, c, cp)
	}
	return predictPiecesNaive(st, elemSize, p, grid, c, cp)
}

// predictPiecesNaive is PredictRead for stored pieces by visiting every piece
// for every reader's part: O(readers · pieces). Kept for ranks above MaxDims
// and as the reference the indexed predictPieces is tested against.
func predictPiecesNaive(st Storage, elemSize int, p Pattern, grid []int64, c Cost, cp CostParams) Cost {
	busy := make([]float64, st.npieces()) // whole pieces: time serving readers
	sharing := make([]int, st.npieces())
	var slowest float64
	lib := cp.Library()
	var tot libTotals
	forEachPart(p.Region, grid, func(part catalog.Box) {
		if IsEmpty(part) {
			return
		}
		c.Active++
		var req, bytes int64
		var secs float64
		st.each(part, func(i int, sp StoredPiece) {
			in, ok := sp.Box.Intersect(part)
			if !ok {
				return
			}
			if sp.Whole {
				b := sp.Box.Elements() * int64(elemSize)
				req++
				bytes += b
				busy[i] += cp.Latency + float64(b)/cp.ReaderBW
				sharing[i]++
				return
			}
			if lib {
				r := st.readPiece(sp.Box, in, part, int64(elemSize), cp)
				req += r.requests
				bytes += r.bytes
				secs += r.seconds
				tot.add(r)
				return
			}
			r, b := runs(sp.Box, in, int64(elemSize), cp.Sieve)
			req += r
			bytes += b
		})
		c.Requests += req
		c.Bytes += bytes
		if !lib {
			secs = float64(req)*cp.Latency + float64(bytes)/cp.ReaderBW
		} else {
			a := cp.freshSeconds(part.Elements() * int64(elemSize))
			secs += a
			tot.add(libRead{seconds: a, cpu: a})
		}
		slowest = max(slowest, secs)
	})
	for i := range busy {
		slowest = max(slowest, busy[i])
		c.MaxSharing = max(c.MaxSharing, sharing[i])
	}
	c.Seconds = max(slowest, float64(c.Bytes)/cp.AggBW)
	if lib {
		c.Seconds = max(c.Seconds, tot.bound(cp))
	}
	return c
}

// predictPieces is predictPiecesNaive with the loops turned round: the
// readers' parts form a regular grid (part i along axis d spans
// [lo + n·i/g, lo + n·(i+1)/g)), so each piece finds the parts it meets by
// a binary search per axis and visits only those: O(pieces · dims · log
// readers + piece-part pairs), no allocation per piece. Requests and bytes
// are summed per part in integers and a whole piece's busy time adds one
// identical term per part, so every figure is the naive path's to the bit.
func predictPieces(st Storage, elemSize int, p Pattern, grid []int64, c Cost, cp CostParams) Cost {
	dims := len(grid)
	var bounds [MaxDims][]int64 // bounds[d][i]: lower edge of part i along d; bounds[d][g] the region's end
	var stride [MaxDims]int     // part index = Σ i_d · stride[d] (forEachPart's row-major order)
	nparts := 1
	for d := dims - 1; d >= 0; d-- {
		g := grid[d]
		b := make([]int64, g+1)
		for i := int64(0); i <= g; i++ {
			b[i] = p.Region.Lower[d] + p.Region.Count[d]*i/g
		}
		bounds[d] = b
		stride[d] = nparts
		nparts *= int(g)
	}
	req := make([]int64, nparts)
	bytes := make([]int64, nparts)
	active := make([]bool, nparts)
	lib := cp.Library()
	var secs []float64    // library model: each part's time
	var partElems []int64 // library model: each part's elements
	var tot libTotals
	var memLo, memCnt [MaxDims]int64
	mem := catalog.Box{Lower: memLo[:dims:dims], Count: memCnt[:dims:dims]}
	if lib {
		secs = make([]float64, nparts)
		partElems = make([]int64, nparts)
	}
	// A part is active (non-empty) when it has extent along every axis.
	var idx [MaxDims]int64
	for k := 0; k < nparts; k++ {
		ok := true
		n := int64(1)
		for d := 0; d < dims; d++ {
			if bounds[d][idx[d]+1] <= bounds[d][idx[d]] {
				ok = false
			}
			n *= bounds[d][idx[d]+1] - bounds[d][idx[d]]
		}
		if lib {
			partElems[k] = n
		}
		active[k] = ok
		if ok {
			c.Active++
		}
		for d := dims - 1; d >= 0; d-- {
			if idx[d]+1 < grid[d] {
				idx[d]++
				break
			}
			idx[d] = 0
		}
	}
	var slowest float64
	var lo, hi [MaxDims]int64 // part index range along each axis, inclusive lo, exclusive hi
	var inLo, inCnt [MaxDims]int64
	in := catalog.Box{Lower: inLo[:dims:dims], Count: inCnt[:dims:dims]}
	elem := int64(elemSize)
	var regLo, regHi [MaxDims]int64 // the pattern's region, bounds[d][0] and bounds[d][g]
	for d := 0; d < dims; d++ {
		regLo[d], regHi[d] = bounds[d][0], bounds[d][len(bounds[d])-1]
	}
	// partAt[d][x-regLo[d]] is partOf(bounds[d], grid[d], x), tabled over
	// the region when it is not wide (a call per piece and axis otherwise).
	var partAt [MaxDims][]int32
	for d := 0; d < dims; d++ {
		if n := regHi[d] - regLo[d]; grid[d] > 1 && n <= maxPartTable && n < 8*int64(st.npieces())+1024 {
			t := make([]int32, n)
			for x := range t {
				t[x] = int32(partOf(bounds[d], grid[d], regLo[d]+int64(x)))
			}
			partAt[d] = t
		}
	}
	fp := st.flatOf(dims)
	coords, step := fp.coords, 2*dims
	for i, at := 0, 0; i < fp.n; i, at = i+1, at+step {
		// Most pieces miss a plane: reject them first (3-D unrolled, on
		// the flat corners).
		if dims == 3 {
			q := coords[at : at+6 : at+6]
			if q[0] >= regHi[0] || q[0]+q[3] <= regLo[0] || q[3] <= 0 ||
				q[1] >= regHi[1] || q[1]+q[4] <= regLo[1] || q[4] <= 0 ||
				q[2] >= regHi[2] || q[2]+q[5] <= regLo[2] || q[5] <= 0 {
				continue
			}
			if !lib && onePart3(q, &regLo, &regHi, &bounds, &partAt, grid, &lo) {
				// The loop below for a piece inside one part, without the
				// general path's per-axis work: the usual case of small
				// blocks.
				k := int(lo[0])*stride[0] + int(lo[1])*stride[1] + int(lo[2])*stride[2]
				if active[k] {
					req[k]++
					vol := q[3] * q[4] * q[5]
					if fp.isWhole(i) {
						pieceBytes := vol * elem
						bytes[k] += pieceBytes
						slowest = max(slowest, cp.Latency+float64(pieceBytes)/cp.ReaderBW)
						c.MaxSharing = max(c.MaxSharing, 1)
					} else {
						bytes[k] += vol * elem
					}
				}
				continue
			}
		}
		corners := coords[at : at+step : at+step]
		lower, count := corners[:dims:dims], corners[dims:]
		empty := false
		for d := 0; d < dims && dims != 3; d++ {
			if lower[d] >= regHi[d] || lower[d]+count[d] <= regLo[d] || count[d] <= 0 {
				empty = true
				break
			}
		}
		if empty {
			continue
		}
		one := true // the piece lies inside one part (the usual case of small blocks)
		for d := 0; d < dims; d++ {
			b := bounds[d]
			pl, ph := lower[d], lower[d]+count[d]
			if ph <= pl {
				empty = true
				break
			}
			if pl < regLo[d] || ph > regHi[d] {
				one = false
			}
			pl, ph = max(pl, regLo[d]), min(ph, regHi[d])
			if ph <= pl {
				empty = true // outside the pattern's region
				break
			}
			l := int64(0) // one part along d (most axes of the patterns): no search
			t := partAt[d]
			switch {
			case t != nil:
				l = int64(t[pl-regLo[d]])
			case grid[d] > 1:
				l = partOf(b, grid[d], pl)
			}
			h := l + 1
			if ph-1 >= b[l+1] { // the piece reaches past part l: search its last part
				if t != nil {
					h = int64(t[ph-1-regLo[d]]) + 1
				} else {
					h = partOf(b, grid[d], ph-1) + 1
				}
				one = false
			}
			lo[d], hi[d] = l, h
		}
		if empty {
			continue
		}
		box, whole := catalog.Box{Lower: lower, Count: count}, fp.isWhole(i)
		// A part holding the whole piece reads it in one run (what runs
		// returns for in = the piece, computed once).
		vol := int64(1)
		for d := 0; d < dims; d++ {
			vol *= count[d]
		}
		var pieceBytes int64
		var term float64
		if whole {
			pieceBytes = box.Elements() * elem
			term = cp.Latency + float64(pieceBytes)/cp.ReaderBW
		}
		if one && (whole || !lib) {
			// What the loop below does for the one part meeting the piece,
			// which holds it whole: one request (busy: one term).
			k := 0
			for d := 0; d < dims; d++ {
				k += int(lo[d]) * stride[d]
			}
			if active[k] {
				req[k]++
				if whole {
					bytes[k] += pieceBytes
					slowest = max(slowest, term)
					c.MaxSharing = max(c.MaxSharing, 1)
				} else {
					bytes[k] += vol * elem
				}
			}
			continue
		}
		var busy float64
		share := 0
		idx = lo
		for {
			k := 0
			meets, inside := true, true
			for d := 0; d < dims; d++ {
				k += int(idx[d]) * stride[d]
				plo, phi := bounds[d][idx[d]], bounds[d][idx[d]+1]
				pl, ph := lower[d], lower[d]+count[d]
				l, h := max(pl, plo), min(ph, phi)
				if h <= l {
					meets = false // an empty part along d
				}
				if l != pl || h != ph {
					inside = false
				}
				inLo[d], inCnt[d] = l, h-l
				memLo[d], memCnt[d] = plo, phi-plo
			}
			if meets && active[k] {
				if whole {
					req[k]++
					bytes[k] += pieceBytes
					busy += term
					share++
				} else if lib {
					r := st.readPiece(box, in, mem, elem, cp)
					req[k] += r.requests
					bytes[k] += r.bytes
					secs[k] += r.seconds
					tot.add(r)
				} else if inside {
					req[k]++
					bytes[k] += vol * elem
				} else {
					r, b := runs(box, in, elem, cp.Sieve)
					req[k] += r
					bytes[k] += b
				}
			}
			d := dims - 1
			for ; d >= 0; d-- {
				if idx[d]+1 < hi[d] {
					idx[d]++
					break
				}
				idx[d] = lo[d]
			}
			if d < 0 {
				break
			}
		}
		slowest = max(slowest, busy)
		c.MaxSharing = max(c.MaxSharing, share)
	}
	for k := 0; k < nparts; k++ {
		if !active[k] {
			continue
		}
		c.Requests += req[k]
		c.Bytes += bytes[k]
		if lib {
			a := cp.freshSeconds(partElems[k] * elem)
			tot.add(libRead{seconds: a, cpu: a})
			slowest = max(slowest, secs[k]+a)
			continue
		}
		slowest = max(slowest, float64(req[k])*cp.Latency+float64(bytes[k])/cp.ReaderBW)
	}
	c.Seconds = max(slowest, float64(c.Bytes)/cp.AggBW)
	if lib {
		c.Seconds = max(c.Seconds, tot.bound(cp))
	}
	return c
}

// onePart3 reports whether the 3-D piece q (lower corner, then count),
// which meets the region [regLo, regHi), lies inside one readers' part,
// and sets lo to that part's index per axis: predictPieces' per-axis
// search for that case.
func onePart3(q []int64, regLo, regHi *[MaxDims]int64, bounds *[MaxDims][]int64, partAt *[MaxDims][]int32, grid []int64, lo *[MaxDims]int64) bool {
	for d := 0; d < 3; d++ {
		pl, ph := q[d], q[d]+q[3+d]
		if pl < regLo[d] || ph > regHi[d] {
			return false
		}
		l := int64(0)
		if t := partAt[d]; t != nil {
			l = int64(t[pl-regLo[d]])
		} else if grid[d] > 1 {
			l = partOf(bounds[d], grid[d], pl)
		}
		if ph-1 >= bounds[d][l+1] {
			return false
		}
		lo[d] = l
	}
	return true
}

// maxPartTable is the widest region axis whose parts predictPieces tables.
const maxPartTable = 1 << 16

// partOf is the non-empty part holding coordinate x of the region whose
// part bounds along one axis are b (g parts): the last part starting at or
// before x. Part i starts at lo + n·i/g, so that is ((x−lo+1)·g − 1)/n,
// searched instead when the product could overflow, and the bounds scanned
// when they are few.
func partOf(b []int64, g, x int64) int64 {
	if g <= 16 {
		// Few parts (every axis of the standard patterns up to 256
		// readers): a scan of the bounds costs less than the division.
		i := int64(0)
		for i+1 < g && b[i+1] <= x {
			i++
		}
		return i
	}
	lo, n := b[0], b[len(b)-1]-b[0]
	if t := x - lo; n < math.MaxInt64/(g+1) {
		return ((t+1)*g - 1) / n
	}
	i, found := slices.BinarySearch(b, x)
	if !found {
		i--
	}
	for i+1 < len(b)-1 && b[i+1] == x {
		i++
	}
	return int64(i)
}

// predictChunked is PredictRead for chunks, computed per axis: reader parts
// and chunks are both regular grids, so the chunks a part touches, the
// requests of all parts and the readers sharing a chunk are products of
// per-axis figures.
func predictChunked(st Storage, elemSize int, p Pattern, grid []int64, c Cost, cp CostParams) Cost {
	chunkBytes := int64(elemSize)
	for _, v := range st.chunk {
		chunkBytes *= v
	}
	perChunk := cp.Latency + float64(chunkBytes)/cp.ReaderBW
	active, requests, worst, sharing := int64(1), int64(1), int64(1), int64(1)
	for a, g := range grid {
		cs := st.chunk[a]
		// Parts per chunk as +1/-1 events at chunk indexes, swept in
		// order: 2g events whatever the declared shape (a difference
		// array over every chunk index was as long as the shape says).
		share := make([]chunkEvent, 0, 2*g)
		var parts, sum, most int64
		for i := int64(0); i < g; i++ {
			lo := p.Region.Lower[a] + p.Region.Count[a]*i/g
			hi := p.Region.Lower[a] + p.Region.Count[a]*(i+1)/g
			if hi <= lo {
				continue
			}
			c0, c1 := lo/cs, (hi-1)/cs
			parts++
			sum += c1 - c0 + 1
			most = max(most, c1-c0+1)
			share = append(share, chunkEvent{c0, 1}, chunkEvent{c1 + 1, -1})
		}
		slices.SortFunc(share, func(x, y chunkEvent) int { return cmp.Compare(x.at, y.at) })
		var run, top int64
		for i, e := range share {
			run += e.d
			if i+1 == len(share) || share[i+1].at != e.at {
				top = max(top, run) // the count over chunk e.at
			}
		}
		active *= parts
		requests *= sum
		worst *= most
		sharing *= top
	}
	c.Active = int(active)
	c.Requests = requests
	c.Bytes = requests * chunkBytes
	c.MaxSharing = int(sharing)
	c.Seconds = max(float64(worst)*perChunk, float64(sharing)*perChunk, float64(c.Bytes)/cp.AggBW)
	return c
}

// chunkEvent is a change of the number of parts reading chunk index at.
type chunkEvent struct{ at, d int64 }

// forEachPart cuts region into the reader grid g (near-equal parts per axis).
func forEachPart(region catalog.Box, g []int64, fn func(catalog.Box)) {
	dims := len(g)
	idx := make([]int64, dims)
	for {
		b := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
		for d := range dims {
			lo := region.Count[d] * idx[d] / g[d]
			hi := region.Count[d] * (idx[d] + 1) / g[d]
			b.Lower[d], b.Count[d] = region.Lower[d]+lo, hi-lo
		}
		fn(b)
		d := dims - 1
		for ; d >= 0; d-- {
			if idx[d]+1 < g[d] {
				idx[d]++
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// runs returns the requests and bytes needed to read sub-box in of a piece
// stored row-major over box p: one request per contiguous run, where runs
// separated by at most sieve bytes merge into one request that also reads
// the gap.
func runs(p, in catalog.Box, elem, sieve int64) (requests, bytes int64) {
	dims := len(p.Count)
	if dims == 0 {
		return 1, elem
	}
	var strides [MaxDims]int64
	stride := strides[:] // elements between neighbours along each axis
	if dims > MaxDims {
		stride = make([]int64, dims)
	}
	s := int64(1)
	for d := dims - 1; d >= 0; d-- {
		stride[d] = s
		s *= p.Count[d]
	}
	// The innermost axis where in is narrower than p: every axis after it is
	// whole, so a run spans in.Count[k] · stride[k] elements.
	k := 0
	for d := dims - 1; d >= 0; d-- {
		if in.Count[d] != p.Count[d] {
			k = d
			break
		}
	}
	span := in.Count[k] * stride[k]
	count := int64(1)
	for d := 0; d < k; d++ {
		count *= in.Count[d]
	}
	for a := k - 1; a >= 0; a-- {
		if in.Count[a] == 1 {
			continue
		}
		if gap := stride[a] - span; gap*elem > sieve {
			break
		}
		span += (in.Count[a] - 1) * stride[a]
		count /= in.Count[a]
	}
	return count, count * span * elem
}

// Auto picks the layout of an array for the given readers and patterns (nil:
// StandardPatterns) by the cost model with default parameters: it compares
// contiguous with chunks matched to each pattern's reader grid and with
// chunks of about 1 MiB, and keeps the smallest total predicted time
// (contiguous on ties: simplest to read for any tool). The reason names the
// winner's total against contiguous and the patterns it wins or loses.
func Auto(shape []int64, elemSize int, readers int, patterns []Pattern) (Layout, string) {
	return AutoWith(shape, elemSize, nil, readers, patterns, DefaultCostParams())
}

// AutoWith is Auto under the cost parameters cp (e.g. measured by `relayout
// calibrate`), for an array whose blocks lie on the grid of step grain
// (catalog.Array.BlockGrain; nil: none known), to which the chunk
// candidates are aligned (alignChunk). Under a library model (cp.Library())
// the patterns default to ReadPatterns (each distinct read once, as the
// read benchmark measures them) and the candidates include cubes of 8 to
// 128 a side and the largest one the chunk cache holds. The choice is the
// first of AutoRanking (autoPick), so that what plan ranks first is what
// run writes.
func AutoWith(shape []int64, elemSize int, grain []int64, readers int, patterns []Pattern, cp CostParams) (Layout, string) {
	return autoPick(AutoRanking(shape, elemSize, grain, readers, patterns, cp), readers)
}

// AutoCandidate is one layout auto weighed: its predicted cost per pattern
// and in total.
type AutoCandidate struct {
	Layout  Layout
	Storage Storage
	Costs   []Cost
	Seconds float64 // sum over the patterns
}

// AutoRanking is every layout AutoWith weighs for the array, fastest
// predicted total first (contiguous first among equals): what `relayout
// plan --layout auto` prints. nil for a scalar or empty array.
func AutoRanking(shape []int64, elemSize int, grain []int64, readers int, patterns []Pattern, cp CostParams) []AutoCandidate {
	if len(shape) == 0 || isEmpty(shape) {
		return nil
	}
	opts := autoOptions(shape, elemSize, grain, readers, patterns, cp)
	slices.SortStableFunc(opts, func(a, b AutoCandidate) int { return cmp.Compare(a.Seconds, b.Seconds) })
	return opts
}

// autoPick is auto's choice from its ranking (AutoRanking, for readers):
// the first candidate, contiguous where the ranking is empty, and the
// reason: the winner's total against contiguous and the patterns it wins
// or loses. The ranking is taken, not computed, so that `relayout plan`
// weighs the candidates once for both its choice and its printed ranking.
func autoPick(rank []AutoCandidate, readers int) (Layout, string) {
	if len(rank) == 0 {
		return Layout{Kind: Contiguous}, "scalar or empty array"
	}
	best := rank[0]
	var why strings.Builder
	fmt.Fprintf(&why, "%d readers, %d patterns: %s predicted %.3g s in total", readers, len(best.Costs), best.Storage.Name, best.Seconds)
	if best.Layout.Kind == Contiguous {
		var lost []string
		for i, c := range best.Costs {
			for _, o := range rank[1:] {
				if o.Costs[i].Seconds < c.Seconds {
					lost = append(lost, c.Pattern)
					break
				}
			}
		}
		if len(lost) > 0 {
			fmt.Fprintf(&why, "; chunks would be faster only for %s", strings.Join(lost, ", "))
		}
		return best.Layout, why.String()
	}
	// Contiguous is always a candidate (autoOptions), and the only one.
	contig := rank[slices.IndexFunc(rank, func(c AutoCandidate) bool { return c.Layout.Kind == Contiguous })]
	var won, lost []string
	for i, c := range best.Costs {
		if c.Seconds < contig.Costs[i].Seconds {
			won = append(won, c.Pattern)
		} else if c.Seconds > contig.Costs[i].Seconds {
			lost = append(lost, c.Pattern)
		}
	}
	fmt.Fprintf(&why, " vs contiguous %.3g s (%d chunks; faster for %s", contig.Seconds, best.Storage.Pieces(), strings.Join(won, ", "))
	if len(lost) > 0 {
		fmt.Fprintf(&why, "; slower for %s", strings.Join(lost, ", "))
	}
	why.WriteString(")")
	return best.Layout, why.String()
}

// autoOptions evaluates contiguous (first) and the chunk candidates,
// aligned to grain.
func autoOptions(shape []int64, elemSize int, grain []int64, readers int, patterns []Pattern, cp CostParams) []AutoCandidate {
	if patterns == nil {
		patterns = StandardPatterns(shape)
		if cp.Library() {
			patterns = ReadPatterns(shape, readers)
		}
	}
	eval := func(l Layout, st Storage) AutoCandidate {
		o := AutoCandidate{Layout: l, Storage: st}
		for _, p := range patterns {
			c := PredictRead(st, elemSize, p, readers, cp)
			o.Costs = append(o.Costs, c)
			o.Seconds += c.Seconds
		}
		return o
	}
	opts := []AutoCandidate{eval(Layout{Kind: Contiguous}, ContiguousStorage(shape))}
	seen := map[string]bool{}
	addChunk := func(chunk []int64) {
		for i := range chunk {
			chunk[i] = max(1, min(chunk[i], shape[i]))
		}
		alignChunk(chunk, shape, grain)
		if cp.Library() && cp.ChunkCache > 0 && int64(elemSize)*product(chunk) > cp.ChunkCache {
			// Beyond the chunk cache HDF5 reads a chunk a row at a time
			// (whole reads of 448³ in 64³ and 112³ chunks: 2.6-3.4 s
			// against 1.0 s contiguous, worse with 8 readers than the
			// model's call cost says): not a layout to choose for h5py.
			return
		}
		if k := dimsString(chunk); !seen[k] && !slices.Equal(chunk, shape) {
			seen[k] = true
			opts = append(opts, eval(Layout{Kind: Chunked, Chunk: chunk}, ChunkedStorage(shape, chunk)))
		}
	}
	for _, p := range patterns {
		g := ReaderGrid(p.Region, p.Split, readers)
		chunk := make([]int64, len(shape))
		for i := range chunk {
			chunk[i] = (shape[i] + g[i] - 1) / g[i]
		}
		addChunk(chunk)
	}
	// A cube-ish chunk of about 1 MiB.
	side := int64(math.Floor(math.Pow(float64(1<<20)/float64(elemSize), 1/float64(len(shape)))))
	cube := make([]int64, len(shape))
	for i := range cube {
		cube[i] = side
	}
	addChunk(cube)
	if cp.Library() {
		for _, c := range libChunkCandidates(len(shape), elemSize, cp) {
			addChunk(c)
		}
	}
	return opts
}

func dimsString(v []int64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, "x")
}
