package scorpio

import (
	"context"
	"math/rand/v2"
	"testing"
)

// bigMap is the benchmark map: 100,000 columns x 72 levels, columns
// dealt to 16 tasks in shuffled runs of 4, each task's map level-major
// (1-based, no pads).
func bigMap() ([][]int64, []int64) {
	const ncol, nlev, tasks = 100000, 72, 16
	rng := rand.New(rand.NewPCG(4, 4))
	runs := rng.Perm(ncol / 4)
	cols := make([][]int64, tasks)
	for i, r := range runs {
		for k := 0; k < 4; k++ {
			cols[i%tasks] = append(cols[i%tasks], int64(4*r+k))
		}
	}
	blocks := make([][]int64, tasks)
	for t, cs := range cols {
		for l := int64(0); l < nlev; l++ {
			for _, c := range cs {
				blocks[t] = append(blocks[t], l*ncol+c+1)
			}
		}
	}
	return blocks, []int64{nlev, ncol}
}

func BenchmarkBuildPlanBig(b *testing.B) {
	blocks, dims := bigMap()
	b.SetBytes(72 * 100000 * 8) // map bytes
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := BuildPlan("bench", 1, dims, blocks, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkScatterBig(b *testing.B) {
	blocks, dims := bigMap()
	p, err := BuildPlan("bench", 1, dims, blocks, nil)
	if err != nil {
		b.Fatal(err)
	}
	data := make([][]byte, len(blocks))
	for g := range blocks {
		data[g] = make([]byte, 8*len(blocks[g]))
	}
	dst := make([]byte, p.Elems*8)
	b.SetBytes(p.Elems * 8)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Scatter(dst, data, 8); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(p.NumRuns), "runs")
}

// BenchmarkIO16: plan of the real 72 x 866 decomposition and one write of U.
func BenchmarkIO16(b *testing.B) {
	d := openSample(&testing.T{}, "adios-io16", false)
	ctx := context.Background()
	blocks, err := d.MapBlocks(ctx, 515)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("plan", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := BuildPlan("bench", 515, d.decomps[515].dims, blocks, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	p, _ := d.Plan(ctx, 515)
	v := d.Var("U")
	data := make([][]byte, len(v.Writes[0].Blocks))
	for g := range data {
		if data[g], err = d.readRaw(ctx, &v.Writes[0].Blocks[g], v.Type); err != nil {
			b.Fatal(err)
		}
	}
	dst := make([]byte, p.Elems*8)
	b.Run("scatter", func(b *testing.B) {
		b.SetBytes(p.Elems * 8)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if err := p.Scatter(dst, data, 8); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(p.NumRuns), "runs")
	})
}
