package amrex

import (
	"bytes"
	"slices"

	"relayout/catalog"
)

// A FAB in a Cell_D_NNNNN file (version-1 MultiFab headers; spec §4):
//
//	FAB ((8, (64 11 52 0 1 12 0 1023)),(8, (8 7 6 5 4 3 2 1)))((0,0,0) (7,7,7) (0,0,0)) 38\n
//	^ FabOnDisk offset          RealDescriptor                  box (valid + ghosts)   ncomp
//	<ncomp × npts values>  component-major, each component in Fortran order (i fastest)
//
// Versions 2-4 have no text header: the FabOnDisk offset is the first value.

// RealDesc is an element format AMReX writes: IEEE float64 or float32 in
// either byte order.
type RealDesc struct {
	DType catalog.DType
}

var (
	formatF64 = []int64{64, 11, 52, 0, 1, 12, 0, 1023}
	formatF32 = []int64{32, 8, 23, 0, 1, 9, 0, 127}
)

// parseRealDesc reads "((n, (format...)),(n, (order...)))" and accepts the
// IEEE double/float formats with a big- or little-endian byte order.
func parseRealDesc(l *lexer) (RealDesc, error) {
	var rd RealDesc
	if err := l.expect('(', "real descriptor"); err != nil {
		return rd, err
	}
	format, err := descArray(l, "real descriptor format")
	if err != nil {
		return rd, err
	}
	if err := l.expect(',', "real descriptor"); err != nil {
		return rd, err
	}
	order, err := descArray(l, "real descriptor byte order")
	if err != nil {
		return rd, err
	}
	if err := l.expect(')', "real descriptor"); err != nil {
		return rd, err
	}
	switch {
	case slices.Equal(format, formatF64):
		rd.DType = catalog.DType{Kind: catalog.Float, Size: 8}
	case slices.Equal(format, formatF32):
		rd.DType = catalog.DType{Kind: catalog.Float, Size: 4}
	default:
		return rd, l.errf("real descriptor format %v is neither IEEE float64 nor float32", format)
	}
	n := rd.DType.Size
	if len(order) != n {
		return rd, l.errf("byte order %v for %d-byte reals", order, n)
	}
	be, le := true, true
	for i, o := range order {
		be = be && o == int64(i+1)
		le = le && o == int64(n-i)
	}
	if !be && !le {
		return rd, l.errf("byte order %v is neither big nor little endian", order)
	}
	rd.DType.BigEndian = be
	return rd, nil
}

// descArray reads "(n, (a b c ...))".
func descArray(l *lexer, what string) ([]int64, error) {
	if err := l.expect('(', what); err != nil {
		return nil, err
	}
	n, err := l.int(what+" length", 1, 64)
	if err != nil {
		return nil, err
	}
	if err := l.expect(',', what); err != nil {
		return nil, err
	}
	if err := l.expect('(', what); err != nil {
		return nil, err
	}
	v := make([]int64, n)
	for i := range v {
		if v[i], err = l.int(what, -1<<31, 1<<31); err != nil {
			return nil, err
		}
	}
	if err := l.expect(')', what); err != nil {
		return nil, err
	}
	return v, l.expect(')', what)
}

// maxFabHeader bounds the text header of a FAB: the descriptor, a 3-D box with
// 10-digit indices and the component count fit in well under 512 bytes.
const maxFabHeader = 1024

// FabHeader is the text header of a version-1 FAB.
type FabHeader struct {
	Real  RealDesc
	Box   box
	NComp int
	Len   int64 // bytes of the header including its newline: the data follows
}

// ParseFabHeader parses the header at the start of b (bytes read at offset off
// of file, at most maxFabHeader of them) of a d-dimensional FAB.
func ParseFabHeader(file string, off int64, b []byte, d int) (FabHeader, error) {
	var h FabHeader
	l := newLexer(file, b)
	l.base = off
	nl := bytes.IndexByte(b, '\n')
	if nl < 0 {
		return h, l.errf("FAB header without a newline in its first %d bytes", len(b))
	}
	l.b = b[:nl]
	if !bytes.HasPrefix(l.b, []byte("FAB ")) {
		return h, l.errf("not a FAB header (want \"FAB \", old-style \"FAB:\" headers are not supported)")
	}
	l.pos = 4
	var err error
	if h.Real, err = parseRealDesc(l); err != nil {
		return h, err
	}
	if h.Box, err = l.box("FAB box", d); err != nil {
		return h, err
	}
	nc, err := l.int("FAB number of components", 1, maxVars)
	if err != nil {
		return h, err
	}
	h.NComp = int(nc)
	if !l.eof() {
		return h, l.errf("text after the FAB header")
	}
	h.Len = int64(nl + 1)
	return h, nil
}
