package netcdf

import (
	"encoding/binary"
	"math"
	"strings"

	"relayout/catalog"
)

// DType is the catalog element type of a netCDF type (big-endian, as
// stored; char is catalog.Char); ok is false for a type tag netCDF lacks.
func (t Type) DType() (dt catalog.DType, ok bool) {
	switch t {
	case Char:
		return catalog.DType{Kind: catalog.Char, Size: 1}, true
	case Byte, Short, Int, Int64:
		dt.Kind = catalog.Int
	case UByte, UShort, UInt, UInt64:
		dt.Kind = catalog.Uint
	case Float, Double:
		dt.Kind = catalog.Float
	default:
		return dt, false
	}
	dt.Size = int(t.Size())
	dt.BigEndian = dt.Size > 1
	return dt, true
}

// CatalogAttr converts an attribute: char values become one string (its
// trailing NUL bytes dropped, as netCDF-C's text readers show it); numeric
// values are widened into Ints, Uints or Floats with Type naming the stored
// width ("int16", "float32", ...).
func (a *Attr) CatalogAttr() catalog.Attr {
	out := catalog.Attr{Name: a.Name}
	if a.Type == Char {
		out.Type, out.Scalar = "string", true
		out.Strings = []string{strings.TrimRight(string(a.Values), "\x00")}
		return out
	}
	dt, _ := a.Type.DType()
	out.Type = dt.AttrType()
	n := int(a.N)
	switch dt.Kind {
	case catalog.Int:
		out.Ints = make([]int64, n)
		for i := range out.Ints {
			out.Ints[i] = intAt(a.Values, i, dt.Size)
		}
	case catalog.Uint:
		out.Uints = make([]uint64, n)
		for i := range out.Uints {
			out.Uints[i] = uintAt(a.Values, i, dt.Size)
		}
	case catalog.Float:
		out.Floats = make([]float64, n)
		for i := range out.Floats {
			if dt.Size == 4 {
				out.Floats[i] = float64(math.Float32frombits(uint32(uintAt(a.Values, i, 4))))
			} else {
				out.Floats[i] = math.Float64frombits(uintAt(a.Values, i, 8))
			}
		}
	}
	return out
}

func uintAt(b []byte, i, size int) uint64 {
	b = b[i*size:]
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.BigEndian.Uint16(b))
	case 4:
		return uint64(binary.BigEndian.Uint32(b))
	}
	return binary.BigEndian.Uint64(b)
}

func intAt(b []byte, i, size int) int64 {
	u := uintAt(b, i, size)
	shift := 64 - 8*uint(size)
	return int64(u<<shift) >> shift
}

// DefaultFill is the netCDF default fill value of t (NC_FILL_*),
// big-endian; reader/scorpio uses it for SCORPIO's netCDF types too.
func DefaultFill(t Type) []byte {
	b := make([]byte, t.Size())
	switch t {
	case Byte:
		b[0] = 0x81 // -127
	case Char:
	case Short:
		binary.BigEndian.PutUint16(b, uint16(0x8001)) // -32767
	case Int:
		binary.BigEndian.PutUint32(b, 0x80000001) // -2147483647
	case Float:
		binary.BigEndian.PutUint32(b, math.Float32bits(9.9692099683868690e+36))
	case Double:
		binary.BigEndian.PutUint64(b, math.Float64bits(9.9692099683868690e+36))
	case UByte:
		b[0] = 255
	case UShort:
		binary.BigEndian.PutUint16(b, 65535)
	case UInt:
		binary.BigEndian.PutUint32(b, 4294967295)
	case Int64:
		binary.BigEndian.PutUint64(b, 0x8000000000000002) // -9223372036854775806
	case UInt64:
		binary.BigEndian.PutUint64(b, 18446744073709551614)
	}
	return b
}

// fill is v's fill value as one element in its big-endian byte order: its
// _FillValue attribute when that has v's type, else the type's default.
func (v *Var) fill() []byte {
	for i := range v.Attrs {
		a := &v.Attrs[i]
		if a.Name == "_FillValue" && a.Type == v.Type && a.N >= 1 {
			return append([]byte(nil), a.Values[:v.Type.Size()]...)
		}
	}
	return DefaultFill(v.Type)
}
