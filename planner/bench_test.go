package planner

import (
	"math/rand/v2"
	"syscall"
	"testing"

	"relayout/catalog"
)

// blocks1M is a 100×100×100 grid of 8³ blocks (an 800³ domain) dealt to 1000
// writer ranks after a shuffle, as dynamic load balancing leaves them: every
// rank owns 1000 blocks scattered over the whole domain.
func blocks1M() []catalog.Block {
	const n, side, ranks = 100, 8, 1000
	blocks := make([]catalog.Block, 0, n*n*n)
	coords := make([]int64, 0, 6*n*n*n)
	for x := int64(0); x < n; x++ {
		for y := int64(0); y < n; y++ {
			for z := int64(0); z < n; z++ {
				coords = append(coords, x*side, y*side, z*side, side, side, side)
				c := coords[len(coords)-6:]
				blocks = append(blocks, catalog.Block{Box: catalog.Box{Lower: c[0:3:3], Count: c[3:6:6]}})
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 1))
	perm := rng.Perm(len(blocks))
	for i, p := range perm {
		blocks[p].Rank = int32(i % ranks)
	}
	return blocks
}

// BenchmarkCluster1M clusters a million blocks per rank, per node (32 ranks per
// node) and globally. Metrics per op: cuboids, ns/block and B/block (the issue's
// targets: under 2 s per op on one core, under 1 KiB per block).
func BenchmarkCluster1M(b *testing.B) {
	blocks := blocks1M()
	for _, tc := range []struct {
		name  string
		scope Scope
		k     int
	}{{"rank", ScopeRank, 0}, {"node32", ScopeNode, 32}, {"global", ScopeGlobal, 0}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var cuboids int
			cpu0 := cpuTime()
			for b.Loop() {
				gs, err := Merge(blocks, tc.scope, tc.k)
				if err != nil {
					b.Fatal(err)
				}
				cuboids = 0
				for _, g := range gs {
					cuboids += len(g.Cuboids)
				}
			}
			b.ReportMetric(float64(cuboids), "cuboids")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(blocks)), "ns/block")
			// CPU time of the process (this benchmark is single-threaded, GC
			// aside): the figure to quote on a shared, loaded machine.
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
