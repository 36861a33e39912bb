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
// x86-64 leaves the 6 padding bytes uninitialised (seen in openPMD-api
// output: stack garbage such as 76 33 f8 7f 00 00), so they say nothing.
// POWER's IBM double-double and AArch64's IEEE binary128 also take 16
// bytes, and BP does not say which format a writer used. A value is taken
// for x87 only when its encoding is canonical (the integer bit set exactly
// when the exponent is not zero, no denormals) and its magnitude fits a
// float64; an attribute is decoded only when its values are unambiguous:
// at least one is such a non-zero value (a binary128 or double-double
// value passes both tests by chance only: its exponent lands in bytes 8-9
// as part of its mantissa), or all of them are zero in all 16 bytes. A
// zero whose padding is not (binary128 0.5 is zero in its low 10 bytes)
// is only trusted beside a non-zero value of the same attribute. Anything
// else is not decoded: the attribute is listed as skipped, never replaced
// by a value that looks real. The result is rounded to float64.

import (
	"encoding/binary"
	"math"
)

// x87LongDouble decodes one 16-byte long double in the x87 format,
// ignoring the padding. nonzero reports a canonical value other than zero.
func x87LongDouble(p []byte) (v float64, nonzero, ok bool) {
	if len(p) != 16 {
		return 0, false, false
	}
	mant := binary.LittleEndian.Uint64(p[:8])
	se := binary.LittleEndian.Uint16(p[8:10])
	neg, exp := se&0x8000 != 0, int(se&0x7fff)
	integer := mant&(1<<63) != 0
	switch {
	case exp == 0 && mant == 0:
		v = 0
	case exp == 0 || !integer:
		return 0, false, false // denormal, pseudo-denormal or unnormal
	case exp == 0x7fff:
		if mant<<1 != 0 {
			return 0, false, false // NaN: no float64 payload to keep it
		}
		v, nonzero = math.Inf(1), true
	default:
		v, nonzero = math.Ldexp(float64(mant), exp-16383-63), true
		if v == 0 || math.IsInf(v, 0) {
			return 0, false, false // outside float64: implausible
		}
	}
	if neg {
		v = -v
	}
	return v, nonzero, true
}

// x87LongDoubles decodes an attribute's long doubles; ok is false unless
// they are unambiguously x87 (see above).
func x87LongDoubles(vals []byte) ([]float64, bool) {
	if len(vals)%16 != 0 {
		return nil, false
	}
	out := make([]float64, 0, len(vals)/16)
	anyNonzero, allZeroBytes := false, true
	for i := 0; i < len(vals); i += 16 {
		p := vals[i : i+16]
		v, nonzero, ok := x87LongDouble(p)
		if !ok {
			return nil, false
		}
		anyNonzero = anyNonzero || nonzero
		for _, b := range p {
			allZeroBytes = allZeroBytes && b == 0
		}
		out = append(out, v)
	}
	return out, anyNonzero || allZeroBytes
}
