package rewriter

import (
	"encoding/binary"
	"encoding/hex"
	"math"

	"relayout/catalog"
)

// Constant record components (catalog.Array.Constant) are written as
// openPMD writes them: a group in place of the dataset, whose "value"
// attribute (one element of the record's type) and "shape" attribute
// (uint64 per dimension) stand for the data, beside the component's other
// attributes. No data is written, so they cost no pipeline work; series.h5
// repeats the group with its attributes (an external link would hide it
// from openPMD-api). relayout's own reader reads the group back as the same
// constant array, and verify compares it element by element like any other.

// constantAttrs are the value and shape attributes of constant array a.
func constantAttrs(a *catalog.Array) []catalog.Attr {
	value := catalog.Attr{Name: "value", Type: a.DType.AttrType(), Scalar: true}
	p := constantValue(a)
	switch a.DType.Kind {
	case catalog.Float:
		if a.DType.Size == 4 {
			value.Floats = []float64{float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))}
		} else {
			value.Floats = []float64{math.Float64frombits(binary.LittleEndian.Uint64(p))}
		}
	case catalog.Int:
		value.Ints = []int64{leInt(p)}
	case catalog.Uint:
		value.Uints = []uint64{leUint(p)}
	}
	shape := catalog.Attr{Name: "shape", Type: "uint64", Uints: make([]uint64, len(a.Shape))}
	for d, n := range a.Shape {
		shape.Uints[d] = uint64(n)
	}
	return []catalog.Attr{value, shape}
}

// constantValue is a's value as little-endian bytes.
func constantValue(a *catalog.Array) []byte {
	if v := leFill(a); v != nil {
		return v
	}
	return make([]byte, a.DType.Size) // leFill's nil: all zero
}

// leUint and leInt read a little-endian element of 1, 2, 4 or 8 bytes.
func leUint(p []byte) uint64 {
	var b [8]byte
	copy(b[:], p)
	return binary.LittleEndian.Uint64(b[:])
}

func leInt(p []byte) int64 {
	shift := 64 - 8*uint(len(p))
	return int64(leUint(p)<<shift) >> shift
}

// maxConstantDigest bounds the logical size whose digest is computed for a
// constant array (hashing runs at about 1.4 GB/s): larger constants record
// no digest (verify then says "sha256 not recorded" and still compares
// every element), so that a declared shape cannot make a run hash for hours.
const maxConstantDigest = 4 << 30

// constantDigest is the manifest digest of constant array a: its value
// repeated over the shape, row-major little-endian, as for any array.
func constantDigest(a *catalog.Array, digest catalog.Digest) string {
	n := a.Bytes()
	h := digest.New()
	if n > maxConstantDigest || h == nil {
		return ""
	}
	v := constantValue(a)
	buf := make([]byte, 0, 64<<10/len(v)*len(v))
	for len(buf)+len(v) <= cap(buf) {
		buf = append(buf, v...)
	}
	for n > 0 {
		k := min(n, int64(len(buf)))
		h.Write(buf[:k])
		n -= k
	}
	return hex.EncodeToString(h.Sum(nil))
}
