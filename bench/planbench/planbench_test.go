package planbench

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"syscall"
	"testing"

	"relayout/catalog"
	"relayout/planner"
)

// blocks100k is a 40×50×50 grid of 4³ blocks (a 160×200×200 float64
// array: 100,000 blocks) dealt to 8 writer ranks after a load-balancing
// shuffle, stored in 4 sub-files at scattered offsets as ADIOS2
// aggregation leaves them: the many-small-blocks case of issue 19.
func blocks100k() *catalog.Array {
	const nx, ny, nz, side, ranks = 40, 50, 50, 4, 8
	a := &catalog.Array{Var: "fields/Bx", DType: catalog.DType{Kind: catalog.Float, Size: 8},
		Shape: []int64{nx * side, ny * side, nz * side}, Offset: []int64{0, 0, 0}}
	n := nx * ny * nz
	perm := rand.New(rand.NewPCG(19, 19)).Perm(n)
	const blockBytes = side * side * side * 8
	for b := range n {
		x, y, z := int64(b/(ny*nz)), int64(b/nz%ny), int64(b%nz)
		r := perm[b] % ranks
		a.Blocks = append(a.Blocks, catalog.Block{
			Box:  catalog.Box{Lower: []int64{x * side, y * side, z * side}, Count: []int64{side, side, side}},
			Rank: int32(r), File: fmt.Sprintf("data.%d", r%4), Offset: int64(perm[b]) * blockBytes, Length: blockBytes,
		})
	}
	return a
}

// BenchmarkCatalogPlan100k: per block, the catalog store's round trip (Put,
// then Array as the rewriter loads it), the plan of `relayout plan` (blocks
// per rank, the rank-scope cuboids, the layout and the read-cost
// predictions) for the contiguous and the auto layout, the run's
// block-aligned write units (planner.AlignedSlabs), and the two together as
// the commands pay them: catalog+plan is `relayout plan` (store, auto plan),
// catalog+units what `relayout run` does before its first read (store, units).
func BenchmarkCatalogPlan100k(b *testing.B) {
	a := blocks100k()
	nblocks := float64(len(a.Blocks))
	boxes := make([]catalog.Box, len(a.Blocks))
	for i := range a.Blocks {
		boxes[i] = a.Blocks[i].Box
	}
	store, err := catalog.CreateStore(filepath.Join(b.TempDir(), "catalog.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	step := int64(0)
	roundTrip := func(b *testing.B) {
		a.Step = step
		step++
		if err := store.Put(a); err != nil {
			b.Fatal(err)
		}
		got, err := store.Array(a.Key())
		if err != nil || len(got.Blocks) != len(a.Blocks) {
			b.Fatal(err)
		}
	}
	plan := func(b *testing.B, layout string) {
		p, err := planner.NewPlanner(planner.PlanOptions{Layout: layout, Readers: 8, Scope: planner.ScopeRank})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.PlanArray(a); err != nil {
			b.Fatal(err)
		}
	}
	merge := func(b *testing.B, scope planner.Scope) {
		if _, err := planner.Merge(a.Blocks, scope, 0); err != nil {
			b.Fatal(err)
		}
	}
	contiguous, err := planner.ChooseLayout(a.Shape, planner.Contiguous, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	units := func(b *testing.B) {
		if us := planner.AlignedSlabs(a.Shape, contiguous, a.DType.Size, boxes, 32<<20, 64<<20); len(us) == 0 {
			b.Fatal("no units")
		}
	}
	for _, tc := range []struct {
		name string
		op   func(b *testing.B)
	}{
		{"store", roundTrip},
		{"merge-rank", func(b *testing.B) { merge(b, planner.ScopeRank) }},
		{"merge-global", func(b *testing.B) { merge(b, planner.ScopeGlobal) }},
		{"plan-contiguous", func(b *testing.B) { plan(b, planner.Contiguous) }},
		{"plan-auto", func(b *testing.B) { plan(b, planner.AutoLayout) }},
		{"units", units},
		{"catalog+plan", func(b *testing.B) { roundTrip(b); plan(b, planner.AutoLayout) }},
		{"catalog+units", func(b *testing.B) { roundTrip(b); units(b) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				tc.op(b)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/nblocks, "ns/block")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e9, "cpu-s/op")
		})
	}
}

// cpuTime is the user+system CPU time of the process in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
