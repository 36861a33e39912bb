//go:build cgo

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
func OpenRW(path string) (*Writer, error) { return OpenRWWith(path, CreateOptions{}) }

// OpenRWWith is OpenRW with the file's creation options: the alignment is a
// property of the open file, not of the file, so chunks written now are
// aligned only when it is given again.
func OpenRWWith(path string, o CreateOptions) (*Writer, error) {
	if o.Alignment < 0 || o.AlignThreshold < 0 {
		return nil, fmt.Errorf("h5: %s: alignment %d threshold %d: %w", path, o.Alignment, o.AlignThreshold, catalog.ErrUnsupported)
	}
	defer pin()()
	fapl := C.H5Pcreate(C.h5q_fapl_class())
	if fapl < 0 {
		return nil, fmt.Errorf("h5: %s: cannot create file access properties (%s)", path, lastError())
	}
	defer C.H5Pclose(fapl)
	if o.Alignment > 1 && C.H5Pset_alignment(fapl, C.hsize_t(o.AlignThreshold), C.hsize_t(o.Alignment)) < 0 {
		return nil, fmt.Errorf("h5: %s: cannot set alignment %d (%s)", path, o.Alignment, lastError())
	}
	cpath, free := cstr(path)
	defer free()
	fid := C.H5Fopen(cpath, C.H5F_ACC_RDWR, fapl)
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
