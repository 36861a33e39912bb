//go:build cgo

package h5

/*
#include "h5q.h"
*/
import "C"

import (
	"fmt"
	pathpkg "path"
	"unsafe"

	"relayout/catalog"
)

// CreateVirtual creates an HDF5 virtual dataset (VDS) at path presenting
// spec.Shape: each source dataset, already created in this file with shape
// Box.Count, appears whole at its Box; elements no source covers read as the
// fill value (spec.Fill, or zero). Sources of the same file are referenced
// by the file name "." (the file holding the VDS), so the file can be moved
// or reached through external links. spec.Chunk, Deflate and Shuffle must
// be unset.
func (w *Writer) CreateVirtual(path string, spec DatasetSpec, srcs []VirtualSource) error {
	if err := w.checkSpec(path, spec); err != nil {
		return err
	}
	if spec.Chunk != nil || spec.Deflate != 0 || spec.Shuffle || len(spec.Shape) == 0 {
		return fmt.Errorf("h5: %s: %s: virtual dataset needs a simple shape and no chunks or filters: %w", w.path, path, catalog.ErrUnsupported)
	}
	rank := len(spec.Shape)
	for _, s := range srcs {
		if len(s.Box.Lower) != rank || len(s.Box.Count) != rank {
			return fmt.Errorf("h5: %s: %s: source %s box %v for shape %v: %w", w.path, path, s.Path, s.Box, spec.Shape, catalog.ErrUnsupported)
		}
		for d := range rank {
			if s.Box.Lower[d] < 0 || s.Box.Count[d] <= 0 || s.Box.Lower[d]+s.Box.Count[d] > spec.Shape[d] {
				return fmt.Errorf("h5: %s: %s: source %s box %v outside shape %v: %w", w.path, path, s.Path, s.Box, spec.Shape, catalog.ErrUnsupported)
			}
		}
		if s.Sel != nil {
			ok := len(s.Shape) > 0 && len(s.Sel.Lower) == len(s.Shape) && len(s.Sel.Count) == len(s.Shape) && s.Sel.Elements() == s.Box.Elements()
			for d := range s.Sel.Lower {
				ok = ok && s.Sel.Lower[d] >= 0 && s.Sel.Count[d] > 0 && s.Sel.Lower[d]+s.Sel.Count[d] <= s.Shape[d]
			}
			if !ok {
				return fmt.Errorf("h5: %s: %s: source %s selection %v of shape %v does not fill box %v: %w", w.path, path, s.Path, *s.Sel, s.Shape, s.Box, catalog.ErrUnsupported)
			}
		} else if s.Shape != nil && (len(s.Shape) == 0 || (catalog.Box{Count: s.Shape}).Elements() != s.Box.Elements()) {
			return fmt.Errorf("h5: %s: %s: source %s of shape %v does not fill box %v: %w", w.path, path, s.Path, s.Shape, s.Box, catalog.ErrUnsupported)
		}
	}
	fid, unlock, err := w.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := w.ensureGroup(pathpkg.Dir(path)); err != nil {
		return err
	}
	ftype, err := fileType(spec.DType)
	if err != nil {
		return err
	}
	defer C.H5Tclose(ftype)
	dims := hsizes(spec.Shape)
	vspace := C.H5Screate_simple(C.int(rank), &dims[0], &dims[0])
	if vspace < 0 {
		return w.failf(path, "cannot create dataspace %v", spec.Shape)
	}
	defer C.H5Sclose(vspace)
	dcpl := C.H5Pcreate(C.h5q_dcpl_class())
	if dcpl < 0 {
		return w.failf(path, "cannot create property list")
	}
	defer C.H5Pclose(dcpl)
	if spec.Fill != nil && C.H5Pset_fill_value(dcpl, ftype, unsafe.Pointer(&spec.Fill[0])) < 0 {
		return w.failf(path, "cannot set the fill value")
	}
	for _, s := range srcs {
		count := hsizes(s.Box.Count)
		start := hsizes(s.Box.Lower)
		sdims, srank := count, rank
		if s.Shape != nil {
			sdims, srank = hsizes(s.Shape), len(s.Shape)
		}
		sspace := C.H5Screate_simple(C.int(srank), &sdims[0], &sdims[0])
		if sspace < 0 {
			return w.failf(path, "cannot create source dataspace %v", s.Box.Count)
		}
		ok := C.H5Sselect_hyperslab(vspace, C.H5S_SELECT_SET, &start[0], nil, &count[0], nil) >= 0
		if ok && s.Sel != nil {
			sstart, scount := hsizes(s.Sel.Lower), hsizes(s.Sel.Count)
			ok = C.H5Sselect_hyperslab(sspace, C.H5S_SELECT_SET, &sstart[0], nil, &scount[0], nil) >= 0
		}
		if ok {
			file := s.File
			if file == "" {
				file = "."
			}
			cfile, freeFile := cstr(file)
			csrc, free := cstr(s.Path)
			ok = C.H5Pset_virtual(dcpl, vspace, cfile, csrc, sspace) >= 0
			free()
			freeFile()
		}
		C.H5Sclose(sspace)
		if !ok {
			return w.failf(path, "cannot map source %s at %v", s.Path, s.Box)
		}
	}
	if C.H5Sselect_all(vspace) < 0 {
		return w.failf(path, "cannot reset the selection")
	}
	cpath, free := cstr(path)
	defer free()
	did := C.H5Dcreate2(fid, cpath, ftype, vspace, C.h5q_default(), dcpl, C.h5q_default())
	if did < 0 {
		return w.failf(path, "cannot create virtual dataset")
	}
	if C.H5Dclose(did) < 0 {
		return w.failf(path, "cannot close virtual dataset")
	}
	return nil
}

// VirtualMappings lists the mappings of the virtual dataset at path. Each
// virtual selection must be a single box (a regular hyperslab of one block),
// or the dataset is refused as unsupported.
func (f *File) VirtualMappings(path string) ([]VirtualMapping, error) {
	did, done, err := f.lockedDataset(path)
	if err != nil {
		return nil, err
	}
	defer done()
	dcpl := C.H5Dget_create_plist(did)
	if dcpl < 0 {
		return nil, h5err(f.path, path, catalog.ErrCorrupt, "cannot get creation properties")
	}
	defer C.H5Pclose(dcpl)
	if C.H5Pget_layout(dcpl) != C.H5D_VIRTUAL {
		return nil, h5err(f.path, path, catalog.ErrUnsupported, "not a virtual dataset")
	}
	var n C.size_t
	if C.H5Pget_virtual_count(dcpl, &n) < 0 {
		return nil, h5err(f.path, path, catalog.ErrCorrupt, "cannot count virtual mappings")
	}
	str := func(get func(buf *C.char, size C.size_t) C.ssize_t) (string, bool) {
		l := get(nil, 0)
		if l < 0 {
			return "", false
		}
		buf := make([]C.char, int(l)+1)
		if get(&buf[0], C.size_t(len(buf))) < 0 {
			return "", false
		}
		return C.GoString(&buf[0]), true
	}
	var out []VirtualMapping
	for i := C.size_t(0); i < n; i++ {
		var m VirtualMapping
		var ok1, ok2 bool
		m.File, ok1 = str(func(b *C.char, s C.size_t) C.ssize_t { return C.H5Pget_virtual_filename(dcpl, i, b, s) })
		m.Dataset, ok2 = str(func(b *C.char, s C.size_t) C.ssize_t { return C.H5Pget_virtual_dsetname(dcpl, i, b, s) })
		if !ok1 || !ok2 {
			return nil, h5err(f.path, path, catalog.ErrCorrupt, fmt.Sprintf("cannot read virtual mapping %d", i))
		}
		vs := C.H5Pget_virtual_vspace(dcpl, i)
		if vs < 0 {
			return nil, h5err(f.path, path, catalog.ErrCorrupt, fmt.Sprintf("cannot read virtual mapping %d", i))
		}
		rank := int(C.H5Sget_simple_extent_ndims(vs))
		box, ok := selectionBox(vs, rank)
		C.H5Sclose(vs)
		if !ok {
			return nil, h5err(f.path, path, catalog.ErrUnsupported, fmt.Sprintf("virtual mapping %d is not one box", i))
		}
		m.Box = box
		ss := C.H5Pget_virtual_srcspace(dcpl, i)
		if ss < 0 {
			return nil, h5err(f.path, path, catalog.ErrCorrupt, fmt.Sprintf("cannot read virtual mapping %d", i))
		}
		m.Whole = C.H5Sget_select_type(ss) == C.H5S_SEL_ALL ||
			C.H5Sget_select_npoints(ss) == C.H5Sget_simple_extent_npoints(ss)
		if C.H5Sget_select_type(ss) != C.H5S_SEL_ALL {
			if b, ok := selectionBox(ss, int(C.H5Sget_simple_extent_ndims(ss))); ok {
				m.Sel = &b
			}
		}
		C.H5Sclose(ss)
		out = append(out, m)
	}
	return out, nil
}

// selectionBox is the box of a selection that is exactly one box.
func selectionBox(space C.hid_t, rank int) (catalog.Box, bool) {
	if rank <= 0 {
		return catalog.Box{}, false
	}
	start := make([]C.hsize_t, rank)
	end := make([]C.hsize_t, rank)
	if C.H5Sget_select_bounds(space, &start[0], &end[0]) < 0 {
		return catalog.Box{}, false
	}
	b := catalog.Box{Lower: int64s(start), Count: make([]int64, rank)}
	n := int64(1)
	for d := range rank {
		b.Count[d] = int64(end[d]) - int64(start[d]) + 1
		n *= b.Count[d]
	}
	if int64(C.H5Sget_select_npoints(space)) != n {
		return catalog.Box{}, false
	}
	return b, true
}
