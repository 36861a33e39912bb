package h5

/*
#include "h5q.h"
*/
import "C"

import (
	"fmt"

	"relayout/catalog"
)

// OpenRW opens an existing HDF5 file, written by this package, for writing
// more chunks into datasets it already holds (relayout commit joining the
// chunks that shards wrote to part files).
func OpenRW(path string) (*Writer, error) {
	defer pin()()
	cpath, free := cstr(path)
	defer free()
	fid := C.H5Fopen(cpath, C.H5F_ACC_RDWR, C.h5q_default())
	if fid < 0 {
		return nil, catalog.Corrupt("hdf5", path, -1, "cannot open for writing (%s)", lastError())
	}
	return &Writer{path: path, fid: fid, open: map[*OutDataset]struct{}{}}, nil
}

// OpenChunked opens the existing chunked dataset at path for WriteChunk;
// spec must be the one it was created with (the caller recorded it).
func (w *Writer) OpenChunked(path string, spec DatasetSpec) (*OutDataset, error) {
	if spec.Chunk == nil {
		return nil, fmt.Errorf("h5: %s: %s: OpenChunked without a chunk shape: %w", w.path, path, catalog.ErrUnsupported)
	}
	fid, unlock, err := w.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	cpath, free := cstr(path)
	defer free()
	did := C.H5Dopen2(fid, cpath, C.h5q_default())
	if did < 0 {
		return nil, w.failf(path, "cannot open dataset")
	}
	d := &OutDataset{w: w, path: path, id: did, spec: spec, addr: -1,
		chunkBytes: elements(spec.Chunk) * int64(spec.DType.Size)}
	w.open[d] = struct{}{}
	return d, nil
}
