package planner

import (
	"fmt"
	"testing"

	"relayout/catalog"
)

// lbArray is a 2-D array of 4x4 blocks of 4x4 on an 16x16 grid, owned by
// ranks in a scattered pattern; each rank writes its blocks in sub-file
// "data.<rank%2>" one after another, ranks in order.
func lbArray(step int64) *catalog.Array {
	a := &catalog.Array{Var: "v", Step: step, DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{16, 16}}
	owner := func(i, j int64) int { return int((i*7 + j*3) % 5) }
	offs := map[string]int64{}
	for r := 0; r < 5; r++ {
		for i := int64(0); i < 4; i++ {
			for j := int64(0); j < 4; j++ {
				if owner(i, j) != r {
					continue
				}
				file := fmt.Sprint("data.", r%2)
				a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: []int64{i * 4, j * 4}, Count: []int64{4, 4}},
					Rank: int32(r), File: file, Offset: offs[file] + step*1000, Length: 128})
				offs[file] += 128
			}
		}
	}
	return a
}

// checkWorkCover asserts that the units tile the array's blocks exactly and
// each source's Src/Dst agree with its block and unit.
func checkWorkCover(t *testing.T, a *catalog.Array, p WorkPlan) {
	t.Helper()
	var n int64
	for _, u := range p.Units {
		var m int64
		for _, s := range u.Sources {
			b := a.Blocks[s.Block].Box
			for d := range b.Lower {
				if b.Lower[d]+s.Src.Lower[d] != u.Box.Lower[d]+s.Dst.Lower[d] || s.Src.Count[d] != s.Dst.Count[d] {
					t.Fatalf("unit %v source %+v of block %v inconsistent", u.Box, s, b)
				}
			}
			m += s.Src.Elements()
		}
		if m != u.Box.Elements() {
			t.Errorf("unit %v: sources cover %d of %d elements", u.Box, m, u.Box.Elements())
		}
		n += m
	}
	var want int64
	for i := range a.Blocks {
		want += a.Blocks[i].Box.Elements()
	}
	if n != want {
		t.Errorf("units cover %d elements, blocks %d", n, want)
	}
}

// forward asserts that, across the plan, each sub-file is read at
// non-decreasing offsets.
func forward(t *testing.T, a *catalog.Array, p WorkPlan) {
	t.Helper()
	last := map[string]int64{}
	for _, u := range p.Units {
		for _, s := range u.Sources {
			b := a.Blocks[s.Block]
			if o, ok := last[b.File]; ok && b.Offset < o {
				t.Fatalf("%s read backward: %d after %d", b.File, b.Offset, o)
			}
			last[b.File] = b.Offset
		}
	}
}

func TestCuboidWorkPlanOrder(t *testing.T) {
	a := lbArray(0)
	for _, sc := range []Scope{ScopeRank, ScopeGlobal} {
		gs, err := Merge(a.Blocks, sc, 0)
		if err != nil {
			t.Fatal(err)
		}
		p := CuboidWorkPlan(a, gs)
		if len(p.Units) != totalCuboids(gs) {
			t.Errorf("%v: %d units, %d cuboids", sc, len(p.Units), totalCuboids(gs))
		}
		checkWorkCover(t, a, p)
		if sc == ScopeRank {
			forward(t, a, p) // a rank's blocks are consecutive in its sub-file
		}
	}
}

func TestChunkWorkPlan(t *testing.T) {
	a := lbArray(0)
	a.Blocks = a.Blocks[:len(a.Blocks)-3] // holes: untouched chunks get no unit
	p, err := ChunkWorkPlan(a, []int64{6, 5})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range p.Units {
		if len(u.Sources) == 0 {
			t.Errorf("unit %v has no source", u.Box)
		}
		for d := range u.Box.Lower {
			if u.Box.Lower[d]%[]int64{6, 5}[d] != 0 || u.Box.Lower[d]+u.Box.Count[d] > a.Shape[d] {
				t.Errorf("unit %v not a chunk", u.Box)
			}
		}
	}
	if len(p.Units) > 3*4 {
		t.Errorf("%d units for a 3x4 chunk grid", len(p.Units))
	}
	for i := range p.Units {
		for _, s := range p.Units[i].Sources {
			if s.Src.Elements() == 0 {
				t.Errorf("empty source %+v", s)
			}
		}
	}
	if _, err := ChunkWorkPlan(a, []int64{4}); err == nil {
		t.Error("chunk of the wrong rank accepted")
	}
}

// TestWorkPlansReuse: steps with the same block layout (different file
// offsets) share one plan; another layout or scope gets its own.
func TestWorkPlansReuse(t *testing.T) {
	c := NewWorkPlans()
	p0, err := c.Merged(lbArray(0), ScopeRank, 0)
	if err != nil {
		t.Fatal(err)
	}
	for s := int64(1); s < 4; s++ {
		p, err := c.Merged(lbArray(s), ScopeRank, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p != p0 {
			t.Errorf("step %d: plan recomputed", s)
		}
	}
	if c.Hits != 3 {
		t.Errorf("%d hits, want 3", c.Hits)
	}
	g, err := c.Merged(lbArray(0), ScopeGlobal, 0)
	if err != nil || g == p0 || len(g.Units) != 1 {
		t.Errorf("global scope: %d units, same plan %v, err %v", len(g.Units), g == p0, err)
	}
	b := lbArray(0)
	b.Blocks[0].Rank = 4
	if p, _ := c.Merged(b, ScopeRank, 0); p == p0 {
		t.Error("another owner map reused the plan")
	}
	if _, err := c.Merged(b, ScopeNode, 0); err == nil {
		t.Error("node scope without ranks per node accepted")
	}
}

// TestPlanMergedLayout: plan --layout merged stores a fully covered array
// contiguously and a partial one as its cuboids.
func TestPlanMergedLayout(t *testing.T) {
	p, err := NewPlanner(PlanOptions{Layout: Merged, Readers: 4})
	if err != nil {
		t.Fatal(err)
	}
	a := lbArray(0)
	full, err := p.PlanArray(a)
	if err != nil {
		t.Fatal(err)
	}
	if full.Layout.Kind != Merged || full.After.Pieces != 1 {
		t.Errorf("full: %+v %+v", full.Layout, full.After)
	}
	a.Blocks = a.Blocks[:5]
	part, err := p.PlanArray(a)
	if err != nil {
		t.Fatal(err)
	}
	if part.After.Pieces != int64(part.Cuboids.Rank) || part.After.Name != "merged (cuboids)" {
		t.Errorf("partial: after %+v, %d cuboids", part.After, part.Cuboids.Rank)
	}
}
