package planner

import (
	"slices"
	"strings"
	"testing"
)

func TestAutoChunk(t *testing.T) {
	cp := DefaultCostParams()
	for _, c := range []struct {
		shape []int64
		elem  int
		kind  string
		chunk []int64
	}{
		{[]int64{64, 32, 16}, 8, Chunked, []int64{64, 32, 16}}, // 256 KiB: one chunk
		{[]int64{256, 256, 256}, 8, "", nil},                   // whatever the cost model or the halving gives, at most 1 MiB
		{[]int64{1 << 20}, 4, Chunked, []int64{1 << 18}},       // 4 MiB of float32 in 1 MiB chunks
		{nil, 8, Contiguous, nil},                              // scalar
		{[]int64{0, 4}, 8, Contiguous, nil},                    // empty
		{[]int64{3, 1 << 22}, 1, Chunked, []int64{3, 1 << 18}}, // the longest axis is halved
	} {
		l, why := AutoChunk(c.shape, c.elem, nil, 1, cp)
		if why == "" {
			t.Errorf("%v: no reason", c.shape)
		}
		if c.kind != "" && (l.Kind != c.kind || !slices.Equal(l.Chunk, c.chunk)) {
			t.Errorf("%v: %s %v (%s), want %s %v", c.shape, l.Kind, l.Chunk, why, c.kind, c.chunk)
		}
		if l.Kind == Chunked {
			n := int64(c.elem)
			for i, v := range l.Chunk {
				if v < 1 || v > c.shape[i] {
					t.Errorf("%v: chunk %v outside the shape", c.shape, l.Chunk)
				}
				n *= v
			}
			if n > AutoChunkBytes && !strings.HasPrefix(why, "the auto layout's chunks") {
				t.Errorf("%v: chunk %v of %d bytes", c.shape, l.Chunk, n)
			}
		}
		// plan and run reach it through LayoutFor.
		got, _, err := LayoutFor(c.shape, c.elem, nil, PlanOptions{Layout: Chunked, AutoChunks: true, Readers: 1})
		if err != nil || got.Kind != l.Kind || !slices.Equal(got.Chunk, l.Chunk) {
			t.Errorf("%v: LayoutFor %v %v, AutoChunk %v", c.shape, got, err, l)
		}
	}
	if _, err := NewPlanner(PlanOptions{Layout: Chunked, AutoChunks: true, Readers: 8}); err != nil {
		t.Errorf("automatic chunks refused: %v", err)
	}
	if _, err := NewPlanner(PlanOptions{Layout: Contiguous, AutoChunks: true, Readers: 8}); err == nil {
		t.Error("automatic chunks accepted with the contiguous layout")
	}
}

// TestAlignChunk: each edge that cuts its axis becomes a multiple of the
// block grain (the largest not above it, at least one grain); the rest
// stays.
func TestAlignChunk(t *testing.T) {
	for _, c := range []struct {
		chunk, shape, grain, want []int64
	}{
		{[]int64{50, 50, 50}, []int64{384, 384, 384}, []int64{8, 8, 8}, []int64{48, 48, 48}},
		{[]int64{50, 50, 50}, []int64{448, 448, 448}, []int64{32, 32, 32}, []int64{32, 32, 32}},
		{[]int64{8, 100, 64}, []int64{448, 448, 448}, []int64{32, 32, 32}, []int64{32, 96, 64}},
		{[]int64{50, 50}, []int64{100, 50}, []int64{0, 1}, []int64{50, 50}},     // no grain to follow
		{[]int64{10, 40}, []int64{60, 40}, []int64{64, 16}, []int64{10, 40}},    // a grain past the axis; a whole axis
		{[]int64{50, 50}, []int64{100, 100}, []int64{8}, []int64{50, 50}},       // grain of another rank
		{[]int64{7, 90}, []int64{100, 100}, []int64{32, 64}, []int64{32, 64}},   // below one grain: one grain
		{[]int64{70, 90}, []int64{100, 100}, []int64{128, 96}, []int64{70, 96}}, // a grain past the axis; 96 cuts it
	} {
		got := slices.Clone(c.chunk)
		alignChunk(got, c.shape, c.grain)
		if !slices.Equal(got, c.want) {
			t.Errorf("chunk %v of %v on grain %v: %v, want %v", c.chunk, c.shape, c.grain, got, c.want)
		}
	}
}

// TestAutoAlignedToBlocks: issue 19's BP4 input (448^3 float64 in 32^3
// blocks) under the default cost model: auto's chunks, 50^3 without the
// grain, are multiples of 32 with it, and what plan and run choose
// (LayoutFor) and AutoChunk's chunks (--compress alone) are aligned too.
func TestAutoAlignedToBlocks(t *testing.T) {
	shape, grain, cp := []int64{448, 448, 448}, []int64{32, 32, 32}, DefaultCostParams()
	l, why := AutoWith(shape, 8, nil, 8, nil, cp)
	if l.Kind != Chunked || !slices.Equal(l.Chunk, []int64{50, 50, 50}) {
		t.Fatalf("without the grain: %s %v (%s), want chunked 50x50x50 (the cost model changed: pick another case)", l.Kind, l.Chunk, why)
	}
	aligned := func(what string, l Layout) {
		t.Helper()
		if l.Kind != Chunked {
			t.Fatalf("%s: %s, want chunked", what, l.Kind)
		}
		for d, c := range l.Chunk {
			if c%grain[d] != 0 {
				t.Errorf("%s: chunk %v not a multiple of the grain %v", what, l.Chunk, grain)
			}
		}
	}
	l, _ = AutoWith(shape, 8, grain, 8, nil, cp)
	aligned("AutoWith", l)
	l, _, err := LayoutFor(shape, 8, grain, PlanOptions{Layout: AutoLayout, Readers: 8})
	if err != nil {
		t.Fatal(err)
	}
	aligned("LayoutFor", l)
	l, _ = AutoChunk([]int64{448, 448, 1000}, 8, []int64{32, 32, 40}, 1, cp)
	if l.Kind != Chunked || l.Chunk[0]%32 != 0 || l.Chunk[1]%32 != 0 || l.Chunk[2]%40 != 0 {
		t.Errorf("AutoChunk: %s %v, want multiples of 32, 32, 40", l.Kind, l.Chunk)
	}
}
