package bp

// long double attribute values. BP stores a long double as the writer's
// 16 bytes and does not record which format those are; x86-64 writers
// (every HPC centre's CPUs but POWER and ARM) store the x87 80-bit extended
// format in the low 10 bytes, little-endian, and 6 bytes of padding:
//
//	byte  0        7 8       9 10          15
//	     +----------+---------+-------------+
//	     | mantissa | s|exp   | padding (0) |
//	     +----------+---------+-------------+
//	mantissa: 64 bits with an explicit integer bit (bit 63)
//	exp: 15 bits, bias 16383; s: sign (bit 15 of bytes 8-9)
//	value = (-1)^s * mantissa * 2^(exp - 16383 - 63)
//
// POWER's IBM double-double and AArch64's IEEE binary128 also take 16
// bytes. A value is taken for x87 only when its padding is zero and its
// encoding is canonical (integer bit set exactly when the exponent is not
// zero, no denormals); binary128 values other than zero fail that test
// (their exponent sits in the top bytes), and so do double-doubles, whose
// leading double lands in the mantissa with a zero exponent. Anything else
// is not decoded: the attribute is listed as skipped, never replaced by a
// value that looks real. The result is rounded to float64.

import (
	"encoding/binary"
	"math"
)

// x87LongDouble decodes one 16-byte long double in the x87 format.
func x87LongDouble(p []byte) (float64, bool) {
	if len(p) != 16 {
		return 0, false
	}
	for _, b := range p[10:] {
		if b != 0 {
			return 0, false
		}
	}
	mant := binary.LittleEndian.Uint64(p[:8])
	se := binary.LittleEndian.Uint16(p[8:10])
	neg, exp := se&0x8000 != 0, int(se&0x7fff)
	integer := mant&(1<<63) != 0
	var v float64
	switch {
	case exp == 0 && mant == 0:
		v = 0
	case exp == 0 || !integer:
		return 0, false // denormal, pseudo-denormal or unnormal
	case exp == 0x7fff:
		if mant<<1 == 0 {
			v = math.Inf(1)
		} else {
			v = math.NaN()
		}
	default:
		v = math.Ldexp(float64(mant), exp-16383-63)
	}
	if neg {
		v = -v
	}
	return v, true
}

// x87LongDoubles decodes a list of long doubles; ok is false when any of
// them is not a canonical x87 value.
func x87LongDoubles(vals []byte) ([]float64, bool) {
	if len(vals)%16 != 0 {
		return nil, false
	}
	out := make([]float64, 0, len(vals)/16)
	for i := 0; i < len(vals); i += 16 {
		v, ok := x87LongDouble(vals[i : i+16])
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}
