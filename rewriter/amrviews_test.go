package rewriter

import (
	"slices"
	"testing"

	"relayout/catalog"
)

// TestAMRBoxRows: AMRBox rows put VTK's x on the dataset's last axis, and a
// 2-D box is flat ([0, 0]) along z.
func TestAMRBoxRows(t *testing.T) {
	boxes := []catalog.Box{
		{Lower: []int64{8, 0, 4}, Count: []int64{8, 16, 4}},
		{Lower: []int64{2, 6}, Count: []int64{3, 5}},
	}
	want := []int64{4, 7, 0, 15, 8, 15, 6, 10, 2, 4, 0, 0}
	if got := amrBoxRows(boxes); !slices.Equal(got, want) {
		t.Errorf("amrBoxRows = %v, want %v", got, want)
	}
}

// TestGDFRefine: one integer ratio on every axis and level, else 0.
func TestGDFRefine(t *testing.T) {
	lv := func(sp ...float64) amrArray {
		var a amrArray
		copy(a.spacing[:], sp)
		return a
	}
	for _, c := range []struct {
		levels []amrArray
		rank   int
		want   int64
	}{
		{[]amrArray{lv(0.002, 0.002, 0.002), lv(0.001, 0.001, 0.001), lv(0.0005, 0.0005, 0.0005)}, 3, 2},
		{[]amrArray{lv(0.03125, 0.03125, 0.03125), lv(0.0078125, 0.0078125, 0.0078125), lv(0.00390625, 0.00390625, 0.00390625)}, 2, 0},
		{[]amrArray{lv(1, 1, 1), lv(0.25, 0.5, 0.25)}, 3, 0},
		{[]amrArray{lv(1, 1, 1), lv(0.25, 0.25, 1)}, 2, 4},
	} {
		if got := gdfRefine(c.levels, c.rank); got != c.want {
			t.Errorf("gdfRefine(%v) = %d, want %d", c.levels, got, c.want)
		}
	}
}
