package rewriter

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"relayout/catalog"
)

// overlapArray is a 16x4 array of dt whose two blocks, rows 0..9 and
// rows 4..9, add up to the array's size and overlap, leaving rows 10..15
// uncovered. bump changes element [5,1] of the second block.
func overlapArray(dt catalog.DType, bump bool) (*catalog.Array, *fakeSource) {
	val := func(idx []int64) uint64 {
		v := idx[0]*4 + idx[1]
		if dt.Kind == catalog.Float {
			return math.Float64bits(float64(v))
		}
		return uint64(v)
	}
	src := &fakeSource{files: map[string][]byte{}}
	a := &catalog.Array{Var: "v", DType: dt, Shape: []int64{16, 4}, Offset: []int64{0, 0}}
	for k, r := range [][2]int64{{0, 10}, {4, 6}} {
		lo, n := []int64{r[0], 0}, []int64{r[1], 4}
		data := encode(n, lo, catalog.RowMajor, dt, func(idx []int64) uint64 {
			if bump && k == 1 && idx[0] == 5 && idx[1] == 1 {
				return val(idx) + 1
			}
			return val(idx)
		})
		name := []string{"b0", "b1"}[k]
		src.files[name] = data
		a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: lo, Count: n}, File: name, Length: int64(len(data)), Rank: -1})
	}
	return a, src
}

// TestAssembleDirtyBufferWithOverlap: a reused buffer's uncovered part
// holds the fill value, never the previous unit's bytes, even where
// overlapping blocks add up to the slab's size.
func TestAssembleDirtyBufferWithOverlap(t *testing.T) {
	for _, dt := range []catalog.DType{{Kind: catalog.Int, Size: 4}, {Kind: catalog.Float, Size: 8}} {
		a, src := overlapArray(dt, false)
		if err := checkArray(a); err != nil {
			t.Fatal(err)
		}
		slab := catalog.Box{Lower: []int64{0, 0}, Count: []int64{16, 4}}
		buf := bytes.Repeat([]byte{0xaa}, int(slab.Elements())*dt.Size)
		x := indexBlocks(a)
		if err := assembleInto(context.Background(), nil, input{src: src}, a, slab, x.reads(slab), leFill(a), buf, true, x.disjoint()); err != nil {
			t.Fatal(err)
		}
		want := expected(a.Shape, dt, func(idx []int64) (uint64, bool) {
			v := idx[0]*4 + idx[1]
			if dt.Kind == catalog.Float {
				return math.Float64bits(float64(v)), idx[0] < 10
			}
			return uint64(v), idx[0] < 10
		}, map[bool]uint64{true: 0x7ff8000000000000, false: 0}[dt.Kind == catalog.Float])
		if !bytes.Equal(buf, want) {
			t.Fatalf("%v: assembled\n% x\nwant\n% x", dt, buf, want)
		}
	}
}

func TestCheckOverlaps(t *testing.T) {
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	a, src := overlapArray(dt, false)
	if disjoint, err := checkOverlaps(context.Background(), src, a); err != nil || disjoint {
		t.Fatalf("agreeing overlap: disjoint %v, %v", disjoint, err)
	}
	// Moved apart (rows 0-9 and 10-15), the same blocks tile: disjoint.
	b1 := &a.Blocks[1].Box
	b1.Lower[0] = 10
	if disjoint, err := checkOverlaps(context.Background(), src, a); err != nil || !disjoint {
		t.Fatalf("tiling: disjoint %v, %v", disjoint, err)
	}
	a, src = overlapArray(dt, true)
	_, err := checkOverlaps(context.Background(), src, a)
	if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "block 0 [0:10,0:4] (b0 at offset 0)") ||
		!strings.Contains(err.Error(), "block 1 [4:10,0:4] (b1 at offset 0)") || !strings.Contains(err.Error(), "first at [5,1]") {
		t.Fatalf("disagreeing overlap: %v", err)
	}
	// The blocks made disjoint: the second block is gone (all of it is in
	// the first); pieces of a partly covered block keep their place in
	// the stored array.
	d := disjointBlocks(a)
	if len(d.Blocks) != 1 {
		t.Fatalf("disjoint blocks %+v", d.Blocks)
	}
	a.Blocks[1].Box = catalog.Box{Lower: []int64{4, 0}, Count: []int64{8, 4}}
	a.Blocks[1].Length = 8 * 4 * 8
	src.files["b1"] = encode([]int64{8, 4}, []int64{4, 0}, catalog.RowMajor, dt, func(idx []int64) uint64 {
		return math.Float64bits(float64(idx[0]*4 + idx[1]))
	})
	d = disjointBlocks(a)
	if len(d.Blocks) != 2 || d.Blocks[1].Box.String() != "[10:12,0:4]" || d.Blocks[1].StoredLower()[0] != 6 {
		t.Fatalf("disjoint blocks %+v", d.Blocks)
	}
	if err := checkArray(d); err != nil {
		t.Fatal(err)
	}
	got, err := assembleSlab(context.Background(), input{src: src}, indexBlocks(d), catalog.Box{Lower: []int64{0, 0}, Count: []int64{16, 4}}, leFill(d))
	if err != nil {
		t.Fatal(err)
	}
	for e := 0; e < 64; e++ {
		v := math.Float64frombits(uint64(got[8*e]) | uint64(got[8*e+1])<<8 | uint64(got[8*e+2])<<16 | uint64(got[8*e+3])<<24 |
			uint64(got[8*e+4])<<32 | uint64(got[8*e+5])<<40 | uint64(got[8*e+6])<<48 | uint64(got[8*e+7])<<56)
		if e < 48 && v != float64(e) || e >= 48 && !math.IsNaN(v) {
			t.Fatalf("element %d = %v", e, v)
		}
	}
}
