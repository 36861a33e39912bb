package bp

import (
	"encoding/binary"
	"math"
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
	for _, c := range []struct {
		name string
		b    []byte
		want float64
		ok   bool
	}{
		{"0.5", x87(false, 16382, 1<<63), 0.5, true},
		{"-3", x87(true, 16384, 3<<62), -3, true},
		{"zero", x87(false, 0, 0), 0, true},
		{"1e-6 rounded", x87(false, 16363, 0x8637bd05af6c69b6), 1e-6, true},
		{"inf", x87(false, 0x7fff, 1<<63), math.Inf(1), true},
		{"unnormal", x87(false, 16382, 1<<62), 0, false},
		{"denormal", x87(false, 0, 1<<20), 0, false},
		// binary128 0.5 (AArch64): exponent 0x3ffe in the top two bytes.
		{"binary128", append(make([]byte, 14), 0xfe, 0x3f), 0, false},
		// IBM double-double 0.5: the leading double in the low 8 bytes.
		{"double-double", binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.5)), 0), 0, false},
		{"short", make([]byte, 10), 0, false},
	} {
		got, ok := x87LongDouble(c.b)
		if ok != c.ok || ok && got != c.want {
			t.Errorf("%s: got %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
