package rewriter

import (
	"slices"
	"testing"

	"relayout/catalog"
	"relayout/planner"
)

// TestSparseTargetUnits: a sparse dataset (Dataset.Sparse) in the part
// files is cut into units over its touched chunks alone (planner's
// SparseUnits within half the unit target: a unit is charged twice), joins
// no band of a contiguous dataset of its step and shape (whose rows would
// be every row of 2^40), and takes its digest over its stored chunks.
func TestSparseTargetUnits(t *testing.T) {
	f8 := catalog.DType{Kind: catalog.Float, Size: 8}
	shape, chunk := []int64{1 << 40, 4}, []int64{1024, 4}
	a := &catalog.Array{Var: "B", Shape: shape, DType: f8, Blocks: []catalog.Block{
		{Box: catalog.Box{Lower: []int64{0, 0}, Count: []int64{5, 4}}},
		{Box: catalog.Box{Lower: []int64{1<<39 + 1000, 0}, Count: []int64{100, 4}}}, // over two chunks
	}}
	d := Dataset{Var: "B", Shape: shape, ElemSize: 8, Kind: kindParts, Chunk: chunk, Sparse: true}
	opts := Options{MaxMem: 1 << 30, Jobs: 2}.withLimits()
	boxes, _, split, err := targetOf(&d).units(a, contigTarget{}, jointGrain{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	want := planner.SparseUnits(shape, chunk, 8, blockBoxes(a), opts.Limits.UnitTarget/2)
	if split || len(boxes) != 3 || !slices.EqualFunc(boxes, want, func(x, y catalog.Box) bool {
		return slices.Equal(x.Lower, y.Lower) && slices.Equal(x.Count, y.Count)
	}) {
		t.Fatalf("units %v (split %v), want %v", boxes, split, want)
	}
	if b := boxes[2]; b.Lower[0] != 1<<39+1024 || b.Count[0] != 1024 {
		t.Errorf("unit %v, want the second chunk the block from row 2^39+1000 touches", b)
	}
	tr := targetOf(&d).traits()
	if !tr.storedChunks || tr.bandStep != 0 || !tr.encoded {
		t.Errorf("traits %+v: want encoded, stored-chunks digest, no band", tr)
	}
	other := Dataset{Var: "C", Shape: shape, ElemSize: 8, Kind: kindContiguous}
	if g := jointGrains([]Dataset{d, other}); len(g) != 0 {
		t.Errorf("joint grains %v: a sparse dataset joins none", g)
	}
}
