package netcdf

// A stream of history files: one output interval per file (E3SM's
// case.eam.h0.0001-01.nc, MPAS's mpaso.hist.am.timeSeriesStatsMonthly.
// 0002-01-01.nc), each holding every variable. Together they are one
// dataset whose record dimension runs across the files in time order:
//
//	file 1: numrecs 1   time = [15.5]         records 0
//	file 2: numrecs 2   time = [45.0, 74.5]   records 1, 2
//	...
//
// Time order is the order of the record coordinate's values: the variable
// named like the record dimension (time(time)), or where there is none
// MPAS's text timestamps (xtime, xtime_startMonthly(Time, StrLen)), compared
// as text. The values must increase strictly from one file to the next
// (duplicated or overlapping intervals are refused, naming both files).
// Every member must define the same variables with the same types and
// dimensions, and the same dimensions but for the record dimension's
// length; fixed-size variables are read from the first member, so every
// member must hold the same values in them (sameFixed reads them all once).

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/internal/fileio"
)

// maxCoordBytes bounds what readCoord reads per file.
const maxCoordBytes = 64 << 20

// recordCoord picks the variable ordering a file's records: the numeric
// one-dimensional record variable named like the record dimension, else a
// text record variable (rank 2) named xtime, xtime_start*, or xtime*.
func recordCoord(h *Header) int {
	if h.RecDim < 0 {
		return -1
	}
	dim := h.Dims[h.RecDim].Name
	for i := range h.Vars {
		v := &h.Vars[i]
		if v.Name == dim && v.Record && len(v.Shape) == 1 && v.Type != Char {
			return i
		}
	}
	for _, want := range []func(string) bool{
		func(s string) bool { return s == "xtime" },
		func(s string) bool { return strings.HasPrefix(s, "xtime_start") },
		func(s string) bool { return strings.HasPrefix(s, "xtime") },
	} {
		for i := range h.Vars {
			v := &h.Vars[i]
			if v.Record && v.Type == Char && len(v.Shape) == 2 && want(v.Name) {
				return i
			}
		}
	}
	return -1
}

// readCoord reads the record coordinate's value of every record (r is a
// classic member's file; a netCDF-4 member reads through its NetCDF4File).
func (m *member) readCoord(r readerAt) error {
	h := m.hdr
	ci := recordCoord(h)
	if ci < 0 {
		return nil
	}
	v := &h.Vars[ci]
	m.coord = v.Name
	if h.NumRecs*v.Slab > maxCoordBytes {
		return fmt.Errorf("netcdf: %s: record coordinate %s of %d records is too large to read for ordering: %w", m.name, v.Name, h.NumRecs, catalog.ErrUnsupported)
	}
	b := make([]byte, h.NumRecs*v.Slab)
	if err := m.readRows(r, v, 0, h.NumRecs, b); err != nil {
		return fmt.Errorf("netcdf: %s: record coordinate %s: %w", m.name, v.Name, err)
	}
	for rec := range h.NumRecs {
		slab := b[rec*v.Slab : (rec+1)*v.Slab]
		if v.Type == Char {
			m.texts = append(m.texts, trimText(slab))
			continue
		}
		m.nums = append(m.nums, number(v.Type, slab))
	}
	return nil
}

// number decodes one big-endian element as float64.
func number(t Type, b []byte) float64 {
	switch t {
	case Float:
		return float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	case Double:
		return math.Float64frombits(binary.BigEndian.Uint64(b))
	case UByte, UShort, UInt, UInt64:
		return float64(uintAt(b, 0, int(t.Size())))
	}
	return float64(intAt(b, 0, int(t.Size())))
}

func (m *member) records() int { return max(len(m.nums), len(m.texts)) }

func (m *member) value(i int) string {
	if m.texts != nil {
		return fmt.Sprintf("%q", m.texts[i])
	}
	return fmt.Sprint(m.nums[i])
}

// compareAt compares record i of a with record j of b.
func compareAt(a *member, i int, b *member, j int) int {
	if a.texts != nil {
		return cmp.Compare(a.texts[i], b.texts[j])
	}
	return cmp.Compare(a.nums[i], b.nums[j])
}

// orderStream sorts the members into time order and checks that they form
// one stream. A single file is left as it is.
func orderStream(ms []*member) error {
	if len(ms) < 2 {
		return nil
	}
	slices.SortFunc(ms, func(a, b *member) int { return cmp.Compare(a.name, b.name) })
	first := ms[0]
	for _, m := range ms[1:] {
		if err := sameShape(first, m); err != nil {
			return err
		}
	}
	if first.coord == "" {
		// No record coordinate: the names' order (their dates) stands.
		return nil
	}
	units := coordUnits(first)
	for _, m := range ms[1:] {
		if m.coord != first.coord {
			return notOneStream(first, m, fmt.Sprintf("record coordinate %s against %s", first.coord, orNone(m.coord)))
		}
		if u := coordUnits(m); u != units {
			return notOneStream(first, m, fmt.Sprintf("%s:units %q against %q", first.coord, units, u))
		}
	}
	// Files without records have no time: they go last, by name.
	slices.SortStableFunc(ms, func(a, b *member) int {
		ea, eb := a.records() == 0, b.records() == 0
		switch {
		case ea && eb:
			return 0
		case ea:
			return 1
		case eb:
			return -1
		}
		return compareAt(a, 0, b, 0)
	})
	var prev *member
	for _, m := range ms {
		if m.records() == 0 {
			continue
		}
		if prev != nil && compareAt(prev, prev.records()-1, m, 0) >= 0 {
			return notOneStream(prev, m, fmt.Sprintf("their records overlap in time: %s ends at %s = %s, %s starts at %s",
				prev.name, prev.coord, prev.value(prev.records()-1), m.name, m.value(0)))
		}
		prev = m
	}
	return nil
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func coordUnits(m *member) string {
	v := &m.hdr.Vars[m.vars[m.coord]]
	for _, a := range v.Attrs {
		if a.Name == "units" && a.Type == Char {
			return strings.TrimRight(string(a.Values), "\x00")
		}
	}
	return ""
}

func notOneStream(a, b *member, diff string) error {
	return fmt.Errorf("netcdf: %s and %s are not one stream of history files: %s: %w", a.name, b.name, diff, catalog.ErrUnsupported)
}

// sameShape checks that b defines what a does: dimensions (the record
// dimension's length aside) and variables with their types and dimensions.
func sameShape(a, b *member) error {
	da, db := dimMap(a.hdr), dimMap(b.hdr)
	for _, d := range a.hdr.Dims {
		if l, ok := db[d.Name]; !ok {
			return notOneStream(a, b, fmt.Sprintf("dimension %s is missing from %s", d.Name, b.name))
		} else if l != d.Len {
			return notOneStream(a, b, fmt.Sprintf("dimension %s is %s against %s", d.Name, dimLen(d.Len), dimLen(l)))
		}
	}
	for _, d := range b.hdr.Dims {
		if _, ok := da[d.Name]; !ok {
			return notOneStream(a, b, fmt.Sprintf("dimension %s is missing from %s", d.Name, a.name))
		}
	}
	for i := range a.hdr.Vars {
		va := &a.hdr.Vars[i]
		j, ok := b.vars[va.Name]
		if !ok {
			return notOneStream(a, b, fmt.Sprintf("variable %s is missing from %s", va.Name, b.name))
		}
		vb := &b.hdr.Vars[j]
		if sa, sb := signature(a.hdr, va), signature(b.hdr, vb); sa != sb {
			return notOneStream(a, b, fmt.Sprintf("variable %s is %s against %s", va.Name, sa, sb))
		}
	}
	for i := range b.hdr.Vars {
		if _, ok := a.vars[b.hdr.Vars[i].Name]; !ok {
			return notOneStream(a, b, fmt.Sprintf("variable %s is missing from %s", b.hdr.Vars[i].Name, a.name))
		}
	}
	return nil
}

func dimMap(h *Header) map[string]int64 {
	m := make(map[string]int64, len(h.Dims))
	for _, d := range h.Dims {
		m[d.Name] = d.Len
	}
	return m
}

func dimLen(n int64) string {
	if n == 0 {
		return "UNLIMITED"
	}
	return fmt.Sprint(n)
}

// signature is "double(Time, nCells)".
func signature(h *Header, v *Var) string {
	names := make([]string, len(v.DimIDs))
	for k, id := range v.DimIDs {
		names[k] = h.Dims[id].Name
	}
	return fmt.Sprintf("%s(%s)", v.Type, strings.Join(names, ", "))
}

// sameFixed checks that every member holds the first member's values in
// its fixed-size variables (the stream's fixed variables are read from the
// first member only: a member whose mesh or coordinates differ is not of
// the same stream). The values are compared as a classic file stores them
// (readRows: big-endian, a netCDF-4 member's read through its file), in
// pieces of whole rows of about compareChunk bytes; bytes past the end of
// a classic file cut short compare as zeros.
func sameFixed(root string, ms []*member) error {
	if len(ms) < 2 {
		return nil
	}
	first := ms[0]
	var fixed []int
	for i := range first.hdr.Vars {
		if v := &first.hdr.Vars[i]; !v.Record {
			fixed = append(fixed, i)
		}
	}
	if len(fixed) == 0 {
		return nil
	}
	open := func(m *member) (readerAt, func(), error) {
		if m.nc4 != nil {
			return nil, func() { m.nc4.f.Close() }, nil
		}
		f, _, err := fileio.Open(filepath.Join(root, filepath.FromSlash(m.name)))
		if err != nil {
			return nil, nil, fmt.Errorf("netcdf: %w", err)
		}
		return f, func() { f.Close() }, nil
	}
	fa, closeA, err := open(first)
	if err != nil {
		return err
	}
	defer closeA()
	var a, b []byte
	for _, m := range ms[1:] {
		fb, closeB, err := open(m)
		if err != nil {
			return err
		}
		for _, i := range fixed {
			va := &first.hdr.Vars[i]
			vb := &m.hdr.Vars[m.vars[va.Name]]
			rows, row := int64(1), va.Slab
			if len(va.Shape) > 0 {
				rows = va.Shape[0]
				if rows == 0 {
					continue
				}
				row = va.Slab / rows
			}
			step := max(1, compareChunk/max(row, 1))
			for r0 := int64(0); r0 < rows; r0 += step {
				n := min(step, rows-r0)
				if int64(cap(a)) < n*row {
					a, b = make([]byte, n*row), make([]byte, n*row)
				}
				a, b = a[:n*row], b[:n*row]
				if err := first.readRows(fa, va, r0, n, a); err != nil {
					closeB()
					return fmt.Errorf("netcdf: %s: %w", first.name, err)
				}
				if err := m.readRows(fb, vb, r0, n, b); err != nil {
					closeB()
					return fmt.Errorf("netcdf: %s: %w", m.name, err)
				}
				if k := firstDiff(a, b); k >= 0 {
					closeB()
					el := (r0*row + int64(k)) / va.Type.Size()
					return notOneStream(first, m, fmt.Sprintf("fixed-size variable %s differs at element %d (%s, %s)",
						va.Name, el, first.where(va, el), m.where(vb, el)))
				}
			}
		}
		closeB()
	}
	return nil
}

// where names element el of fixed variable v of m for a message: its
// offset in a classic file, the element of a netCDF-4 file's dataset.
func (m *member) where(v *Var, el int64) string {
	if m.nc4 != nil {
		return fmt.Sprintf("element %d of %s's dataset /%s", el, m.name, v.Name)
	}
	return fmt.Sprintf("offset %d of %s", v.Begin+el*v.Type.Size(), m.name)
}

const compareChunk = 1 << 20

// readZeros fills p from r at off, zeros past the end of the file.
func readZeros(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n < len(p) && err != nil && err != io.EOF {
		return err
	}
	clear(p[n:])
	return nil
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
