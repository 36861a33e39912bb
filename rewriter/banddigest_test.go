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

// TestDigestSite enumerates digestSite's table: every dataset kind with
// units in row-major runs, band by band (the band fitting the allowance or
// not) and in no such order, whole or not, in a job that takes the
// datasets' digests or not, with --digest sha256 or none.
func TestDigestSite(t *testing.T) {
	a := &catalog.Array{Shape: []int64{4, 4}, DType: catalog.DType{Kind: catalog.Float, Size: 8}}
	const band = 2 * 4 * 8 // the band buffer of the tiles below
	rows := []catalog.Box{box([]int64{0, 0}, []int64{2, 4}), box([]int64{2, 0}, []int64{2, 4})}
	tiles := []catalog.Box{ // band by band
		box([]int64{0, 0}, []int64{2, 2}), box([]int64{0, 2}, []int64{2, 2}),
		box([]int64{2, 0}, []int64{2, 2}), box([]int64{2, 2}, []int64{2, 2}),
	}
	columns := []catalog.Box{ // neither
		box([]int64{0, 0}, []int64{2, 2}), box([]int64{2, 0}, []int64{2, 2}),
		box([]int64{0, 2}, []int64{2, 2}), box([]int64{2, 2}, []int64{2, 2}),
	}
	kinds := []string{kindContiguous, kindChunks, kindParts, kindMerged}
	for _, c := range []struct {
		units    []catalog.Box
		bandLeft int64
		want     [4]digestSite // by kinds
	}{
		{rows, band, [4]digestSite{digestInOrder, digestInOrder, digestInOrder, digestInOrder}},
		{tiles, band, [4]digestSite{digestReadBack, digestBands, digestBands, digestBands}},
		{tiles, band - 1, [4]digestSite{digestReadBack, digestReadBack, digestInput, digestInput}},
		{columns, band, [4]digestSite{digestReadBack, digestReadBack, digestInput, digestInput}},
	} {
		for ki, kind := range kinds {
			for _, off := range []struct {
				digests, whole bool
				digest         catalog.Digest
			}{{true, true, catalog.SHA256}, {false, true, catalog.SHA256}, {true, false, catalog.SHA256}, {true, true, catalog.NoDigest}} {
				e := &engine{digests: off.digests, opts: Options{Digest: off.digest}, bandLeft: c.bandLeft}
				e.opts.Limits.ReadLimit = 32 // a plane of a chunk row: 2 chunks of 2 elements of 8 bytes
				d := &Dataset{Kind: kind, Shape: a.Shape, Chunk: []int64{2, 2}, ElemSize: 8}
				site, bd := e.digestSite(targetOf(d).traits(), a, c.units, off.whole)
				want := c.want[ki]
				if !off.digests || !off.whole || off.digest == catalog.NoDigest {
					want = digestNone
				}
				if site != want {
					t.Errorf("%s units %v, band allowance %d, %+v: site %d, want %d", kind, c.units, c.bandLeft, off, site, want)
				}
				if (bd != nil) != (site == digestBands) {
					t.Errorf("%s: site %d with band digest %v", kind, site, bd)
				}
				if left := c.bandLeft - e.bandLeft; (site == digestBands) != (left == band) || (site != digestBands && left != 0) {
					t.Errorf("%s: site %d charged %d of the band allowance", kind, site, left)
				}
			}
		}
	}
	// Raw chunks whose chunk row's plane exceeds the read-back buffer
	// are hashed from the input instead.
	e := &engine{digests: true, opts: Options{Digest: catalog.SHA256}}
	e.opts.Limits.ReadLimit = 31
	d := &Dataset{Kind: kindChunks, Shape: a.Shape, Chunk: []int64{2, 2}, ElemSize: 8}
	if site, _ := e.digestSite(targetOf(d).traits(), a, columns, true); site != digestInput {
		t.Errorf("raw chunks, a plane of 32 bytes, a read-back buffer of 31: site %d, want %d (input)", site, digestInput)
	}
}
