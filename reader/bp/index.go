package bp

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"relayout/catalog"
)

// cursor walks a metadata buffer read from one file. Every read is bounds
// checked; the first failure sticks and names the file and the absolute
// offset, so parsers can read a whole record and check err once.
type cursor struct {
	b    []byte
	pos  int   // position in b
	base int64 // file offset of b[0]
	bo   binary.ByteOrder
	le   bool   // bo is little-endian (read without an interface call)
	pfx  string // "bp4" or "bp3"
	file string
	what string // "variable index", "characteristics", ...
	err  error
}

// newCursor reads b, found at file offset base of file, in byte order bo;
// errors name the format pfx ("bp4", "bp3") and what is read.
func newCursor(b []byte, base int64, bo binary.ByteOrder, pfx, file, what string) *cursor {
	return &cursor{b: b, base: base, bo: bo, le: bo == binary.ByteOrder(binary.LittleEndian), pfx: pfx, file: file, what: what}
}

func (c *cursor) off() int64 { return c.base + int64(c.pos) }

func (c *cursor) fail(format string, args ...any) {
	if c.err == nil {
		c.err = catalog.Corrupt(c.pfx, c.file, c.off(), "%s: %s", c.what, fmt.Sprintf(format, args...))
	}
}

func (c *cursor) remaining() int {
	if c.err != nil {
		return 0
	}
	return len(c.b) - c.pos
}

// take returns the next n bytes (nil after a failure).
func (c *cursor) take(n int) []byte {
	if c.err != nil {
		return nil
	}
	if n < 0 || n > len(c.b)-c.pos {
		c.fail("%d bytes needed, %d left", n, len(c.b)-c.pos)
		return nil
	}
	p := c.b[c.pos : c.pos+n]
	c.pos += n
	return p
}

func (c *cursor) u8() uint8 {
	if p := c.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (c *cursor) u16() uint16 {
	if p := c.take(2); p != nil {
		if c.le {
			return binary.LittleEndian.Uint16(p)
		}
		return c.bo.Uint16(p)
	}
	return 0
}

func (c *cursor) u32() uint32 {
	if p := c.take(4); p != nil {
		if c.le {
			return binary.LittleEndian.Uint32(p)
		}
		return c.bo.Uint32(p)
	}
	return 0
}

func (c *cursor) u64() uint64 {
	if p := c.take(8); p != nil {
		if c.le {
			return binary.LittleEndian.Uint64(p)
		}
		return c.bo.Uint64(p)
	}
	return 0
}

// str16 reads a u16 length and that many bytes.
func (c *cursor) str16() string { return string(c.take(int(c.u16()))) }

// sub returns a cursor over the next n bytes and advances past them.
func (c *cursor) sub(n int, what string) *cursor {
	sc := c.subValue(n, what)
	return &sc
}

// subValue is sub as a value, for a caller that keeps it on its stack (one
// set per block: a heap cursor each was a tenth of catalog's CPU).
func (c *cursor) subValue(n int, what string) cursor {
	start := c.pos
	p := c.take(n)
	if p == nil {
		return cursor{bo: c.bo, le: c.le, pfx: c.pfx, file: c.file, what: what, err: c.err}
	}
	return cursor{b: p, base: c.base + int64(start), bo: c.bo, le: c.le, pfx: c.pfx, file: c.file, what: what}
}

// ADIOS type ids (the same in BP3 and BP4).
const (
	typeString      = 9
	typeStringArray = 12
	typeLongDouble  = 7
)

// typeInfo maps an ADIOS type id to the catalog type. size is the element
// size used to walk characteristics even for types relayout does not move
// (0 = unknown id); desc names it for Skipped.
func typeInfo(id uint8, bigEndian bool) (dt catalog.DType, size int, desc string, ok bool) {
	mk := func(k catalog.Kind, n int) (catalog.DType, int, string, bool) {
		d := catalog.DType{Kind: k, Size: n, BigEndian: bigEndian && n > 1}
		return d, n, d.Name(), true
	}
	switch id {
	case 0:
		return mk(catalog.Int, 1)
	case 1:
		return mk(catalog.Int, 2)
	case 2:
		return mk(catalog.Int, 4)
	case 4:
		return mk(catalog.Int, 8)
	case 50, 55: // unsigned byte, char
		return mk(catalog.Uint, 1)
	case 51:
		return mk(catalog.Uint, 2)
	case 52:
		return mk(catalog.Uint, 4)
	case 54:
		return mk(catalog.Uint, 8)
	case 5:
		return mk(catalog.Float, 4)
	case 6:
		return mk(catalog.Float, 8)
	case typeLongDouble:
		return dt, 16, "long double", false
	case typeString:
		return dt, 0, "string", false
	case 10:
		return dt, 8, "complex64", false
	case 11:
		return dt, 16, "complex128", false
	case typeStringArray:
		return dt, 0, "string array", false
	}
	return dt, 0, fmt.Sprintf("type id %d", id), false
}

// Sentinel dimensions (ADIOS2 ADIOSTypes.h).
const (
	localValueDim = math.MaxUint64 - 2 // 2^64-3
	joinedDim     = math.MaxUint64 - 1 // 2^64-2
	irregularDim  = math.MaxUint64 - 3
)

// shapeKind is how a block's dimensions place it.
type shapeKind int

const (
	globalValue shapeKind = iota
	localValue
	globalArray
	localArray
	joinedArray
)

func (k shapeKind) String() string {
	return [...]string{"global value", "local value", "global array", "local array", "joined array"}[k]
}

// operator is characteristic 11 (transform): the operator name and its
// metadata; the first two u64 of the metadata are the raw and stored sizes.
type operator struct {
	Name     string
	PreType  uint8
	RawSize  uint64
	Stored   uint64
	HasSizes bool
}

// charSet is one parsed characteristic set: one block of a variable, or one
// attribute value.
type charSet struct {
	Step        uint32 // time_index, 1-based; 0 = absent
	FileIndex   uint32
	HasFile     bool
	Count       []uint64 // per dimension, in the writer's order
	Shape       []uint64
	Start       []uint64
	HasDims     bool
	Value       []byte   // characteristic 0 for numeric types: raw bytes, file byte order
	Strings     []string // characteristic 0 for strings
	HasValue    bool
	VMDOffset   uint64
	Payload     uint64
	HasPayload  bool
	Op          *operator
	setStart    int64 // file offset of the set, for messages
	joinedIndex int   // dimension with JoinedDim, -1 none
}

// kind classifies the set's dimensions like the ADIOS2 deserializer.
func (s *charSet) kind() shapeKind {
	allZero := func(v []uint64) bool {
		for _, x := range v {
			if x != 0 {
				return false
			}
		}
		return true
	}
	switch {
	case len(s.Shape) == 1 && s.Shape[0] == localValueDim:
		return localValue
	case s.joinedIndex >= 0:
		return joinedArray
	case allZero(s.Shape) && allZero(s.Start) && allZero(s.Count):
		return globalValue
	case allZero(s.Shape) && allZero(s.Start):
		return localArray
	}
	return globalArray
}

// maxDims bounds the rank of a block (ADIOS stores ndim in a u8 anyway).
const maxDims = 32

// dimArena hands out the dimension lists of many characteristic sets from a
// few large allocations: one per set was a sixth of a BP4 catalog's CPU (a
// set per block, parsed at Open and again by Scan). The lists are never
// appended to, so they share the chunks safely. rewind hands the same
// memory out again once no list taken from it is in use: Open discards each
// set once classified, and Scan each entry's sets once its blocks are built
// (they copy the dimensions), so neither allocates per entry.
type dimArena struct {
	free   []uint64
	chunks [][]uint64 // every chunk handed out since the last rewind, in order
	next   int        // chunks[next:] are not in use since the rewind
}

// take returns n zeroed values; a nil arena allocates them on their own.
func (a *dimArena) take(n int) []uint64 {
	if a == nil {
		return make([]uint64, n)
	}
	if len(a.free) < n {
		if a.next < len(a.chunks) && len(a.chunks[a.next]) >= n {
			a.free = a.chunks[a.next]
		} else {
			a.free = make([]uint64, max(n, 4096))
			a.chunks = slices.Insert(a.chunks, a.next, a.free)
		}
		a.next++
	}
	v := a.free[:n:n]
	a.free = a.free[n:]
	clear(v) // a rewound chunk holds old lists
	return v
}

// rewind makes every list taken so far free again (see dimArena).
func (a *dimArena) rewind() {
	a.free, a.next = nil, 0
}

// parseSet reads one characteristic set at c: u8 count, u32 length, then
// characteristics until the length is consumed. typeID and size are the
// element's type; attr selects attribute value semantics (count[0] values).
// The dimension lists come from arena (nil: allocated per set).
// countSets is the number of characteristic sets left in c (a copy: c
// is not moved), found by their length fields alone (a set: its count,
// u8, then its length, u32, then that many bytes), so that an entry's
// sets are allocated once, at their number. The entry's own count is not
// that number where ADIOS2 merged the writers' indices: BP4 from 8 ranks
// through aggregators declared 110,400 sets for 110,592 (the slice of
// 200-byte sets then doubled: 22 MB copied into fresh memory per entry,
// a quarter of an openPMD series' catalog) and 72 for 64. Counting stops
// at a set that does not fit, which parseSet then reports.
func countSets(c cursor) int {
	n := 0
	for c.remaining() >= 5 {
		c.u8()
		l := c.u32()
		if int64(l) > int64(c.remaining()) {
			break
		}
		c.pos += int(l)
		n++
	}
	return n
}

func parseSet(c *cursor, typeID uint8, size int, arena *dimArena) charSet {
	s := charSet{setStart: c.off(), joinedIndex: -1}
	c.u8() // count: the length is authoritative, as in the reference reader
	n := c.u32()
	if c.err != nil {
		return s
	}
	if int64(n) > int64(c.remaining()) {
		c.fail("characteristic set of %d bytes, %d left", n, c.remaining())
		return s
	}
	scv := c.subValue(int(n), "characteristics")
	sc := &scv
	defer func() {
		if sc.err != nil && c.err == nil {
			c.err = sc.err
		}
	}()
	var bitmap uint32
	for sc.err == nil && sc.remaining() > 0 {
		id := sc.u8()
		switch id {
		case 0: // value
			s.HasValue = true
			switch typeID {
			case typeString:
				s.Strings = []string{sc.str16()}
			case typeStringArray:
				if len(s.Count) != 1 {
					sc.fail("string array value without a 1-D count")
					return s
				}
				// Each element takes at least 2 bytes: bound the count by them.
				if s.Count[0] > uint64(sc.remaining()/2) {
					sc.fail("%d strings in %d bytes", s.Count[0], sc.remaining())
					return s
				}
				for i := uint64(0); i < s.Count[0] && sc.err == nil; i++ {
					s.Strings = append(s.Strings, sc.str16())
				}
			default:
				if size <= 0 {
					sc.fail("value of type id %d", typeID)
					return s
				}
				elems := uint64(1)
				if len(s.Count) > 0 && s.Count[0] > 1 {
					elems = s.Count[0] // attribute arrays
				}
				if elems > uint64(sc.remaining()/size) {
					sc.fail("%d values of %d bytes in %d bytes", elems, size, sc.remaining())
					return s
				}
				s.Value = sc.take(int(elems) * size)
			}
		case 1, 2: // min, max: checked for length, not kept (the catalog has no statistics)
			sc.take(size)
		case 3:
			s.VMDOffset = sc.u64()
		case 4:
			nd := int(sc.u8())
			sc.u16() // byte length, 24*ndim
			if nd > maxDims || nd*24 > sc.remaining() {
				sc.fail("%d dimensions in %d bytes", nd, sc.remaining())
				return s
			}
			dims := arena.take(3 * nd) // three capped slices
			s.Count, s.Shape, s.Start = dims[:nd:nd], dims[nd:2*nd:2*nd], dims[2*nd:]
			for d := 0; d < nd; d++ {
				s.Count[d], s.Shape[d], s.Start[d] = sc.u64(), sc.u64(), sc.u64()
				if s.Shape[d] == joinedDim {
					if s.joinedIndex >= 0 {
						sc.fail("two joined dimensions")
						return s
					}
					s.joinedIndex = d
				}
			}
			s.HasDims = true
		case 6:
			s.Payload = sc.u64()
			s.HasPayload = true
		case 7:
			s.FileIndex = sc.u32()
			s.HasFile = true
		case 8:
			s.Step = sc.u32()
		case 9: // bitmap: which statistics characteristic 10 holds
			bitmap = sc.u32()
		case 10:
			parseStats(sc, bitmap, size)
		case 11:
			op := &operator{Name: string(sc.take(int(sc.u8())))}
			op.PreType = sc.u8()
			nd := int(sc.u8())
			dl := int(sc.u16())
			if dl != 24*nd {
				sc.fail("operator dimensions length %d for %d dimensions", dl, nd)
				return s
			}
			sc.take(dl)
			meta := sc.take(int(sc.u16()))
			if len(meta) >= 16 {
				op.RawSize, op.Stored, op.HasSizes = sc.bo.Uint64(meta), sc.bo.Uint64(meta[8:]), true
			}
			s.Op = op
		case 12: // minmax
			m := sc.u16()
			sc.take(2 * size)
			if m > 1 {
				sc.u8()
				sc.u64()
				sc.take(2 * len(s.Count))
				if int64(2)*int64(m)*int64(size) > int64(sc.remaining()) {
					sc.fail("%d sub-block min/max values in %d bytes", m, sc.remaining())
					return s
				}
				sc.take(2 * int(m) * size)
			}
		default:
			sc.fail("unknown characteristic id %d", id)
		}
	}
	return s
}

// parseStats reads the ADIOS1 stat characteristic (bits of bitmap in order).
func parseStats(c *cursor, bitmap uint32, size int) {
	for bit := 0; bit <= 6; bit++ {
		if bitmap&(1<<bit) == 0 {
			continue
		}
		switch bit {
		case 0, 1: // min, max
			c.take(size)
		case 2:
			c.u32()
		case 3, 4:
			c.u64()
		case 5:
			c.fail("histogram statistics are not supported")
		case 6:
			c.u8()
		}
	}
}

// entryHeader is the head of a variable or attribute index entry.
type entryHeader struct {
	Name   string
	Path   string // BP3 only
	TypeID uint8
	NSets  uint64
	start  int64 // file offset of the entry's length field
	length int   // bytes after the length field
}

// readEntry splits the next index entry off c and parses its header. bp3
// selects the BP3 header (str16 path) instead of BP4's order/unused bytes.
// The returned cursor is positioned at the first characteristic set.
func readEntry(c *cursor, bp3 bool) (entryHeader, *cursor) {
	h := entryHeader{start: c.off()}
	n := c.u32()
	if c.err != nil {
		return h, nil
	}
	if int64(n) > int64(c.remaining()) {
		c.fail("index entry of %d bytes, %d left", n, c.remaining())
		return h, nil
	}
	h.length = int(n)
	ec := c.sub(int(n), c.what)
	ec.u32() // member id
	ec.str16()
	h.Name = ec.str16()
	if bp3 {
		h.Path = ec.str16()
	} else {
		ec.u8() // order 'K'
		ec.u8()
	}
	h.TypeID = ec.u8()
	h.NSets = ec.u64()
	if ec.err == nil && h.NSets > uint64(ec.remaining()/5) {
		ec.fail("%d characteristic sets in %d bytes", h.NSets, ec.remaining())
	}
	if ec.err != nil {
		c.err = ec.err
		return h, nil
	}
	return h, ec
}

// pgEntry is one process-group index entry.
type pgEntry struct {
	ColMajor bool
	Rank     uint32
	Step     uint32
	Offset   uint64
}

// parsePGIndex reads a PG index: u64 count, u64 length, entries. limit is
// the number of entry bytes that may be read (BP3: derived from the footer,
// because ADIOS1 writes an unreliable length).
func parsePGIndex(c *cursor, limit int) []pgEntry {
	count := c.u64()
	c.u64()
	if c.err != nil {
		return nil
	}
	if limit > c.remaining() || limit < 0 {
		limit = c.remaining()
	}
	if count > uint64(limit/17) { // smallest entry: 2+2+1+4+2+4+8 bytes
		c.fail("%d process groups in %d bytes", count, limit)
		return nil
	}
	pc := c.sub(limit, "process group index")
	out := make([]pgEntry, 0, count)
	for i := uint64(0); i < count && pc.err == nil; i++ {
		n := pc.u16()
		ec := pc.sub(int(n), "process group index")
		ec.str16()
		var e pgEntry
		e.ColMajor = ec.u8() == 'y'
		e.Rank = ec.u32()
		ec.str16()
		e.Step = ec.u32()
		e.Offset = ec.u64()
		if ec.err != nil {
			c.err = ec.err
			return nil
		}
		out = append(out, e)
	}
	if pc.err != nil {
		c.err = pc.err
		return nil
	}
	return out
}

// attrValue converts an attribute's characteristic set to a catalog.Attr.
// ok is false for types relayout does not carry (complex, long double that
// is not x87: longdouble.go).
func attrValue(name string, typeID uint8, s *charSet, bo binary.ByteOrder) (catalog.Attr, bool) {
	a := catalog.Attr{Name: name}
	if typeID == typeString || typeID == typeStringArray {
		a.Type = "string"
		a.Strings = slices.Clone(s.Strings)
		a.Scalar = typeID == typeString
		return a, true
	}
	a.Scalar = len(s.Count) == 0 || (len(s.Count) == 1 && s.Count[0] <= 1)
	if typeID == typeLongDouble {
		// Stored as float64 (rounded), the closest type HDF5 writers share.
		var ok bool
		a.Type = "float64"
		a.Floats, ok = x87LongDoubles(s.Value)
		return a, ok && bo == binary.ByteOrder(binary.LittleEndian)
	}
	dt, size, _, ok := typeInfo(typeID, false)
	if !ok || size == 0 || len(s.Value)%size != 0 {
		return a, false
	}
	n := len(s.Value) / size
	for i := 0; i < n; i++ {
		p := s.Value[i*size : (i+1)*size]
		a.Type = dt.AttrType() // the stored width; values widened
		switch dt.Kind {
		case catalog.Int:
			a.Ints = append(a.Ints, signed(p, bo))
		case catalog.Uint:
			a.Uints = append(a.Uints, unsigned(p, bo))
		case catalog.Float:
			if size == 4 {
				a.Floats = append(a.Floats, float64(math.Float32frombits(bo.Uint32(p))))
			} else {
				a.Floats = append(a.Floats, math.Float64frombits(bo.Uint64(p)))
			}
		}
	}
	return a, true
}

func unsigned(p []byte, bo binary.ByteOrder) uint64 {
	switch len(p) {
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(bo.Uint16(p))
	case 4:
		return uint64(bo.Uint32(p))
	}
	return bo.Uint64(p)
}

func signed(p []byte, bo binary.ByteOrder) int64 {
	switch len(p) {
	case 1:
		return int64(int8(p[0]))
	case 2:
		return int64(int16(bo.Uint16(p)))
	case 4:
		return int64(int32(bo.Uint32(p)))
	}
	return int64(bo.Uint64(p))
}
