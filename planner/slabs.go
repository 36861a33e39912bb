package planner

import "relayout/catalog"

// Slabs cuts an array into write units: consecutive ranges along dimension 0
// that cover every other dimension whole, in row-major order, so that the
// concatenation of the units' row-major bytes is the array's row-major bytes.
//
// Each unit holds at most budget bytes when possible but never less than one
// row (contiguous) or one chunk row (chunked). For chunked layouts every
// boundary is a multiple of Chunk[0], so a unit is made of whole chunks (the
// last one may be cut by the array's edge). A scalar is one unit with a
// zero-dimensional Box; an array with no elements has no units.
func Slabs(shape []int64, layout Layout, elemSize int, budget int64) []catalog.Box {
	if len(shape) == 0 {
		return []catalog.Box{{Lower: []int64{}, Count: []int64{}}}
	}
	if isEmpty(shape) {
		return nil
	}
	rowBytes := int64(elemSize)
	for _, n := range shape[1:] {
		rowBytes *= n
	}
	unit := int64(1)
	if layout.Kind == Chunked && len(layout.Chunk) == len(shape) && layout.Chunk[0] > 0 {
		unit = layout.Chunk[0]
	}
	units := int64(1)
	if unitBytes := rowBytes * unit; unitBytes > 0 && budget/unitBytes > 1 {
		units = budget / unitBytes
	}
	rows := units * unit
	var out []catalog.Box
	for lo := int64(0); lo < shape[0]; lo += rows {
		b := catalog.Box{Lower: make([]int64, len(shape)), Count: append([]int64(nil), shape...)}
		b.Lower[0] = lo
		b.Count[0] = min(rows, shape[0]-lo)
		out = append(out, b)
	}
	return out
}
