package bp

// FFS (the Fast Flexible Serialization library inside ADIOS2) as BP5 uses it:
// format descriptions in mmd.0 and encoded records in md.0. Only decoding of
// what BP5 writes is implemented; nothing is converted in place, every
// pointer and length is checked against the bytes that exist.
//
// Format description ("server rep"), confirmed on the sets in
// ../shared/data/bp5 (ADIOS2 2.9.2 and 2.10 on x86-64, i386 and s390x):
//
//	top header (8)  u16 rep length BE | u8 byte order (0 LE, 1 BE) |
//	                u8 rep version (2) | u8 subformat count | u8 recursive |
//	                u16 high 16 bits of the rep length BE
//	subformat       (count+1 of them: the top struct first, then every nested
//	                struct it names, e.g. MetaArrayMM8, PrimAttr, StrAttr)
//	  rep version 1 and 2 (28-byte base):
//	   0 u16 subformat length BE  2 u8 rep version  3 u8 byte order
//	   4 u32 name offset  8 u32 field count  12 i32 record length
//	  16 u8 pointer size  17 u8 header size  18 u16 float format
//	  20 u16 opt-info offset  22 u8 column-major  23 u8 alignment
//	  24 u16 high bits of the length BE  26 u16 high bits of opt-info
//	  rep version 0 (20-byte base): 0 u16 length BE, 2 version, 3 order,
//	   4 pointer size, 5 header size, 6 u16 name, 8 u16 field count,
//	  10 u16 float format, 12 i32 record length, 16 u16 opt-info, 18, 19
//	  fields at `header size` from the subformat start (version 0 of the
//	  rep: right after the base), 16 bytes each:
//	   u32 name offset | u32 type offset | i32 size | i32 offset
//	   (version 0: u16 name, u16 type, i32, i32)
//	  then the NUL-terminated strings; every offset is from the subformat
//	  start and every multi-byte number except the marked BE lengths is in
//	  the subformat's byte order.
//
// What the real sets confirm or correct in ../shared/specs/adios2-bp5.md §4:
//   - §4.3 layout confirmed (top header: byte order at 2, rep version 2 at 3;
//     subformat: version at 2, byte order at 3); the subformat's byte order
//     governs every number in it except the BE lengths, and the field list
//     starts at its header-size byte (28);
//   - §4.1 the rep length can be shorter than the mmd.0 description record
//     (2508 of 2512 bytes: the record is padded); mmd.0's u64 lengths are in
//     the writer's byte order (big-endian on s390x);
//   - §4.3 a dynamic array field's size is its element size (8 for
//     "integer[Dims]"), not the size of the pointer that holds it;
//   - §4.4 confirmed: 24-byte header (12-byte ID, u64 length, pad), pointers
//     are offsets from the base struct, 0 = NULL; but pointers are the
//     writer's pointer size, 4 bytes on i386, not always 64 bits;
//   - §4.2 the ID is 12 bytes: u8 2, u8 0, u16 rep length (low bits), two u32
//     hashes; it is used only as an opaque key.
//
// Encoded record (one md.0 metadata or attribute block):
//
//	[format ID][u64 length of what follows the header, in the record's
//	byte order][pad to 8]  = 24 bytes with a 12-byte ID
//	[base struct: record length bytes, fields at their offsets][pad to 8]
//	[variable parts: arrays 8-byte aligned, strings unaligned]
//
// Pointer fields (dynamic arrays "T[Field]", strings, "*(...)") hold offsets
// from the start of the base struct (confirmed: the encoder subtracts the
// header size), 0 meaning NULL; they are pointer size bytes (4 for i386).
// A type "T[A][B]" with a field name among its dimensions is a pointer to
// prod(dims) elements; the control fields are in the same struct.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"relayout/catalog"
)

// ffsFormat is one decoded (sub)format.
type ffsFormat struct {
	name     string
	bo       binary.ByteOrder
	ptr      int // pointer size in bytes
	recLen   int
	colMajor bool
	fields   []ffsField
	byName   map[string]int
	variant  bool // holds pointers: records carry a length after the ID
	idLen    int  // format ID length (top format only)
	// bp5 caches the BP5 reading of the top format's fields (bp5.go).
	bp5 *bp5Layout
}

// ffsField is one field with its parsed type.
type ffsField struct {
	name, typ string
	size, off int
	base      string     // base type: "integer", "float", "string", a subformat name
	sub       *ffsFormat // base is a nested struct
	dims      []ffsDim   // array dimensions as written
	pointer   bool       // "*(...)": stored as a pointer
	dynamic   bool       // a dimension names a control field: stored as a pointer
}

type ffsDim struct {
	n   int // static size (ctl < 0)
	ctl int // index of the control field, -1 static
}

// cstr returns the NUL-terminated string at off in b.
func cstr(b []byte, off int) (string, bool) {
	if off < 0 || off >= len(b) {
		return "", false
	}
	n := bytes.IndexByte(b[off:], 0)
	if n < 0 {
		return "", false
	}
	return string(b[off : off+n]), true
}

// parseFFSRep parses a format description; base is its offset in mmd.0.
func parseFFSRep(rep []byte, base int) (*ffsFormat, error) {
	if len(rep) < 8 {
		return nil, catalog.Corrupt("bp5", "mmd.0", int64(base), "format description: %d bytes", len(rep))
	}
	version := rep[3]
	n := int(binary.BigEndian.Uint16(rep))
	if version > 0 {
		n |= int(binary.BigEndian.Uint16(rep[6:])) << 16
	}
	if version > 2 {
		return nil, fmt.Errorf("bp5: mmd.0: format description at offset %d: FFS rep version %d: %w", base, version, catalog.ErrUnsupported)
	}
	if n < 8 || n > len(rep) {
		return nil, catalog.Corrupt("bp5", "mmd.0", int64(base), "format description: rep length %d of %d bytes", n, len(rep))
	}
	rep = rep[:n]
	count := int(rep[4])
	subs := map[string]*ffsFormat{}
	var all []*ffsFormat
	pos := 8
	for i := 0; i <= count; i++ {
		if pos+4 > len(rep) {
			return nil, catalog.Corrupt("bp5", "mmd.0", int64(base+pos), "subformat: past the end of the description")
		}
		sl := int(binary.BigEndian.Uint16(rep[pos:]))
		if rep[pos+2] > 0 && pos+26 <= len(rep) {
			sl |= int(binary.BigEndian.Uint16(rep[pos+24:])) << 16
		}
		if sl < 20 || sl > len(rep)-pos {
			return nil, catalog.Corrupt("bp5", "mmd.0", int64(base+pos), "subformat: length %d, %d bytes left", sl, len(rep)-pos)
		}
		f, err := parseSubformat(rep[pos:pos+sl], base+pos)
		if err != nil {
			return nil, err
		}
		if _, dup := subs[f.name]; dup && i > 0 {
			return nil, catalog.Corrupt("bp5", "mmd.0", int64(base+pos), "subformat: struct %q described twice", f.name)
		}
		subs[f.name] = f
		all = append(all, f)
		pos += sl
	}
	// Resolve types now that every struct is known; nested structs first
	// (descriptions list them after their users, so repeat until stable).
	for _, f := range all {
		if err := f.resolve(subs, base); err != nil {
			return nil, err
		}
	}
	for changed := true; changed; {
		changed = false
		for _, f := range all {
			v := f.computeVariant()
			if v != f.variant {
				f.variant, changed = v, true
			}
		}
	}
	return all[0], nil
}

func parseSubformat(s []byte, base int) (*ffsFormat, error) {
	f := &ffsFormat{byName: map[string]int{}}
	version := s[2]
	switch s[3] {
	case 0:
		f.bo = binary.LittleEndian
	case 1:
		f.bo = binary.BigEndian
	default:
		return nil, catalog.Corrupt("bp5", "mmd.0", int64(base+3), "subformat: byte order %d", s[3])
	}
	var nameOff, nfields, fieldsAt, entry int
	if version == 0 {
		f.ptr, fieldsAt = int(s[4]), 20
		nameOff, nfields = int(f.bo.Uint16(s[6:])), int(f.bo.Uint16(s[8:]))
		f.recLen = int(int32(f.bo.Uint32(s[12:])))
		f.colMajor = s[18] != 0
		entry = 0
	} else {
		if len(s) < 28 {
			return nil, catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat: %d bytes, want at least 28", len(s))
		}
		nameOff, nfields = int(f.bo.Uint32(s[4:])), int(f.bo.Uint32(s[8:]))
		f.recLen = int(int32(f.bo.Uint32(s[12:])))
		f.ptr, fieldsAt = int(s[16]), int(s[17])
		f.colMajor = s[22] != 0
		entry = 1
	}
	if version > 0 && fieldsAt < 28 {
		return nil, catalog.Corrupt("bp5", "mmd.0", int64(base+17), "subformat: header size %d", fieldsAt)
	}
	if f.ptr != 4 && f.ptr != 8 {
		return nil, catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat: pointer size %d", f.ptr)
	}
	if f.recLen < 0 || f.recLen > 1<<24 {
		return nil, catalog.Corrupt("bp5", "mmd.0", int64(base+12), "subformat: record length %d", f.recLen)
	}
	if nfields < 0 || nfields > (len(s)-fieldsAt)/16 {
		return nil, catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat: %d fields in %d bytes", nfields, len(s))
	}
	var ok bool
	if f.name, ok = cstr(s, nameOff); !ok {
		return nil, catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat: name offset %d", nameOff)
	}
	f.fields = make([]ffsField, nfields)
	for i := range f.fields {
		e := s[fieldsAt+16*i:]
		var no, to int
		if entry == 0 {
			no, to = int(f.bo.Uint16(e)), int(f.bo.Uint16(e[2:]))
		} else {
			no, to = int(f.bo.Uint32(e)), int(f.bo.Uint32(e[4:]))
		}
		fd := &f.fields[i]
		fd.size, fd.off = int(int32(f.bo.Uint32(e[8:]))), int(int32(f.bo.Uint32(e[12:])))
		name, ok1 := cstr(s, no)
		typ, ok2 := cstr(s, to)
		if !ok1 || !ok2 {
			return nil, catalog.Corrupt("bp5", "mmd.0", int64(base+fieldsAt+16*i), "subformat %s: field name/type offsets %d/%d", f.name, no, to)
		}
		fd.name, fd.typ = name, typ
		if fd.size < 0 || fd.off < 0 || fd.off > f.recLen {
			return nil, catalog.Corrupt("bp5", "mmd.0", int64(base+fieldsAt+16*i), "subformat %s: field %q size %d offset %d in a %d-byte record", f.name, name, fd.size, fd.off, f.recLen)
		}
		if _, dup := f.byName[name]; !dup {
			f.byName[name] = i
		}
	}
	return f, nil
}

// primitive FFS base types.
func ffsPrimitive(t string) bool {
	switch t {
	case "integer", "unsigned integer", "float", "double", "char", "string", "boolean", "enumeration", "unsigned char":
		return true
	}
	return false
}

// resolve parses every field's type string against the known structs.
func (f *ffsFormat) resolve(subs map[string]*ffsFormat, base int) error {
	for i := range f.fields {
		fd := &f.fields[i]
		t := strings.TrimSpace(fd.typ)
		if strings.HasPrefix(t, "*(") && strings.HasSuffix(t, ")") {
			fd.pointer = true
			t = strings.TrimSpace(t[2 : len(t)-1])
		} else if strings.HasPrefix(t, "*") {
			fd.pointer = true
			t = strings.TrimSpace(t[1:])
		}
		b, rest, _ := strings.Cut(t, "[")
		fd.base = strings.TrimSpace(b)
		if rest != "" {
			rest = "[" + rest
		}
		for rest != "" {
			if rest[0] != '[' {
				return catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat %s: field %q type %q: text after the dimensions", f.name, fd.name, fd.typ)
			}
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat %s: field %q type %q: unclosed dimension", f.name, fd.name, fd.typ)
			}
			d := strings.TrimSpace(rest[1:end])
			rest = rest[end+1:]
			if n, err := strconv.Atoi(d); err == nil {
				if n < 0 || n > 1<<20 {
					return catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat %s: field %q type %q: dimension %d", f.name, fd.name, fd.typ, n)
				}
				fd.dims = append(fd.dims, ffsDim{n: n, ctl: -1})
				continue
			}
			ci, ok := f.byName[d]
			if !ok {
				return catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat %s: field %q type %q: dimension field %q does not exist", f.name, fd.name, fd.typ, d)
			}
			fd.dims = append(fd.dims, ffsDim{ctl: ci})
			fd.dynamic = true
		}
		if len(fd.dims) > 8 {
			return catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat %s: field %q type %q: %d dimensions", f.name, fd.name, fd.typ, len(fd.dims))
		}
		if !ffsPrimitive(fd.base) {
			s, ok := subs[fd.base]
			if !ok {
				return catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat %s: field %q type %q: unknown type %q", f.name, fd.name, fd.typ, fd.base)
			}
			fd.sub = s
		}
		// Inline parts must fit the record.
		if w := fd.inlineSize(f.ptr); w < 0 || fd.off+w > f.recLen {
			return catalog.Corrupt("bp5", "mmd.0", int64(base), "subformat %s: field %q type %q: %d bytes at offset %d outside the %d-byte record", f.name, fd.name, fd.typ, w, fd.off, f.recLen)
		}
	}
	return nil
}

// elemSize is the size of one element of the field's base type.
func (fd *ffsField) elemSize(ptr int) int {
	switch {
	case fd.base == "string":
		return ptr
	case fd.sub != nil:
		return fd.sub.recLen
	}
	return fd.size
}

// inlineSize is the bytes the field takes in its struct (-1 if too large).
func (fd *ffsField) inlineSize(ptr int) int {
	if fd.pointer || fd.dynamic {
		return ptr
	}
	n := fd.elemSize(ptr)
	for _, d := range fd.dims {
		if d.n > 0 && n > math.MaxInt32/d.n {
			return -1
		}
		n *= d.n
	}
	return n
}

func (f *ffsFormat) computeVariant() bool {
	for i := range f.fields {
		fd := &f.fields[i]
		if fd.pointer || fd.dynamic || fd.base == "string" || (fd.sub != nil && fd.sub.variant) {
			return true
		}
	}
	return false
}

// ffsBuf is a decoded record's body: the base struct at data[0], pointers
// relative to it. base is the file offset of data[0] for messages.
type ffsBuf struct {
	data []byte
	base int64
	file string
	err  error
}

func (b *ffsBuf) fail(off int, format string, args ...any) {
	if b.err == nil {
		b.err = catalog.Corrupt("bp5", b.file, b.base+int64(off), "metadata record: %s", fmt.Sprintf(format, args...))
	}
}

// ffsView is one struct instance inside a record.
type ffsView struct {
	b   *ffsBuf
	f   *ffsFormat
	off int
}

// uint reads an integer of n bytes at off.
func (b *ffsBuf) uint(bo binary.ByteOrder, off, n int) uint64 {
	if b.err != nil {
		return 0
	}
	if off < 0 || n < 0 || off > len(b.data)-n {
		b.fail(off, "%d-byte value outside the %d-byte record", n, len(b.data))
		return 0
	}
	p := b.data[off : off+n]
	switch n {
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(bo.Uint16(p))
	case 4:
		return uint64(bo.Uint32(p))
	case 8:
		return bo.Uint64(p)
	}
	b.fail(off, "%d-byte integer", n)
	return 0
}

// bytesAt returns n bytes at off (nil after a failure).
func (b *ffsBuf) bytesAt(off int, n uint64) []byte {
	if b.err != nil {
		return nil
	}
	if off < 0 || n > uint64(len(b.data)) || off > len(b.data)-int(n) {
		b.fail(off, "%d bytes outside the %d-byte record", n, len(b.data))
		return nil
	}
	return b.data[off : off+int(n)]
}

// field returns the index of a field, -1 if absent.
func (v ffsView) field(name string) int {
	if i, ok := v.f.byName[name]; ok {
		return i
	}
	return -1
}

// int reads an integer field (any of 1, 2, 4, 8 bytes).
func (v ffsView) int(i int) uint64 {
	fd := &v.f.fields[i]
	return v.b.uint(v.f.bo, v.off+fd.off, fd.size)
}

// ptr reads a pointer field: an offset in the record, 0 = NULL.
func (v ffsView) ptr(i int) (int, bool) {
	p := v.b.uint(v.f.bo, v.off+v.f.fields[i].off, v.f.ptr)
	if p == 0 || v.b.err != nil {
		return 0, false
	}
	if p >= uint64(len(v.b.data)) {
		v.b.fail(v.off+v.f.fields[i].off, "pointer %d outside the %d-byte record", p, len(v.b.data))
		return 0, false
	}
	return int(p), true
}

// array locates an array field: where its elements start, how many there
// are and their size. Dynamic arrays follow their pointer (NULL: 0
// elements); static ones are inline.
func (v ffsView) array(i int) (start int, n uint64, size int) {
	fd := &v.f.fields[i]
	size = fd.elemSize(v.f.ptr)
	n = 1
	for _, d := range fd.dims {
		c := uint64(d.n)
		if d.ctl >= 0 {
			c = v.int(d.ctl)
		}
		if c != 0 && n > uint64(len(v.b.data))/c {
			v.b.fail(v.off+fd.off, "field %q: %d elements in a %d-byte record", fd.name, c, len(v.b.data))
			return 0, 0, size
		}
		n *= c
	}
	if !fd.dynamic && !fd.pointer {
		start = v.off + fd.off
	} else {
		p, ok := v.ptr(i)
		if !ok {
			return 0, 0, size
		}
		start = p
	}
	if size > 0 && n > uint64(len(v.b.data))/uint64(size) {
		v.b.fail(start, "field %q: %d elements of %d bytes in a %d-byte record", fd.name, n, size, len(v.b.data))
		return 0, 0, size
	}
	if v.b.bytesAt(start, n*uint64(size)) == nil {
		return 0, 0, size
	}
	return start, n, size
}

// uints reads an integer array field (NULL: nil).
func (v ffsView) uints(i int) []uint64 { return v.appendUints(nil, i) }

// appendUints appends the elements of integer array field i to dst (NULL:
// none) and returns the extended slice.
func (v ffsView) appendUints(dst []uint64, i int) []uint64 {
	start, n, size := v.array(i)
	if v.b.err != nil || n == 0 {
		return dst
	}
	k0 := len(dst)
	dst = slices.Grow(dst, int(n))[:k0+int(n)]
	out := dst[k0:]
	if size == 8 && start >= 0 && start <= len(v.b.data) && uint64(len(v.b.data)-start)/8 >= n {
		// The common case (BP5 counts, offsets, locations): in bounds as a
		// whole, decoded without a check and an interface call per value.
		p := v.b.data[start : start+8*int(n)]
		switch v.f.bo {
		case binary.ByteOrder(binary.LittleEndian):
			for k := range out {
				out[k] = binary.LittleEndian.Uint64(p[8*k:])
			}
			return dst
		case binary.ByteOrder(binary.BigEndian):
			for k := range out {
				out[k] = binary.BigEndian.Uint64(p[8*k:])
			}
			return dst
		}
	}
	for k := range out {
		out[k] = v.b.uint(v.f.bo, start+k*size, size)
	}
	return dst
}

// str reads a string field (NULL: "", false).
func (v ffsView) str(i int) (string, bool) {
	p, ok := v.ptr(i)
	if !ok {
		return "", false
	}
	s, ok := cstr(v.b.data, p)
	if !ok {
		v.b.fail(p, "string not terminated")
	}
	return s, ok
}

// strs reads a "string[N]" field.
func (v ffsView) strs(i int) []string {
	start, n, size := v.array(i)
	if v.b.err != nil {
		return nil
	}
	out := make([]string, 0, n)
	for k := 0; k < int(n); k++ {
		p := v.b.uint(v.f.bo, start+k*size, size)
		if p == 0 {
			out = append(out, "")
			continue
		}
		s, ok := cstr(v.b.data, int(min(p, uint64(len(v.b.data)))))
		if !ok {
			v.b.fail(start+k*size, "string %d not terminated", k)
			return nil
		}
		out = append(out, s)
	}
	return out
}

// elems returns the views of a struct-array field's elements.
func (v ffsView) elems(i int) []ffsView {
	fd := &v.f.fields[i]
	if fd.sub == nil {
		v.b.fail(v.off+fd.off, "field %q is not a struct", fd.name)
		return nil
	}
	start, n, size := v.array(i)
	if v.b.err != nil {
		return nil
	}
	out := make([]ffsView, n)
	for k := range out {
		out[k] = ffsView{b: v.b, f: fd.sub, off: start + k*size}
	}
	return out
}

// inner returns the view of an inline struct field.
func (v ffsView) inner(i int) (ffsView, bool) {
	fd := &v.f.fields[i]
	if fd.sub == nil || fd.dynamic || fd.pointer || len(fd.dims) > 0 {
		v.b.fail(v.off+fd.off, "field %q is not an inline struct", fd.name)
		return ffsView{}, false
	}
	return ffsView{b: v.b, f: fd.sub, off: v.off + fd.off}, true
}

// ffsFormats maps format IDs to parsed formats (the whole mmd.0).
type ffsFormats struct {
	byID  map[string]*ffsFormat
	idLen []int // distinct ID lengths, for matching record headers
}

// parseMMD splits mmd.0 into its records (u64 ID length, u64 description
// length, ID, description; numbers in the writer's byte order) and parses
// every description.
func parseMMD(b []byte, bo binary.ByteOrder) (*ffsFormats, error) {
	fs := &ffsFormats{byID: map[string]*ffsFormat{}}
	for pos := 0; pos < len(b); {
		if len(b)-pos < 16 {
			return nil, catalog.Corrupt("bp5", "mmd.0", int64(pos), "record: %d trailing bytes", len(b)-pos)
		}
		il, fl := bo.Uint64(b[pos:]), bo.Uint64(b[pos+8:])
		if il == 0 || il > 64 || fl > uint64(len(b)-pos-16) || il > uint64(len(b)-pos-16)-fl {
			return nil, catalog.Corrupt("bp5", "mmd.0", int64(pos), "record: ID length %d, description length %d, %d bytes left", il, fl, len(b)-pos-16)
		}
		id := string(b[pos+16 : pos+16+int(il)])
		at := pos + 16 + int(il)
		f, err := parseFFSRep(b[at:at+int(fl)], at)
		if err != nil {
			return nil, err
		}
		f.idLen = int(il)
		fs.byID[id] = f
		found := false
		for _, n := range fs.idLen {
			found = found || n == int(il)
		}
		if !found {
			fs.idLen = append(fs.idLen, int(il))
		}
		pos = at + int(fl)
	}
	return fs, nil
}

// decodeRecord finds the format of an encoded block and returns the view of
// its base struct. base is the block's file offset, for messages.
func (fs *ffsFormats) decodeRecord(block []byte, file string, base int64) (ffsView, error) {
	var f *ffsFormat
	for _, n := range fs.idLen {
		if len(block) >= n {
			if g, ok := fs.byID[string(block[:n])]; ok {
				f = g
				break
			}
		}
	}
	if f == nil {
		return ffsView{}, catalog.Corrupt("bp5", file, base, "metadata record: format ID % x not described in mmd.0", block[:min(len(block), 12)])
	}
	hdr := f.idLen
	body := uint64(len(block))
	if f.variant {
		hdr += 8
		if len(block) < hdr {
			return ffsView{}, catalog.Corrupt("bp5", file, base, "metadata record: %d bytes, header needs %d", len(block), hdr)
		}
		body = f.bo.Uint64(block[f.idLen:])
	}
	hdr = (hdr + 7) &^ 7
	if hdr > len(block) {
		return ffsView{}, catalog.Corrupt("bp5", file, base, "metadata record: %d bytes, header needs %d", len(block), hdr)
	}
	if !f.variant {
		body = uint64(len(block) - hdr)
	}
	if body > uint64(len(block)-hdr) || body < uint64(f.recLen) {
		return ffsView{}, catalog.Corrupt("bp5", file, base, "metadata record: record length %d with %d bytes after the header (struct %q needs %d)", body, len(block)-hdr, f.name, f.recLen)
	}
	b := &ffsBuf{data: block[hdr : hdr+int(body)], base: base + int64(hdr), file: file}
	return ffsView{b: b, f: f}, nil
}
