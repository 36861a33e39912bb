package catalog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Sentinel errors, wrapped with context by every package and tested with errors.Is.
var (
	ErrCorrupt     = errors.New("corrupt input")
	ErrUnsupported = errors.New("unsupported")
	ErrNotFound    = errors.New("not found")
)

// Kind is the class of an element type.
type Kind uint8

const (
	Int Kind = iota + 1
	Uint
	Float
	// Char is text, one character a byte (netCDF's NC_CHAR, HDF5's
	// fixed-length string of one byte): moved as bytes, compared bit for
	// bit like the numeric kinds, but no number.
	Char
)

// DType is an element type as stored: class, size in bytes and byte order.
type DType struct {
	Kind      Kind
	Size      int
	BigEndian bool
}

// Name is the NumPy-like name without byte order: "float64", "int8", "uint16".
func (d DType) Name() string {
	switch d.Kind {
	case Int:
		return fmt.Sprintf("int%d", 8*d.Size)
	case Uint:
		return fmt.Sprintf("uint%d", 8*d.Size)
	case Float:
		return fmt.Sprintf("float%d", 8*d.Size)
	case Char:
		return "char"
	}
	return "invalid"
}

// NumPy is the NumPy type string with byte order, e.g. "<f8", ">i4", "|u1".
func (d DType) NumPy() string {
	order := "<"
	if d.Size == 1 {
		order = "|"
	} else if d.BigEndian {
		order = ">"
	}
	c := map[Kind]string{Int: "i", Uint: "u", Float: "f", Char: "S"}[d.Kind]
	return fmt.Sprintf("%s%s%d", order, c, d.Size)
}

func (d DType) String() string { return d.NumPy() }

// Valid reports whether d is a type relayout can move: integers of 1, 2, 4, 8
// bytes, IEEE floats of 4 or 8 bytes and characters of 1 byte.
func (d DType) Valid() bool {
	switch d.Kind {
	case Int, Uint:
		return d.Size == 1 || d.Size == 2 || d.Size == 4 || d.Size == 8
	case Float:
		return d.Size == 4 || d.Size == 8
	case Char:
		return d.Size == 1
	}
	return false
}

// LittleEndian returns d with little-endian byte order (the order of output files).
func (d DType) LittleEndian() DType { d.BigEndian = false; return d }

// ParseDType parses the NumPy form written by NumPy().
func ParseDType(s string) (DType, error) {
	var d DType
	if len(s) < 3 {
		return d, Corrupt("relayout", "", -1, "catalog value: dtype %q", s)
	}
	d.BigEndian = s[0] == '>'
	switch s[1] {
	case 'i':
		d.Kind = Int
	case 'u':
		d.Kind = Uint
	case 'f':
		d.Kind = Float
	case 'S':
		d.Kind = Char
	}
	if _, err := fmt.Sscanf(s[2:], "%d", &d.Size); err != nil || !d.Valid() {
		return DType{}, Corrupt("relayout", "", -1, "catalog value: dtype %q", s)
	}
	return d, nil
}

// Order is the storage order of a block's elements.
type Order uint8

const (
	RowMajor Order = iota // C order: last index varies fastest
	ColMajor              // Fortran order: first index varies fastest
)

func (o Order) String() string {
	if o == ColMajor {
		return "col"
	}
	return "row"
}

// Codec is one stage of a block's encoding pipeline, e.g. {"deflate", [6]},
// {"shuffle", [8]}, {"fletcher32", nil}. Params are the writer's parameters.
//
// One codec is not a stage but a way of fetching: HDF5LibraryCodec, the only
// codec of its block, marks an HDF5 chunk whose filter pipeline has a filter
// relayout does not decode natively (an HDF5 plugin filter). Its bytes are not
// pread and decoded: the HDF5 reader reads the block's Box of the dataset
// named by Dataset (an absolute path in the block's File) through the HDF5
// library (H5Dread, which applies the filters; a slow path serialized by the
// library's lock) into an array of the stored shape, Box at its origin.
// File, Offset and Length still name the stored chunk (for messages, the
// cost model and read-ahead).
type Codec struct {
	Name   string   `json:"name"`
	Params []uint32 `json:"params,omitempty"`
	// Dataset is the HDF5 dataset of an HDF5LibraryCodec block; empty for
	// every other codec.
	Dataset string `json:"dataset,omitempty"`
}

// HDF5LibraryCodec is the Codec name of blocks read through the HDF5 library
// (see Codec).
const HDF5LibraryCodec = "hdf5-library"

// Box is a region of an N-dimensional index space: Lower corner and Count
// (extent) per dimension. A zero-dimensional Box holds one element.
type Box struct {
	Lower []int64 `json:"lower"`
	Count []int64 `json:"count"`
}

// Elements is the number of elements in b (1 for zero dimensions).
func (b Box) Elements() int64 {
	n := int64(1)
	for _, c := range b.Count {
		n *= c
	}
	return n
}

// Intersect returns the common region of a and b and whether it is non-empty.
func (b Box) Intersect(o Box) (Box, bool) {
	r := Box{Lower: make([]int64, len(b.Lower)), Count: make([]int64, len(b.Lower))}
	if !b.IntersectInto(o, r) {
		return Box{}, false
	}
	return r, true
}

// IntersectInto is Intersect into r, whose slices the caller provides (of
// b's rank): no allocation. r's contents are undefined when it reports false.
func (b Box) IntersectInto(o, r Box) bool {
	for i := range b.Lower {
		lo := max(b.Lower[i], o.Lower[i])
		hi := min(b.Lower[i]+b.Count[i], o.Lower[i]+o.Count[i])
		if hi <= lo {
			return false
		}
		r.Lower[i], r.Count[i] = lo, hi-lo
	}
	return true
}

func (b Box) String() string {
	parts := make([]string, len(b.Lower))
	for i := range b.Lower {
		parts[i] = fmt.Sprintf("%d:%d", b.Lower[i], b.Lower[i]+b.Count[i])
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Block is one stored piece of an array.
//
// The bytes at File[Offset:Offset+Length], decoded through Codecs (applied in
// reverse order), hold an array of shape Stored() (nil means Box.Count) in Order
// and in the array's DType. Box is the valid region in the array's index space
// (relative to the array, i.e. Box.Lower is 0-based within Array.Shape); it sits
// at the origin of the stored array, or at StoredLower(). The stored shape is
// larger than Box.Count for partial HDF5 edge chunks, which are always stored
// whole, and for AMR boxes stored with ghost cells. Inline() bytes are held in
// metadata (HDF5 compact storage, BP values); File is then empty.
//
// A run holds every block of the arrays it rewrites together (a million for a
// small-block dataset), so a Block is kept small: what few blocks have (a stored
// shape of their own, ghost cells, inline bytes) sits behind one pointer, set
// through WithStored and WithInline and shared, never modified, by copies.
type Block struct {
	Box    Box
	File   string // relative to the dataset root
	Offset int64
	Length int64
	Codecs []Codec
	Rank   int32 // writer rank, -1 when unknown
	Order  Order
	extra  *blockExtra
}

// blockExtra is the part of a Block that few blocks have; see Block.
type blockExtra struct {
	stored, storedLower []int64
	inline              []byte
}

// Stored is the shape of the decoded stored array when it is not Box.Count;
// nil otherwise.
func (b *Block) Stored() []int64 {
	if b.extra == nil {
		return nil
	}
	return b.extra.stored
}

// StoredLower is where Box starts inside the stored array (ghost cells stored
// before the valid region); nil means the origin.
func (b *Block) StoredLower() []int64 {
	if b.extra == nil {
		return nil
	}
	return b.extra.storedLower
}

// Inline is the block's bytes when metadata holds them (File is then empty);
// nil when they are in File.
func (b *Block) Inline() []byte {
	if b.extra == nil {
		return nil
	}
	return b.extra.inline
}

// WithStored is b with the stored shape (nil: Box.Count) and where Box starts
// in it (nil: the origin) set. The slices are kept, not copied.
func (b Block) WithStored(shape, lower []int64) Block {
	var inline []byte
	if b.extra != nil {
		inline = b.extra.inline
	}
	b.setExtra(blockExtra{stored: shape, storedLower: lower, inline: inline})
	return b
}

// WithInline is b with its bytes held in metadata (nil: none, the bytes are in
// File). The slice is kept, not copied.
func (b Block) WithInline(data []byte) Block {
	e := blockExtra{inline: data}
	if b.extra != nil {
		e.stored, e.storedLower = b.extra.stored, b.extra.storedLower
	}
	b.setExtra(e)
	return b
}

// setExtra replaces (never modifies: copies of b may share it) b's extra part.
func (b *Block) setExtra(e blockExtra) {
	if e.stored == nil && e.storedLower == nil && e.inline == nil {
		b.extra = nil
		return
	}
	b.extra = &e
}

// StoredShape is the shape of the decoded stored array.
func (b *Block) StoredShape() []int64 {
	if s := b.Stored(); s != nil {
		return s
	}
	return b.Box.Count
}

// Attr is an attribute with a typed value. Exactly one of the value slices is set
// (Strings for Type "string", Floats for "float64", Ints for "int64", Uints for
// "uint64"). Scalar distinguishes a scalar from a one-element array.
type Attr struct {
	Name    string    `json:"name"`
	Type    string    `json:"type"`
	Scalar  bool      `json:"scalar,omitempty"`
	Strings []string  `json:"strings,omitempty"`
	Floats  []float64 `json:"floats,omitempty"`
	Ints    []int64   `json:"ints,omitempty"`
	Uints   []uint64  `json:"uints,omitempty"`
	// Record marks an attribute of an openPMD record group that a reader
	// merged into a component's Attrs: the writer puts it back on the
	// record group (custom record attributes included).
	Record bool `json:"record,omitempty"`
	// Species marks an attribute of an openPMD particle species group
	// merged into a particle record component's Attrs: the writer puts it
	// back on the species group.
	Species bool `json:"species,omitempty"`
}

// Array is one variable at one step and level: the unit a reader emits and the
// rewriter writes as one output dataset.
type Array struct {
	Var    string  `json:"var"`
	Step   int64   `json:"step"`
	Level  int     `json:"level"`
	DType  DType   `json:"dtype"`
	Shape  []int64 `json:"shape"`  // empty for a scalar
	Offset []int64 `json:"offset"` // global index of element 0 (zeros for level-0 arrays)
	// Fill is one element in DType's byte order, used where no block covers the
	// array (an HDF5 fill value, zeros for HDF5's default; NaN for AMReX and
	// Chombo). nil: the format declares none, and holes get NaN in floating-point
	// arrays and zero in integer ones.
	Fill      []byte `json:"fill,omitempty"`
	Attrs     []Attr `json:"attrs,omitempty"`      // on the output dataset
	StepAttrs []Attr `json:"step_attrs,omitempty"` // on the step's group (openPMD iteration attributes)
	Source    string `json:"source,omitempty"`     // where it came from, for messages: "file.h5:/data/1/meshes/B/x"
	// Boxes is the AMR level's box list (relative to the array, like block
	// boxes), written beside the level's dataset; nil for non-AMR arrays.
	Boxes []Box `json:"boxes,omitempty"`
	// Constant: every element is Fill and there are no blocks (an openPMD
	// constant record component: attributes "value" and "shape", no data).
	// Written as a constant record again, not as data.
	Constant bool `json:"constant,omitempty"`
	// Species is the openPMD particle species of a particle record
	// component ("" for meshes and everything else); see ParticleVar for
	// its variable name.
	Species string `json:"species,omitempty"`
	// Grain is the step of the block grid along each dimension
	// (BlockGrain) as the store recorded it, so that an array read back
	// without its blocks (a header) has it; nil when unknown (an array
	// from a reader, or a catalog of an earlier version).
	Grain []int64 `json:"grain,omitempty"`
	// Dims names each dimension (netCDF: the dimensions of the variable,
	// the record dimension first; netCDF-4: its dimension scales; "" for a
	// dimension without a name); nil when the format names none.
	Dims   []string `json:"dims,omitempty"`
	Blocks []Block  `json:"-"`
}

// BlockGrain is, per dimension, the largest g such that every block's
// lower bound, and its upper bound unless that is the array's edge, is a
// multiple of g: the step of the block grid (32 for 448^3 written in 32^3
// blocks; 1 where the blocks share no step; 0 where no block edge cuts
// the axis). A chunk whose edges are multiples of it is assembled from
// whole blocks, and its rows end where the blocks' do (planner's auto
// layout aligns its chunks so). From the blocks when a has them, else
// a.Grain; nil for a scalar, or blocks of another rank than the array.
func (a *Array) BlockGrain() []int64 {
	if a.Blocks == nil {
		return a.Grain
	}
	rank := len(a.Shape)
	if rank == 0 {
		return nil
	}
	g := make([]int64, rank)
	for i := range a.Blocks {
		b := &a.Blocks[i].Box
		if len(b.Lower) != rank || len(b.Count) != rank {
			return nil
		}
		if b.Elements() == 0 {
			continue
		}
		for d := range rank {
			g[d] = gcd(g[d], b.Lower[d])
			if up := b.Lower[d] + b.Count[d]; up != a.Shape[d] {
				g[d] = gcd(g[d], up)
			}
		}
	}
	return g
}

// gcd is the greatest common divisor of |x| and |y| (gcd(0, y) = |y|).
func gcd(x, y int64) int64 {
	x, y = max(x, -x), max(y, -y)
	for y != 0 {
		x, y = y, x%y
	}
	return x
}

// Elements is the number of elements in the array.
func (a *Array) Elements() int64 { return Box{Count: a.Shape}.Elements() }

// Bytes is the logical size of the array.
func (a *Array) Bytes() int64 { return a.Elements() * int64(a.DType.Size) }

// Key identifies an array within a dataset.
type Key struct {
	Var   string
	Step  int64
	Level int
}

func (a *Array) Key() Key { return Key{a.Var, a.Step, a.Level} }

// IncompletePrefix starts the Skipped entries that say the input itself is
// incomplete (steps written but not indexed, e.g. by a writer that died):
// relayout warns about them on stderr and --strict refuses the input.
const IncompletePrefix = "incomplete input: "

// Incomplete marks msg as a Skipped entry about an incomplete input.
func Incomplete(msg string) string { return IncompletePrefix + msg }

// IncompleteEntries returns the entries of skipped that Incomplete made.
func IncompleteEntries(skipped []string) []string {
	var out []string
	for _, s := range skipped {
		if strings.HasPrefix(s, IncompletePrefix) {
			out = append(out, s)
		}
	}
	return out
}

// DatasetInfo describes an opened input.
type DatasetInfo struct {
	Path    string   `json:"path"`   // as given by the user
	Root    string   `json:"root"`   // directory that block File names are relative to
	Format  string   `json:"format"` // "hdf5", "openpmd-hdf5", "relayout", ...
	Attrs   []Attr   `json:"attrs,omitempty"`
	Skipped []string `json:"skipped,omitempty"` // objects seen but not catalogued, with the reason
	// Span is a stream of history files' first and last dates as their
	// names give them, year and month ("000101", "000112"), that output
	// file names carry as ncclimo's do (VAR_000101_000112.nc); nil when
	// the names give none.
	Span []string `json:"span,omitempty"`
	// Unlimited names the input's unlimited dimensions (netCDF: the
	// record dimension of classic files, those a netCDF-4 file's
	// dimension scales make unlimited), which a netCDF output keeps
	// unlimited; nil when the format has none.
	Unlimited []string `json:"unlimited,omitempty"`
}

// AttrDType is the element type an attribute's Type names: "float32",
// "float64", "int8" ... "int64", "uint8" ... "uint64". Readers keep the
// width the input stored (values are held widened in Floats, Ints or
// Uints) so that writers store the same type; ok is false for "string"
// and unknown names.
func AttrDType(typ string) (dt DType, ok bool) {
	var bits int
	switch {
	case strings.HasPrefix(typ, "float"):
		dt.Kind, bits = Float, atoiOr(typ[5:])
	case strings.HasPrefix(typ, "uint"):
		dt.Kind, bits = Uint, atoiOr(typ[4:])
	case strings.HasPrefix(typ, "int"):
		dt.Kind, bits = Int, atoiOr(typ[3:])
	default:
		return dt, false
	}
	dt.Size = bits / 8
	return dt, bits%8 == 0 && dt.Valid()
}

// AttrType is the attribute Type name of dt ("float32", "uint16", ...).
func (d DType) AttrType() string {
	return map[Kind]string{Int: "int", Uint: "uint", Float: "float"}[d.Kind] + strconv.Itoa(8*d.Size)
}

func atoiOr(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// AttrBytes encodes a numeric attribute's values as elements of dt
// (little-endian unless dt.BigEndian); ok is false when a value does not
// fit dt exactly (an integer out of range, a float64 that is not a float32)
// or the attribute holds other kinds of values.
func AttrBytes(a Attr, dt DType) (b []byte, ok bool) {
	var bo binary.AppendByteOrder = binary.LittleEndian
	if dt.BigEndian {
		bo = binary.BigEndian
	}
	put := func(u uint64) {
		switch dt.Size {
		case 1:
			b = append(b, byte(u))
		case 2:
			b = bo.AppendUint16(b, uint16(u))
		case 4:
			b = bo.AppendUint32(b, uint32(u))
		case 8:
			b = bo.AppendUint64(b, u)
		}
	}
	bits := uint(8 * dt.Size)
	switch dt.Kind {
	case Float:
		if a.Ints != nil || a.Uints != nil {
			return nil, false
		}
		for _, f := range a.Floats {
			if dt.Size == 4 {
				f32 := float32(f)
				if float64(f32) != f && f == f {
					return nil, false
				}
				put(uint64(math.Float32bits(f32)))
			} else {
				put(math.Float64bits(f))
			}
		}
	case Int:
		if a.Floats != nil || a.Uints != nil {
			return nil, false
		}
		for _, v := range a.Ints {
			if bits < 64 && (v < -1<<(bits-1) || v >= 1<<(bits-1)) {
				return nil, false
			}
			put(uint64(v))
		}
	case Uint:
		if a.Floats != nil || a.Ints != nil {
			return nil, false
		}
		for _, v := range a.Uints {
			if bits < 64 && v >= 1<<bits {
				return nil, false
			}
			put(v)
		}
	default:
		return nil, false
	}
	return b, true
}

// ConstantArray makes the array of an openPMD constant record component
// from its attributes: "value", one element whose type is the record's
// (an attribute Type with its stored width), and "shape", the extent (one
// non-negative integer per dimension). The value is kept little-endian in
// Fill; the other attributes are the caller's. A damaged pair is a
// CorruptError without a file: the caller names it (CorruptIn).
func ConstantArray(attrs []Attr) (*Array, error) {
	var value, shape *Attr
	for i := range attrs {
		switch attrs[i].Name {
		case "value":
			value = &attrs[i]
		case "shape":
			shape = &attrs[i]
		}
	}
	if value == nil || shape == nil {
		return nil, Corrupt("", "", -1, "constant record without value and shape attributes")
	}
	dt, ok := AttrDType(value.Type)
	if !ok {
		return nil, fmt.Errorf("constant record value of type %q: %w", value.Type, ErrUnsupported)
	}
	fill, ok := AttrBytes(*value, dt)
	if !ok || len(fill) != dt.Size {
		return nil, Corrupt("", "", -1, "constant record value %+v is not one %s", *value, dt)
	}
	a := &Array{DType: dt, Fill: fill, Constant: true}
	switch {
	case shape.Uints != nil:
		for _, n := range shape.Uints {
			if n > 1<<62 {
				return nil, Corrupt("", "", -1, "constant record shape %v", shape.Uints)
			}
			a.Shape = append(a.Shape, int64(n))
		}
	case shape.Ints != nil:
		for _, n := range shape.Ints {
			if n < 0 || n > 1<<62 {
				return nil, Corrupt("", "", -1, "constant record shape %v", shape.Ints)
			}
			a.Shape = append(a.Shape, n)
		}
	default:
		return nil, Corrupt("", "", -1, "constant record shape %+v is not a list of integers", *shape)
	}
	if len(a.Shape) > 32 {
		return nil, Corrupt("", "", -1, "constant record of %d dimensions", len(a.Shape))
	}
	elems := int64(1)
	for _, n := range a.Shape {
		if n > 0 && elems > (1<<62)/n {
			return nil, Corrupt("", "", -1, "constant record shape %v: more than 2^62 elements", a.Shape)
		}
		elems *= n
	}
	a.Offset = make([]int64, len(a.Shape))
	return a, nil
}

// Particle record components (openPMD particle species) are variables of
// their own, named apart from meshes (whose names have at most two parts,
// "<record>/<component>"):
//
//	/data/<it>/<particlesPath>/<species>/<record>/<component>
//	    -> Var "particles/<species>/<record>/<component>", Species "<species>"
//	/data/<it>/<particlesPath>/<species>/<record>        (scalar record: weighting, id)
//	    -> Var "particles/<species>/<record>"
//	/data/<it>/<particlesPath>/<species>/particlePatches/<record>[/<component>]
//	    -> Var "particles/<species>/particlePatches/<record>[/<component>]"
//
// whatever the input's particlesPath (the writer writes the input's, else
// "particles/"). Each is a global 1-D array whose blocks carry their
// offsets, in the input's index order (numParticlesOffset points into it).

// ParticlesPrefix starts every particle variable's name.
const ParticlesPrefix = "particles/"

// ParticleVar is the variable of the component at rel ("position/x",
// "weighting", "particlePatches/offset/x") of species.
func ParticleVar(species, rel string) string { return ParticlesPrefix + species + "/" + rel }

// ParticleRecord splits a species-relative component path rel into its
// record ("position", "particlePatches/offset") and whether the record is
// a scalar record (one dataset, no component: "weighting",
// "particlePatches/numParticles"); the record of a scalar record is rel.
func ParticleRecord(rel string) (record string, scalar bool) {
	parts := strings.Split(rel, "/")
	n := 1
	if parts[0] == "particlePatches" && len(parts) > 1 {
		n = 2
	}
	if len(parts) <= n {
		return rel, true
	}
	return strings.Join(parts[:n], "/"), false
}
