package verify

import (
	"bytes"
	"math/bits"
	"slices"

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
	stride := make([]int64, rank)
	s := int64(1)
	for d := rank - 1; d >= 0; d-- {
		stride[d] = s
		s *= band.Count[d]
	}
	for _, i := range blocks {
		reg, ok := a.Blocks[i].Box.Intersect(band)
		if !ok {
			continue
		}
		g := slices.Clone(reg.Lower)
		last := rank - 1
		for {
			var off int64
			for d := range rank {
				off += (g[d] - band.Lower[d]) * stride[d]
			}
			setBits(covered, off, off+reg.Count[last])
			d := last - 1
			for ; d >= 0; d-- {
				if g[d]++; g[d] < reg.Lower[d]+reg.Count[d] {
					break
				}
				g[d] = reg.Lower[d]
			}
			if d < 0 {
				break
			}
		}
	}
	// 64 fill values in a row: a word of holes is compared at once.
	var fill64 []byte
	if fill != nil {
		fill64 = bytes.Repeat(fill, 64)
	}
	var holes int64
	defer func() { r.stats.holes.Add(holes) }()
	for w, word := range covered {
		full := ^uint64(0)
		if rem := n - int64(w)*64; rem < 64 {
			full = 1<<rem - 1
		}
		missing := ^word & full
		holes += int64(bits.OnesCount64(missing))
		if missing == ^uint64(0) && fill64 != nil && bytes.Equal(out[int64(w)*64*size:int64(w+1)*64*size], fill64) {
			continue
		}
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
