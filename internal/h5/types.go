package h5

// The package's plain types and values, built with or without cgo: the
// library's side is in the cgo files (//go:build cgo), and stub.go
// (//go:build !cgo) gives the same names failing without it.

import (
	"io"

	"relayout/catalog"
)

// DatasetInfo is what the catalog needs to know about one dataset.
type DatasetInfo struct {
	Path     string
	DType    catalog.DType // valid only when Numeric
	Numeric  bool          // integer 1/2/4/8 bytes or IEEE float 4/8 bytes
	TypeDesc string        // human description: "float64", "string", "compound", "float128", ...
	Shape    []int64       // empty for a scalar dataspace
	// Unlimited marks the axes whose maximum size is H5S_UNLIMITED (nil:
	// none): a netCDF-4 dimension scale so made is an unlimited dimension.
	Unlimited []bool
	Layout    string   // "contiguous", "chunked", "compact", "virtual"
	Chunk     []int64  // chunked only
	Filters   []Filter // in pipeline (encode) order
	Address   int64    // contiguous: file offset of the data, -1 when not allocated (or External)
	Fill      []byte   // fill value (user-defined, or zeros for the default), one element in file byte order; nil = undefined
	ObjAddr   uint64   // object header address (H5Oget_info), for a native chunk-index parser
	// External is true for a contiguous dataset whose data lives in external
	// raw files (H5Pset_external): Address is then -1 and the data is not in
	// this file at all.
	External bool
}

// Filter is one stage of a dataset's filter pipeline.
type Filter struct {
	ID     int
	Name   string
	Params []uint32
}

// Chunk is one allocated chunk of a chunked dataset.
type Chunk struct {
	Offset     []int64 // element coordinates of the chunk's first element
	FilterMask uint32  // bit i set = filter i was skipped for this chunk
	Address    int64   // file offset of the stored bytes
	Size       int64   // stored (filtered) size in bytes
}

// CheckAttributes, when set, checks the attribute messages of the object
// header at a relative address natively before the library reads them
// (chunkindex.CheckAttributes, installed by reader/h5: internal/chunkindex's
// tests use this package, so it cannot import chunkindex itself).
var CheckAttributes func(r io.ReaderAt, size int64, objAddr uint64) ([]string, error)

// CreateOptions tunes how a new file allocates space.
type CreateOptions struct {
	// Alignment > 1 makes every allocation of at least AlignThreshold bytes
	// (contiguous dataset data, chunks, large metadata) start at a multiple of
	// Alignment (H5Pset_alignment on the file access property list), e.g. the
	// Lustre stripe size or the GPFS block size. 0 or 1: no alignment.
	Alignment      int64
	AlignThreshold int64
}

// DatasetSpec describes an output dataset.
type DatasetSpec struct {
	DType catalog.DType
	Shape []int64 // empty = scalar
	Chunk []int64 // nil = contiguous
	Fill  []byte  // one element in DType byte order; nil = none
	// Deflate (1-9, 0 = none) and Shuffle declare the filter pipeline of a
	// chunked dataset (shuffle first, as h5py and h5repack do). Chunks given
	// to WriteChunk are then already encoded by the caller.
	Deflate int
	Shuffle bool
	// Allocate (chunked, no filters) allocates every chunk at creation and
	// never writes the fill value, like a contiguous dataset: after
	// Writer.Close the caller finds the chunks from ObjAddr() (with
	// internal/chunkindex: asking the library chunk by chunk is quadratic)
	// and pwrites whole raw chunks there, off HDF5's global lock.
	Allocate bool
	// Unlimited (chunked only; nil = none) marks the axes whose maximum
	// size is H5S_UNLIMITED: the dataset can be extended along them later
	// (H5Dset_extent; ncrcat appending records), and a dimension scale so
	// made is an unlimited netCDF-4 dimension. A chunk may then exceed the
	// shape along those axes (an empty record axis).
	Unlimited []bool
}

// NullPadString, as catalog.Attr.Type, writes strings padded with NULs to
// the longest one's length and not terminated (H5T_STR_NULLPAD): readers
// that compare the attribute's bytes with a name need it (ParaView 5.11's
// VTKHDF reader takes a terminated "ImageData" for an unknown type).
const NullPadString = "nullpad-string"

// VirtualSource maps a whole dataset (Path) of file File onto the box Box
// of a virtual dataset. File "" is the file holding the virtual dataset
// (stored as "."); any other name is relative to that file's directory
// (HDF5 1.10 looks for a relative source beside the virtual file after
// HDF5_VDS_PREFIX and the access property's prefix). A missing source file
// reads as the fill value without an error: callers that map other files
// must check that they exist.
//
// Shape, when set, is the source dataset's shape where its rank differs
// from the virtual dataset's (a 2-D array seen as one (ny, nx, 1) slab of a
// 3-D one): its elements fill Box in row-major order, so the product of
// Shape must equal Box's elements.
//
// Sel, when set, maps only the box Sel of the source (of shape Shape, which
// must then be set) instead of the whole: its elements, in row-major order,
// fill Box in row-major order (one AMR box of a level's dataset as a run of
// a 1-D array), so Sel's elements must equal Box's.
type VirtualSource struct {
	File  string
	Path  string
	Box   catalog.Box
	Shape []int64
	Sel   *catalog.Box
}

// VirtualMapping is one mapping of a virtual dataset: the source dataset
// Dataset of file File ("." for the same file) appears at Box of the virtual
// dataset. Whole reports that the whole source is selected (as far as the
// stored source dataspace tells: HDF5 may store a box at the origin with
// the box as the extent); Sel is the source's selection when it is one
// box, not an H5S_ALL selection.
type VirtualMapping struct {
	File, Dataset string
	Box           catalog.Box
	Whole         bool
	Sel           *catalog.Box
}

// NoChunkCache, as OpenSlabReader's cacheBytes, opens a dataset without a
// chunk cache: the library reads the part of each chunk a read needs
// straight from the file (unfiltered chunks; filtered ones are decoded
// whole for every read), which SlabReader.Read does a chunk column at a
// time.
const NoChunkCache = -1
