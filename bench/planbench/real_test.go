package planbench

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"relayout/catalog"
	"relayout/job"
	"relayout/planner"
	"relayout/reader"
)

// BenchmarkRealInput is the per-block cost of `relayout catalog` (the
// reader's index parsing and the store) and of the plan of `relayout plan`
// (every variable, default options, then auto with 8 readers) on a real
// dataset named by RELAYOUT_PLANBENCH_INPUT (skipped without it), e.g. the
// 351,537-block BP5 output of issue 19:
//
//	mpirun -np 8 python3 ../shared/peers/bp_gen.py BP5 /tmp/pb/bp5 192 4 --aggregators 4
//	RELAYOUT_PLANBENCH_INPUT=/tmp/pb/bp5 go test -run '^$' -bench RealInput ./bench/planbench
func BenchmarkRealInput(b *testing.B) {
	in := os.Getenv("RELAYOUT_PLANBENCH_INPUT")
	if in == "" {
		b.Skip("RELAYOUT_PLANBENCH_INPUT not set")
	}
	ctx := context.Background()
	dir := b.TempDir()
	n := 0
	build := func(b *testing.B, db string) *catalog.Store {
		ds, store, err := job.BuildCatalog(ctx, in, db, reader.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ds.Close()
		return store
	}
	store := build(b, filepath.Join(dir, "catalog.db"))
	defer store.Close()
	vars, err := store.Variables()
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range vars {
		n += v.Blocks
	}
	plan := func(b *testing.B, opts planner.PlanOptions) {
		p, err := planner.NewPlanner(opts)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range vars {
			vp := p.Variable(v.Name, v.DType)
			if err := store.EachArray(ctx, v.Name, vp.Add); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, tc := range []struct {
		name string
		op   func(b *testing.B)
	}{
		{"catalog", func(b *testing.B) { build(b, filepath.Join(dir, "again.db")).Close() }},
		{"plan", func(b *testing.B) {
			plan(b, planner.PlanOptions{Layout: planner.Contiguous, Readers: 8, Scope: planner.ScopeRank})
		}},
		{"plan-auto", func(b *testing.B) {
			plan(b, planner.PlanOptions{Layout: planner.AutoLayout, Readers: 8, Scope: planner.ScopeRank})
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			cpu0 := cpuTime()
			for b.Loop() {
				tc.op(b)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/block")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e9, "cpu-s/op")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/float64(n), "cpu-ns/block")
		})
	}
}
