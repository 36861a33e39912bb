package rewriter

import (
	"encoding/binary"
	"math"
	"strconv"

	"relayout/catalog"
)

// formatElem prints one little-endian element of type dt for messages.
func formatElem(b []byte, dt catalog.DType) string {
	var u uint64
	switch dt.Size {
	case 1:
		u = uint64(b[0])
	case 2:
		u = uint64(binary.LittleEndian.Uint16(b))
	case 4:
		u = uint64(binary.LittleEndian.Uint32(b))
	case 8:
		u = binary.LittleEndian.Uint64(b)
	}
	switch dt.Kind {
	case catalog.Char:
		return strconv.QuoteRune(rune(b[0]))
	case catalog.Int:
		shift := 64 - 8*uint(dt.Size)
		return strconv.FormatInt(int64(u<<shift)>>shift, 10)
	case catalog.Uint:
		return strconv.FormatUint(u, 10)
	case catalog.Float:
		if dt.Size == 4 {
			return strconv.FormatFloat(float64(math.Float32frombits(uint32(u))), 'g', -1, 32)
		}
		return strconv.FormatFloat(math.Float64frombits(u), 'g', -1, 64)
	}
	return "0x" + strconv.FormatUint(u, 16)
}

// unravel turns a row-major element number within box into array indices.
func unravel(box catalog.Box, n int64) []int64 {
	idx := make([]int64, len(box.Count))
	for d := len(box.Count) - 1; d >= 0; d-- {
		idx[d] = box.Lower[d] + n%box.Count[d]
		n /= box.Count[d]
	}
	return idx
}
