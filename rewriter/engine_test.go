package rewriter

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"relayout/catalog"
	"relayout/planner"
)

// TestShardsMatchRun: the synthetic input (several ranks' blocks, byte
// orders, column-major blocks, scalars) written by Run and by a job of 3
// shards (Prepare, RewriteShard of each with its journal, every unit
// recorded, JoinParts, the unit check (ReadBack), package verify
// comparing every element with the input) under budgets small enough for
// tiles, boxes of chunks and cuboid pieces: the same layouts and digests in
// both manifests, the dataset kinds the engine promises (raw chunks of
// covered arrays pwritten, no part file), and h5py reads every element of
// the shards' output equal to the index rule and its digest equal to the
// manifest's.
func TestShardsMatchRun(t *testing.T) {
	chunk := func(a *catalog.Array) (planner.Layout, error) {
		if len(a.Shape) == 0 {
			return planner.Layout{Kind: planner.Contiguous}, nil
		}
		c := make([]int64, len(a.Shape))
		for d := range c {
			c[d] = max(1, a.Shape[d]/2)
		}
		return planner.Layout{Kind: planner.Chunked, Chunk: c}, nil
	}
	for _, tc := range []struct {
		name     string
		opts     Options
		wantKind string // of every covered array (not scalars); partly covered chunked ones: parts
		readable bool   // by the test's output catalog (catalogOutput)
	}{
		{"contiguous", Options{Layout: "contiguous", MaxMem: 16000, Fill: true}, kindContiguous, true},
		// Without Fill a partly covered array is chunked, holes unallocated
		// (planner.HoleLayout): parts, like the sparse chunked arrays.
		{"holes", Options{Layout: "contiguous", MaxMem: 16000}, kindContiguous, true},
		{"chunks", Options{LayoutFor: chunk, MaxMem: 64000}, kindChunks, true},
		{"compressed", Options{LayoutFor: chunk, Deflate: 1, MaxMem: 64000}, kindParts, false},
		{"merged", Options{Layout: planner.Merged, MaxMem: 16000, Merge: MergeOptions{Scope: planner.ScopeRank}}, kindMerged, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			vars := inputVars()
			st, src := buildInput(t, dir, vars)
			opts := tc.opts
			opts.Jobs, opts.Version = 3, "test-1"
			m, err := Run(context.Background(), st, src, filepath.Join(dir, "run"), opts)
			if err != nil {
				t.Fatal(err)
			}
			work := filepath.Join(dir, "job")
			stage := filepath.Join(work, "stage")
			popts := tc.opts
			popts.Version = "test-1"
			job, err := Prepare(context.Background(), st, src, stage, popts, PrepareOptions{Shards: 3, UnitBytes: 1000})
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, d := range job.Datasets {
				a, err := st.Array(d.key())
				if err != nil {
					t.Fatal(err)
				}
				want := tc.wantKind
				if (want == kindChunks || want == kindContiguous && !tc.opts.Fill) && !planner.FullyCovered(a) {
					want = kindParts // holes cost no bytes
				}
				if len(d.Shape) > 0 && d.Kind != want {
					t.Errorf("%s step %d: kind %s, want %s", d.Var, d.Step, d.Kind, want)
				}
				kinds[d.Kind]++
			}
			if kinds[tc.wantKind] == 0 {
				t.Errorf("no dataset of kind %s: %v", tc.wantKind, kinds)
			}
			recs := map[int]UnitRecord{}
			parts := make([]string, 3)
			for s := range 3 {
				parts[s] = filepath.Join(work, "parts", fmt.Sprintf("shard-%d-of-3.part", s))
				sh := Shard{Index: s, Part: parts[s], Done: map[int]bool{}, Journal: &memJournal{recs: recs}}
				if _, err := RewriteShard(context.Background(), st, src, job, stage, sh, 2, tc.opts.MaxMem, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := allFinished(job, recs); err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if k := job.Datasets[job.Units[r.Unit].Dataset].Kind; len(r.Chunks) > 0 && k != kindParts {
					t.Fatalf("unit %d of a %s dataset wrote %d chunks to a part file", r.Unit, k, len(r.Chunks))
				}
			}
			if err := JoinParts(context.Background(), job, stage, parts, recs, nil); err != nil {
				t.Fatal(err)
			}
			if tc.readable {
				out := catalogOutput(t, stage, &job.Manifest, "")
				var w bytes.Buffer
				ok, err := checkUnits(context.Background(), job, recs, out, fileSource{root: stage}, 2, tc.opts.MaxMem, &w)
				if err != nil || !ok {
					t.Fatalf("check: ok=%v err=%v\n%s", ok, err, w.String())
				}
				verifyOutput(t, st, src, stage, &job.Manifest, tc.opts.MaxMem)
			} else {
				// The test's output catalog reads neither deflated chunks
				// nor virtual datasets: h5py checks Run's digests on the
				// shards' output below.
				for vi, v := range m.Variables {
					for e, d := range v.Datasets {
						job.Manifest.Variables[vi].Datasets[e].SHA256 = d.SHA256
					}
				}
			}
			if got, want := manifestDatasets(t, &job.Manifest), manifestDatasets(t, m); got != want {
				t.Fatalf("shards' manifest:\n%s\nRun's:\n%s", got, want)
			}
			holes := map[string][]int64{} // shape -> chunk of the partly covered arrays
			for _, d := range job.Datasets {
				if tc.name == "holes" && d.Chunk != nil {
					holes[fmt.Sprint(d.Shape)] = d.Chunk
				}
			}
			checkOutput(t, stage, &job.Manifest, vars, func(shape []int64) []int64 {
				if c, ok := holes[fmt.Sprint(shape)]; ok {
					return c
				}
				if tc.wantKind == kindChunks || tc.wantKind == kindParts {
					l, _ := chunk(&catalog.Array{Shape: shape})
					return l.Chunk
				}
				return nil
			})
		})
	}
}

// manifestDatasets is the variables of m (layouts, chunks, digests) as JSON.
func manifestDatasets(t *testing.T, m *catalog.Manifest) string {
	var b bytes.Buffer
	for _, v := range m.Variables {
		b.WriteString(v.Name + " " + v.File + "\n")
		for _, d := range v.Datasets {
			b.WriteString(mustJSON(t, d) + "\n")
		}
	}
	return b.String()
}
