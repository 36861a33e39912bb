package planner

import (
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
)

func TestLevelLayout(t *testing.T) {
	f64 := catalog.DType{Kind: catalog.Float, Size: 8}
	box := func(lo, n []int64) catalog.Box { return catalog.Box{Lower: lo, Count: n} }
	contig := Layout{Kind: Contiguous}
	for _, c := range []struct {
		name  string
		a     catalog.Array
		asked Layout
		want  Layout // Note checked for being set when Kind differs or Level > 0
	}{
		{"level 0 keeps the layout", catalog.Array{Level: 0, Shape: []int64{64, 64}, DType: f64,
			Boxes: []catalog.Box{box([]int64{0, 0}, []int64{16, 16})}}, contig, contig},
		{"level without a box table keeps the layout", catalog.Array{Level: 1, Shape: []int64{64, 64}, DType: f64}, contig, contig},
		// pelelmex-2d level 1: boxes of 16x16 on multiples of 16.
		{"aligned boxes: chunks of the box size", catalog.Array{Level: 1, Shape: []int64{512, 512}, DType: f64,
			Boxes: []catalog.Box{box([]int64{0, 0}, []int64{16, 16}), box([]int64{16, 0}, []int64{16, 16}), box([]int64{64, 32}, []int64{32, 16})}},
			contig, Layout{Kind: Chunked, Chunk: []int64{16, 16}}},
		// mushy-layer: 32x24 boxes on multiples of 8: the median's power of
		// two (32, 16) bounded by the alignment (8 along y).
		{"boxes on multiples of 8", catalog.Array{Level: 2, Shape: []int64{256, 256}, DType: f64,
			Boxes: []catalog.Box{box([]int64{0, 8}, []int64{32, 24}), box([]int64{32, 8}, []int64{32, 24}), box([]int64{64, 32}, []int64{32, 24})}},
			Layout{Kind: Merged}, Layout{Kind: Chunked, Chunk: []int64{32, 8}}},
		// Misaligned boxes: the median's power of two (a 24-cell box: 16).
		{"misaligned boxes", catalog.Array{Level: 1, Shape: []int64{100, 100}, DType: f64,
			Boxes: []catalog.Box{box([]int64{3, 5}, []int64{24, 24}), box([]int64{41, 7}, []int64{24, 30}), box([]int64{1, 1}, []int64{40, 40})}},
			contig, Layout{Kind: Chunked, Chunk: []int64{16, 16}}},
		{"bounded by the chunk asked", catalog.Array{Level: 1, Shape: []int64{512, 512}, DType: f64,
			Boxes: []catalog.Box{box([]int64{0, 0}, []int64{16, 16})}},
			Layout{Kind: Chunked, Chunk: []int64{4, 64}}, Layout{Kind: Chunked, Chunk: []int64{4, 16}}},
		// Boxes covering the level: still chunks of the boxes (reads of
		// a box stay within its chunks).
		{"covered level", catalog.Array{Level: 2, Shape: []int64{32, 32, 32}, DType: f64,
			Boxes: []catalog.Box{box([]int64{0, 0, 0}, []int64{8, 8, 8}), box([]int64{8, 0, 0}, []int64{8, 8, 8})}}, contig, Layout{Kind: Chunked, Chunk: []int64{8, 8, 8}}},
		{"one box over 1 MiB", catalog.Array{Level: 1, Shape: []int64{128, 128, 128}, DType: f64,
			Boxes: []catalog.Box{box([]int64{0, 0, 0}, []int64{128, 128, 128})}}, contig, Layout{Kind: Chunked, Chunk: []int64{32, 64, 64}}},
		{"large boxes bounded by 1 MiB", catalog.Array{Level: 1, Shape: []int64{1024, 1024}, DType: f64,
			Boxes: []catalog.Box{box([]int64{0, 0}, []int64{512, 512})}}, contig, Layout{Kind: Chunked, Chunk: []int64{256, 512}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := LevelLayout(&c.a, c.asked)
			if got.Kind != c.want.Kind || !slices.Equal(got.Chunk, c.want.Chunk) {
				t.Fatalf("layout %s %v, want %s %v", got.Kind, got.Chunk, c.want.Kind, c.want.Chunk)
			}
			if b := product(got.Chunk) * 8; got.Kind == Chunked && b > LevelChunkBytes {
				t.Errorf("chunk of %d bytes", b)
			}
			refined := c.a.Level > 0 && c.a.Boxes != nil
			if refined != (got.Note != "") || (refined && !strings.Contains(got.Note, "refined level")) {
				t.Errorf("note %q", got.Note)
			}
		})
	}
}

// The plan of a refined level reports the chunked layout and its reason.
func TestPlanRefinedLevel(t *testing.T) {
	a := &catalog.Array{Var: "rho", Level: 1, Shape: []int64{64, 64}, DType: catalog.DType{Kind: catalog.Float, Size: 8},
		Boxes:  []catalog.Box{{Lower: []int64{0, 0}, Count: []int64{16, 16}}},
		Blocks: []catalog.Block{{Box: catalog.Box{Lower: []int64{0, 0}, Count: []int64{16, 16}}, Rank: 0, Length: 2048}}}
	l, why, _, err := chooseFor(a, PlanOptions{Layout: Contiguous}, FullyCovered(a))
	if err != nil {
		t.Fatal(err)
	}
	if l.Kind != Chunked || !slices.Equal(l.Chunk, []int64{16, 16}) || !strings.Contains(why, "refined level 1") {
		t.Errorf("layout %s %v (%s)", l.Kind, l.Chunk, why)
	}
}
