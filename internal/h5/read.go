//go:build cgo

package h5

/*
#include "h5q.h"
*/
import "C"

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	pathpkg "path"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"gonum.org/v1/hdf5"

	"relayout/catalog"
	"relayout/internal/fileio"
)

// File is an HDF5 file opened read-only. Its methods serialise on a mutex, so a
// File may be shared between goroutines, but HDF5's global lock means calls
// never run in parallel anyway: keep HDF5 out of the bulk data path.
type File struct {
	mu   sync.Mutex
	path string
	f    *hdf5.File // nil after Close
	base int64      // file offset of HDF5 address 0 (the superblock's base address)
	raw  *os.File   // the same file for native checks (chunkindex.CheckAttributes)
	size int64
	// regions: datasets kept open for ReadRegion (region.go), by path.
	regions map[string]libDataset
	// slabs: SlabReaders open on this file (hyperslab.go), closed with it.
	slabs map[*SlabReader]struct{}
}

// Open opens path read-only. A missing file wraps catalog.ErrNotFound; a file
// that is not HDF5, or is truncated, wraps catalog.ErrCorrupt.
func Open(path string) (*File, error) {
	// The library opens by name and would block in open() on a FIFO: the
	// file is checked under fileio's discipline first (regular files, or
	// symlinks to them, only).
	raw, size, err := fileio.Open(path)
	if err != nil {
		return nil, fmt.Errorf("h5: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			raw.Close()
		}
	}()
	defer pin()()
	cpath, free := cstr(path)
	defer free()
	switch r := C.H5Fis_hdf5(cpath); {
	case r == 0:
		return nil, catalog.Corrupt("hdf5", path, 0, "no HDF5 superblock signature (not an HDF5 file, or its first bytes are damaged)")
	case r < 0:
		return nil, h5err(path, "", catalog.ErrCorrupt, "cannot check HDF5 signature")
	}
	hf, err := hdf5.OpenFile(path, hdf5.F_ACC_RDONLY)
	if err != nil {
		if msg := lastError(); strings.Contains(msg, "truncated file") {
			// The library compares the superblock's end of file with the
			// size: the damage is where the file ends.
			return nil, catalog.Corrupt("hdf5", path, size, "cannot open (%s)", msg)
		}
		return nil, h5err(path, "", catalog.ErrCorrupt, "cannot open")
	}
	f := &File{path: path, f: hf, raw: raw, size: size}
	fid := C.hid_t(hf.ID())
	// HDF5 addresses are relative to the superblock's base address, which is
	// the user block size for files with a user block.
	fcpl := C.H5Fget_create_plist(fid)
	if fcpl >= 0 {
		var ub C.hsize_t
		if C.H5Pget_userblock(fcpl, &ub) >= 0 {
			f.base = int64(ub)
		}
		C.H5Pclose(fcpl)
	}
	// HDF5 1.10 already refuses most truncated files on open; this catches
	// the rest (the end of allocation must lie within the file). Unlike
	// object addresses, H5Fget_eoa already includes the user block.
	var eoa C.haddr_t
	if C.H5Fget_eoa(fid, &eoa) >= 0 && eoa != C.h5q_undef() && int64(eoa) > size {
		hf.Close()
		return nil, catalog.Corrupt("hdf5", path, size, "truncated file: size %d < end of allocation %d", size, int64(eoa))
	}
	ok = true
	return f, nil
}

// Path is the path the file was opened with.
func (f *File) Path() string { return f.path }

// Close releases the file. Closing twice is harmless.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.f == nil {
		return nil
	}
	defer pin()()
	f.closeRegions()
	for r := range f.slabs {
		r.close()
	}
	err := f.f.Close()
	f.f = nil
	f.raw.Close()
	if err != nil {
		return h5err(f.path, "", catalog.ErrCorrupt, "close")
	}
	return nil
}

// lock takes the mutex, pins the thread and checks the file is open. The
// returned function undoes both.
func (f *File) lock() (C.hid_t, func(), error) {
	f.mu.Lock()
	if f.f == nil {
		f.mu.Unlock()
		return -1, func() {}, fmt.Errorf("h5: %s: file is closed", f.path)
	}
	unpin := pin()
	return C.hid_t(f.f.ID()), func() { unpin(); f.mu.Unlock() }, nil
}

// exists checks obj without leaving an error on the stack: ErrNotFound when
// absent.
func (f *File) exists(fid C.hid_t, obj string) error {
	cobj, free := cstr(obj)
	defer free()
	switch C.h5q_exists(fid, cobj) {
	case 1:
		return nil
	case 0:
		return fmt.Errorf("h5: %s: %s: %w", f.path, obj, catalog.ErrNotFound)
	}
	return h5err(f.path, obj, catalog.ErrCorrupt, "cannot resolve path")
}

type child struct {
	name string
	kind int
	addr uint64
}

func (f *File) children(group string) ([]child, error) {
	fid, unlock, err := f.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	cg, free := cstr(group)
	defer free()
	var l C.h5q_list
	defer C.h5q_free_list(&l)
	if C.h5q_children(fid, cg, &l) < 0 {
		return nil, h5err(f.path, group, catalog.ErrCorrupt, "cannot list group")
	}
	out := make([]child, int(l.n))
	for i := range out {
		c := C.h5q_at(&l, C.size_t(i))
		out[i] = child{C.GoString(c.name), int(c.kind), uint64(c.addr)}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// Walk calls fn for every group and dataset below "/" (not "/" itself),
// depth-first, children sorted by name, with absolute paths. Only hard links
// are followed; soft and external links are skipped, and a group reached a
// second time (a cycle or a second hard link) is not descended into again. An
// error from fn stops the walk and is returned as is. fn runs without the
// File's lock, so it may call other File methods.
func (f *File) Walk(fn func(path string, isDataset bool) error) error {
	seen := map[uint64]bool{}
	var walk func(group string) error
	walk = func(group string) error {
		kids, err := f.children(group)
		if err != nil {
			return err
		}
		for _, k := range kids {
			p := strings.TrimSuffix(group, "/") + "/" + k.name
			if k.kind == 2 {
				if err := fn(p, true); err != nil {
					return err
				}
				continue
			}
			if seen[k.addr] {
				continue
			}
			seen[k.addr] = true
			if err := fn(p, false); err != nil {
				return err
			}
			if err := walk(p); err != nil {
				return err
			}
		}
		return nil
	}
	if fid, unlock, err := f.lock(); err != nil {
		return err
	} else {
		var oi C.H5O_info_t
		if C.H5Oget_info2(fid, &oi, C.H5O_INFO_BASIC) >= 0 {
			seen[uint64(oi.addr)] = true
		}
		unlock()
	}
	return walk("/")
}

// Attrs returns the attributes of the group or dataset obj, sorted by name.
// Integers become Ints (signed) or Uints (unsigned), floats of any size
// (including long double) become Floats, fixed and variable-length strings
// become Strings with padding trimmed; other classes and attributes with a
// null dataspace are skipped.
func (f *File) Attrs(obj string) ([]catalog.Attr, error) {
	fid, unlock, err := f.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := f.exists(fid, obj); err != nil {
		return nil, err
	}
	cobj, free := cstr(obj)
	defer free()
	oid := C.H5Oopen(fid, cobj, C.h5q_default())
	if oid < 0 {
		return nil, h5err(f.path, obj, catalog.ErrCorrupt, "cannot open object")
	}
	defer C.H5Oclose(oid)
	var oi C.H5O_info_t
	if C.H5Oget_info2(oid, &oi, C.H5O_INFO_BASIC|C.H5O_INFO_NUM_ATTRS) < 0 {
		return nil, h5err(f.path, obj, catalog.ErrCorrupt, "cannot get object info")
	}
	// The library crashes on some damaged attribute messages (HDF5 1.10:
	// H5A__attr_release_table after a failed decode while it builds the
	// table that by-index access needs): they are checked natively first,
	// and attributes stored in the header are opened by name.
	var names []string
	if oi.num_attrs > 0 && CheckAttributes != nil {
		var err error
		if names, err = CheckAttributes(f.raw, f.size, uint64(oi.addr)); err != nil {
			return nil, fmt.Errorf("h5: %s: %w", obj, catalog.CorruptIn(err, f.path))
		}
		if len(names) != int(oi.num_attrs) {
			names = nil // dense storage: by index
		}
	}
	dot, freeDot := cstr(".")
	defer freeDot()
	var out []catalog.Attr
	for i := 0; i < int(oi.num_attrs); i++ {
		var aid C.hid_t
		if names != nil {
			cname, free := cstr(names[i])
			aid = C.H5Aopen_by_name(oid, dot, cname, C.h5q_default(), C.h5q_default())
			free()
		} else {
			aid = C.H5Aopen_by_idx(oid, dot, C.H5_INDEX_NAME, C.H5_ITER_INC, C.hsize_t(i), C.h5q_default(), C.h5q_default())
		}
		if aid < 0 {
			return nil, h5err(f.path, obj, catalog.ErrCorrupt, fmt.Sprintf("cannot open attribute #%d", i))
		}
		a, ok, err := f.readAttr(obj, aid)
		C.H5Aclose(aid)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (f *File) readAttr(obj string, aid C.hid_t) (a catalog.Attr, ok bool, err error) {
	n := C.H5Aget_name(aid, 0, nil)
	if n < 0 {
		return a, false, h5err(f.path, obj, catalog.ErrCorrupt, "cannot get attribute name")
	}
	nb := make([]C.char, int(n)+1)
	C.H5Aget_name(aid, C.size_t(len(nb)), &nb[0])
	a.Name = C.GoString(&nb[0])
	where := obj + " attribute " + a.Name
	fail := func(what string) (catalog.Attr, bool, error) {
		return catalog.Attr{}, false, h5err(f.path, where, catalog.ErrCorrupt, what)
	}

	space := C.H5Aget_space(aid)
	if space < 0 {
		return fail("cannot get dataspace")
	}
	defer C.H5Sclose(space)
	var count int
	switch C.H5Sget_simple_extent_type(space) {
	case C.H5S_SCALAR:
		a.Scalar, count = true, 1
	case C.H5S_SIMPLE:
		np := C.H5Sget_simple_extent_npoints(space)
		if np < 0 {
			return fail("cannot get element count")
		}
		count = int(np)
	default: // null dataspace: no value
		return a, false, nil
	}
	tid := C.H5Aget_type(aid)
	if tid < 0 {
		return fail("cannot get type")
	}
	defer C.H5Tclose(tid)

	// Type keeps the stored width (int16, float32, ...; wider floats such
	// as long double become float64) while the values are read widened.
	size := int(C.H5Tget_size(tid))
	switch C.H5Tget_class(tid) {
	case C.H5T_INTEGER:
		if C.H5Tget_sign(tid) == C.H5T_SGN_NONE {
			a.Type, a.Uints = attrType(catalog.Uint, size), make([]uint64, count)
			if count > 0 && C.H5Aread(aid, C.h5q_native_u64(), unsafe.Pointer(&a.Uints[0])) < 0 {
				return fail("cannot read")
			}
		} else {
			a.Type, a.Ints = attrType(catalog.Int, size), make([]int64, count)
			if count > 0 && C.H5Aread(aid, C.h5q_native_i64(), unsafe.Pointer(&a.Ints[0])) < 0 {
				return fail("cannot read")
			}
		}
	case C.H5T_FLOAT:
		a.Type, a.Floats = attrType(catalog.Float, size), make([]float64, count)
		if count > 0 && C.H5Aread(aid, C.h5q_native_double(), unsafe.Pointer(&a.Floats[0])) < 0 {
			return fail("cannot read")
		}
	case C.H5T_STRING:
		a.Type = "string"
		if C.H5Tis_variable_str(tid) > 0 {
			a.Strings, err = readVarStrings(aid, tid, space, count)
		} else {
			a.Strings, err = readFixedStrings(aid, tid, count)
		}
		if err != nil {
			return fail(err.Error())
		}
	default:
		return a, false, nil
	}
	return a, true, nil
}

// attrType names an attribute type of kind k stored in size bytes: the
// width itself when it is 1, 2, 4 or 8 (floats: 4 or 8), else 64 bits.
func attrType(k catalog.Kind, size int) string {
	dt := catalog.DType{Kind: k, Size: size}
	if !dt.Valid() {
		dt.Size = 8
	}
	return dt.AttrType()
}

func readVarStrings(aid, tid, space C.hid_t, count int) ([]string, error) {
	mt := C.H5Tcopy(C.h5q_c_s1())
	if mt < 0 {
		return nil, errors.New("cannot make string memory type")
	}
	defer C.H5Tclose(mt)
	C.H5Tset_size(mt, C.h5q_variable())
	C.H5Tset_cset(mt, C.H5Tget_cset(tid))
	out := make([]string, count)
	if count == 0 {
		return out, nil
	}
	// HDF5 writes C pointers into buf, so it must be C memory.
	buf := (**C.char)(C.calloc(C.size_t(count), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
	if buf == nil {
		return nil, errors.New("out of memory")
	}
	defer C.free(unsafe.Pointer(buf))
	if C.H5Aread(aid, mt, unsafe.Pointer(buf)) < 0 {
		return nil, errors.New("cannot read")
	}
	for i, p := range unsafe.Slice(buf, count) {
		if p != nil {
			out[i] = C.GoString(p)
		}
	}
	C.h5q_vlen_reclaim(mt, space, unsafe.Pointer(buf))
	return out, nil
}

func readFixedStrings(aid, tid C.hid_t, count int) ([]string, error) {
	size := int(C.H5Tget_size(tid))
	out := make([]string, count)
	if count == 0 || size == 0 {
		return out, nil
	}
	buf := make([]byte, count*size)
	if C.H5Aread(aid, tid, unsafe.Pointer(&buf[0])) < 0 {
		return nil, errors.New("cannot read")
	}
	pad := C.H5Tget_strpad(tid)
	for i := range out {
		s := buf[i*size : (i+1)*size]
		switch pad {
		case C.H5T_STR_NULLTERM:
			if j := bytes.IndexByte(s, 0); j >= 0 {
				s = s[:j]
			}
		case C.H5T_STR_SPACEPAD:
			s = bytes.TrimRight(s, " \x00")
		default:
			s = bytes.TrimRight(s, "\x00")
		}
		out[i] = string(s)
	}
	return out, nil
}

// openDataset opens a dataset through gonum; the caller closes it. Must be
// called with the lock held.
// lockedDataset locks f and opens the dataset at path; done closes it and
// unlocks f.
func (f *File) lockedDataset(path string) (did C.hid_t, done func(), err error) {
	fid, unlock, err := f.lock()
	if err != nil {
		return -1, nil, err
	}
	ds, err := f.openDataset(fid, path)
	if err != nil {
		unlock()
		return -1, nil, err
	}
	return C.hid_t(ds.ID()), func() { ds.Close(); unlock() }, nil
}

func (f *File) openDataset(fid C.hid_t, path string) (*hdf5.Dataset, error) {
	if err := f.exists(fid, path); err != nil {
		return nil, err
	}
	cpath, free := cstr(path)
	defer free()
	var oi C.H5O_info_t
	if C.H5Oget_info_by_name2(fid, cpath, &oi, C.H5O_INFO_BASIC, C.h5q_default()) < 0 {
		return nil, h5err(f.path, path, catalog.ErrCorrupt, "cannot get object info")
	}
	if oi._type != C.H5O_TYPE_DATASET {
		return nil, fmt.Errorf("h5: %s: %s: not a dataset: %w", f.path, path, catalog.ErrNotFound)
	}
	ds, err := f.f.OpenDataset(path)
	if err != nil {
		return nil, h5err(f.path, path, catalog.ErrCorrupt, "cannot open dataset")
	}
	return ds, nil
}

// Dataset describes the dataset at path (absolute).
func (f *File) Dataset(path string) (*DatasetInfo, error) {
	did, done, err := f.lockedDataset(path)
	if err != nil {
		return nil, err
	}
	defer done()
	fail := func(what string) (*DatasetInfo, error) {
		return nil, h5err(f.path, path, catalog.ErrCorrupt, what)
	}
	info := &DatasetInfo{Path: path, Address: -1}

	tid := C.H5Dget_type(did)
	if tid < 0 {
		return fail("cannot get type")
	}
	defer C.H5Tclose(tid)
	info.DType, info.Numeric, info.TypeDesc = dtypeOf(tid)

	space := C.H5Dget_space(did)
	if space < 0 {
		return fail("cannot get dataspace")
	}
	defer C.H5Sclose(space)
	rank := int(C.H5Sget_simple_extent_ndims(space))
	if rank < 0 {
		return fail("cannot get rank")
	}
	info.Shape = []int64{}
	if C.H5Sget_simple_extent_type(space) == C.H5S_SIMPLE && rank > 0 {
		dims, maxdims := make([]C.hsize_t, rank), make([]C.hsize_t, rank)
		C.H5Sget_simple_extent_dims(space, &dims[0], &maxdims[0])
		info.Shape = int64s(dims)
		for i, m := range maxdims {
			if m == C.h5q_unlimited() {
				if info.Unlimited == nil {
					info.Unlimited = make([]bool, rank)
				}
				info.Unlimited[i] = true
			}
		}
	} else if C.H5Sget_simple_extent_type(space) == C.H5S_NULL {
		info.TypeDesc += " (null dataspace)"
		info.Numeric = false
	}

	dcpl := C.H5Dget_create_plist(did)
	if dcpl < 0 {
		return fail("cannot get creation properties")
	}
	defer C.H5Pclose(dcpl)
	switch C.H5Pget_layout(dcpl) {
	case C.H5D_COMPACT:
		info.Layout = "compact"
	case C.H5D_CONTIGUOUS:
		info.Layout = "contiguous"
	case C.H5D_CHUNKED:
		info.Layout = "chunked"
		chunk := make([]C.hsize_t, max(rank, 1))
		n := C.H5Pget_chunk(dcpl, C.int(len(chunk)), &chunk[0])
		if n < 0 {
			return fail("cannot get chunk shape")
		}
		info.Chunk = int64s(chunk[:int(n)])
	case C.H5D_VIRTUAL:
		info.Layout = "virtual"
	default:
		return fail("unknown layout")
	}

	nf := int(C.H5Pget_nfilters(dcpl))
	if nf < 0 {
		return fail("cannot get filters")
	}
	for i := 0; i < nf; i++ {
		var flags, config C.uint
		params := make([]C.uint, 16)
		var nparams C.size_t
		var name [256]C.char
		var id C.H5Z_filter_t
		for {
			nparams = C.size_t(len(params))
			id = C.H5Pget_filter2(dcpl, C.uint(i), &flags, &nparams, &params[0], C.size_t(len(name)), &name[0], &config)
			if id < 0 {
				return fail(fmt.Sprintf("cannot get filter #%d", i))
			}
			if int(nparams) <= len(params) {
				break
			}
			params = make([]C.uint, int(nparams))
		}
		flt := Filter{ID: int(id), Name: filterName(int(id), C.GoString(&name[0])), Params: make([]uint32, int(nparams))}
		for j := range flt.Params {
			flt.Params[j] = uint32(params[j])
		}
		info.Filters = append(info.Filters, flt)
	}

	if info.Layout == "contiguous" {
		if next := C.H5Pget_external_count(dcpl); next > 0 {
			info.External = true
		} else if allocated(did) {
			// HDF5 1.10.8's H5Dget_offset already adds the user block (unlike
			// H5Dget_chunk_info), and for unallocated data returns
			// HADDR_UNDEF+base, hence the space-status check first.
			if addr := C.H5Dget_offset(did); addr != C.h5q_undef() {
				info.Address = int64(addr)
			}
		}
	}

	if info.Numeric {
		var st C.H5D_fill_value_t
		if C.H5Pfill_value_defined(dcpl, &st) < 0 {
			return fail("cannot get fill value status")
		}
		switch st {
		case C.H5D_FILL_VALUE_USER_DEFINED:
			fill := make([]byte, info.DType.Size)
			if C.H5Pget_fill_value(dcpl, tid, unsafe.Pointer(&fill[0])) < 0 {
				return fail("cannot get fill value")
			}
			info.Fill = fill
		case C.H5D_FILL_VALUE_DEFAULT:
			// Unwritten elements read as zeros: say so, since an array
			// without a fill value gets NaN holes (rewriter).
			info.Fill = make([]byte, info.DType.Size)
		}
	}

	var oi C.H5O_info_t
	if C.H5Oget_info2(did, &oi, C.H5O_INFO_BASIC) < 0 {
		return fail("cannot get object info")
	}
	info.ObjAddr = uint64(oi.addr)
	return info, nil
}

// allocated reports whether the dataset's storage has been allocated.
func allocated(did C.hid_t) bool {
	var st C.H5D_space_status_t
	return C.H5Dget_space_status(did, &st) >= 0 && st != C.H5D_SPACE_STATUS_NOT_ALLOCATED
}

func filterName(id int, reported string) string {
	switch id {
	case 1:
		return "deflate"
	case 2:
		return "shuffle"
	case 3:
		return "fletcher32"
	case 4:
		return "szip"
	case 5:
		return "nbit"
	case 6:
		return "scaleoffset"
	case 32001:
		return "blosc"
	}
	// Plugin filters by their registered ids (the HDF Group's list): their
	// own names are often a sentence ("HDF5 bzip2 filter; see http://...").
	if name, ok := pluginNames[id]; ok {
		return name
	}
	if reported != "" {
		return reported
	}
	return fmt.Sprintf("filter-%d", id)
}

// pluginNames names the registered HDF5 plugin filters relayout may meet.
var pluginNames = map[int]string{
	305: "lzo", 307: "bzip2", 32000: "lzf", 32002: "mafisc", 32003: "snappy", 32004: "lz4",
	32008: "bitshuffle", 32013: "zfp", 32014: "fpzip", 32015: "zstd", 32017: "sz",
	32018: "fcidecomp", 32024: "sz3", 32026: "blosc2",
}

// Chunks calls fn for every allocated chunk of the chunked dataset at path,
// in the library's index order. This uses H5Dget_chunk_info, which is
// quadratic in the number of chunks (see GUIDE §6). fn runs without the File's
// lock. A non-chunked dataset wraps catalog.ErrUnsupported.
func (f *File) Chunks(path string, fn func(Chunk) error) error {
	fid, unlock, err := f.lock()
	if err != nil {
		return err
	}
	ds, err := f.openDataset(fid, path)
	if err != nil {
		unlock()
		return err
	}
	did := C.hid_t(ds.ID())
	space := C.H5Dget_space(did)
	release := func() {
		if space >= 0 {
			C.H5Sclose(space)
		}
		ds.Close()
	}
	n, rank, err := f.countChunks(path, did, space)
	if err != nil {
		release()
		unlock()
		return err
	}
	unlock()
	// The ids stay valid even if fn closes the File (HDF5's weak close
	// degree keeps the file open until its last object is closed).
	defer func() {
		f.mu.Lock()
		unpin := pin()
		release()
		unpin()
		f.mu.Unlock()
	}()
	off := make([]C.hsize_t, max(rank, 1))
	for i := C.hsize_t(0); i < n; i++ {
		var mask C.uint
		var addr C.haddr_t
		var size C.hsize_t
		f.mu.Lock()
		unpin := pin()
		if C.H5Dget_chunk_info(did, space, i, &off[0], &mask, &addr, &size) < 0 {
			err = h5err(f.path, path, catalog.ErrCorrupt, fmt.Sprintf("cannot get chunk #%d", i))
		}
		unpin()
		f.mu.Unlock()
		if err != nil {
			return err
		}
		c := Chunk{Offset: int64s(off[:rank]), FilterMask: uint32(mask), Address: f.base + int64(addr), Size: int64(size)}
		if err := fn(c); err != nil {
			return err
		}
	}
	return nil
}

// countChunks checks the layout and counts allocated chunks (lock held).
func (f *File) countChunks(path string, did, space C.hid_t) (C.hsize_t, int, error) {
	if space < 0 {
		return 0, 0, h5err(f.path, path, catalog.ErrCorrupt, "cannot get dataspace")
	}
	dcpl := C.H5Dget_create_plist(did)
	if dcpl < 0 {
		return 0, 0, h5err(f.path, path, catalog.ErrCorrupt, "cannot get creation properties")
	}
	layout := C.H5Pget_layout(dcpl)
	C.H5Pclose(dcpl)
	if layout != C.H5D_CHUNKED {
		return 0, 0, fmt.Errorf("h5: %s: %s: not chunked: %w", f.path, path, catalog.ErrUnsupported)
	}
	rank := int(C.H5Sget_simple_extent_ndims(space))
	var n C.hsize_t
	// H5Dget_num_chunks needs the dataset's own dataspace; H5S_ALL is refused.
	if rank < 0 || C.H5Dget_num_chunks(did, space, &n) < 0 {
		return 0, 0, h5err(f.path, path, catalog.ErrCorrupt, "cannot count chunks")
	}
	return n, rank, nil
}

// StorageSize is H5Dget_storage_size of the dataset at path: the bytes
// allocated for its data. For a chunked dataset the library walks the whole
// chunk index, which is why Dataset does not ask for it.
func (f *File) StorageSize(path string) (int64, error) {
	did, done, err := f.lockedDataset(path)
	if err != nil {
		return 0, err
	}
	defer done()
	return int64(C.H5Dget_storage_size(did)), nil
}

// ReadRaw reads the whole dataset at path through HDF5, in its file type and
// byte order (meant for small compact datasets). Variable-length types wrap
// catalog.ErrUnsupported.
func (f *File) ReadRaw(path string) ([]byte, error) {
	did, done, err := f.lockedDataset(path)
	if err != nil {
		return nil, err
	}
	defer done()
	tid := C.H5Dget_type(did)
	if tid < 0 {
		return nil, h5err(f.path, path, catalog.ErrCorrupt, "cannot get type")
	}
	defer C.H5Tclose(tid)
	if C.H5Tis_variable_str(tid) > 0 || C.H5Tdetect_class(tid, C.H5T_VLEN) > 0 || C.H5Tdetect_class(tid, C.H5T_REFERENCE) > 0 {
		return nil, fmt.Errorf("h5: %s: %s: raw read of variable-length or reference data: %w", f.path, path, catalog.ErrUnsupported)
	}
	space := C.H5Dget_space(did)
	if space < 0 {
		return nil, h5err(f.path, path, catalog.ErrCorrupt, "cannot get dataspace")
	}
	defer C.H5Sclose(space)
	np := int64(C.H5Sget_simple_extent_npoints(space))
	size := int64(C.H5Tget_size(tid))
	if np < 0 || size <= 0 {
		return nil, h5err(f.path, path, catalog.ErrCorrupt, "bad extent or type size")
	}
	// A compact dataset's bytes are in its layout message: HDF5 1.10 reads
	// past them (a crash) when the message holds fewer than the extent needs.
	if dcpl := C.H5Dget_create_plist(did); dcpl >= 0 {
		compact := C.H5Pget_layout(dcpl) == C.H5D_COMPACT
		C.H5Pclose(dcpl)
		if st := int64(C.H5Dget_storage_size(did)); compact && st != np*size {
			return nil, catalog.Corrupt("hdf5", f.path, -1, "%s: compact data of %d bytes for %d elements of %d bytes", path, st, np, size)
		}
	}
	buf := make([]byte, np*size)
	if len(buf) == 0 {
		return buf, nil
	}
	if C.H5Dread(did, tid, C.h5q_all(), C.h5q_all(), C.h5q_default(), unsafe.Pointer(&buf[0])) < 0 {
		return nil, h5err(f.path, path, catalog.ErrCorrupt, "cannot read")
	}
	return buf, nil
}

// DimensionNames names each dimension of the dataset at path (absolute) by
// the HDF5 dimension scale attached to it, the way netCDF-4 names its
// dimensions: the base name of the first scale attached (H5DSiterate_scales),
// or, for a 1-D dataset that is itself a scale (a netCDF-4 coordinate
// variable), its own name. A dimension without a scale is "". nil when no
// dimension has a name (a plain HDF5 dataset).
func (f *File) DimensionNames(path string) ([]string, error) {
	did, done, err := f.lockedDataset(path)
	if err != nil {
		return nil, err
	}
	defer done()
	space := C.H5Dget_space(did)
	if space < 0 {
		return nil, h5err(f.path, path, catalog.ErrCorrupt, "cannot get dataspace")
	}
	rank := int(C.H5Sget_simple_extent_ndims(space))
	C.H5Sclose(space)
	if rank <= 0 {
		return nil, nil
	}
	names := make([]string, rank)
	named := false
	if rank == 1 && C.H5DSis_scale(did) > 0 {
		return []string{pathpkg.Base(path)}, nil
	}
	buf := make([]C.char, 1024)
	for d := range rank {
		switch C.h5q_dim_scale(did, C.uint(d), &buf[0]) {
		case 1:
			names[d], named = pathpkg.Base(C.GoString(&buf[0])), true
		case 0:
		default:
			return nil, h5err(f.path, path, catalog.ErrCorrupt, fmt.Sprintf("cannot list the dimension scales of dimension %d", d))
		}
	}
	if !named {
		return nil, nil
	}
	return names, nil
}
