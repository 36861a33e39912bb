//go:build cgo

package h5

/*
#include "h5q.h"
*/
import "C"

import (
	"fmt"
	"math"
	pathpkg "path"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"relayout/catalog"
)

// Writer creates one HDF5 output file. Its methods (and those of its
// OutDatasets) serialise on one mutex, so it may be shared between goroutines.
type Writer struct {
	mu   sync.Mutex
	path string
	fid  C.hid_t // -1 after Close
	open map[*OutDataset]struct{}
}

// OutDataset is a dataset being written.
type OutDataset struct {
	w          *Writer
	path       string
	id         C.hid_t // -1 after Close
	spec       DatasetSpec
	addr       int64
	chunkBytes int64
	objAddr    uint64 // Allocate: object header address, where the chunk index is found
}

// Create creates (truncating) an HDF5 file at path with default settings, so
// that HDF5 1.8+ tools can read it.
func Create(path string) (*Writer, error) { return CreateWith(path, CreateOptions{}) }

// CreateWith is Create with allocation options. Truncating an existing file
// keeps its file-system layout (a Lustre striping set on the empty file).
func CreateWith(path string, o CreateOptions) (*Writer, error) {
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
	fid := C.H5Fcreate(cpath, C.H5F_ACC_TRUNC, C.h5q_default(), fapl)
	if fid < 0 {
		return nil, fmt.Errorf("h5: %s: cannot create (%s)", path, lastError())
	}
	return &Writer{path: path, fid: fid, open: map[*OutDataset]struct{}{}}, nil
}

// lock takes the writer's mutex and pins the thread; the returned function
// undoes both.
func (w *Writer) lock() (C.hid_t, func(), error) {
	w.mu.Lock()
	if w.fid < 0 {
		w.mu.Unlock()
		return -1, func() {}, fmt.Errorf("h5: %s: writer is closed", w.path)
	}
	unpin := pin()
	return w.fid, func() { unpin(); w.mu.Unlock() }, nil
}

// failf reports a failed HDF5 call on the writer (inside the pinned region).
func (w *Writer) failf(obj, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if m := lastError(); m != "" {
		msg += " (" + m + ")"
	}
	return fmt.Errorf("h5: %s: %s: %s", w.path, obj, msg)
}

// ensureGroup creates every missing group along the absolute path p.
func (w *Writer) ensureGroup(p string) error {
	if p == "/" || p == "" {
		return nil
	}
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("h5: %s: %s: path must be absolute", w.path, p)
	}
	parts := strings.Split(strings.Trim(p, "/"), "/")
	cur := ""
	for _, part := range parts {
		if part == "" {
			continue
		}
		cur += "/" + part
		ccur, free := cstr(cur)
		e := C.H5Lexists(w.fid, ccur, C.h5q_default())
		if e > 0 {
			free()
			continue
		}
		g := C.H5Gcreate2(w.fid, ccur, C.h5q_default(), C.h5q_default(), C.h5q_default())
		free()
		if g < 0 {
			return w.failf(cur, "cannot create group")
		}
		C.H5Gclose(g)
	}
	return nil
}

// CreateDataset creates the dataset at the absolute path (and any missing
// groups above it). A contiguous dataset gets its space allocated at creation
// and HDF5 never writes into it, so the caller can pwrite the row-major data
// at Address() after Writer.Close. A chunked dataset has no filters; its
// chunks are written with WriteChunk.
func (w *Writer) CreateDataset(path string, spec DatasetSpec) (*OutDataset, error) {
	if err := w.checkSpec(path, spec); err != nil {
		return nil, err
	}
	fid, unlock, err := w.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := w.ensureGroup(pathpkg.Dir(path)); err != nil {
		return nil, err
	}
	ftype, err := fileType(spec.DType)
	if err != nil {
		return nil, err
	}
	defer C.H5Tclose(ftype)

	var space C.hid_t
	if len(spec.Shape) == 0 {
		space = C.H5Screate(C.H5S_SCALAR)
	} else {
		dims := hsizes(spec.Shape)
		maxdims := hsizes(spec.Shape)
		for i, u := range spec.Unlimited {
			if u {
				maxdims[i] = C.h5q_unlimited()
			}
		}
		space = C.H5Screate_simple(C.int(len(dims)), &dims[0], &maxdims[0])
	}
	if space < 0 {
		return nil, w.failf(path, "cannot create dataspace %v", spec.Shape)
	}
	defer C.H5Sclose(space)

	dcpl := C.H5Pcreate(C.h5q_dcpl_class())
	if dcpl < 0 {
		return nil, w.failf(path, "cannot create property list")
	}
	defer C.H5Pclose(dcpl)
	ok := true
	if spec.Chunk == nil {
		ok = C.H5Pset_layout(dcpl, C.H5D_CONTIGUOUS) >= 0 &&
			C.H5Pset_alloc_time(dcpl, C.H5D_ALLOC_TIME_EARLY) >= 0 &&
			C.H5Pset_fill_time(dcpl, C.H5D_FILL_TIME_NEVER) >= 0
	} else {
		chunk := hsizes(spec.Chunk)
		ok = C.H5Pset_chunk(dcpl, C.int(len(chunk)), &chunk[0]) >= 0
		if ok && spec.Shuffle {
			ok = C.H5Pset_shuffle(dcpl) >= 0
		}
		if ok && spec.Deflate > 0 {
			ok = C.H5Pset_deflate(dcpl, C.uint(spec.Deflate)) >= 0
		}
		if ok && spec.Allocate {
			ok = C.H5Pset_alloc_time(dcpl, C.H5D_ALLOC_TIME_EARLY) >= 0 &&
				C.H5Pset_fill_time(dcpl, C.H5D_FILL_TIME_NEVER) >= 0
		}
	}
	if ok && spec.Fill != nil {
		ok = C.H5Pset_fill_value(dcpl, ftype, unsafe.Pointer(&spec.Fill[0])) >= 0
	}
	if !ok {
		return nil, w.failf(path, "cannot set creation properties")
	}

	cpath, free := cstr(path)
	defer free()
	did := C.H5Dcreate2(fid, cpath, ftype, space, C.h5q_default(), dcpl, C.h5q_default())
	if did < 0 {
		return nil, w.failf(path, "cannot create dataset")
	}
	d := &OutDataset{w: w, path: path, id: did, spec: spec, addr: -1}
	if spec.Chunk == nil {
		if a := C.H5Dget_offset(did); a != C.h5q_undef() {
			d.addr = int64(a) // no user block: relative address = file offset
		} else if n := elements(spec.Shape); n > 0 {
			C.H5Dclose(did)
			return nil, w.failf(path, "contiguous dataset of %d elements has no address", n)
		}
	} else {
		d.chunkBytes = elements(spec.Chunk) * int64(spec.DType.Size)
		if spec.Allocate {
			var oi C.H5O_info_t
			if C.H5Oget_info2(did, &oi, C.H5O_INFO_BASIC) < 0 {
				C.H5Dclose(did)
				return nil, w.failf(path, "cannot get object info")
			}
			d.objAddr = uint64(oi.addr)
		}
	}
	w.open[d] = struct{}{}
	return d, nil
}

func elements(shape []int64) int64 {
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	return n
}

func (w *Writer) checkSpec(path string, spec DatasetSpec) error {
	refuse := func(format string, args ...any) error {
		return fmt.Errorf("h5: %s: %s: %s: %w", w.path, path, fmt.Sprintf(format, args...), catalog.ErrUnsupported)
	}
	if !strings.HasPrefix(path, "/") || path == "/" {
		return refuse("dataset path must be absolute")
	}
	if !spec.DType.Valid() {
		return refuse("dtype %v", spec.DType)
	}
	for _, s := range spec.Shape {
		if s < 0 {
			return refuse("negative shape %v", spec.Shape)
		}
	}
	if spec.Fill != nil && len(spec.Fill) != spec.DType.Size {
		return refuse("fill value of %d bytes for %v", len(spec.Fill), spec.DType)
	}
	if spec.Deflate < 0 || spec.Deflate > 9 {
		return refuse("deflate level %d (want 1-9)", spec.Deflate)
	}
	unlimited := false
	for _, u := range spec.Unlimited {
		unlimited = unlimited || u
	}
	if spec.Unlimited != nil && len(spec.Unlimited) != len(spec.Shape) {
		return refuse("unlimited axes %v for shape %v", spec.Unlimited, spec.Shape)
	}
	if spec.Chunk == nil {
		if spec.Deflate > 0 || spec.Shuffle || spec.Allocate || unlimited {
			return refuse("filters, chunk allocation and unlimited dimensions need a chunked layout")
		}
		return nil
	}
	if spec.Allocate && (spec.Deflate > 0 || spec.Shuffle) {
		return refuse("chunks allocated at creation are written raw: no filters")
	}
	if len(spec.Chunk) != len(spec.Shape) || len(spec.Shape) == 0 {
		return refuse("chunk %v for shape %v", spec.Chunk, spec.Shape)
	}
	for i, c := range spec.Chunk {
		// HDF5 requires chunk dimensions within fixed dataset dimensions.
		if c <= 0 || c > spec.Shape[i] && (spec.Unlimited == nil || !spec.Unlimited[i]) {
			return refuse("chunk %v does not fit shape %v", spec.Chunk, spec.Shape)
		}
	}
	if b := elements(spec.Chunk) * int64(spec.DType.Size); b >= math.MaxUint32 {
		return refuse("chunk of %d bytes exceeds HDF5's 4 GiB limit", b)
	}
	return nil
}

// Address is the file offset where a contiguous dataset's row-major data
// goes (-1 for chunked or zero-size datasets).
func (d *OutDataset) Address() int64 { return d.addr }

// ObjAddr is the object header address of a dataset created with
// Allocate (0 otherwise): internal/chunkindex lists its chunks from there
// once the file is closed. Each chunk takes the full chunk shape in the
// file, edge chunks included.
func (d *OutDataset) ObjAddr() uint64 { return d.objAddr }

// WriteChunk stores one whole chunk (full chunk shape, row-major, DType byte
// order) whose first element is at offset: raw, or encoded through the
// dataset's filters (Shuffle, Deflate) by the caller, which HDF5 then
// records as passed through all of them.
func (d *OutDataset) WriteChunk(offset []int64, data []byte) error {
	sp := d.spec
	if sp.Chunk == nil {
		return fmt.Errorf("h5: %s: %s: WriteChunk on a contiguous dataset: %w", d.w.path, d.path, catalog.ErrUnsupported)
	}
	if len(offset) != len(sp.Chunk) {
		return fmt.Errorf("h5: %s: %s: chunk offset %v has wrong rank", d.w.path, d.path, offset)
	}
	for i, o := range offset {
		if o < 0 || o >= sp.Shape[i] || o%sp.Chunk[i] != 0 {
			return fmt.Errorf("h5: %s: %s: chunk offset %v not on the chunk grid %v of shape %v", d.w.path, d.path, offset, sp.Chunk, sp.Shape)
		}
	}
	if filtered := sp.Deflate > 0 || sp.Shuffle; filtered && len(data) == 0 || !filtered && int64(len(data)) != d.chunkBytes {
		return fmt.Errorf("h5: %s: %s: chunk data of %d bytes, want %d", d.w.path, d.path, len(data), d.chunkBytes)
	}
	_, unlock, err := d.w.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if d.id < 0 {
		return fmt.Errorf("h5: %s: %s: dataset is closed", d.w.path, d.path)
	}
	off := hsizes(offset)
	if C.H5Dwrite_chunk(d.id, C.h5q_default(), 0, &off[0], C.size_t(len(data)), unsafe.Pointer(&data[0])) < 0 {
		return d.w.failf(d.path, "cannot write chunk at %v", offset)
	}
	return nil
}

// Close releases the dataset. Closing twice is harmless.
func (d *OutDataset) Close() error {
	d.w.mu.Lock()
	defer d.w.mu.Unlock()
	return d.closeLocked()
}

func (d *OutDataset) closeLocked() error {
	if d.id < 0 {
		return nil
	}
	defer pin()()
	r := C.H5Dclose(d.id)
	d.id = -1
	delete(d.w.open, d)
	if r < 0 {
		return d.w.failf(d.path, "cannot close dataset")
	}
	return nil
}

// SetAttrs writes attrs on the group or dataset obj ("/" = root), creating
// obj as a group (with its parents) if it does not exist and replacing
// attributes of the same name. Strings are stored as fixed-length
// NUL-terminated strings, numbers as native int64/uint64/double; scalar when
// Attr.Scalar and one value, else 1-D.
func (w *Writer) SetAttrs(obj string, attrs []catalog.Attr) error {
	fid, unlock, err := w.lock()
	if err != nil {
		return err
	}
	defer unlock()
	cobj, free := cstr(obj)
	defer free()
	switch C.h5q_exists(fid, cobj) {
	case 0:
		if err := w.ensureGroup(obj); err != nil {
			return err
		}
	case -1:
		return w.failf(obj, "cannot resolve path")
	}
	oid := C.H5Oopen(fid, cobj, C.h5q_default())
	if oid < 0 {
		return w.failf(obj, "cannot open object")
	}
	defer C.H5Oclose(oid)
	for _, a := range attrs {
		if err := w.writeAttr(obj, oid, a); err != nil {
			return err
		}
	}
	return nil
}

func (w *Writer) writeAttr(obj string, oid C.hid_t, a catalog.Attr) error {
	where := obj + " attribute " + a.Name
	typ := a.Type
	if typ == "" {
		switch {
		case a.Strings != nil:
			typ = "string"
		case a.Floats != nil:
			typ = "float64"
		case a.Ints != nil:
			typ = "int64"
		case a.Uints != nil:
			typ = "uint64"
		}
	}
	var n int
	var buf unsafe.Pointer
	var ftype C.hid_t
	dt, numeric := catalog.AttrDType(typ)
	switch {
	case numeric:
		// The type the reader found (float32, int16, ...), little-endian.
		b, ok := catalog.AttrBytes(a, dt)
		if !ok {
			return fmt.Errorf("h5: %s: %s: values do not fit %s: %w", w.path, where, typ, catalog.ErrUnsupported)
		}
		var err error
		if ftype, err = fileType(dt); err != nil {
			return fmt.Errorf("h5: %s: %s: %w", w.path, where, err)
		}
		n = len(b) / dt.Size
		if n > 0 {
			buf = unsafe.Pointer(&b[0])
		}
	case typ == "string" || typ == NullPadString:
		n = len(a.Strings)
		size, ascii := 1, true
		pad, term := C.H5T_str_t(C.H5T_STR_NULLTERM), 1
		if typ == NullPadString {
			pad, term = C.H5T_STR_NULLPAD, 0
		}
		for _, s := range a.Strings {
			if strings.IndexByte(s, 0) >= 0 {
				return fmt.Errorf("h5: %s: %s: string contains NUL: %w", w.path, where, catalog.ErrUnsupported)
			}
			size = max(size, len(s)+term)
			ascii = ascii && isASCII(s)
		}
		ftype = C.H5Tcopy(C.h5q_c_s1())
		if ftype >= 0 {
			cset := C.H5T_CSET_ASCII
			if !ascii && utf8.ValidString(strings.Join(a.Strings, "")) {
				cset = C.H5T_CSET_UTF8
			}
			if C.H5Tset_size(ftype, C.size_t(size)) < 0 || C.H5Tset_strpad(ftype, pad) < 0 || C.H5Tset_cset(ftype, C.H5T_cset_t(cset)) < 0 {
				C.H5Tclose(ftype)
				return w.failf(where, "cannot make string type")
			}
		}
		b := make([]byte, n*size)
		for i, s := range a.Strings {
			copy(b[i*size:], s)
		}
		if n > 0 {
			buf = unsafe.Pointer(&b[0])
		}
	default:
		return fmt.Errorf("h5: %s: %s: attribute type %q: %w", w.path, where, a.Type, catalog.ErrUnsupported)
	}
	if ftype < 0 {
		return w.failf(where, "cannot make type")
	}
	defer C.H5Tclose(ftype)

	var space C.hid_t
	if a.Scalar && n == 1 {
		space = C.H5Screate(C.H5S_SCALAR)
	} else {
		dim := C.hsize_t(n)
		space = C.H5Screate_simple(1, &dim, nil)
	}
	if space < 0 {
		return w.failf(where, "cannot make dataspace")
	}
	defer C.H5Sclose(space)

	cname, free := cstr(a.Name)
	defer free()
	dot, freeDot := cstr(".")
	defer freeDot()
	if C.H5Aexists(oid, cname) > 0 && C.H5Adelete(oid, cname) < 0 {
		return w.failf(where, "cannot replace attribute")
	}
	aid := C.H5Acreate_by_name(oid, dot, cname, ftype, space, C.h5q_default(), C.h5q_default(), C.h5q_default())
	if aid < 0 {
		return w.failf(where, "cannot create attribute")
	}
	defer C.H5Aclose(aid)
	if n > 0 && C.H5Awrite(aid, ftype, buf) < 0 {
		return w.failf(where, "cannot write attribute")
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// Close closes every dataset still open and the file; the file is complete on
// disk afterwards (not fsynced). Closing twice is harmless.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fid < 0 {
		return nil
	}
	var first error
	for d := range w.open {
		if err := d.closeLocked(); err != nil && first == nil {
			first = err
		}
	}
	defer pin()()
	if C.H5Fclose(w.fid) < 0 && first == nil {
		first = w.failf("/", "cannot close file")
	}
	w.fid = -1
	return first
}
