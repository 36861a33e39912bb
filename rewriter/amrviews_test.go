package rewriter

import (
	"slices"
	"testing"

	"relayout/catalog"
)

// TestAMRBoxRows: AMRBox rows put VTK's x on the dataset's last axis, and a
// 2-D box is its layers thick along z.
func TestAMRBoxRows(t *testing.T) {
	boxes := []catalog.Box{
		{Lower: []int64{8, 0, 4}, Count: []int64{8, 16, 4}},
		{Lower: []int64{2, 6}, Count: []int64{3, 5}},
	}
	want := []int64{4, 7, 0, 15, 8, 15, 6, 10, 2, 4, 0, 3}
	if got := amrBoxRows(boxes, 4); !slices.Equal(got, want) {
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

// TestGDFUnits: openPMD's unitDimension and unitSI as the unit string yt
// parses; none when the input gives none, and why when they are not units.
func TestGDFUnits(t *testing.T) {
	dim := func(v ...float64) catalog.Attr {
		return catalog.Attr{Name: "unitDimension", Type: "float64", Floats: v, Record: true}
	}
	si := func(v ...float64) catalog.Attr { return catalog.Attr{Name: "unitSI", Type: "float64", Floats: v} }
	for _, c := range []struct {
		attrs   []catalog.Attr
		units   string
		wantWhy bool
	}{
		{nil, "", false}, // AMReX, Chombo: no units given
		{[]catalog.Attr{si(2)}, "", false},
		{[]catalog.Attr{dim(0, 0, 0, 0, 0, 0, 0), si(1)}, "dimensionless", false},
		{[]catalog.Attr{dim(0, 0, 0, 0, 0, 0, 0), si(2.5)}, "2.5", false},
		{[]catalog.Attr{dim(1, 1, -3, -1, 0, 0, 0), si(1)}, "kg*m/(A*s**3)", false}, // E: V/m
		{[]catalog.Attr{dim(-3, 0, 1, 1, 0, 0, 0), si(1e-3)}, "0.001*A*s/m**3", false},
		{[]catalog.Attr{dim(0, 0, -1, 0, 0, 0, 0)}, "1/s", false},
		{[]catalog.Attr{dim(0.5, 0, 0, 0, 1, 1, 1)}, "m**0.5*K*mol*cd", false},
		{[]catalog.Attr{dim(1, 0, 0, 0, 0, 0, 0), si(0)}, "", true},
		{[]catalog.Attr{dim(1, 0, 0), si(1)}, "", true},
	} {
		units, why := gdfUnits(c.attrs)
		if units != c.units || (why != "") != c.wantWhy {
			t.Errorf("gdfUnits(%v) = %q, %q; want %q (why: %v)", c.attrs, units, why, c.units, c.wantWhy)
		}
	}
}
