package job

import (
	"testing"

	"relayout/planner"
)

func TestChunkNote(t *testing.T) {
	for _, c := range []struct {
		shape, chunkShape, chunks []int64
		want                      string
	}{
		{[]int64{32, 32, 32}, nil, []int64{3, 3, 3}, "--chunks 3x3x3 on shape 32x32x32 (X): chunks of 11x11x11, the last along each axis 10x10x10 (the shape is not a multiple of the decomposition)"},
		{[]int64{32, 32, 32}, nil, []int64{2, 4, 8}, ""},
		{[]int64{9, 8}, nil, []int64{4, 2}, "--chunks 4x2 on shape 9x8 (X): chunks of 3x4; 3x2 chunks, fewer than asked (an axis is shorter than its part count)"},
		{[]int64{32, 32, 32}, []int64{64, 64, 64}, nil, "--chunk-shape 64x64x64 is larger than shape 32x32x32 (X): clipped to chunks of 32x32x32"},
		{[]int64{32, 32, 32}, []int64{7, 7, 7}, nil, ""},
	} {
		l, err := planner.ChooseLayout(c.shape, planner.Chunked, c.chunkShape, c.chunks)
		if err != nil {
			t.Fatal(err)
		}
		if got := chunkNote(c.shape, l, c.chunkShape, c.chunks, " (X)"); got != c.want {
			t.Errorf("%v %v %v:\n got %q\nwant %q", c.shape, c.chunkShape, c.chunks, got, c.want)
		}
	}
}
