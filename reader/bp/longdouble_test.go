package bp

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
)

// x87 builds the 16 bytes of an x87 extended value from its fields.
func x87(neg bool, exp uint16, mant uint64) []byte {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, mant)
	if neg {
		exp |= 0x8000
	}
	binary.LittleEndian.PutUint16(b[8:], exp)
	return b
}

func TestX87LongDouble(t *testing.T) {
	garbage := func(b []byte) []byte { copy(b[10:], []byte{0x76, 0x33, 0xf8, 0x7f, 0, 0}); return b }
	for _, c := range []struct {
		name string
		b    []byte
		want float64
		ok   bool
	}{
		{"0.5", x87(false, 16382, 1<<63), 0.5, true},
		{"0.5 padding garbage", garbage(x87(false, 16382, 1<<63)), 0.5, true},
		{"-3", x87(true, 16384, 3<<62), -3, true},
		{"zero", x87(false, 0, 0), 0, true},
		{"1e-6 rounded", x87(false, 16363, 0x8637bd05af6c69b6), 1e-6, true},
		{"inf", x87(false, 0x7fff, 1<<63), math.Inf(1), true},
		{"nan", x87(false, 0x7fff, 3<<62), 0, false},
		{"unnormal", x87(false, 16382, 1<<62), 0, false},
		{"denormal", x87(false, 0, 1<<20), 0, false},
		{"beyond float64", x87(false, 16383+2000, 1<<63), 0, false},
		{"short", make([]byte, 10), 0, false},
	} {
		got, _, ok := x87LongDouble(c.b)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// TestX87LongDoubles: attributes as openPMD-api on x86-64 writes them
// (position [0.5, 0, 0] with uninitialised padding) decode; a zero with
// non-zero padding alone, binary128 and double-double values do not.
func TestX87LongDoubles(t *testing.T) {
	cat := func(bs ...[]byte) []byte {
		var out []byte
		for _, b := range bs {
			out = append(out, b...)
		}
		return out
	}
	zeroGarbage := x87(false, 0, 0)
	copy(zeroGarbage[10:], []byte{0, 0, 0, 0, 0xf0, 0x3f})
	b128 := append(make([]byte, 14), 0xfe, 0x3f) // binary128 0.5
	dd := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.5)), 0)
	for _, c := range []struct {
		name string
		vals []byte
		want []float64
	}{
		{"position", cat(x87(false, 16382, 1<<63), x87(false, 0, 0), zeroGarbage), []float64{0.5, 0, 0}},
		{"zeros", cat(x87(false, 0, 0), x87(false, 0, 0)), []float64{0, 0}},
		{"zero with garbage alone", zeroGarbage, nil},
		{"binary128 0.5", cat(b128, b128), nil},
		{"double-double 0.5", dd, nil},
	} {
		got, ok := x87LongDoubles(c.vals)
		if ok != (c.want != nil) || ok && !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v %v, want %v", c.name, got, ok, c.want)
		}
	}
}
