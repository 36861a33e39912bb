package netcdf

// A netCDF classic file (CDF-1, CDF-2, CDF-5; ../shared/specs/netcdf-classic.md),
// everything big-endian. W is the width of counts, lengths, name lengths,
// numrecs, dimension ids and vsize (4 bytes in CDF-1/2, 8 in CDF-5); B the
// width of begin (4 in CDF-1, 8 in CDF-2/5). Tags are always 4 bytes.
//
//	0      'C' 'D' 'F' version(1|2|5)
//	4      numrecs W            all ones: streaming, count from the file size
//	       dim_list             ABSENT | 0x0A count:W dim[count]
//	       gatt_list            ABSENT | 0x0C count:W attr[count]
//	       var_list             ABSENT | 0x0B count:W var[count]
//	       ...                  free space (PnetCDF leaves some), then data
//
//	ABSENT = tag 0 (4 bytes) and count 0 (W bytes)
//	name   = length:W bytes[length] zero padding to a multiple of 4
//	dim    = name length:W          length 0: the record (unlimited) dimension
//	attr   = name type:4 nelems:W values[nelems] padding to a multiple of 4
//	var    = name rank:W dimid:W[rank] vatt_list type:4 vsize:W begin:B
//	type   = 1 byte 2 char 3 short 4 int 5 float 6 double
//	         (CDF-5 only) 7 ubyte 8 ushort 9 uint 10 int64 11 uint64
//
// Data: every fixed-size variable's values at its begin, row-major; then
// the records: record r holds one slab of each record variable (those whose
// first dimension is the record dimension) in header order, the slab of v
// at begin_v + r*recsize. recsize is the sum of the record variables' slab
// sizes each rounded up to 4 bytes, or the one slab unpadded when there is
// exactly one record variable. vsize is that rounded size (2^32-1 for a
// variable above 4 GiB in CDF-1/2): redundant, so computed here and never
// trusted.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"unicode/utf8"

	"relayout/catalog"
)

// Type is a netCDF external type tag.
type Type uint32

// The netCDF classic types.
const (
	Byte   Type = 1
	Char   Type = 2
	Short  Type = 3
	Int    Type = 4
	Float  Type = 5
	Double Type = 6
	UByte  Type = 7
	UShort Type = 8
	UInt   Type = 9
	Int64  Type = 10
	UInt64 Type = 11
)

var typeNames = [...]string{"", "byte", "char", "short", "int", "float", "double", "ubyte", "ushort", "uint", "int64", "uint64"}

func (t Type) String() string {
	if int(t) < len(typeNames) && t > 0 {
		return typeNames[t]
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// Size is the size of one element of t in bytes (0 for an invalid tag).
func (t Type) Size() int64 {
	switch t {
	case Byte, Char, UByte:
		return 1
	case Short, UShort:
		return 2
	case Int, Float, UInt:
		return 4
	case Double, Int64, UInt64:
		return 8
	}
	return 0
}

// Header is a parsed and checked classic header with the data layout it
// implies for a file of the size given to ParseHeader.
type Header struct {
	Version   int   // 1, 2 or 5
	NumRecs   int64 // records present (from the file size when Streaming)
	Streaming bool  // numrecs was all ones
	Dims      []Dim
	RecDim    int // index of the record dimension in Dims, -1 if none
	Attrs     []Attr
	Vars      []Var
	HeaderEnd int64 // first byte after the header's lists
	RecSize   int64 // bytes from one record to the next
	// Tail is set when the file ends inside the last variable in file
	// order (PnetCDF's NC_NOFILL leaves never-written tails unallocated;
	// netCDF-C reads them as zeros).
	Tail *Tail
}

// Tail describes the missing tail of a file: variable Var (an index into
// Vars) of record Record (-1 for a fixed-size variable) has only its first
// InFile bytes in the file, of Slab.
type Tail struct {
	Var    int
	Record int64
	Start  int64 // file offset of the slab
	Slab   int64 // bytes the slab should have
	InFile int64 // bytes of it the file holds (0 <= InFile < Slab)
}

// Dim is a dimension; Len 0 marks the record dimension.
type Dim struct {
	Name string
	Len  int64
}

// Attr is an attribute with its values as stored (big-endian, unpadded).
type Attr struct {
	Name   string
	Type   Type
	N      int64 // number of values
	Values []byte
}

// Var is a variable with its layout.
type Var struct {
	Name    string
	DimIDs  []int
	Shape   []int64 // the dimensions' lengths; 0 for the record dimension
	Attrs   []Attr
	Type    Type
	Begin   int64
	Record  bool  // the first dimension is the record dimension
	Slab    int64 // bytes of the whole variable (fixed) or of one record
	Offset  int64 // header offset of the variable's entry, for messages
	BeginAt int64 // header offset of its begin field
}

// Elems is the number of elements of a fixed variable, or of one record.
func (v *Var) Elems() int64 { return v.Slab / v.Type.Size() }

// Format names the classic variant: "CDF-1", "CDF-2" or "CDF-5".
func (h *Header) Format() string { return fmt.Sprintf("CDF-%d", h.Version) }

// maxRank bounds a variable's rank (netCDF-C's NC_MAX_VAR_DIMS is 1024).
const maxRank = 1024

// maxName bounds a name's length: netCDF-C and PnetCDF refuse names longer
// than NC_MAX_NAME (256 bytes); four times that leaves room for writers
// that do not check.
const maxName = 1024

// maxAttrBytes bounds one attribute's values (header metadata, not data).
const maxAttrBytes = 64 << 20

// maxBytes bounds any size computed from the header: it keeps every sum of
// offsets and sizes far from int64 overflow.
const maxBytes = int64(1) << 62

// cursor reads the header through a window of the file, every field checked
// against the file size before anything is allocated.
type cursor struct {
	r    io.ReaderAt
	size int64
	file string
	w    int // 4 or 8: counts, lengths, dimids, vsize
	off  int64
	buf  []byte // file bytes from bufOff
	bufO int64
	// What is being read, for messages only (built when one is needed):
	// kind "dimension", "variable", "global" or "", the object's name and
	// the attribute's name.
	kind, obj, attr string
}

// where names field in its scope: "variable T attribute units type".
func (c *cursor) where(field string) string {
	s := field
	if c.attr != "" {
		s = "attribute " + c.attr + " " + s
	}
	if c.obj != "" {
		s = c.obj + " " + s
	}
	if c.kind != "" {
		s = c.kind + " " + s
	}
	return s
}

const window = 64 << 10

func (c *cursor) corrupt(off int64, what string, args ...any) error {
	return corruptAt(c.file, off, what, args...)
}

// bytes returns the next n bytes of field (n <= remaining, checked by the
// caller or here), valid until the next call.
func (c *cursor) bytes(n int64, field string) ([]byte, error) {
	if n < 0 || n > c.size-c.off {
		return nil, c.corrupt(c.off, "%s of %d bytes past the end of the file (%d bytes): truncated header", c.where(field), n, c.size)
	}
	if c.off < c.bufO || c.off+n > c.bufO+int64(len(c.buf)) {
		m := min(max(n, window), c.size-c.off)
		if int64(cap(c.buf)) < m {
			c.buf = make([]byte, m)
		}
		c.buf = c.buf[:m]
		k, err := c.r.ReadAt(c.buf, c.off)
		if int64(k) < n {
			if err == nil || errors.Is(err, io.EOF) {
				return nil, c.corrupt(c.off, "%s: file ends early: truncated header", c.where(field))
			}
			return nil, fmt.Errorf("netcdf: %s: offset %d: %w", c.file, c.off, err)
		}
		c.buf, c.bufO = c.buf[:k], c.off
	}
	b := c.buf[c.off-c.bufO : c.off-c.bufO+n]
	c.off += n
	return b, nil
}

func (c *cursor) u32(field string) (uint32, error) {
	b, err := c.bytes(4, field)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint32(b), nil
}

// count reads a W-wide non-negative integer, at most limit.
func (c *cursor) count(field string, limit int64) (int64, error) {
	at := c.off
	var v uint64
	if c.w == 8 {
		b, err := c.bytes(8, field)
		if err != nil {
			return 0, err
		}
		v = binary.BigEndian.Uint64(b)
	} else {
		u, err := c.u32(field)
		if err != nil {
			return 0, err
		}
		v = uint64(u)
	}
	if v > uint64(limit) {
		return 0, c.corrupt(at, "%s %d, more than the %d the file can hold", c.where(field), v, limit)
	}
	return int64(v), nil
}

func (c *cursor) remaining() int64 { return c.size - c.off }

func pad4(n int64) int64 { return (n + 3) &^ 3 }

// name reads a padded name; noun says whose ("dimension", "attribute").
func (c *cursor) name(noun string) (string, error) {
	at := c.off
	n, err := c.count(noun+" name length", min(maxName, c.remaining()))
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", c.corrupt(at, "%s with an empty name", c.where(noun))
	}
	b, err := c.bytes(pad4(n), noun+" name")
	if err != nil {
		return "", err
	}
	s := string(b[:n])
	if !utf8.ValidString(s) {
		return "", c.corrupt(at, "%s name %q is not UTF-8", c.where(noun), s)
	}
	return s, nil
}

// list reads a list header: tag (or ABSENT) and count. minItem is the
// fewest bytes one item takes, bounding the count by the bytes left.
func (c *cursor) list(tag uint32, noun string, minItem int64) (int64, error) {
	at := c.off
	t, err := c.u32(noun + " list tag")
	if err != nil {
		return 0, err
	}
	n, err := c.count(noun+" list count", c.remaining()/minItem)
	if err != nil {
		return 0, err
	}
	switch {
	case t == 0 && n == 0:
		return 0, nil
	case t == 0:
		return 0, c.corrupt(at, "absent %s with a count of %d", c.where(noun+" list"), n)
	case t != tag:
		return 0, c.corrupt(at, "%s tag 0x%x, want 0x%x", c.where(noun+" list"), t, tag)
	}
	return n, nil
}

func (c *cursor) typ(version int) (Type, error) {
	at := c.off
	v, err := c.u32("type")
	if err != nil {
		return 0, err
	}
	t := Type(v)
	if t < Byte || t > UInt64 {
		return 0, c.corrupt(at, "%s tag %d", c.where("type"), v)
	}
	if t > Double && version != 5 {
		return 0, c.corrupt(at, "%s %s in a CDF-%d file (CDF-5 only)", c.where("type"), t, version)
	}
	return t, nil
}

// attrs reads an attribute list of the current scope (c.kind, c.obj).
func (c *cursor) attrs(version int) ([]Attr, error) {
	// An attribute takes at least: name length, 4 name bytes, type, count.
	n, err := c.list(0x0C, "attribute", int64(3*c.w+4))
	if err != nil {
		return nil, err
	}
	out := make([]Attr, 0, n)
	defer func() { c.attr = "" }()
	for i := int64(0); i < n; i++ {
		var a Attr
		if a.Name, err = c.name("attribute"); err != nil {
			return nil, err
		}
		c.attr = a.Name
		if a.Type, err = c.typ(version); err != nil {
			return nil, err
		}
		at := c.off
		if a.N, err = c.count("value count", c.remaining()/a.Type.Size()); err != nil {
			return nil, err
		}
		if a.N*a.Type.Size() > maxAttrBytes {
			return nil, fmt.Errorf("netcdf: %s: offset %d: %s of %d bytes, more than the %d relayout reads: %w",
				c.file, at, c.where("values"), a.N*a.Type.Size(), maxAttrBytes, catalog.ErrUnsupported)
		}
		b, err := c.bytes(pad4(a.N*a.Type.Size()), "values")
		if err != nil {
			return nil, err
		}
		a.Values = slices.Clone(b[:a.N*a.Type.Size()])
		out = append(out, a)
		c.attr = ""
	}
	return out, nil
}

// ParseHeader parses the header of a classic file of size bytes read
// through r, and checks the data layout it describes against size. file
// names the file in errors; damage is a *catalog.CorruptError naming the
// offset of the bad field.
func ParseHeader(r io.ReaderAt, size int64, file string) (*Header, error) {
	c := &cursor{r: r, size: size, file: file, w: 4}
	magic, err := c.bytes(4, "magic")
	if err != nil {
		return nil, err
	}
	if string(magic[:3]) != "CDF" {
		return nil, c.corrupt(0, "magic %q is not CDF", magic)
	}
	h := &Header{Version: int(magic[3]), RecDim: -1}
	bw := 8 // width of begin
	switch h.Version {
	case 1:
		bw = 4
	case 2:
	case 5:
		c.w = 8
	default:
		return nil, c.corrupt(3, "netCDF classic version byte %d (1, 2 or 5)", magic[3])
	}
	recAt := c.off
	var numrecs uint64
	if c.w == 8 {
		b, err := c.bytes(8, "numrecs")
		if err != nil {
			return nil, err
		}
		numrecs = binary.BigEndian.Uint64(b)
		h.Streaming = numrecs == math.MaxUint64
	} else {
		u, err := c.u32("numrecs")
		if err != nil {
			return nil, err
		}
		numrecs = uint64(u)
		h.Streaming = u == math.MaxUint32
	}
	if !h.Streaming && numrecs > uint64(size) {
		// A record holds at least one byte: more records than bytes
		// cannot be.
		return nil, c.corrupt(recAt, "numrecs %d, more than the file's %d bytes", numrecs, size)
	}

	// Dimensions: name (>= 2W... at least W+4 bytes) and length.
	nd, err := c.list(0x0A, "dimension", int64(2*c.w+4))
	if err != nil {
		return nil, err
	}
	h.Dims = make([]Dim, 0, nd)
	names := map[string]bool{}
	for i := int64(0); i < nd; i++ {
		at := c.off
		var d Dim
		if d.Name, err = c.name("dimension"); err != nil {
			return nil, err
		}
		lenAt := c.off
		c.kind, c.obj = "dimension", d.Name
		if d.Len, err = c.count("length", maxBytes); err != nil {
			return nil, err
		}
		c.kind, c.obj = "", ""
		if names[d.Name] {
			return nil, c.corrupt(at, "dimension %s defined twice", d.Name)
		}
		names[d.Name] = true
		if d.Len == 0 {
			if h.RecDim >= 0 {
				return nil, c.corrupt(lenAt, "dimension %s is a second record (unlimited) dimension after %s", d.Name, h.Dims[h.RecDim].Name)
			}
			h.RecDim = len(h.Dims)
		}
		h.Dims = append(h.Dims, d)
	}
	c.kind = "global"
	if h.Attrs, err = c.attrs(h.Version); err != nil {
		return nil, err
	}
	c.kind = ""

	// Variables: name, rank, attribute list, type, vsize, begin at least.
	nv, err := c.list(0x0B, "variable", int64(3*c.w+4+4+4+c.w+bw))
	if err != nil {
		return nil, err
	}
	h.Vars = make([]Var, 0, nv)
	vnames := map[string]bool{}
	for i := int64(0); i < nv; i++ {
		v := Var{Offset: c.off}
		if v.Name, err = c.name("variable"); err != nil {
			return nil, err
		}
		if vnames[v.Name] {
			return nil, c.corrupt(v.Offset, "variable %s defined twice", v.Name)
		}
		vnames[v.Name] = true
		c.kind, c.obj = "variable", v.Name
		rankAt := c.off
		rank, err := c.count("rank", min(maxRank, c.remaining()/int64(c.w)))
		if err != nil {
			return nil, err
		}
		v.DimIDs = make([]int, rank)
		v.Shape = make([]int64, rank)
		for k := range v.DimIDs {
			at := c.off
			id, err := c.count("dimension id", math.MaxInt64)
			if err != nil {
				return nil, err
			}
			if id >= int64(len(h.Dims)) {
				return nil, c.corrupt(at, "variable %s: dimension id %d of %d dimensions", v.Name, id, len(h.Dims))
			}
			v.DimIDs[k], v.Shape[k] = int(id), h.Dims[id].Len
			if int(id) == h.RecDim {
				if k != 0 {
					return nil, c.corrupt(at, "variable %s: the record dimension %s is dimension %d, not the first", v.Name, h.Dims[id].Name, k)
				}
				v.Record = true
			}
		}
		if v.Attrs, err = c.attrs(h.Version); err != nil {
			return nil, err
		}
		if v.Type, err = c.typ(h.Version); err != nil {
			return nil, err
		}
		// Size of the whole variable, or of one record: checked for
		// overflow; vsize is read and ignored.
		n := v.Type.Size()
		for k, d := range v.Shape {
			if k == 0 && v.Record {
				continue
			}
			if n > maxBytes/d {
				return nil, c.corrupt(rankAt, "variable %s: shape %v of %s overflows", v.Name, v.Shape, v.Type)
			}
			n *= d
		}
		v.Slab = n
		if _, err := c.count("vsize", math.MaxInt64); err != nil {
			return nil, err
		}
		v.BeginAt = c.off
		if bw == 8 {
			b, err := c.bytes(8, "begin")
			if err != nil {
				return nil, err
			}
			v.Begin = int64(binary.BigEndian.Uint64(b))
			if v.Begin < 0 {
				return nil, c.corrupt(v.BeginAt, "variable %s: begin %d", v.Name, uint64(v.Begin))
			}
		} else {
			u, err := c.u32("begin")
			if err != nil {
				return nil, err
			}
			v.Begin = int64(u)
		}
		h.Vars = append(h.Vars, v)
		c.kind, c.obj = "", ""
	}
	h.HeaderEnd = c.off
	if err := h.layout(file, size, recAt, numrecs); err != nil {
		return nil, err
	}
	return h, nil
}

// layout computes recsize and numrecs and checks every variable's data
// against the file size: only the last variable in file order may run past
// the end (Tail).
func (h *Header) layout(file string, size, recAt int64, numrecs uint64) error {
	var recs []int
	for i := range h.Vars {
		v := &h.Vars[i]
		if v.Begin < h.HeaderEnd {
			return corruptAt(file, v.BeginAt, "variable %s: begin %d inside the header (which ends at %d)", v.Name, v.Begin, h.HeaderEnd)
		}
		if v.Begin > maxBytes {
			return corruptAt(file, v.BeginAt, "variable %s: begin %d", v.Name, v.Begin)
		}
		if v.Record {
			recs = append(recs, i)
		}
	}
	switch len(recs) {
	case 0:
	case 1:
		h.RecSize = h.Vars[recs[0]].Slab
	default:
		for _, i := range recs {
			h.RecSize += pad4(h.Vars[i].Slab)
			if h.RecSize > maxBytes {
				return corruptAt(file, h.Vars[i].Offset, "record size overflows at variable %s", h.Vars[i].Name)
			}
		}
	}
	// The records start at the first record variable's begin.
	recStart := int64(-1)
	for _, i := range recs {
		if recStart < 0 || h.Vars[i].Begin < recStart {
			recStart = h.Vars[i].Begin
		}
	}
	switch {
	case len(recs) == 0 && h.Streaming:
		h.NumRecs = 0
	case len(recs) == 0:
		h.NumRecs = int64(numrecs) // a record dimension no variable uses
	case h.Streaming:
		h.NumRecs = max(size-recStart, 0) / h.RecSize
	default:
		h.NumRecs = int64(numrecs)
		if h.NumRecs > 0 && h.NumRecs-1 > (maxBytes-recStart)/h.RecSize {
			return corruptAt(file, recAt, "numrecs %d of %d bytes each overflows", h.NumRecs, h.RecSize)
		}
	}

	// Extents in file order; the one ending last may be cut short.
	type extent struct {
		v          int
		rec        int64
		start, end int64
	}
	var last extent
	last.v = -1
	for i := range h.Vars {
		v := &h.Vars[i]
		e := extent{v: i, rec: -1, start: v.Begin, end: v.Begin + v.Slab}
		if v.Record {
			if h.NumRecs == 0 {
				continue
			}
			e.rec = h.NumRecs - 1
			e.start += e.rec * h.RecSize
			e.end = e.start + v.Slab
		}
		if e.end > last.end || e.end == last.end && e.start > last.start {
			last = e
		}
	}
	for i := range h.Vars {
		v := &h.Vars[i]
		start, end, rec := v.Begin, v.Begin+v.Slab, int64(-1)
		if v.Record {
			if h.NumRecs == 0 {
				continue
			}
			rec = h.NumRecs - 1
			start += rec * h.RecSize
			end = start + v.Slab
		}
		if end <= size || v.Slab == 0 {
			continue
		}
		// A record whose every byte is missing is not a cut slab: numrecs
		// claims a record the file does not hold.
		wholeRecord := rec >= 0 && start >= size && start == recStart+rec*h.RecSize
		if i == last.v && start <= size && !wholeRecord {
			h.Tail = &Tail{Var: i, Record: rec, Start: start, Slab: v.Slab, InFile: size - start}
			continue
		}
		what := "data"
		if rec >= 0 {
			what = fmt.Sprintf("record %d", rec)
			if !h.Streaming {
				what = fmt.Sprintf("record %d (numrecs %d claims records the file does not hold)", rec, h.NumRecs)
			}
		}
		at := v.BeginAt
		if rec > 0 && !h.Streaming {
			at = recAt
		}
		return corruptAt(file, at, "variable %s: %s at %d-%d past the end of the file (%d bytes)", v.Name, what, start, end, size)
	}
	return nil
}
