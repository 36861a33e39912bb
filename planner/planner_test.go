package planner

import (
	"reflect"
	"testing"

	"relayout/catalog"
)

func TestChooseLayout(t *testing.T) {
	for _, tc := range []struct {
		name       string
		shape      []int64
		kind       string
		chunk, dec []int64
		want       Layout
		wantErr    bool
	}{
		{name: "default contiguous", shape: []int64{4, 5}, want: Layout{Kind: Contiguous}},
		{name: "explicit contiguous", shape: []int64{4, 5}, kind: "contiguous", want: Layout{Kind: Contiguous}},
		{name: "2x2x2 over 47^3", shape: []int64{47, 47, 47}, kind: "chunked", dec: []int64{2, 2, 2},
			want: Layout{Kind: Chunked, Chunk: []int64{24, 24, 24}}},
		{name: "decomposition implies chunked", shape: []int64{47, 47, 47}, dec: []int64{2, 2, 2},
			want: Layout{Kind: Chunked, Chunk: []int64{24, 24, 24}}},
		{name: "uneven decomposition", shape: []int64{10, 7, 1}, dec: []int64{3, 2, 4},
			want: Layout{Kind: Chunked, Chunk: []int64{4, 4, 1}}},
		{name: "chunk shape clipped", shape: []int64{10, 3}, kind: "chunked", chunk: []int64{16, 2},
			want: Layout{Kind: Chunked, Chunk: []int64{10, 2}}},
		{name: "scalar is contiguous", shape: []int64{}, kind: "chunked", chunk: []int64{8},
			want: Layout{Kind: Contiguous}},
		{name: "zero size is contiguous", shape: []int64{0, 4}, kind: "chunked", chunk: []int64{2, 2},
			want: Layout{Kind: Contiguous}},
		{name: "wrong rank", shape: []int64{4, 4}, chunk: []int64{2, 2, 2}, wantErr: true},
		{name: "zero entry", shape: []int64{4, 4}, dec: []int64{2, 0}, wantErr: true},
		{name: "zero entry even for scalar", shape: []int64{}, chunk: []int64{0}, wantErr: true},
		{name: "both", shape: []int64{4, 4}, chunk: []int64{2, 2}, dec: []int64{2, 2}, wantErr: true},
		{name: "chunked without shape", shape: []int64{4, 4}, kind: "chunked", wantErr: true},
		{name: "contiguous with chunk", shape: []int64{4, 4}, kind: "contiguous", chunk: []int64{2, 2}, wantErr: true},
		{name: "unknown kind", shape: []int64{4}, kind: "compact", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ChooseLayout(tc.shape, tc.kind, tc.chunk, tc.dec)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func box(lower, count []int64) catalog.Box { return catalog.Box{Lower: lower, Count: count} }

func TestSlabs(t *testing.T) {
	contig := Layout{Kind: Contiguous}
	for _, tc := range []struct {
		name     string
		shape    []int64
		layout   Layout
		elemSize int
		budget   int64
		want     []catalog.Box
	}{
		{
			// A row is 4*5*8 = 160 bytes: 500 bytes hold 3 rows.
			name: "contiguous budget", shape: []int64{7, 4, 5}, layout: contig, elemSize: 8, budget: 500,
			want: []catalog.Box{
				box([]int64{0, 0, 0}, []int64{3, 4, 5}),
				box([]int64{3, 0, 0}, []int64{3, 4, 5}),
				box([]int64{6, 0, 0}, []int64{1, 4, 5}),
			},
		},
		{
			name: "at least one row", shape: []int64{3, 100}, layout: contig, elemSize: 4, budget: 1,
			want: []catalog.Box{
				box([]int64{0, 0}, []int64{1, 100}),
				box([]int64{1, 0}, []int64{1, 100}),
				box([]int64{2, 0}, []int64{1, 100}),
			},
		},
		{
			name: "all in one", shape: []int64{3, 100}, layout: contig, elemSize: 4, budget: 1 << 30,
			want: []catalog.Box{box([]int64{0, 0}, []int64{3, 100})},
		},
		{
			// A chunk row is 24*47*47*8 = 424128 bytes; 1 MB holds 2 of them.
			name: "chunk aligned", shape: []int64{47, 47, 47}, elemSize: 8, budget: 1 << 20,
			layout: Layout{Kind: Chunked, Chunk: []int64{24, 24, 24}},
			want:   []catalog.Box{box([]int64{0, 0, 0}, []int64{47, 47, 47})},
		},
		{
			name: "chunk aligned, small budget", shape: []int64{47, 47, 47}, elemSize: 8, budget: 500000,
			layout: Layout{Kind: Chunked, Chunk: []int64{24, 24, 24}},
			want: []catalog.Box{
				box([]int64{0, 0, 0}, []int64{24, 47, 47}),
				box([]int64{24, 0, 0}, []int64{23, 47, 47}),
			},
		},
		{
			// Chunk rows of 5 rows * 16 bytes = 80 bytes; 170 bytes hold 2 chunk rows.
			name: "two chunk rows per slab", shape: []int64{23, 2}, elemSize: 8, budget: 170,
			layout: Layout{Kind: Chunked, Chunk: []int64{5, 1}},
			want: []catalog.Box{
				box([]int64{0, 0}, []int64{10, 2}),
				box([]int64{10, 0}, []int64{10, 2}),
				box([]int64{20, 0}, []int64{3, 2}),
			},
		},
		{
			name: "one chunk row minimum", shape: []int64{12, 2}, elemSize: 8, budget: 1,
			layout: Layout{Kind: Chunked, Chunk: []int64{5, 2}},
			want: []catalog.Box{
				box([]int64{0, 0}, []int64{5, 2}),
				box([]int64{5, 0}, []int64{5, 2}),
				box([]int64{10, 0}, []int64{2, 2}),
			},
		},
		{
			name: "scalar", shape: []int64{}, layout: contig, elemSize: 8, budget: 1,
			want: []catalog.Box{box([]int64{}, []int64{})},
		},
		{name: "empty", shape: []int64{5, 0}, layout: contig, elemSize: 8, budget: 1, want: nil},
		{
			name: "1-D", shape: []int64{10}, layout: contig, elemSize: 2, budget: 8,
			want: []catalog.Box{
				box([]int64{0}, []int64{4}), box([]int64{4}, []int64{4}), box([]int64{8}, []int64{2}),
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Slabs(tc.shape, tc.layout, tc.elemSize, tc.budget)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
