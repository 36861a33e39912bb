package planner

import (
	"slices"

	"relayout/catalog"
)

// Record variables. A netCDF time series keeps its record dimension
// unlimited (ncdump shows "time = UNLIMITED ; // (N currently)", ncrcat
// appends along it), and HDF5 gives a dataset an unlimited axis only with
// chunked storage: every netCDF array over an unlimited dimension
// (catalog.DatasetInfo.Unlimited) is chunked. relayout run writes them so
// (the rewriter) and relayout plan predicts it (chooseFor), from
// RecordLayout.
//
// The chunks: a layout that already chunks the array (--layout
// chunked|auto, a partly covered array's holes) keeps its chunk. A
// contiguous one (the default) gets recordChunk's: one record per chunk,
// the whole record slab (every other axis whole), which is what netCDF-C
// gives a record variable by default (4.9: 1 along the unlimited axis, the
// others whole up to 4 MiB). Chunks are allocated in row-major order when
// the file is created, so the file holds the same bytes in the same order
// as the contiguous layout did, and the rewrite stays on its fast path
// (pwritten raw chunks, kind "chunks"). For the reads the planner weighs
// (planner.SeriesPatterns): a map at one time reads one chunk, the bytes a
// contiguous dataset gives it; the whole variable reads every chunk in
// file order; a point's time series reads one element of each record as
// before, one request a record, except where a reader's chunk cache holds
// a whole chunk (HDF5 caches chunks up to 1 MiB, netCDF-C sizes its cache
// to the chunks) and reads the record slab instead of a page — the price
// of any chunked record variable, which `--layout auto` weighs. A slab
// over recordChunkMax is cut along its outer axes (lev of [time, lev, lat,
// lon]) so that a chunk stays within HDF5's default-sized caches and
// netCDF-C's 4 MiB default; a slab under recordChunkMin (time, time_bnds,
// date_written: a few bytes a record) takes several records a chunk, up
// to recordChunkMin (netCDF-C's 4 KiB for 1-D record variables), so that
// the chunk index does not hold an entry every few bytes.
const (
	recordChunkMin = 4 << 10
	recordChunkMax = 4 << 20
)

// UnlimitedAxes marks the axes of a over one of the unlimited dimensions
// (catalog.DatasetInfo.Unlimited); nil when there is none.
func UnlimitedAxes(a *catalog.Array, unlimited []string) []bool {
	if len(unlimited) == 0 || len(a.Dims) != len(a.Shape) {
		return nil
	}
	var axes []bool
	for k, d := range a.Dims {
		if d != "" && slices.Contains(unlimited, d) {
			if axes == nil {
				axes = make([]bool, len(a.Shape))
			}
			axes[k] = true
		}
	}
	return axes
}

// RecordLayout is the layout of a netCDF array over an unlimited dimension:
// l when it chunks, else chunked in recordChunk's chunks (see above).
func RecordLayout(a *catalog.Array, l Layout, unlimited []string) Layout {
	axes := UnlimitedAxes(a, unlimited)
	if axes == nil || l.Kind == Chunked || a.Constant {
		return l
	}
	return Layout{Kind: Chunked, Chunk: recordChunk(a.Shape, axes, int64(a.DType.Size))}
}

// recordChunk is the chunk of an array of shape over the unlimited axes:
// one record (1 along every unlimited axis) with the other axes whole,
// those outermost cut to keep the chunk within recordChunkMax bytes, then
// the first unlimited axis lengthened to recordChunkMin bytes (at most its
// length: chunks are allocated whole).
func recordChunk(shape []int64, unlimited []bool, size int64) []int64 {
	chunk := make([]int64, len(shape))
	for d, n := range shape {
		chunk[d] = max(n, 1)
		if unlimited[d] {
			chunk[d] = 1
		}
	}
	for d := range chunk {
		if unlimited[d] || product(chunk)*size <= recordChunkMax {
			continue
		}
		rest := product(chunk) / chunk[d] * size
		chunk[d] = max(1, recordChunkMax/rest)
	}
	for d := range chunk {
		if unlimited[d] {
			slab := product(chunk) * size
			chunk[d] = max(1, min(recordChunkMin/slab, shape[d]))
			break
		}
	}
	return chunk
}
