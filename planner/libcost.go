package planner

import (
	"math"
	"slices"

	"relayout/catalog"
)

// The library read model: how HDF5 (through h5py, with its default
// buffers) and ADIOS2 actually turn a selection into reads, measured with
// strace on HDF5 1.10.8 and the machine constants `relayout calibrate`
// measures. It replaces the paper's sieve window when CostParams.SieveBuf or
// ChunkCache is set (a calibrated model); DefaultCostParams keep the
// paper's model above.
//
//	contiguous data (HDF5 data sieve, buffer B = SieveBuf):
//	   file  |run|..gap..|run|..gap..|run| ...      runs of L bytes, row-major
//	   L >= B:  one read per run (split where the reader's buffer is not
//	            contiguous either)
//	   L <  B:  a run outside the buffer refills it: one read of B bytes from
//	            the run's start; the runs inside it cost nothing
//	   |<------ B ------>|     |<------ B ------>|
//	   |run| |run| |run|  ...  |run| |run| |run|
//
//	chunks up to ChunkCache bytes: one read of the whole chunk per chunk
//	   touched, plus the chunk index (B-tree nodes of ~64 chunks) read at
//	   random; chunks are in row-major chunk order in the file;
//	chunks above ChunkCache: not cached and not sieved: one read per run
//	   that is contiguous both in the chunk and in the reader's buffer (a
//	   whole 64³ chunk into a 448³ array is 4,096 reads of 512 bytes);
//	original blocks (ADIOS2): one read per block from the first to the last
//	   byte of the block the selection needs.
//
// Time of one reader: every read costs CallCost (system call and library
// work); reads whose start is within Page bytes of the previous read's end
// form a stream (the kernel reads ahead). A stream costs Latency, its first
// read (at most rampBytes) at RandomBW, the rest of its span (gaps of at most
// a page included) at ReaderBW. Bytes delivered from the sieve buffer or the
// chunk cache are copied once more, at CopyBW; every chunk touched costs
// ChunkCost of library work besides its reads, and a chunk read through the
// chunk cache ChunkByteCost a byte (internal/calibrate/chunks.go); memory a
// reader process touches first costs FreshByteCost a byte: its array, and
// its chunk cache up to the cache's size (each reader process fills its
// own). Work measured on an idle core takes 1/CPUShare longer on a machine
// where a reader gets less. Readers read at once: the slowest sets the
// time, unless their streaming summed and sped up at most AggBW/ReaderBW
// times plus their stream starts summed and overlapped at most
// RandomOverlap times, or their work summed over Cores, is longer.

// rampBytes is how much of a stream is read at the random-read rate before
// read-ahead streams it (the kernel's first windows).
const rampBytes = 1 << 20

// btreeFanout is the number of chunks one node of HDF5's chunk B-tree
// indexes (2K with the default K of 32).
const btreeFanout = 64

// Library reports whether cp describes the readers' library (HDF5's sieve
// buffer and chunk cache) instead of the paper's sieve window.
func (cp CostParams) Library() bool { return cp.SieveBuf > 0 || cp.ChunkCache > 0 }

// copySeconds is the time to copy b bytes out of a library buffer.
func (cp CostParams) copySeconds(b int64) float64 {
	if cp.CopyBW <= 0 {
		return 0
	}
	return float64(b) / cp.CopyBW * cp.cpuScale()
}

// freshSeconds is the time a reader process takes to touch b bytes of
// memory for the first time.
func (cp CostParams) freshSeconds(b int64) float64 {
	return float64(b) * cp.FreshByteCost * cp.cpuScale()
}

func (cp CostParams) randomBW() float64 {
	if cp.RandomBW > 0 {
		return cp.RandomBW
	}
	return cp.ReaderBW
}

// libRead is the cost of one reader's reads of one piece.
type libRead struct {
	requests, bytes int64 // reads and the bytes they deliver
	disk            int64 // bytes the storage reads (gaps streamed through included)
	seconds         float64
	cpu             float64 // of seconds, the library's and the system's work (the rest waits for storage)
	starts          float64 // of seconds, waiting for streams to start (latency and first reads)
}

func (a *libRead) add(b libRead, times int64) {
	a.requests += b.requests * times
	a.bytes += b.bytes * times
	a.disk += b.disk * times
	a.seconds += b.seconds * float64(times)
	a.cpu += b.cpu * float64(times)
	a.starts += b.starts * float64(times)
}

// cpuScale is how much longer work takes than measured on an idle core.
func (cp CostParams) cpuScale() float64 {
	if cp.CPUShare > 0 && cp.CPUShare < 1 {
		return 1 / cp.CPUShare
	}
	return 1
}

// addCPU adds work that waits for no storage (already scaled by cpuScale).
func (a *libRead) addCPU(s float64) {
	a.seconds += s
	a.cpu += s
}

// newRead is n reads of q bytes each forming s streams over disk bytes,
// delivering bytes.
func newRead(n, q, s, bytes, disk int64, cp CostParams) libRead {
	first := min(q, rampBytes) * s
	if first > disk {
		first = disk
	}
	cpu := float64(n) * cp.CallCost * cp.cpuScale()
	starts := float64(s)*cp.Latency + float64(first)/cp.randomBW()
	io := starts + float64(disk-first)/cp.ReaderBW
	return libRead{n, bytes, disk, io + cpu, cpu, starts}
}

// libTotals sums the reads of every reader: the bound of storage shared by
// the readers (their streaming, sped up at most AggBW/ReaderBW times by
// reading at once; their stream starts, overlapped at most RandomOverlap
// times) and of Cores shared by their work.
type libTotals struct{ seconds, cpu, starts float64 }

func (t *libTotals) add(r libRead) { t.seconds += r.seconds; t.cpu += r.cpu; t.starts += r.starts }

func (t libTotals) bound(cp CostParams) float64 {
	b := (t.seconds-t.cpu-t.starts)*cp.ReaderBW/cp.AggBW + t.starts/max(1, cp.RandomOverlap)
	if cp.Cores > 0 {
		b = max(b, t.cpu/cp.Cores)
	}
	return b
}

// strides are the row-major element strides of a box of the given counts.
func strides(count []int64, buf *[MaxDims]int64) []int64 {
	st := buf[:]
	if len(count) > MaxDims {
		st = make([]int64, len(count))
	}
	st = st[:len(count)]
	s := int64(1)
	for d := len(count) - 1; d >= 0; d-- {
		st[d] = s
		s *= count[d]
	}
	return st
}

// readStored is the cost of reading sub-box in of a piece stored row-major
// over box p into a buffer shaped like mem (the reader's part), through a
// sieve buffer of sieve bytes (0: every run read directly).
func readStored(p, in, mem catalog.Box, elem, sieve int64, cp CostParams) libRead {
	dims := len(p.Count)
	if dims == 0 {
		return newRead(1, elem, 1, elem, elem, cp)
	}
	var sb [MaxDims]int64
	stride := strides(p.Count, &sb)
	pieceBytes := stride[0] * p.Count[0] * elem
	// Runs contiguous in the file and in the reader's buffer: below the
	// innermost axis where in is narrower than either.
	k := 0
	for d := dims - 1; d >= 0; d-- {
		if in.Count[d] != p.Count[d] || in.Count[d] != mem.Count[d] {
			k = d
			break
		}
	}
	L := in.Count[k] * stride[k] * elem
	streams, span := runs(p, in, elem, cp.Page)
	var n, q, bytes int64
	if sieve <= 0 || L >= sieve {
		n = 1
		for d := 0; d < k; d++ {
			n *= in.Count[d]
		}
		q, bytes = L, n*L
	} else {
		// One buffer holds the runs of the inner levels while they fit;
		// the first level that does not fit needs ceil(n/per) refills per
		// group, and every outer level repeats them.
		// Levels of runs, innermost first; a level whole along its axis
		// continues evenly into the next (its groups abut), so the two are
		// one level of runs at the inner stride: the buffers run on.
		type level struct {
			n, stride int64
			whole     bool
		}
		var lb [MaxDims]level
		lv := lb[:0]
		for a := k - 1; a >= 0; a-- {
			whole := in.Count[a] == p.Count[a]
			if m := len(lv); m > 0 && lv[m-1].whole {
				lv[m-1].n *= in.Count[a]
				lv[m-1].whole = whole
				continue
			}
			lv = append(lv, level{in.Count[a], stride[a] * elem, whole})
		}
		// One buffer holds the runs of the inner levels while they fit;
		// the first level that does not fit needs ceil(n/per) refills per
		// group, and every outer level repeats them.
		n, q = 1, sieve
		D, one := L, true
		for _, l := range lv {
			if l.n <= 1 {
				continue
			}
			if one {
				if (l.n-1)*l.stride+D <= sieve {
					D += (l.n - 1) * l.stride
					continue
				}
				per := (sieve-D)/l.stride + 1
				n = (l.n + per - 1) / per
				one = false
				continue
			}
			n *= l.n
		}
		bytes = min(n*sieve, pieceBytes)
	}
	disk := max(span, bytes)
	streams = min(streams, n)
	r := newRead(n, q, streams, bytes, disk, cp)
	if q == sieve && sieve > 0 {
		r.addCPU(cp.copySeconds(in.Elements() * elem))
	}
	return r
}

// readSpan is an ADIOS2 read of sub-box in of block p: one request from the
// first to the last byte needed.
func readSpan(p, in catalog.Box, elem int64, cp CostParams) libRead {
	var sb [MaxDims]int64
	stride := strides(p.Count, &sb)
	var first, last int64
	for d := range p.Count {
		first += (in.Lower[d] - p.Lower[d]) * stride[d]
		last += (in.Lower[d] + in.Count[d] - 1 - p.Lower[d]) * stride[d]
	}
	b := (last - first + 1) * elem
	return newRead(1, b, 1, b, b, cp)
}

// readPiece is the library cost of reading in of stored piece p (not whole)
// into the part mem.
func (s Storage) readPiece(p, in, mem catalog.Box, elem int64, cp CostParams) libRead {
	if s.span {
		return readSpan(p, in, elem, cp)
	}
	return readStored(p, in, mem, elem, cp.SieveBuf, cp)
}

// predictChunkedLib is predictChunked's figures with the library's time:
// every reader part is costed (at most MaxReaders), its chunks grouped by
// the length of their intersection per axis (at most three classes an axis).
func predictChunkedLib(st Storage, elemSize int, p Pattern, grid []int64, c Cost, cp CostParams) Cost {
	c = predictChunked(st, elemSize, p, grid, c, cp)
	dims := len(st.chunk)
	elem := int64(elemSize)
	chunkBytes := elem
	nchunks := int64(1)
	for d, v := range st.chunk {
		chunkBytes *= v
		nchunks *= (st.Shape[d] + v - 1) / v
	}
	cached := cp.ChunkCache > 0 && chunkBytes <= cp.ChunkCache
	depth := int64(1)
	for n := nchunks; n > btreeFanout; n = (n + btreeFanout - 1) / btreeFanout {
		depth++
	}
	chunkBox := catalog.Box{Lower: make([]int64, dims), Count: slices.Clone(st.chunk)}
	gridBox := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
	for d, v := range st.chunk {
		gridBox.Count[d] = (st.Shape[d] + v - 1) / v
	}
	type class struct{ n, mult int64 }
	classes := make([][]class, dims)
	touched := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
	in := catalog.Box{Lower: make([]int64, dims), Count: make([]int64, dims)}
	var slowest float64
	var requests, bytes, disk int64
	var tot libTotals
	forEachPart(p.Region, grid, func(part catalog.Box) {
		if IsEmpty(part) {
			return
		}
		var r libRead
		all := int64(1)
		for d := range dims {
			cs := st.chunk[d]
			lo, hi := part.Lower[d], part.Lower[d]+part.Count[d]
			c0, c1 := lo/cs, (hi-1)/cs
			touched.Lower[d], touched.Count[d] = c0, c1-c0+1
			all *= c1 - c0 + 1
			classes[d] = classes[d][:0]
			addClass := func(n, m int64) {
				for i := range classes[d] {
					if classes[d][i].n == n {
						classes[d][i].mult += m
						return
					}
				}
				classes[d] = append(classes[d], class{n, m})
			}
			if c0 == c1 {
				addClass(hi-lo, 1)
				continue
			}
			addClass((c0+1)*cs-lo, 1)
			if c1-c0 > 1 {
				addClass(cs, c1-c0-1)
			}
			addClass(hi-c1*cs, 1)
		}
		if cached {
			s, span := runs(gridBox, touched, chunkBytes, cp.Page)
			idx := min((all+btreeFanout-1)/btreeFanout, (nchunks+btreeFanout-1)/btreeFanout) + depth - 1
			r = newRead(all, chunkBytes, s, all*chunkBytes, max(span, all*chunkBytes), cp)
			r.add(newRead(1, 4<<10, 1, 4<<10, 4<<10, cp), idx)
			r.addCPU(cp.copySeconds(part.Elements()*elem) + float64(all*chunkBytes)*cp.ChunkByteCost*cp.cpuScale() +
				cp.freshSeconds(min(cp.ChunkCache, all*chunkBytes)))
		} else {
			var pick [MaxDims]int
			for {
				m := int64(1)
				for d := range dims {
					cl := classes[d][pick[d]]
					in.Count[d] = cl.n
					m *= cl.mult
				}
				r.add(readStored(chunkBox, in, part, elem, 0, cp), m)
				d := dims - 1
				for ; d >= 0; d-- {
					if pick[d]+1 < len(classes[d]) {
						pick[d]++
						break
					}
					pick[d] = 0
				}
				if d < 0 {
					break
				}
			}
		}
		r.addCPU(float64(all)*cp.ChunkCost*cp.cpuScale() + cp.freshSeconds(part.Elements()*elem))
		tot.add(r)
		requests += r.requests
		bytes += r.bytes
		disk += r.disk
		slowest = max(slowest, r.seconds)
	})
	c.Requests, c.Bytes = requests, bytes
	c.Seconds = max(slowest, float64(disk)/cp.AggBW, tot.bound(cp))
	return c
}

// ReadPatterns are the patterns of the read benchmark (scripts/readbench.py),
// each a distinct read, for auto under a library model: whole (readers split
// along x), the three middle planes, the central sub-volume, one half of a
// 2x1x1 decomposition (x < Nx/2, readers over every axis) and, for one reader,
// the line along x through the centre (the slowest line of a contiguous
// layout; too thin to share). Arrays of other ranks get StandardPatterns.
func ReadPatterns(shape []int64, readers int) []Pattern {
	if len(shape) != 3 {
		return StandardPatterns(shape)
	}
	var ps []Pattern
	for _, p := range StandardPatterns(shape) {
		switch p.Name {
		case "whole", "xy", "xz", "yz", "sub":
			ps = append(ps, p)
		}
	}
	half := catalog.Box{Lower: make([]int64, 3), Count: slices.Clone(shape)}
	half.Count[0] = max(1, shape[0]/2)
	ps = append(ps, Pattern{Name: "2x1x1", Region: half, Split: []int64{1, 1, 1}})
	if readers <= 1 {
		line := catalog.Box{Lower: []int64{0, shape[1] / 2, shape[2] / 2}, Count: []int64{shape[0], 1, 1}}
		ps = append(ps, Pattern{Name: "line", Region: line, Split: []int64{1, 0, 0}})
	}
	return ps
}

// libChunkCandidates are the chunk shapes auto also weighs under a library
// model: cubes of 8 to 128 elements a side and the largest cube the chunk
// cache holds (edge lengths clipped to the shape by the caller).
func libChunkCandidates(dims, elemSize int, cp CostParams) [][]int64 {
	var out [][]int64
	cube := func(side int64) []int64 {
		c := make([]int64, dims)
		for i := range c {
			c[i] = side
		}
		return c
	}
	for side := int64(8); side <= 128; side *= 2 {
		out = append(out, cube(side))
	}
	if cp.ChunkCache > 0 && dims > 0 {
		side := int64(math.Floor(math.Pow(float64(cp.ChunkCache)/float64(elemSize), 1/float64(dims)) + 1e-9))
		out = append(out, cube(max(1, side)))
	}
	return out
}
