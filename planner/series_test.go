package planner

import (
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
)

// TestSeriesPatterns: for every rank from 2 to 5 the three reads of a time
// series lie inside the array: whole; map, one record whole, split over
// every axis but time; series, every record at one place (the last one or
// two axes cut to one index, the axes between whole), one reader.
func TestSeriesPatterns(t *testing.T) {
	for _, shape := range [][]int64{{12, 7153}, {120, 96, 144}, {120, 72, 96, 144}, {3, 2, 5, 4, 6}, {1, 1}} {
		ps := SeriesPatterns(shape)
		names := []string{}
		for _, p := range ps {
			names = append(names, p.Name)
			for d := range shape {
				if p.Region.Lower[d] < 0 || p.Region.Count[d] < 1 || p.Region.Lower[d]+p.Region.Count[d] > shape[d] {
					t.Errorf("%v %s: region %v outside the array", shape, p.Name, p.Region)
				}
			}
		}
		if !slices.Equal(names, []string{"whole", "map", "series"}) {
			t.Fatalf("%v: patterns %v", shape, names)
		}
		m, s := ps[1], ps[2]
		if m.Region.Count[0] != 1 || m.Split[0] != 0 || !slices.Equal(m.Region.Count[1:], shape[1:]) {
			t.Errorf("%v map: %v split %v", shape, m.Region, m.Split)
		}
		horizontal := max(1, len(shape)-2)
		for d := range shape {
			want := shape[d]
			if d >= horizontal {
				want = 1
			}
			if s.Region.Count[d] != want || s.Split[d] != 0 {
				t.Errorf("%v series: %v split %v", shape, s.Region, s.Split)
			}
		}
	}
	if ps := SeriesPatterns([]int64{12}); ps[0].Name != "whole" || len(ps) != len(StandardPatterns([]int64{12})) {
		t.Errorf("1-D: %v, want StandardPatterns", ps)
	}
}

// TestAutoSeries: auto weighs a 10-year monthly 3-D field ([120, 72, 96,
// 144] float32, one record a file) against SeriesPatterns, and the model
// sees what a column series costs: from contiguous output 120 separate
// 288-byte runs, more than from chunks spanning the records. (Whether auto
// chunks depends on the sum: here the whole and map reads favour
// contiguous, and auto says that chunks would be faster for the series
// only.) IsSeries marks netCDF arrays (dimension names) of two or more
// dimensions only.
func TestAutoSeries(t *testing.T) {
	shape := []int64{120, 72, 96, 144}
	opts := PlanOptions{Layout: AutoLayout, Readers: 1, Series: true}
	_, why, err := LayoutFor(shape, 4, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(why, "3 patterns") || !strings.Contains(why, "series") {
		t.Errorf("auto's reason %q: want the 3 series patterns weighed, the series named", why)
	}
	cp := DefaultCostParams()
	contig, chunked := ContiguousStorage(shape), ChunkedStorage(shape, []int64{120, 9, 12, 18})
	s := SeriesPatterns(shape)[2]
	if c, k := PredictRead(contig, 4, s, 1, cp).Seconds, PredictRead(chunked, 4, s, 1, cp).Seconds; k >= c {
		t.Errorf("series read: chunks across time predict %.3g s, contiguous %.3g", k, c)
	}
	a := &catalog.Array{Shape: shape, Dims: []string{"time", "lev", "lat", "lon"}}
	if !IsSeries(a) || IsSeries(&catalog.Array{Shape: shape}) || IsSeries(&catalog.Array{Shape: []int64{120}, Dims: []string{"time"}}) {
		t.Errorf("IsSeries: netCDF arrays of rank >= 2 only")
	}
}
