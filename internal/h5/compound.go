//go:build cgo

package h5

/*
#include "h5q.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"relayout/catalog"
)

// maxCompoundValues bounds IntCompound's buffer (elements × members): the
// compounds it is meant for (box lists, IntVects) are metadata, and a corrupt
// extent must not make it allocate gigabytes.
const maxCompoundValues = 1 << 26

// IntCompound reads a compound value whose members are all integers, by
// member name: the dataset obj when attr is empty, otherwise the attribute
// attr of the object obj. It returns the member names in declaration order and
// one row of int64 values per element (a scalar has one row); HDF5 converts
// each member by name, so writers that place members at other offsets read
// the same. A missing object or attribute wraps catalog.ErrNotFound; a
// non-compound type or a non-integer member wraps catalog.ErrUnsupported.
func (f *File) IntCompound(obj, attr string) (names []string, rows [][]int64, err error) {
	fid, unlock, err := f.lock()
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	if err := f.exists(fid, obj); err != nil {
		return nil, nil, err
	}
	where := obj
	cobj, free := cstr(obj)
	defer free()
	var tid, space, oid C.hid_t
	if attr == "" {
		if oid = C.H5Dopen2(fid, cobj, C.h5q_default()); oid < 0 {
			return nil, nil, h5err(f.path, where, catalog.ErrCorrupt, "cannot open dataset")
		}
		defer C.H5Dclose(oid)
		tid, space = C.H5Dget_type(oid), C.H5Dget_space(oid)
	} else {
		where = obj + " attribute " + attr
		cattr, freeAttr := cstr(attr)
		defer freeAttr()
		switch C.H5Aexists_by_name(fid, cobj, cattr, C.h5q_default()) {
		case 0:
			return nil, nil, fmt.Errorf("h5: %s: %s: %w", f.path, where, catalog.ErrNotFound)
		case 1:
		default:
			return nil, nil, h5err(f.path, where, catalog.ErrCorrupt, "cannot look up attribute")
		}
		if oid = C.H5Aopen_by_name(fid, cobj, cattr, C.h5q_default(), C.h5q_default()); oid < 0 {
			return nil, nil, h5err(f.path, where, catalog.ErrCorrupt, "cannot open attribute")
		}
		defer C.H5Aclose(oid)
		tid, space = C.H5Aget_type(oid), C.H5Aget_space(oid)
	}
	if tid >= 0 {
		defer C.H5Tclose(tid)
	}
	if space >= 0 {
		defer C.H5Sclose(space)
	}
	if tid < 0 || space < 0 {
		return nil, nil, h5err(f.path, where, catalog.ErrCorrupt, "cannot get type or dataspace")
	}
	if C.H5Tget_class(tid) != C.H5T_COMPOUND {
		return nil, nil, fmt.Errorf("h5: %s: %s: not a compound type: %w", f.path, where, catalog.ErrUnsupported)
	}
	nm := int(C.H5Tget_nmembers(tid))
	if nm <= 0 {
		return nil, nil, h5err(f.path, where, catalog.ErrCorrupt, "compound without members")
	}
	mem := C.H5Tcreate(C.H5T_COMPOUND, C.size_t(8*nm))
	if mem < 0 {
		return nil, nil, h5err(f.path, where, catalog.ErrCorrupt, "cannot make memory type")
	}
	defer C.H5Tclose(mem)
	for i := 0; i < nm; i++ {
		cname := C.H5Tget_member_name(tid, C.uint(i))
		if cname == nil {
			return nil, nil, h5err(f.path, where, catalog.ErrCorrupt, fmt.Sprintf("cannot get member %d name", i))
		}
		name := C.GoString(cname)
		class := C.H5Tget_member_class(tid, C.uint(i))
		ok := C.H5Tinsert(mem, cname, C.size_t(8*i), C.h5q_native_i64()) >= 0
		C.H5free_memory(unsafe.Pointer(cname))
		if class != C.H5T_INTEGER {
			return nil, nil, fmt.Errorf("h5: %s: %s: compound member %q is not an integer: %w", f.path, where, name, catalog.ErrUnsupported)
		}
		if !ok {
			return nil, nil, h5err(f.path, where, catalog.ErrCorrupt, fmt.Sprintf("member %q", name))
		}
		names = append(names, name)
	}
	np := int64(C.H5Sget_simple_extent_npoints(space))
	if np < 0 || np*int64(nm) > maxCompoundValues {
		return nil, nil, catalog.Corrupt("hdf5", f.path, -1, "%s: %d elements of %d members", where, np, nm)
	}
	buf := make([]int64, np*int64(nm))
	if np > 0 {
		var rc C.herr_t
		if attr == "" {
			rc = C.H5Dread(oid, mem, C.h5q_all(), C.h5q_all(), C.h5q_default(), unsafe.Pointer(&buf[0]))
		} else {
			rc = C.H5Aread(oid, mem, unsafe.Pointer(&buf[0]))
		}
		if rc < 0 {
			return nil, nil, h5err(f.path, where, catalog.ErrCorrupt, "cannot read")
		}
	}
	rows = make([][]int64, np)
	for i := range rows {
		rows[i] = buf[i*nm : (i+1)*nm : (i+1)*nm]
	}
	return names, rows, nil
}
