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
		l, why := AutoChunk(c.shape, c.elem, 1, cp)
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
		got, _, err := LayoutFor(c.shape, c.elem, PlanOptions{Layout: Chunked, AutoChunks: true, Readers: 1})
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
