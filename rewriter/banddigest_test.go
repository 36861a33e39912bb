package rewriter

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"relayout/catalog"
)

func box(lo, n []int64) catalog.Box { return catalog.Box{Lower: lo, Count: n} }

// TestBandDigest: units that come band by band (tiles along dimension 1,
// bands of different heights) are gathered into the sha256 of the array in
// row-major order; orders that are not band by band are refused (nil).
func TestBandDigest(t *testing.T) {
	shape := []int64{5, 6, 3}
	const size = 4
	elem := func(i, j, k int64) uint32 { return uint32((i*shape[1]+j)*shape[2] + k) }
	var want []byte
	for i := range shape[0] {
		for j := range shape[1] {
			for k := range shape[2] {
				want = binary.LittleEndian.AppendUint32(want, elem(i, j, k))
			}
		}
	}
	wantSum := sha256.Sum256(want)
	units := []catalog.Box{
		box([]int64{0, 0, 0}, []int64{2, 4, 3}), box([]int64{0, 4, 0}, []int64{2, 2, 3}), // band 0: two tiles
		box([]int64{2, 0, 0}, []int64{1, 6, 3}),                                          // band 1: whole rows
		box([]int64{3, 0, 0}, []int64{2, 1, 3}), box([]int64{3, 1, 0}, []int64{2, 5, 3}), // band 2
	}
	bd := newBandDigest(shape, size, units)
	if bd == nil {
		t.Fatal("units band by band refused")
	}
	if len(bd.bands) != 3 || bd.bytes != 2*6*3*size {
		t.Fatalf("bands %v, buffer %d bytes", bd.bands, bd.bytes)
	}
	bd.buf = make([]byte, bd.bytes)
	h := sha256.New()
	for u, b := range units {
		var data []byte
		for i := b.Lower[0]; i < b.Lower[0]+b.Count[0]; i++ {
			for j := b.Lower[1]; j < b.Lower[1]+b.Count[1]; j++ {
				for k := b.Lower[2]; k < b.Lower[2]+b.Count[2]; k++ {
					data = binary.LittleEndian.AppendUint32(data, elem(i, j, k))
				}
			}
		}
		bd.add(h, u, b, data)
	}
	if got := h.Sum(nil); string(got) != string(wantSum[:]) {
		t.Errorf("band digest %x, want %x", got, wantSum)
	}

	for name, us := range map[string][]catalog.Box{
		"band incomplete":       {units[0], units[2], units[3], units[4]},
		"bands out of order":    {units[2], units[0], units[1], units[3], units[4]},
		"array incomplete":      units[:4],
		"units overlap":         {units[0], units[1], units[1], units[2], units[3], units[4]},
		"tiles of a band apart": {units[0], units[2], units[1], units[3], units[4]},
	} {
		if newBandDigest(shape, size, us) != nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if newBandDigest([]int64{8}, size, []catalog.Box{box([]int64{0}, []int64{8})}) != nil {
		t.Error("rank 1: accepted (its units are row-major runs)")
	}
}
