//go:build cgo

package h5

/*
#include "h5q.h"
*/
import "C"

import (
	"fmt"
	pathpkg "path"
	"strings"

	"relayout/catalog"
)

// ExternalLink creates the link at the absolute path link (and any missing
// groups above it) pointing to object obj (absolute) in the HDF5 file target
// (H5Lcreate_external). HDF5 resolves a relative target against the
// directory of the file holding the link (after HDF5_EXT_PREFIX and the
// access property's prefix), so a link to a sibling file keeps working when
// both files move together. The target need not exist yet.
func (w *Writer) ExternalLink(link, target, obj string) error {
	if !strings.HasPrefix(link, "/") || link == "/" || !strings.HasPrefix(obj, "/") || target == "" {
		return fmt.Errorf("h5: %s: external link %s -> %s:%s: paths must be absolute: %w", w.path, link, target, obj, catalog.ErrUnsupported)
	}
	fid, unlock, err := w.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := w.ensureGroup(pathpkg.Dir(link)); err != nil {
		return err
	}
	clink, f1 := cstr(link)
	defer f1()
	ctarget, f2 := cstr(target)
	defer f2()
	cobj, f3 := cstr(obj)
	defer f3()
	if C.H5Lcreate_external(ctarget, cobj, fid, clink, C.h5q_default(), C.h5q_default()) < 0 {
		return w.failf(link, "cannot create external link to %s:%s", target, obj)
	}
	return nil
}

// AttachScale makes the 1-D dataset scale a dimension scale named name
// (H5DSset_scale, once) and attaches it to dimension dim of dataset dset
// (H5DSattach_scale). netCDF-4 reads the scale as the dimension and its
// coordinate variable when scale is in dset's group or an ancestor of it.
func (w *Writer) AttachScale(dset string, dim int, scale, name string) error {
	fid, unlock, err := w.lock()
	if err != nil {
		return err
	}
	defer unlock()
	cd, f1 := cstr(dset)
	defer f1()
	cs, f2 := cstr(scale)
	defer f2()
	did := C.H5Dopen2(fid, cd, C.h5q_default())
	if did < 0 {
		return w.failf(dset, "cannot open dataset")
	}
	defer C.H5Dclose(did)
	sid := C.H5Dopen2(fid, cs, C.h5q_default())
	if sid < 0 {
		return w.failf(scale, "cannot open dataset")
	}
	defer C.H5Dclose(sid)
	if err := w.setScale(sid, scale, name); err != nil {
		return err
	}
	if C.H5DSattach_scale(did, sid, C.uint(dim)) < 0 {
		return w.failf(dset, "cannot attach dimension scale %s to dimension %d", scale, dim)
	}
	return nil
}

// MakeScale makes the dataset at path a dimension scale named name
// (H5DSset_scale) unless it is one already: a netCDF-4 coordinate variable
// that no other dataset of its file is attached to is still its dimension.
func (w *Writer) MakeScale(path, name string) error {
	fid, unlock, err := w.lock()
	if err != nil {
		return err
	}
	defer unlock()
	cp, f1 := cstr(path)
	defer f1()
	sid := C.H5Dopen2(fid, cp, C.h5q_default())
	if sid < 0 {
		return w.failf(path, "cannot open dataset")
	}
	defer C.H5Dclose(sid)
	return w.setScale(sid, path, name)
}

// setScale makes the open dataset sid (at path, for messages) a dimension
// scale named name (H5DSset_scale) unless it is one; the caller holds the
// file's lock.
func (w *Writer) setScale(sid C.hid_t, path, name string) error {
	switch C.H5DSis_scale(sid) {
	case 0:
		cn, free := cstr(name)
		defer free()
		if C.H5DSset_scale(sid, cn) < 0 {
			return w.failf(path, "cannot make dimension scale %q", name)
		}
	case 1:
	default:
		return w.failf(path, "cannot query dimension scale")
	}
	return nil
}
