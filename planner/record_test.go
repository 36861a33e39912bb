package planner

import (
	"slices"
	"testing"

	"relayout/catalog"
)

// TestRecordChunk: a record slab a chunk, its outer axes cut to stay
// within 4 MiB, records joined up to 4 KiB where a slab is smaller (at most
// the records there are), an empty record axis one record.
func TestRecordChunk(t *testing.T) {
	rec := []bool{true, false, false, false}
	for _, c := range []struct {
		shape     []int64
		unlimited []bool
		size      int64
		want      []int64
	}{
		{[]int64{12, 72, 96, 144}, rec, 4, []int64{1, 72, 96, 144}}, // EAM 3-D float32: 3.96 MiB
		{[]int64{12, 72, 96, 144}, rec, 8, []int64{1, 37, 96, 144}}, // float64: 7.9 MiB, lev cut
		{[]int64{12, 2, 4096, 4096}, rec, 4, []int64{1, 1, 256, 4096}},
		{[]int64{24, 3, 5, 7}, rec, 4, []int64{9, 3, 5, 7}}, // 420 bytes a record
		{[]int64{12, 48602}, rec[:2], 4, []int64{1, 48602}}, // [time, ncol]
		{[]int64{24}, rec[:1], 8, []int64{24}},              // time
		{[]int64{1000}, rec[:1], 8, []int64{512}},
		{[]int64{1000, 2}, rec[:2], 8, []int64{256, 2}}, // time_bnds
		{[]int64{12, 8}, rec[:2], 1, []int64{12, 8}},    // date_written
		{[]int64{0, 5}, rec[:2], 4, []int64{1, 5}},      // no records yet
		{[]int64{3, 6, 0}, []bool{false, true, false}, 8, []int64{3, 6, 1}},
	} {
		if got := recordChunk(c.shape, c.unlimited, c.size); !slices.Equal(got, c.want) {
			t.Errorf("recordChunk(%v, %v, %d) = %v, want %v", c.shape, c.unlimited, c.size, got, c.want)
		}
	}
}

// TestRecordLayout: a netCDF array over an unlimited dimension is chunked
// in record chunks unless its layout chunks already; others are left as
// they are.
func TestRecordLayout(t *testing.T) {
	f4 := catalog.DType{Kind: catalog.Float, Size: 4}
	a := &catalog.Array{Var: "T", DType: f4, Shape: []int64{12, 5, 7}, Dims: []string{"time", "lat", "lon"}}
	fixed := &catalog.Array{Var: "area", DType: f4, Shape: []int64{5, 7}, Dims: []string{"lat", "lon"}}
	plain := &catalog.Array{Var: "E/x", DType: f4, Shape: []int64{12, 5, 7}}
	contig := Layout{Kind: Contiguous}
	chunked := Layout{Kind: Chunked, Chunk: []int64{4, 5, 7}}
	unl := []string{"time"}
	for _, c := range []struct {
		a         *catalog.Array
		l         Layout
		unlimited []string
		want      Layout
	}{
		{a, contig, unl, Layout{Kind: Chunked, Chunk: []int64{12, 5, 7}}},
		{a, Layout{Kind: Merged}, unl, Layout{Kind: Chunked, Chunk: []int64{12, 5, 7}}},
		{a, chunked, unl, chunked},
		{a, contig, nil, contig},
		{fixed, contig, unl, contig},
		{plain, contig, unl, contig},
	} {
		got := RecordLayout(c.a, c.l, c.unlimited)
		if got.Kind != c.want.Kind || !slices.Equal(got.Chunk, c.want.Chunk) {
			t.Errorf("%s %v unlimited %v: %v %v, want %v %v", c.a.Var, c.l, c.unlimited, got.Kind, got.Chunk, c.want.Kind, c.want.Chunk)
		}
	}
	if got := UnlimitedAxes(a, unl); !slices.Equal(got, []bool{true, false, false}) {
		t.Errorf("unlimitedAxes = %v", got)
	}
}
