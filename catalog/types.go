package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors, wrapped with context by every package and tested with errors.Is.
var (
	ErrCorrupt     = errors.New("corrupt input")
	ErrUnsupported = errors.New("unsupported")
	ErrNotFound    = errors.New("not found")
)

// Kind is the numeric class of an element type.
type Kind uint8

const (
	Int Kind = iota + 1
	Uint
	Float
)

// DType is a numeric element type as stored: class, size in bytes and byte order.
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
	c := map[Kind]string{Int: "i", Uint: "u", Float: "f"}[d.Kind]
	return fmt.Sprintf("%s%s%d", order, c, d.Size)
}

func (d DType) String() string { return d.NumPy() }

// Valid reports whether d is a type relayout can move: integers of 1, 2, 4, 8
// bytes and IEEE floats of 4 or 8 bytes.
func (d DType) Valid() bool {
	switch d.Kind {
	case Int, Uint:
		return d.Size == 1 || d.Size == 2 || d.Size == 4 || d.Size == 8
	case Float:
		return d.Size == 4 || d.Size == 8
	}
	return false
}

// LittleEndian returns d with little-endian byte order (the order of output files).
func (d DType) LittleEndian() DType { d.BigEndian = false; return d }

// ParseDType parses the NumPy form written by NumPy().
func ParseDType(s string) (DType, error) {
	var d DType
	if len(s) < 3 {
		return d, fmt.Errorf("catalog: dtype %q: %w", s, ErrCorrupt)
	}
	d.BigEndian = s[0] == '>'
	switch s[1] {
	case 'i':
		d.Kind = Int
	case 'u':
		d.Kind = Uint
	case 'f':
		d.Kind = Float
	}
	if _, err := fmt.Sscanf(s[2:], "%d", &d.Size); err != nil || !d.Valid() {
		return DType{}, fmt.Errorf("catalog: dtype %q: %w", s, ErrCorrupt)
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
type Codec struct {
	Name   string   `json:"name"`
	Params []uint32 `json:"params,omitempty"`
}

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
	for i := range b.Lower {
		lo := max(b.Lower[i], o.Lower[i])
		hi := min(b.Lower[i]+b.Count[i], o.Lower[i]+o.Count[i])
		if hi <= lo {
			return Box{}, false
		}
		r.Lower[i], r.Count[i] = lo, hi-lo
	}
	return r, true
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
// reverse order), hold an array of shape Stored (nil means Box.Count) in Order and
// in the array's DType. Box is the valid region in the array's index space
// (relative to the array, i.e. Box.Lower is 0-based within Array.Shape); it sits at
// the origin of the stored array, or at StoredLower. Stored is larger than
// Box.Count for partial HDF5 edge chunks, which are always stored whole, and
// for AMR boxes stored with ghost cells.
type Block struct {
	Box    Box     `json:"box"`
	Stored []int64 `json:"stored,omitempty"`
	File   string  `json:"file"` // relative to the dataset root
	Offset int64   `json:"offset"`
	Length int64   `json:"length"`
	Order  Order   `json:"order"`
	Codecs []Codec `json:"codecs,omitempty"`
	Rank   int     `json:"rank"`             // writer rank, -1 when unknown
	Inline []byte  `json:"inline,omitempty"` // bytes held in metadata (HDF5 compact storage); File is then empty
	// StoredLower is where Box starts inside the stored array (ghost cells
	// stored before the valid region); nil means the origin.
	StoredLower []int64 `json:"stored_lower,omitempty"`
}

// StoredShape is the shape of the decoded stored array.
func (b *Block) StoredShape() []int64 {
	if b.Stored != nil {
		return b.Stored
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
	// array (HDF5 fill value; nil means zeros).
	Fill      []byte `json:"fill,omitempty"`
	Attrs     []Attr `json:"attrs,omitempty"`      // on the output dataset
	StepAttrs []Attr `json:"step_attrs,omitempty"` // on the step's group (openPMD iteration attributes)
	Source    string `json:"source,omitempty"`     // where it came from, for messages: "file.h5:/data/1/meshes/B/x"
	// Boxes is the AMR level's box list (relative to the array, like block
	// boxes), written beside the level's dataset; nil for non-AMR arrays.
	Boxes  []Box   `json:"boxes,omitempty"`
	Blocks []Block `json:"-"`
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
}

// BatchSource is a Source that fetches many blocks with few, large reads
// (neighbouring extents of one file coalesced). blocks should be sorted by
// file and offset; fn receives each block's decoded bytes (read-only; they may
// share memory with other blocks of the same read, and are valid only until
// fn returns: the read buffer is reused) with the block's index in blocks,
// in an unspecified order.
type BatchSource interface {
	Source
	ReadBlocks(ctx context.Context, blocks []*Block, dt DType, fn func(i int, data []byte) error) error
}

// IntoSource is a Source that can read a block's stored bytes straight into
// the caller's buffer (no intermediate copy). ReadBlockInto is for blocks
// without codecs whose Length is len(dst); it reads b.Length bytes at
// b.Offset of b.File into dst.
type IntoSource interface {
	Source
	ReadBlockInto(ctx context.Context, b *Block, dst []byte) error
}

// Source fetches block bytes. Implementations are safe for concurrent use.
type Source interface {
	// ReadBlock returns the decoded bytes of b (see Block) for an array of type dt.
	// The slice belongs to the caller.
	ReadBlock(ctx context.Context, b *Block, dt DType) ([]byte, error)
}

// Prefetcher is a Source that can ask the operating system to start reading
// blocks it will be asked for soon (posix_fadvise WILLNEED), so that the
// disk or file system has several requests in flight while the caller works.
// Prefetch does not wait for the data and never fails: it is a hint.
type Prefetcher interface {
	Prefetch(ctx context.Context, blocks []*Block)
}
