package chunkindex

import (
	"io"
	"math"

	"relayout/catalog"
)

// Chunk is one allocated chunk of a chunked dataset; the fields mean the
// same as in internal/h5.Chunk.
type Chunk struct {
	Offset     []int64 // element coordinates of the chunk's first element
	FilterMask uint32  // bit i set = filter i was skipped for this chunk
	Address    int64   // absolute file offset of the stored bytes
	Size       int64   // stored (filtered) size in bytes
}

// Chunk indexing types of the version 4 layout message.
const (
	idxBtree1   = 0 // version 3 layout: version 1 B-tree (not a v4 code)
	idxSingle   = 1
	idxImplicit = 2
	idxFixed    = 3
	idxExtArray = 4
	idxBtree2   = 5
)

var indexNames = map[uint8]string{
	idxBtree1: "version 1 B-tree", idxSingle: "single chunk", idxImplicit: "implicit",
	idxFixed: "fixed array", idxExtArray: "extensible array", idxBtree2: "version 2 B-tree",
}

// layout is the decoded chunked-storage part of a data layout message.
type layout struct {
	at         int64 // absolute offset of the message body, for errors
	index      uint8
	flags      uint8
	rank       int
	chunk      []uint64 // chunk dimensions in elements, without the element size
	chunkBytes uint64   // bytes of one unfiltered chunk
	addr       int64    // absolute address of the index (or of the chunk(s)), undef if none
	// index-specific parameters
	singleSize     uint64 // single chunk, filtered: stored size
	singleMask     uint32 // single chunk, filtered: filter mask
	singleFiltered bool
}

// List calls fn for every allocated chunk of the chunked dataset whose
// object header is at HDF5 address objAddr (as H5Oget_info reports it:
// relative to the superblock's base address) in the HDF5 file r of size
// bytes. Chunk addresses are absolute file offsets. The chunks come in
// index order, which is not necessarily the library's order. fn may keep
// the Chunk it is given. An error from fn stops the walk and is returned.
//
// Malformed input wraps catalog.ErrCorrupt; layouts or index types this
// package does not parse wrap catalog.ErrUnsupported (callers then fall back
// to the HDF5 library).
func List(r io.ReaderAt, size int64, objAddr uint64, fn func(Chunk) error) error {
	if size < 0 {
		return catalog.Corrupt("hdf5", "", -1, "negative file size %d", size)
	}
	f, err := openFile(r, size)
	if err != nil {
		return err
	}
	oh, err := f.addr(objAddr, "object header")
	if err != nil {
		return err
	}
	if oh == undef {
		return catalog.Corrupt("hdf5", "", -1, "object header address undefined")
	}
	spaceMsg, layoutMsg, err := f.headerMessages(oh)
	if err != nil {
		return err
	}
	lay, err := f.parseLayout(oh, layoutMsg)
	if err != nil {
		return err
	}
	e := &emitter{fn: fn, rank: lay.rank, chunk: lay.chunk, fileSize: f.size}
	if lay.addr == undef {
		return nil // no chunk written yet
	}
	switch lay.index {
	case idxBtree1:
		return f.walkBtree1(lay, e)
	case idxSingle:
		size := lay.chunkBytes
		var mask uint32
		if lay.singleFiltered {
			size, mask = lay.singleSize, lay.singleMask
		}
		return e.emit(make([]uint64, lay.rank), lay, mask, lay.addr, size)
	case idxImplicit, idxFixed, idxExtArray:
		ds, err := f.parseDataspace(spaceMsg)
		if err != nil {
			return err
		}
		if len(ds.dims) != lay.rank {
			return catalog.Corrupt("hdf5", "", int64(lay.at), "layout message: rank %d but dataspace rank %d", lay.rank, len(ds.dims))
		}
		switch lay.index {
		case idxImplicit:
			return f.walkImplicit(lay, ds, e)
		case idxFixed:
			return f.walkFixedArray(lay, ds, e)
		default:
			return f.walkExtArray(lay, ds, e)
		}
	case idxBtree2:
		return f.walkBtree2(lay, e)
	}
	return unsupported("layout message at offset %d: chunk index type %d", lay.at, lay.index)
}

func (f *file) parseLayout(oh int64, m *message) (*layout, error) {
	if m == nil {
		return nil, catalog.Corrupt("hdf5", "", int64(oh), "object header: no data layout message")
	}
	if m.flags&msgFlagShared != 0 {
		return nil, unsupported("layout message at offset %d: shared message", m.at)
	}
	b := m.data
	if len(b) < 2 {
		return nil, catalog.Corrupt("hdf5", "", int64(m.at), "layout message: truncated")
	}
	version, class := b[0], b[1]
	if version < 3 || version > 4 {
		return nil, unsupported("layout message at offset %d: version %d", m.at, version)
	}
	if class != 2 {
		return nil, unsupported("layout message at offset %d: layout class %d is not chunked", m.at, class)
	}
	lay := &layout{at: m.at}
	c := cursor{b: b, off: 2}
	var ndims, width int
	if version == 3 {
		if len(b) < 3+f.so {
			return nil, catalog.Corrupt("hdf5", "", int64(m.at), "layout message: truncated")
		}
		ndims, width = int(c.u8()), 4
		lay.index = idxBtree1
		a, err := f.addr(c.u(f.so), "v1 B-tree")
		if err != nil {
			return nil, err
		}
		lay.addr = a
	} else {
		if len(b) < 5 {
			return nil, catalog.Corrupt("hdf5", "", int64(m.at), "layout message: truncated")
		}
		lay.flags, ndims, width = c.u8(), int(c.u8()), int(c.u8())
		if width < 1 || width > 8 {
			return nil, catalog.Corrupt("hdf5", "", int64(m.at), "layout message: dimension size width %d", width)
		}
	}
	// The chunk dimensions carry one extra, last entry: the element size.
	if ndims < 2 || ndims > maxRank+1 {
		return nil, catalog.Corrupt("hdf5", "", int64(m.at), "layout message: dimensionality %d", ndims)
	}
	if c.left() < ndims*width {
		return nil, catalog.Corrupt("hdf5", "", int64(m.at), "layout message: truncated")
	}
	lay.rank = ndims - 1
	lay.chunk = make([]uint64, lay.rank)
	bytes := uint64(1)
	for i := 0; i < ndims; i++ {
		d := c.u(width)
		if d == 0 {
			return nil, catalog.Corrupt("hdf5", "", int64(m.at), "layout message: chunk dimension %d is zero", i)
		}
		var ok bool
		if bytes, ok = mulCheck(bytes, d, math.MaxInt64); !ok {
			return nil, catalog.Corrupt("hdf5", "", int64(m.at), "layout message: chunk size overflows")
		}
		if i < lay.rank {
			lay.chunk[i] = d
		}
	}
	lay.chunkBytes = bytes
	if version == 3 {
		return lay, nil
	}

	if c.left() < 1 {
		return nil, catalog.Corrupt("hdf5", "", int64(m.at), "layout message: truncated")
	}
	lay.index = c.u8()
	var info int
	switch lay.index {
	case idxSingle:
		if lay.flags&0x02 != 0 {
			lay.singleFiltered = true
			info = f.sl + 4
		}
	case idxImplicit:
	case idxFixed:
		info = 1
	case idxExtArray:
		info = 5
	case idxBtree2:
		info = 6
	default:
		return nil, unsupported("layout message at offset %d: chunk index type %d", m.at, lay.index)
	}
	if c.left() < info+f.so {
		return nil, catalog.Corrupt("hdf5", "", int64(m.at), "layout message: truncated %s index information", indexNames[lay.index])
	}
	if lay.singleFiltered {
		lay.singleSize = c.u(f.sl)
		lay.singleMask = c.u32()
	} else {
		c.skip(info) // the array and B-tree headers repeat these parameters
	}
	a, err := f.addr(c.u(f.so), indexNames[lay.index]+" index")
	if err != nil {
		return nil, err
	}
	lay.addr = a
	return lay, nil
}

// emitter hands chunks to the callback, carving the Offset slices out of
// larger blocks to keep allocations per chunk low.
type emitter struct {
	fn       func(Chunk) error
	rank     int
	chunk    []uint64 // chunk dimensions: every chunk starts on this grid
	fileSize int64
	pool     []int64
}

// emit reports the chunk whose scaled (chunk-grid) coordinates are scaled.
func (e *emitter) emit(scaled []uint64, lay *layout, mask uint32, addr int64, size uint64) error {
	off := e.offsets()
	for i, s := range scaled {
		v, ok := mulCheck(s, lay.chunk[i], math.MaxInt64)
		if !ok {
			return catalog.Corrupt("hdf5", "", int64(addr), "chunk: coordinate overflows")
		}
		off[i] = int64(v)
	}
	return e.emitOffsets(off, mask, addr, size)
}

func (e *emitter) offsets() []int64 {
	if len(e.pool) < e.rank {
		e.pool = make([]int64, 256*e.rank)
	}
	off := e.pool[:e.rank:e.rank]
	e.pool = e.pool[e.rank:]
	return off
}

func (e *emitter) emitOffsets(off []int64, mask uint32, addr int64, size uint64) error {
	if size > math.MaxInt64 {
		return catalog.Corrupt("hdf5", "", int64(addr), "chunk: size %d", size)
	}
	// Structural checks: the chunk's bytes lie inside the file and its
	// coordinates on the chunk grid (a damaged key would place it elsewhere).
	if addr < 0 || int64(size) > e.fileSize-addr {
		return catalog.Corrupt("hdf5", "", int64(addr), "chunk: %d bytes run past the end of the file (size %d)", size, e.fileSize)
	}
	for d, o := range off {
		if d < len(e.chunk) && e.chunk[d] > 0 && uint64(o)%e.chunk[d] != 0 {
			return catalog.Corrupt("hdf5", "", int64(addr), "chunk: coordinates %v not on the chunk grid %v", off, e.chunk)
		}
	}
	return e.fn(Chunk{Offset: off, FilterMask: mask, Address: addr, Size: int64(size)})
}

// gridDims returns the number of chunks along each dimension for extents
// ext (^0 = unlimited stays ^0).
func gridDims(ext, chunk []uint64) []uint64 {
	g := make([]uint64, len(ext))
	for i, d := range ext {
		if d == ^uint64(0) {
			g[i] = d
			continue
		}
		g[i] = d / chunk[i]
		if d%chunk[i] != 0 {
			g[i]++
		}
	}
	return g
}

// unlinear converts a row-major linear chunk index over grid g into
// scaled coordinates.
func unlinear(idx uint64, g []uint64, out []uint64) {
	for i := len(g) - 1; i >= 0; i-- {
		if g[i] == 0 {
			out[i] = 0
			continue
		}
		out[i] = idx % g[i]
		idx /= g[i]
	}
}

// walkImplicit lists the chunks of an implicit index: allocated all at
// once, in row-major chunk order over the maximum extent, unfiltered. Like
// the library, it lists only the chunks inside the current extent.
func (f *file) walkImplicit(lay *layout, ds *dataspace, e *emitter) error {
	g := gridDims(ds.max, lay.chunk)
	n := uint64(1)
	for _, d := range g {
		var ok bool
		if n, ok = mulCheck(n, d, math.MaxInt64); !ok {
			return catalog.Corrupt("hdf5", "", int64(lay.at), "layout message: implicit index over an unlimited or huge extent")
		}
	}
	total, ok := mulCheck(n, lay.chunkBytes, math.MaxInt64)
	if !ok || lay.addr+int64(total) > f.size || lay.addr+int64(total) < lay.addr {
		return catalog.Corrupt("hdf5", "", int64(lay.addr), "implicit chunk array: %d chunks of %d bytes run past the end of the file", n, lay.chunkBytes)
	}
	scaled := make([]uint64, lay.rank)
	for i := uint64(0); i < n; i++ {
		unlinear(i, g, scaled)
		if !inside(scaled, lay.chunk, ds.dims) {
			continue
		}
		if err := e.emit(scaled, lay, 0, lay.addr+int64(i*lay.chunkBytes), lay.chunkBytes); err != nil {
			return err
		}
	}
	return nil
}

// inside reports whether the chunk at scaled coordinates starts within
// the extent dims.
func inside(scaled, chunk, dims []uint64) bool {
	for i, s := range scaled {
		if v, ok := mulCheck(s, chunk[i], math.MaxUint64); !ok || v >= dims[i] {
			return false
		}
	}
	return true
}
