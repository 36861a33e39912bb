package verify

import (
	"bytes"
	"math/bits"

	"relayout/catalog"
)

// holes checks the band's elements that no block covers against the
// recorded fill value (nil: none recorded; any hole is then a difference).
// The mismatch's in is the fill value (nil when none) and hole is set.
func (r *run) holes(a *catalog.Array, band catalog.Box, blocks []int, out []byte, fill []byte) (*mismatch, error) {
	rank := len(band.Lower)
	n := band.Elements()
	size := int64(a.DType.Size)
	if rank == 0 {
		if len(blocks) > 0 {
			return nil, nil
		}
		if fill != nil && bytes.Equal(out[:size], fill) {
			return nil, nil
		}
		return holeAt([]int64{}, out[:size], fill), nil
	}
	covered := make([]uint64, (n+63)/64)
	catalog.Populate(covered)
	stride := make([]int64, rank)
	s := int64(1)
	for d := rank - 1; d >= 0; d-- {
		stride[d] = s
		s *= band.Count[d]
	}
	// Each block's part of the band sets its rows' runs of bits, in the
	// blocks' order: no region is allocated or sorted (a band of many small
	// blocks holds tens of thousands), a row costs one setBits.
	last := rank - 1
	reg := catalog.Box{Lower: make([]int64, rank), Count: make([]int64, rank)}
	g := make([]int64, rank)
	for _, i := range blocks {
		if !a.Blocks[i].Box.IntersectInto(band, reg) {
			continue
		}
		copy(g, reg.Lower)
		var off int64 // of (g[:last], band's first) in the band
		for d := range last {
			off += (g[d] - band.Lower[d]) * stride[d]
		}
		r0 := reg.Lower[last] - band.Lower[last]
		r1 := r0 + reg.Count[last]
		for {
			setBits(covered, off+r0, off+r1)
			d := last - 1
			for ; d >= 0; d-- {
				off += stride[d]
				if g[d]++; g[d] < reg.Lower[d]+reg.Count[d] {
					break
				}
				g[d] = reg.Lower[d]
				off -= reg.Count[d] * stride[d]
			}
			if d < 0 {
				break
			}
		}
	}
	// fillWords words of fill values in a row: a run of words of holes is
	// compared in spans of that length.
	const fillWords = 32
	var fillSpan []byte
	if fill != nil {
		fillSpan = bytes.Repeat(fill, 64*fillWords)
	}
	var holes int64
	defer func() { r.stats.holes.Add(holes) }()
	for w := 0; w < len(covered); w++ {
		word := covered[w]
		full := ^uint64(0)
		if rem := n - int64(w)*64; rem < 64 {
			full = 1<<rem - 1
		}
		missing := ^word & full
		if missing == ^uint64(0) && fillSpan != nil {
			// A run of whole words of holes, [w, e), in spans.
			e := w + 1
			for e < len(covered) && e-w < fillWords && covered[e] == 0 && n-int64(e)*64 >= 64 {
				e++
			}
			if bytes.Equal(out[int64(w)*64*size:int64(e)*64*size], fillSpan[:int64(e-w)*64*size]) {
				holes += int64(e-w) * 64
				w = e - 1
				continue
			}
		}
		holes += int64(bits.OnesCount64(missing))
		for ; missing != 0; missing &= missing - 1 {
			e := int64(w)*64 + int64(bits.TrailingZeros64(missing))
			o := out[e*size : (e+1)*size]
			if fill != nil && bytes.Equal(o, fill) {
				continue
			}
			idx := make([]int64, rank)
			rem := e
			for d := range rank {
				idx[d] = band.Lower[d] + rem/stride[d]
				rem %= stride[d]
			}
			return holeAt(idx, o, fill), nil
		}
	}
	return nil, nil
}

// tiles reports whether a's blocks cover each of its elements exactly once
// (inside its shape, disjoint on disjoint's grid, as many elements as the
// array): its bands then have no holes, and their coverage bitmaps
// (holes), a bit set per element, are not built. Measured on issue 19's
// 448^3 BP4 input (three of its four arrays tiled by 32^3 blocks): the
// bitmaps were 0.2-0.3 s of the check's 3.9 s of CPU.
func tiles(a *catalog.Array) bool {
	if len(a.Shape) == 0 {
		return false
	}
	for i := range a.Blocks {
		b := &a.Blocks[i].Box
		if b.Elements() == 0 {
			continue
		}
		if len(b.Lower) != len(a.Shape) || len(b.Count) != len(a.Shape) {
			return false
		}
		for d, n := range a.Shape {
			if b.Lower[d] < 0 || b.Count[d] < 0 || b.Lower[d] > n-b.Count[d] {
				return false
			}
		}
	}
	covered, ok := disjoint(a, maxCells)
	return ok && covered == a.Elements()
}

func holeAt(idx []int64, out, fill []byte) *mismatch {
	return &mismatch{index: idx, in: bytes.Clone(fill), out: bytes.Clone(out), hole: true}
}

// setBits sets bits [lo, hi) of v.
func setBits(v []uint64, lo, hi int64) {
	if hi <= lo {
		return
	}
	w0, w1 := lo/64, (hi-1)/64
	m0 := ^uint64(0) << (lo % 64)
	m1 := ^uint64(0) >> (63 - (hi-1)%64)
	if w0 == w1 {
		v[w0] |= m0 & m1
		return
	}
	v[w0] |= m0
	for w := w0 + 1; w < w1; w++ {
		v[w] = ^uint64(0)
	}
	v[w1] |= m1
}
