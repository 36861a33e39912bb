package netcdf

// netCDF-4 members of a stream. A model that switched its output format
// mid-run, or months converted with `nccopy -k nc4`, leave a stream whose
// members are classic files and netCDF-4 (HDF5) files:
//
//	case.eam.h0.0001-01.nc   CDF-2      records 0      interleaved record slabs
//	case.eam.h0.0001-02.nc   netCDF-4   records 1, 2   each variable's HDF5 chunks
//	case.eam.h0.0001-03.nc   CDF-5      records 3      (deflate, shuffle, ...) or
//	                                                   contiguous extent
//
// This package reads no HDF5 (it stays pure Go): a NetCDF4Opener (reader/h5's
// OpenNetCDF4Member) describes a netCDF-4 file in HDF5's terms — datasets
// with their dimension-scale names, unlimited axes, attributes, fill value,
// and the blocks of their chunks or contiguous extents as reader/h5 catalogs
// them. netcdf4Header turns that into the classic model (a Header), so that
// a netCDF-4 member goes through the same checks as a classic one
// (orderStream's sameShape, sameFixed) and its record dimension continues
// the stream's: its blocks are placed at the member's first record.
//
// What a classic stream cannot hold is refused by name: groups, a second
// unlimited dimension or one that is not the first of its variables,
// non-numeric types (NC_STRING, compounds, ...), string attributes of
// several values, and chunks read only through the HDF5 library (a plugin
// filter: open that file alone).

import (
	"fmt"
	"slices"
	"strings"

	"relayout/catalog"
	"relayout/reader/blockio"
)

// NetCDF4Opener describes the netCDF-4 file name (relative to root) for a
// stream; match selects the variables whose blocks are listed (nil: all).
type NetCDF4Opener func(root, name string, match func(string) bool) (*NetCDF4File, error)

// NetCDF4File is a netCDF-4 file as a reader of HDF5 describes it.
type NetCDF4File struct {
	Attrs []catalog.Attr // global attributes, netCDF-C's hidden ones dropped
	Vars  []NetCDF4Var   // the datasets of the root group, dimension-only scales included
	// Groups names a group of the file other than the root ("" none).
	Groups string
	// Read reads the box [lower, lower+count) of the dataset name into dst
	// as row-major little-endian elements of its type. It opens the file
	// when it is not open; Close closes it.
	Read  func(name string, lower, count []int64, dst []byte) error
	Close func() error
}

// NetCDF4Var is one dataset of a netCDF-4 file.
type NetCDF4Var struct {
	Name      string
	DType     catalog.DType // as stored (byte order included)
	Numeric   bool          // false: TypeDesc says what it is
	TypeDesc  string
	Shape     []int64        // current extent
	Unlimited []bool         // axes of unlimited maximum size
	Dims      []string       // its dimension scales' names ("" none)
	Attrs     []catalog.Attr // netCDF attributes (hidden ones dropped)
	// DimOnly: a dimension without a coordinate variable (netCDF-C's
	// scale "This is a netCDF dimension but not a netCDF variable"): a
	// dimension, not a variable.
	DimOnly bool
	// Blocks are its chunks or contiguous extent (File the member's
	// name); nil for a variable not selected.
	Blocks []catalog.Block
}

// netcdf4 is what a member keeps of its netCDF-4 file.
type netcdf4 struct {
	f    *NetCDF4File
	vars map[string]*NetCDF4Var
}

// classicType is the netCDF type of a catalog element type.
func classicType(dt catalog.DType) (Type, bool) {
	switch {
	case dt.Kind == catalog.Char && dt.Size == 1:
		return Char, true
	case dt.Kind == catalog.Float && dt.Size == 4:
		return Float, true
	case dt.Kind == catalog.Float && dt.Size == 8:
		return Double, true
	case dt.Kind == catalog.Int:
		return map[int]Type{1: Byte, 2: Short, 4: Int, 8: Int64}[dt.Size], dt.Valid()
	case dt.Kind == catalog.Uint:
		return map[int]Type{1: UByte, 2: UShort, 4: UInt, 8: UInt64}[dt.Size], dt.Valid()
	}
	return 0, false
}

// classicAttr is a as a classic attribute (values big-endian).
func classicAttr(a catalog.Attr) (Attr, bool) {
	if a.Type == "string" {
		if len(a.Strings) != 1 {
			return Attr{}, false
		}
		return Attr{Name: a.Name, Type: Char, N: int64(len(a.Strings[0])), Values: []byte(a.Strings[0])}, true
	}
	dt, ok := catalog.AttrDType(a.Type)
	if !ok {
		return Attr{}, false
	}
	t, ok := classicType(dt)
	if !ok {
		return Attr{}, false
	}
	dt.BigEndian = true
	b, ok := catalog.AttrBytes(a, dt)
	if !ok {
		return Attr{}, false
	}
	return Attr{Name: a.Name, Type: t, N: int64(len(b)) / t.Size(), Values: b}, true
}

// netcdf4Member makes the member of the netCDF-4 file name (size bytes)
// described by f: its Header in the classic model, where the record
// dimension is the unlimited one and NumRecs its length (the longest of
// the variables over it, as netCDF-C reads it).
func netcdf4Member(name string, size int64, f *NetCDF4File) (*member, error) {
	refuse := func(what string, args ...any) error {
		return fmt.Errorf("netcdf: %s: netCDF-4 file: %s, which a stream of netCDF history files cannot hold (a classic file cannot): open that file alone: %w",
			name, fmt.Sprintf(what, args...), catalog.ErrUnsupported)
	}
	if f.Groups != "" {
		return nil, refuse("group %s", f.Groups)
	}
	h := &Header{Version: 4, RecDim: -1}
	dimAt := map[string]int{}
	m := &member{name: name, size: size, hdr: h, vars: map[string]int{}, nc4: &netcdf4{f: f, vars: map[string]*NetCDF4Var{}}}
	for i := range f.Vars {
		v := &f.Vars[i]
		if len(v.Dims) != len(v.Shape) || len(v.Unlimited) > 0 && len(v.Unlimited) != len(v.Shape) {
			return nil, refuse("variable %s has %d dimension names for shape %v", v.Name, len(v.Dims), v.Shape)
		}
		for k, dn := range v.Dims {
			if dn == "" {
				return nil, refuse("variable %s: dimension %d has no dimension scale (not written by netCDF)", v.Name, k)
			}
			unlimited := len(v.Unlimited) > 0 && v.Unlimited[k]
			id, seen := dimAt[dn]
			if !seen {
				id = len(h.Dims)
				dimAt[dn] = id
				h.Dims = append(h.Dims, Dim{Name: dn, Len: v.Shape[k]})
				if unlimited {
					if h.RecDim >= 0 {
						return nil, refuse("a second unlimited dimension %s beside %s", dn, h.Dims[h.RecDim].Name)
					}
					h.RecDim, h.Dims[id].Len = id, 0
				}
			}
			switch {
			case unlimited != (id == h.RecDim):
				return nil, refuse("dimension %s is unlimited for some variables only", dn)
			case unlimited && k != 0:
				return nil, refuse("variable %s: the unlimited dimension %s is dimension %d, not the first", v.Name, dn, k)
			case unlimited:
				h.NumRecs = max(h.NumRecs, v.Shape[k])
			case h.Dims[id].Len != v.Shape[k]:
				return nil, refuse("dimension %s is %d long for variable %s, %d for another", dn, v.Shape[k], v.Name, h.Dims[id].Len)
			}
		}
	}
	for i := range f.Vars {
		v := &f.Vars[i]
		if v.DimOnly {
			continue
		}
		if !v.Numeric {
			return nil, refuse("variable %s of type %s", v.Name, v.TypeDesc)
		}
		t, ok := classicType(v.DType)
		if !ok {
			return nil, refuse("variable %s of type %s", v.Name, v.DType)
		}
		cv := Var{Name: v.Name, Type: t, DimIDs: make([]int, len(v.Dims)), Shape: make([]int64, len(v.Dims))}
		cv.Slab = t.Size()
		for k, dn := range v.Dims {
			id := dimAt[dn]
			cv.DimIDs[k], cv.Shape[k] = id, h.Dims[id].Len
			if id == h.RecDim {
				cv.Record = true
				continue
			}
			cv.Slab *= v.Shape[k]
		}
		for _, a := range v.Attrs {
			ca, ok := classicAttr(a)
			if !ok {
				return nil, refuse("variable %s: attribute %s of type %s with %d values", v.Name, a.Name, a.Type, max(len(a.Strings), len(a.Floats), len(a.Ints), len(a.Uints)))
			}
			cv.Attrs = append(cv.Attrs, ca)
		}
		for _, b := range v.Blocks {
			if len(b.Codecs) == 1 && b.Codecs[0].Name == catalog.HDF5LibraryCodec {
				return nil, refuse("variable %s is stored with an HDF5 filter that only the HDF5 library decodes", v.Name)
			}
		}
		m.vars[v.Name] = len(h.Vars)
		m.nc4.vars[v.Name] = v
		h.Vars = append(h.Vars, cv)
	}
	for _, a := range f.Attrs {
		ca, ok := classicAttr(a)
		if !ok {
			return nil, refuse("global attribute %s of type %s with %d values", a.Name, a.Type, max(len(a.Strings), len(a.Floats), len(a.Ints), len(a.Uints)))
		}
		h.Attrs = append(h.Attrs, ca)
	}
	return m, nil
}

// format names the member's format: "CDF-2", "netCDF-4".
func (m *member) format() string {
	if m.nc4 != nil {
		return "netCDF-4"
	}
	return m.hdr.Format()
}

// readRows reads rows [row0, row0+n) of variable v of m (its records for a
// record variable, the indices of its first axis for a fixed one, the one
// element of a scalar) into dst, as a classic file stores them: row-major,
// big-endian. Bytes past the end of a classic file cut short read as
// zeros; records a netCDF-4 variable does not have (it is shorter than
// the record dimension) as its fill value.
func (m *member) readRows(r readerAt, v *Var, row0, n int64, dst []byte) error {
	row := v.Slab
	if !v.Record && len(v.Shape) > 0 && v.Shape[0] > 0 {
		row = v.Slab / v.Shape[0]
	}
	if int64(len(dst)) != n*row {
		return fmt.Errorf("netcdf: %s: variable %s: %d bytes for %d rows of %d", m.name, v.Name, len(dst), n, row)
	}
	if m.nc4 == nil {
		if !v.Record {
			return readZeros(r, dst, v.Begin+row0*row)
		}
		for k := range n {
			if err := readZeros(r, dst[k*row:(k+1)*row], v.Begin+(row0+k)*m.hdr.RecSize); err != nil {
				return err
			}
		}
		return nil
	}
	nv := m.nc4.vars[v.Name]
	es := int(v.Type.Size())
	have := n
	if len(nv.Shape) > 0 {
		have = max(0, min(n, nv.Shape[0]-row0))
	}
	if have > 0 {
		lower, count := make([]int64, len(nv.Shape)), slices.Clone(nv.Shape)
		if len(nv.Shape) > 0 {
			lower[0], count[0] = row0, have
		}
		if err := m.nc4.f.Read(v.Name, lower, count, dst[:have*row]); err != nil {
			return err
		}
		if es > 1 { // read little-endian: stored as a classic file would
			blockio.SwapBytes(dst[:have*row], es)
		}
	}
	fill := v.fill()
	for off := have * row; off < int64(len(dst)); off += int64(es) {
		copy(dst[off:], fill)
	}
	return nil
}

// readerAt is the file a classic member's bytes are read from (nil for a
// netCDF-4 member, read through its NetCDF4File).
type readerAt = interface {
	ReadAt(p []byte, off int64) (int, error)
}

// netcdf4Blocks are the blocks of variable name in netCDF-4 member m for
// an array of type dt: its chunks, a record variable's placed at the
// member's first record, a byte-swapping stage added when the member
// stores the other byte order than dt's.
func (m *member) netcdf4Blocks(name string, dt catalog.DType, out []catalog.Block) []catalog.Block {
	nv := m.nc4.vars[name]
	var swap []catalog.Codec
	if dt.Size > 1 && nv.DType.BigEndian != dt.BigEndian {
		swap = []catalog.Codec{{Name: "byteswap", Params: []uint32{uint32(dt.Size)}}}
	}
	record := m.hdr.Vars[m.vars[name]].Record
	for _, b := range nv.Blocks {
		if record {
			lower := slices.Clone(b.Box.Lower)
			lower[0] += m.rec0
			b.Box.Lower = lower
		}
		switch {
		case swap != nil && b.Inline() != nil:
			// Compact data is held inline, where codecs do not apply:
			// swapped here.
			raw := slices.Clone(b.Inline())
			blockio.SwapBytes(raw, dt.Size)
			b = b.WithInline(raw)
		case swap != nil:
			b.Codecs = append(slices.Clip(swap), b.Codecs...)
		}
		out = append(out, b)
	}
	return out
}

// netcdf4Holes checks, for every selected variable, that the elements a
// netCDF-4 member leaves unwritten (chunks never written, records a
// variable lacks) read as the stream's array does: the member's fill
// value must be the array's (fill, in the array's type dt).
func netcdf4Holes(first, m *member, name string, dt catalog.DType, fill []byte) error {
	v := &m.hdr.Vars[m.vars[name]]
	nv := m.nc4.vars[name]
	want := v.Slab / v.Type.Size()
	if v.Record {
		want *= m.hdr.NumRecs
	}
	var have int64
	for i := range nv.Blocks {
		have += nv.Blocks[i].Box.Elements()
	}
	if have >= want {
		return nil
	}
	own := v.fill() // big-endian, as number reads it
	arr := slices.Clone(fill)
	if !dt.BigEndian {
		slices.Reverse(arr)
	}
	if string(own) == string(arr) {
		return nil
	}
	return notOneStream(first, m, fmt.Sprintf("variable %s: %s leaves %d of its %d elements unwritten, which read as its fill value %v, not %s's %v",
		name, m.name, want-have, want, number(v.Type, own), first.name, number(v.Type, arr)))
}

// trimText is a text record coordinate's value: its trailing blanks and
// NULs dropped.
func trimText(b []byte) string { return strings.TrimRight(string(b), " \x00") }
