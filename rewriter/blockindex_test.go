package rewriter

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
)

// TestBlockIndexOrders checks the packed-key sort of indexBlocks and the
// numbered files of reads against the definitions they replace: blocks
// stably by Lower[0]; a slab's reads by file name, then offset, stably.
// Lower[0] spans too wide for packed keys take the comparison path.
func TestBlockIndexOrders(t *testing.T) {
	for _, tc := range []struct {
		name string
		low  int64 // Lower[0] from low (or near MaxInt64/2 when wide)
		wide bool
	}{{"small", 0, false}, {"negative", -1 << 40, false}, {"wide", math.MinInt64 / 2, true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			a := &catalog.Array{Shape: []int64{1 << 20, 8}}
			files := []string{"data.3", "data.1", "data.10", "data.2"}
			for i := 0; i < 2000; i++ {
				lo := tc.low + int64(r.IntN(64))
				if tc.wide && i%2 == 1 {
					lo = math.MaxInt64/2 - int64(r.IntN(64))
				}
				a.Blocks = append(a.Blocks, catalog.Block{
					Box:    catalog.Box{Lower: []int64{lo, int64(r.IntN(4))}, Count: []int64{int64(1 + r.IntN(5)), 2}},
					File:   files[r.IntN(len(files))],
					Offset: int64(r.IntN(50)) * 8,
					Length: 8,
				})
			}
			x := indexBlocks(a)
			want := make([]int, len(a.Blocks))
			for i := range want {
				want[i] = i
			}
			slices.SortStableFunc(want, func(i, j int) int {
				return cmp.Compare(a.Blocks[i].Box.Lower[0], a.Blocks[j].Box.Lower[0])
			})
			if !slices.Equal(x.order, want) {
				t.Fatalf("order differs from the stable sort by Lower[0]")
			}
			for s := 0; s < 50; s++ {
				slab := catalog.Box{Lower: []int64{tc.low + int64(r.IntN(64)), 0}, Count: []int64{int64(1 + r.IntN(8)), 8}}
				var idx []int
				for i := range a.Blocks {
					if overlaps(a.Blocks[i].Box, slab) {
						idx = append(idx, i)
					}
				}
				slices.SortStableFunc(idx, func(i, j int) int {
					if c := strings.Compare(a.Blocks[i].File, a.Blocks[j].File); c != 0 {
						return c
					}
					return cmp.Compare(a.Blocks[i].Offset, a.Blocks[j].Offset)
				})
				got := x.reads(slab)
				if len(got) != len(idx) {
					t.Fatalf("slab %v: %d reads, want %d", slab, len(got), len(idx))
				}
				for k, i := range idx {
					w := trimBlock(&a.Blocks[i], slab, a.DType.Size)
					if fmt.Sprint(*got[k]) != fmt.Sprint(*w) {
						t.Fatalf("slab %v read %d: %v, want %v", slab, k, *got[k], *w)
					}
				}
			}
		})
	}
}
