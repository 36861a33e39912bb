package planner

import (
	"reflect"
	"slices"
	"testing"

	"relayout/catalog"
)

// gridArray is a 32x32 array in 16 blocks of 8x8 whose owners are given row
// by row (owners[i][j] owns the block at (8i, 8j)); -2 leaves a hole.
func gridArray(step int64, owners [4][4]int) *catalog.Array {
	a := &catalog.Array{Var: "v", Step: step, DType: catalog.DType{Kind: catalog.Float, Size: 8},
		Shape: []int64{32, 32}, Offset: []int64{0, 0}}
	for i := range 4 {
		for j := range 4 {
			if owners[i][j] == -2 {
				continue
			}
			a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: []int64{int64(8 * i), int64(8 * j)}, Count: []int64{8, 8}},
				Rank: int32(owners[i][j]), File: "data.0", Length: 512})
		}
	}
	return a
}

func TestPlanArrayCounts(t *testing.T) {
	// Rank 0: the first row (one 8x32 cuboid). Rank 1: two separate blocks.
	// Rank 2: an L of three blocks (two cuboids). Rank 3: the rest of rows 2-3
	// minus rank 2's and a hole: blocks (2,2),(2,3),(3,3) -> an L, 2 cuboids.
	owners := [4][4]int{
		{0, 0, 0, 0},
		{1, 2, 2, 1},
		{1, 2, 3, 3},
		{-2, -2, 3, 3},
	}
	// Per rank, by hand: 0: 4 blocks, 1 cuboid; 1: 3 blocks ((1,0),(2,0) a
	// column pair -> 1 cuboid, plus (1,3)) -> 2; 2: 3 blocks -> 2; 3: 4 blocks
	// in a 2x2 square -> 1.
	// Fill: the costs of the contiguous layout asked (14 of 16 blocks: the
	// array is partly covered, which HoleLayout would chunk without it).
	p, err := NewPlanner(PlanOptions{Layout: Contiguous, Readers: 4, Scope: ScopeRank, RanksPerNode: 2, WithCuboids: true, Fill: true})
	if err != nil {
		t.Fatal(err)
	}
	ap, err := p.PlanArray(gridArray(0, owners))
	if err != nil {
		t.Fatal(err)
	}
	if ap.Blocks != 14 || ap.Ranks != 4 || ap.UnknownRankBlocks != 0 {
		t.Errorf("blocks %d ranks %d unknown %d", ap.Blocks, ap.Ranks, ap.UnknownRankBlocks)
	}
	if want := (Stats{Min: 3, Mean: 3.5, Max: 4}); ap.BlocksPerRank != want {
		t.Errorf("blocks per rank %+v, want %+v", ap.BlocksPerRank, want)
	}
	if ap.Cuboids.Rank != 6 || ap.Cuboids.PerRank != (Stats{Min: 1, Mean: 1.5, Max: 2}) {
		t.Errorf("cuboids per rank %d %+v, want 6 {1 1.5 2}", ap.Cuboids.Rank, ap.Cuboids.PerRank)
	}
	// Nodes {0,1} and {2,3}: node 0 = row 0 + column pair + (1,3): rows 0
	// full, (1,0),(2,0),(1,3) -> at least 3 cuboids; node 1 = rows 1-3 of
	// columns 1-3 minus (1,3) and (3,1): a 3x3 square with two corners cut.
	if ap.Cuboids.Node == nil || *ap.Cuboids.Node < 2+2 || *ap.Cuboids.Node > ap.Cuboids.Rank {
		t.Errorf("node cuboids %v", ap.Cuboids.Node)
	}
	// Globally the 14 blocks are the array minus (3,0),(3,1): two cuboids.
	if ap.Cuboids.Global != 2 {
		t.Errorf("global cuboids %d, want 2", ap.Cuboids.Global)
	}
	if len(ap.Groups) != 4 {
		t.Fatalf("%d groups, want 4", len(ap.Groups))
	}
	for _, g := range ap.Groups {
		var vol int64
		for _, c := range g.Cuboids {
			vol += c.Elements()
		}
		if vol != int64(g.Blocks)*64 {
			t.Errorf("group %d: cuboids hold %d elements, blocks %d", g.Key, vol, g.Blocks*64)
		}
	}
	if ap.MoveBytes != 14*64*8 || ap.ReadBytes != 14*512 {
		t.Errorf("move %d read %d", ap.MoveBytes, ap.ReadBytes)
	}
	// 2-D: the whole and sub patterns; contiguous reads the whole array in
	// one run per reader.
	if len(ap.Costs) != 2 || ap.Costs[0].Pattern != "whole" || ap.Costs[0].After.Requests != 4 {
		t.Errorf("costs %+v", ap.Costs)
	}
	if ap.Before.Pieces != 14 || ap.Merged.Pieces != 6 || ap.After.Pieces != 1 || ap.After.Name != Contiguous {
		t.Errorf("storages %+v %+v %+v", ap.Before, ap.Merged, ap.After)
	}
	if ap.Layout.Kind != Contiguous || ap.Layout.Reason != "requested" {
		t.Errorf("layout %+v", ap.Layout)
	}
}

func TestVariablePlannerCache(t *testing.T) {
	owners := [4][4]int{{0, 0, 1, 1}, {0, 0, 1, 1}, {2, 2, 3, 3}, {2, 2, 3, 3}}
	moved := owners
	moved[0][0] = 3
	p, err := NewPlanner(PlanOptions{Layout: Chunked, Chunks: []int64{2, 2}, Readers: 4, Scope: ScopeGlobal})
	if err != nil {
		t.Fatal(err)
	}
	v := p.Variable("v", catalog.DType{Kind: catalog.Float, Size: 8})
	for step, o := range [][4][4]int{owners, owners, moved, owners} {
		if err := v.Add(gridArray(int64(step*10), o)); err != nil {
			t.Fatal(err)
		}
	}
	plan := v.Plan()
	if plan.Arrays != 4 || len(plan.Layouts) != 2 || p.Hits != 2 {
		t.Fatalf("arrays %d layouts %d hits %d, want 4 2 2", plan.Arrays, len(plan.Layouts), p.Hits)
	}
	if !slices.Equal(plan.Layouts[0].Steps, []int64{0, 10, 30}) || !slices.Equal(plan.Layouts[1].Steps, []int64{20}) {
		t.Errorf("steps %v %v", plan.Layouts[0].Steps, plan.Layouts[1].Steps)
	}
	if plan.Layouts[0].Fingerprint == plan.Layouts[1].Fingerprint {
		t.Error("a moved block kept the fingerprint")
	}
	if plan.Layouts[0].MoveBytes != 3*16*64*8 || plan.MoveBytes != 4*16*64*8 {
		t.Errorf("move bytes %d / %d", plan.Layouts[0].MoveBytes, plan.MoveBytes)
	}
	l := plan.Layouts[0].Layout
	if l.Kind != Chunked || !slices.Equal(l.Chunk, []int64{16, 16}) || l.Reason != "requested: decomposition 2x2" {
		t.Errorf("layout %+v", l)
	}
	if plan.Layouts[0].Cuboids.Global != 1 || plan.Layouts[0].Cuboids.Rank != 4 {
		t.Errorf("cuboids %+v", plan.Layouts[0].Cuboids)
	}
}

// TestMergeCacheShapes plans, through one planner, arrays that share their
// blocks' boxes and ranks (so their merges and what derives from them are
// computed once) but not their element type, shape or codecs, and checks
// each plan against a fresh planner's.
func TestMergeCacheShapes(t *testing.T) {
	// 3x3 blocks of 8x8 over 24x24: the sub pattern ([6,18) per axis) cuts
	// blocks, so a block read only whole costs more.
	grid := func(owners [3][3]int) *catalog.Array {
		a := &catalog.Array{Var: "v", DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{24, 24}, Offset: []int64{0, 0}}
		for i := range 3 {
			for j := range 3 {
				if owners[i][j] >= 0 {
					a.Blocks = append(a.Blocks, catalog.Block{Box: catalog.Box{Lower: []int64{int64(8 * i), int64(8 * j)}, Count: []int64{8, 8}},
						Rank: int32(owners[i][j]), File: "data.0", Offset: int64(512 * (3*i + j)), Length: 512})
				}
			}
		}
		return a
	}
	full := [3][3]int{{0, 0, 1}, {0, 0, 1}, {2, 2, 1}}
	i4 := grid(full)
	i4.DType = catalog.DType{Kind: catalog.Int, Size: 4}
	wide := grid(full)
	wide.Shape = []int64{24, 48} // the same blocks cover half of it
	packed := grid(full)
	packed.Blocks[0].Codecs = []catalog.Codec{{Name: "zlib"}} // read only whole
	holes := grid([3][3]int{{0, 0, 1}, {0, -1, 1}, {2, 2, 1}})
	arrays := []*catalog.Array{grid(full), i4, packed, wide, grid(full), holes}
	for _, layout := range []string{Contiguous, Merged} {
		opts := PlanOptions{Layout: layout, Readers: 1, Scope: ScopeRank}
		p, err := NewPlanner(opts)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range arrays {
			got, err := p.PlanArray(a)
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := NewPlanner(opts)
			want, err := fresh.PlanArray(a)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, array %d: after the others\n%+v\nalone\n%+v", layout, i, got, want)
			}
		}
		if len(p.merges) != 2 {
			t.Errorf("%s: %d merges, want 2 (the full grid's and the one with a hole)", layout, len(p.merges))
		}
	}
}

func TestNewPlannerRejects(t *testing.T) {
	for _, o := range []PlanOptions{
		{Layout: "bogus", Readers: 1},
		{Layout: Merged, Readers: 1, Chunks: []int64{2}},
		{Layout: Chunked, Readers: 1},
		{Layout: Chunked, Readers: 1, Chunks: []int64{2}, ChunkShape: []int64{2}},
		{Layout: Contiguous, Readers: 1, Chunks: []int64{2}},
		{Layout: AutoLayout, Readers: 0},
		{Layout: AutoLayout, Readers: MaxReaders + 1},
		{Layout: AutoLayout, Readers: 1, Scope: ScopeNode},
	} {
		if _, err := NewPlanner(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func TestPlanAutoAndScalar(t *testing.T) {
	p, err := NewPlanner(PlanOptions{Layout: AutoLayout, Readers: 1024, Scope: ScopeRank})
	if err != nil {
		t.Fatal(err)
	}
	// Many readers on a large array: Auto chunks it (the cost model's own
	// tests check why); the plan reports Auto's choice and reason.
	big := &catalog.Array{Var: "b", DType: catalog.DType{Kind: catalog.Float, Size: 8}, Shape: []int64{256, 256, 256}}
	big.Blocks = []catalog.Block{{Box: catalog.Box{Lower: []int64{0, 0, 0}, Count: []int64{256, 256, 256}}}}
	ap, err := p.PlanArray(big)
	if err != nil {
		t.Fatal(err)
	}
	want, why := Auto(big.Shape, 8, 1024, nil)
	if ap.Layout.Kind != want.Kind || !slices.Equal(ap.Layout.Chunk, want.Chunk) || ap.Layout.Reason != why || want.Kind != Chunked {
		t.Errorf("layout %+v, Auto says %+v %q", ap.Layout, want, why)
	}
	if len(ap.Costs) != 9 {
		t.Errorf("%d patterns, want 9", len(ap.Costs))
	}
	scalar := &catalog.Array{Var: "t", DType: catalog.DType{Kind: catalog.Float, Size: 8},
		Blocks: []catalog.Block{catalog.Block{Box: catalog.Box{}}.WithInline(make([]byte, 8))}}
	ap, err = p.PlanArray(scalar)
	if err != nil {
		t.Fatal(err)
	}
	if ap.Layout.Kind != Contiguous || len(ap.Costs) != 0 || ap.MoveBytes != 8 {
		t.Errorf("scalar plan %+v", ap)
	}
}

// The merge groups of a plan carry their cuboids' pieces only with
// WithPieces (inspect's block list), the same cuboid boxes either way, and
// the pieces are Merge's.
func TestPlanMergeGroupsPieces(t *testing.T) {
	a := gridArray(0, [4][4]int{{0, 0, 0, 0}, {1, 2, 2, 1}, {1, 2, 3, 3}, {-2, -2, 3, 3}})
	plan := func(pieces bool) ArrayPlan {
		p, err := NewPlanner(PlanOptions{Layout: Contiguous, Readers: 4, Scope: ScopeRank, Fill: true, WithPieces: pieces})
		if err != nil {
			t.Fatal(err)
		}
		ap, err := p.PlanArray(a)
		if err != nil {
			t.Fatal(err)
		}
		return ap
	}
	boxes, with := plan(false).MergeGroups, plan(true).MergeGroups
	want, err := Merge(a.Blocks, ScopeRank, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(boxes) != len(want) || len(with) != len(want) {
		t.Fatalf("%d and %d groups, Merge has %d", len(boxes), len(with), len(want))
	}
	for gi := range want {
		w := want[gi].Cuboids
		if len(boxes[gi].Cuboids) != len(w) || len(with[gi].Cuboids) != len(w) {
			t.Fatalf("group %d: %d and %d cuboids, Merge has %d", gi, len(boxes[gi].Cuboids), len(with[gi].Cuboids), len(w))
		}
		for ci := range w {
			b, p := boxes[gi].Cuboids[ci], with[gi].Cuboids[ci]
			if !Equal(b.Box, w[ci].Box) || !Equal(p.Box, w[ci].Box) {
				t.Errorf("group %d cuboid %d: boxes %v and %v, Merge's %v", gi, ci, b.Box, p.Box, w[ci].Box)
			}
			if b.Pieces != nil {
				t.Errorf("group %d cuboid %d: pieces %v without WithPieces", gi, ci, b.Pieces)
			}
			if len(p.Pieces) != len(w[ci].Pieces) || len(p.Pieces) == 0 {
				t.Fatalf("group %d cuboid %d: %d pieces, Merge's %d", gi, ci, len(p.Pieces), len(w[ci].Pieces))
			}
			for k := range p.Pieces {
				if p.Pieces[k].Block != w[ci].Pieces[k].Block || !Equal(p.Pieces[k].Box, w[ci].Pieces[k].Box) {
					t.Errorf("group %d cuboid %d piece %d: %+v, Merge's %+v", gi, ci, k, p.Pieces[k], w[ci].Pieces[k])
				}
			}
		}
	}
}
