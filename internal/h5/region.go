//go:build cgo

package h5

/*
#include "h5q.h"

// h5q_plugin_path copies the i-th directory of HDF5's plugin search path
// (HDF5_PLUGIN_PATH, or the library's default) into out; -1 past the end.
static inline ssize_t h5q_plugin_path(unsigned i, char *out, size_t len) {
	unsigned n = 0;
	if (H5PLsize(&n) < 0 || i >= n) return -1;
	return H5PLget(i, out, len);
}

// h5q_open_nocache opens a dataset with its chunk cache disabled: each chunk
// is read once, so caching would only copy it.
static inline hid_t h5q_open_nocache(hid_t file, const char *path) {
	hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
	if (dapl < 0) return -1;
	if (H5Pset_chunk_cache(dapl, 0, 0, 1.0) < 0) { H5Pclose(dapl); return -1; }
	hid_t did = H5Dopen2(file, path, dapl);
	H5Pclose(dapl);
	return did;
}
*/
import "C"

import (
	"fmt"
	"unsafe"

	"relayout/catalog"
)

// The slow path for filters relayout does not decode itself (HDF5 plugin
// filters: lz4, bzip2, zfp, ...). HDF5 has no public call that applies
// a filter pipeline to a buffer, so a chunk is read with H5Dread of its
// region, the library applying the filters (plugins found on
// HDF5_PLUGIN_PATH). These reads run under the library's global lock: one
// at a time in the process.

// FilterAvailable reports whether the HDF5 library can decode filter id:
// built in, registered, or a plugin found on its plugin search path
// (H5Zfilter_avail loads it). When it cannot, msg is the library's own
// message, if any (a plugin on the path that failed to load: "can't
// dlopen:...: undefined symbol: ...").
func FilterAvailable(id int) (ok bool, msg string) {
	defer pin()()
	if C.H5Zfilter_avail(C.H5Z_filter_t(id)) > 0 {
		return true, ""
	}
	return false, lastError()
}

// PluginPath lists the directories HDF5 searches for filter plugins:
// HDF5_PLUGIN_PATH when set, else the library's built-in default.
func PluginPath() []string {
	defer pin()()
	var out []string
	var buf [4096]C.char
	for i := C.uint(0); ; i++ {
		if C.h5q_plugin_path(i, &buf[0], C.size_t(len(buf))) < 0 {
			break
		}
		out = append(out, C.GoString(&buf[0]))
	}
	return out
}

// libDataset is a dataset kept open for ReadRegion, with its file type.
type libDataset struct {
	did, tid C.hid_t
}

// ReadRegion reads the box [lower, lower+count) of the dataset at path
// through the library (H5Dread: the dataset's filter pipeline is applied
// by HDF5, plugins included) into dst, which holds a row-major array of
// shape stored in the dataset's file element type and byte order, the box
// at its origin (elements of dst outside the box are left as they are).
// len(dst) must be the stored shape's size. The dataset stays open, with
// its chunk cache disabled, until the File is closed.
func (f *File) ReadRegion(path string, lower, count, stored []int64, dst []byte) error {
	fid, unlock, err := f.lock()
	if err != nil {
		return err
	}
	defer unlock()
	ds, err := f.regionDataset(fid, path)
	if err != nil {
		return err
	}
	rank := len(stored)
	if len(lower) != rank || len(count) != rank {
		return catalog.Corrupt("hdf5", f.path, -1, "%s: region %v+%v in stored shape %v", path, lower, count, stored)
	}
	size := int64(C.H5Tget_size(ds.tid))
	n := size
	for d := range rank {
		if count[d] < 0 || count[d] > stored[d] || lower[d] < 0 {
			return catalog.Corrupt("hdf5", f.path, -1, "%s: region %v+%v in stored shape %v", path, lower, count, stored)
		}
		n *= stored[d]
	}
	if n != int64(len(dst)) {
		return catalog.Corrupt("hdf5", f.path, -1, "%s: buffer of %d bytes for stored shape %v of %d-byte elements", path, len(dst), stored, size)
	}
	if n == 0 {
		return nil
	}
	fspace := C.H5Dget_space(ds.did)
	if fspace < 0 {
		return h5err(f.path, path, catalog.ErrCorrupt, "cannot get dataspace")
	}
	defer C.H5Sclose(fspace)
	if int(C.H5Sget_simple_extent_ndims(fspace)) != rank {
		return catalog.Corrupt("hdf5", f.path, -1, "%s: region of rank %d in a dataset of another rank", path, rank)
	}
	mspace := C.h5q_all()
	if rank > 0 {
		lo, cnt := hsizes(lower), hsizes(count)
		if C.H5Sselect_hyperslab(fspace, C.H5S_SELECT_SET, &lo[0], nil, &cnt[0], nil) < 0 {
			return h5err(f.path, path, catalog.ErrCorrupt, fmt.Sprintf("cannot select region %v+%v", lower, count))
		}
		if C.H5Sselect_valid(fspace) <= 0 {
			return catalog.Corrupt("hdf5", f.path, -1, "%s: region %v+%v outside the dataset", path, lower, count)
		}
		st := hsizes(stored)
		mspace = C.H5Screate_simple(C.int(rank), &st[0], nil)
		if mspace < 0 {
			return h5err(f.path, path, catalog.ErrCorrupt, "cannot make memory dataspace")
		}
		defer C.H5Sclose(mspace)
		zero := make([]C.hsize_t, rank)
		if C.H5Sselect_hyperslab(mspace, C.H5S_SELECT_SET, &zero[0], nil, &cnt[0], nil) < 0 {
			return h5err(f.path, path, catalog.ErrCorrupt, "cannot select memory region")
		}
	}
	if C.H5Dread(ds.did, ds.tid, mspace, fspace, C.h5q_default(), unsafe.Pointer(&dst[0])) < 0 {
		return h5err(f.path, path, catalog.ErrCorrupt, fmt.Sprintf("cannot read region %v+%v through the filter pipeline", lower, count))
	}
	return nil
}

// regionDataset returns the dataset at path, opening it on first use
// (lock held).
func (f *File) regionDataset(fid C.hid_t, path string) (libDataset, error) {
	if ds, ok := f.regions[path]; ok {
		return ds, nil
	}
	if err := f.exists(fid, path); err != nil {
		return libDataset{}, err
	}
	cpath, free := cstr(path)
	defer free()
	did := C.h5q_open_nocache(fid, cpath)
	if did < 0 {
		return libDataset{}, h5err(f.path, path, catalog.ErrCorrupt, "cannot open dataset")
	}
	tid := C.H5Dget_type(did)
	if tid < 0 {
		C.H5Dclose(did)
		return libDataset{}, h5err(f.path, path, catalog.ErrCorrupt, "cannot get type")
	}
	if C.H5Tis_variable_str(tid) > 0 || C.H5Tdetect_class(tid, C.H5T_VLEN) > 0 || C.H5Tdetect_class(tid, C.H5T_REFERENCE) > 0 {
		C.H5Tclose(tid)
		C.H5Dclose(did)
		return libDataset{}, fmt.Errorf("h5: %s: %s: region read of variable-length or reference data: %w", f.path, path, catalog.ErrUnsupported)
	}
	if f.regions == nil {
		f.regions = map[string]libDataset{}
	}
	ds := libDataset{did: did, tid: tid}
	f.regions[path] = ds
	return ds, nil
}

// closeRegions closes the datasets ReadRegion opened (lock held, pinned).
func (f *File) closeRegions() {
	for _, ds := range f.regions {
		C.H5Tclose(ds.tid)
		C.H5Dclose(ds.did)
	}
	f.regions = nil
}
