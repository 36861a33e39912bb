//go:build cgo

package h5

/*
#cgo pkg-config: hdf5
#cgo LDFLAGS: -lhdf5_hl
#include "h5q.h"
#ifdef __GLIBC__
#include <malloc.h>

// One malloc arena (see the comment above init in Go): set at load time,
// before the Go runtime starts its threads, since glibc fixes its arena
// limit at the first malloc of a thread without one.
static void __attribute__((constructor)) h5q_one_arena(void) { mallopt(M_ARENA_MAX, 1); }
#endif
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"

	"gonum.org/v1/hdf5"

	"relayout/catalog"
)

// Importing gonum's hdf5 runs its init, which calls H5open; this package then
// only needs to silence error printing per thread (see pin).
var _ = hdf5.IsHDF5

// The C heap is kept to one malloc arena (h5q_one_arena, at load time).
// The only mallocs of the process are HDF5's (and its filters'), under the
// library's global lock, so more arenas buy no parallelism; but glibc gives each OS thread that
// calls in (any of Go's threads, a goroutine's call landing on any of them)
// an arena of its own, and each keeps the chunk buffers freed into it: on
// issue 19's 448^3 float64 in deflated chunks, relayout verify peaked at
// 582-660 MB RSS with a 180 MB (81 MB) chunk cache, 302-320 MB with one
// arena, and spent less system time (0.8 s -> 0.4-0.6 s). Each arena also
// reserves 64 MiB of address space: with 9 threads a run's peak virtual
// size was 1.9 GB (1.37 GB with one arena), and a job under an address-space
// limit (ulimit -v; prlimit --as=2GiB in the mutation tests) failed inside
// HDF5 at the limit.
func init() { C.h5q_quiet() }

// pin locks the calling goroutine to its OS thread and silences HDF5's
// automatic error printing on that thread. In a thread-safe HDF5 build the
// error stack and its auto-print setting are per thread, so silencing once in
// init covers only the init thread, and an error's message can be read only on
// the thread where the call failed. Call as `defer pin()()`.
func pin() func() {
	runtime.LockOSThread()
	C.h5q_quiet()
	return runtime.UnlockOSThread
}

// lastError returns the innermost HDF5 error message of this thread and clears
// the stack. Only meaningful inside a pin()ned region.
func lastError() string {
	var buf [512]C.char
	C.h5q_last_error(&buf[0], C.size_t(len(buf)))
	return C.GoString(&buf[0])
}

// h5err builds an error in the project convention: "h5: file: object: what
// (hdf5 message): sentinel". It must be called inside the pinned region of the
// failing call so that the HDF5 message is the right one.
func h5err(file, obj string, sentinel error, what string) error {
	msg := lastError()
	if obj != "" {
		what = obj + ": " + what
	}
	if msg != "" {
		what += " (" + msg + ")"
	}
	if sentinel == catalog.ErrCorrupt {
		return catalog.Corrupt("hdf5", file, -1, "%s", what)
	}
	return fmt.Errorf("h5: %s: %s: %w", file, what, sentinel)
}

func cstr(s string) (*C.char, func()) {
	c := C.CString(s)
	return c, func() { C.free(unsafe.Pointer(c)) }
}

// dtypeOf classifies a file datatype. numeric is true when the type is a
// two's-complement integer of 1/2/4/8 bytes or an IEEE float of 4/8 bytes,
// each using all its bits, so raw bytes can be moved without HDF5. desc is a
// human description in every case.
func dtypeOf(tid C.hid_t) (dt catalog.DType, numeric bool, desc string) {
	class := C.H5Tget_class(tid)
	size := int(C.H5Tget_size(tid))
	order := C.H5Tget_order(tid)
	dt.Size = size
	dt.BigEndian = order == C.H5T_ORDER_BE
	okOrder := order == C.H5T_ORDER_LE || order == C.H5T_ORDER_BE || (size == 1 && order == C.H5T_ORDER_NONE)
	fullBits := int(C.H5Tget_precision(tid)) == 8*size && C.H5Tget_offset(tid) == 0
	switch class {
	case C.H5T_INTEGER:
		dt.Kind = catalog.Int
		if C.H5Tget_sign(tid) == C.H5T_SGN_NONE {
			dt.Kind = catalog.Uint
		}
		desc = dt.Name()
		if !fullBits {
			desc = fmt.Sprintf("%s (precision %d, offset %d)", desc, int(C.H5Tget_precision(tid)), int(C.H5Tget_offset(tid)))
		}
		numeric = dt.Valid() && okOrder && fullBits
	case C.H5T_FLOAT:
		dt.Kind = catalog.Float
		desc = dt.Name()
		if !fullBits {
			desc = fmt.Sprintf("float%d (precision %d)", 8*size, int(C.H5Tget_precision(tid)))
		}
		numeric = dt.Valid() && okOrder && fullBits && ieee(tid, size)
		if dt.Valid() && !numeric && fullBits {
			desc += " (non-IEEE layout)"
		}
	case C.H5T_STRING:
		desc = "string"
		switch {
		case C.H5Tis_variable_str(tid) > 0:
			desc = "variable-length string"
		case size == 1:
			// One character an element (netCDF-4's NC_CHAR, NumPy's S1):
			// bytes to move as they are.
			dt = catalog.DType{Kind: catalog.Char, Size: 1}
			desc, numeric = "char", true
		}
	case C.H5T_COMPOUND:
		desc = "compound"
	case C.H5T_ENUM:
		desc = "enum"
	case C.H5T_REFERENCE:
		desc = "reference"
	case C.H5T_OPAQUE:
		desc = "opaque"
	case C.H5T_BITFIELD:
		desc = "bitfield"
	case C.H5T_TIME:
		desc = "time"
	case C.H5T_VLEN:
		desc = "vlen"
	case C.H5T_ARRAY:
		desc = "array"
	default:
		desc = fmt.Sprintf("type class %d", int(class))
	}
	if !numeric {
		dt = catalog.DType{}
	}
	return dt, numeric, desc
}

// ieee reports whether a float type has the IEEE 754 binary32/binary64 field
// layout, so that its bytes mean the same thing to Go.
func ieee(tid C.hid_t, size int) bool {
	var spos, epos, esize, mpos, msize C.size_t
	if C.H5Tget_fields(tid, &spos, &epos, &esize, &mpos, &msize) < 0 {
		return false
	}
	bias := uint64(C.H5Tget_ebias(tid))
	norm := C.H5Tget_norm(tid)
	switch size {
	case 4:
		return spos == 31 && epos == 23 && esize == 8 && mpos == 0 && msize == 23 && bias == 127 && norm == C.H5T_NORM_IMPLIED
	case 8:
		return spos == 63 && epos == 52 && esize == 11 && mpos == 0 && msize == 52 && bias == 1023 && norm == C.H5T_NORM_IMPLIED
	}
	return false
}

// fileType returns a new copy of the standard file type for dt; the caller
// closes it with H5Tclose.
func fileType(dt catalog.DType) (C.hid_t, error) {
	if !dt.Valid() {
		return -1, fmt.Errorf("h5: dtype %v: %w", dt, catalog.ErrUnsupported)
	}
	kind := map[catalog.Kind]C.int{catalog.Int: 1, catalog.Uint: 2, catalog.Float: 3, catalog.Char: 4}[dt.Kind]
	be := C.int(0)
	if dt.BigEndian {
		be = 1
	}
	t := C.h5q_std_type(kind, C.int(dt.Size), be)
	if t < 0 {
		return -1, fmt.Errorf("h5: dtype %v: cannot make file type (%s): %w", dt, lastError(), catalog.ErrUnsupported)
	}
	return t, nil
}

func hsizes(v []int64) []C.hsize_t {
	out := make([]C.hsize_t, len(v))
	for i, x := range v {
		out[i] = C.hsize_t(x)
	}
	return out
}

func int64s(v []C.hsize_t) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// ptr returns a pointer to the first element or nil for an empty slice.
func ptr[T any](v []T) *T {
	if len(v) == 0 {
		return nil
	}
	return &v[0]
}
