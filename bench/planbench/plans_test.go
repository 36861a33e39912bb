package planbench

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
	"relayout/job"
	"relayout/planner"
	"relayout/reader"
)

var update = flag.Bool("update", false, "rewrite testdata/plans.golden from the current planner")

// planCases are the option sets the golden plans were recorded with: the
// defaults of `relayout plan`, auto with the cuboids listed, merged with the
// global scope, and automatic chunks with many readers.
var planCases = []struct {
	name string
	opts planner.PlanOptions
}{
	{"contiguous-r8-rank", planner.PlanOptions{Layout: planner.Contiguous, Readers: 8, Scope: planner.ScopeRank}},
	{"auto-r8-rank-cuboids", planner.PlanOptions{Layout: planner.AutoLayout, Readers: 8, Scope: planner.ScopeRank, WithCuboids: true}},
	{"auto-r1-global", planner.PlanOptions{Layout: planner.AutoLayout, Readers: 1, Scope: planner.ScopeGlobal}},
	{"merged-r64-node2-cuboids", planner.PlanOptions{Layout: planner.Merged, Readers: 64, Scope: planner.ScopeNode, RanksPerNode: 2, WithCuboids: true}},
	{"chunked-auto-r1000", planner.PlanOptions{Layout: planner.Chunked, AutoChunks: true, Readers: 1000, Scope: planner.ScopeRank}},
}

// realInputs are datasets of ../shared/data by real writers (ADIOS2 BP4/BP5
// after load balancing, AMReX, Chombo, PIConGPU, openPMD HDF5).
var realInputs = []string{
	"bp5/generated-lb/lb-bp5.bp",
	"bp4/generated-lb/lb-bp4.bp",
	"bp4/picongpu-lwfa",
	"bp5/quokka-2d",
	"amrex/pelelmex-3d",
	"chombo/mushy-layer/chk000100.3d.hdf5",
	"hdf5/fbpic",
}

// TestPlansUnchanged plans real datasets and the 10⁵-block benchmark array
// under several option sets and compares a digest of each plan (every
// figure, cuboid and reason of the JSON `relayout plan` prints) with the
// digests recorded in testdata/plans.golden before the per-block work of
// issue 19: speeding up the planner must not change a plan. -update
// rewrites the file (only when a plan is meant to change).
func TestPlansUnchanged(t *testing.T) {
	got := map[string]string{}
	for _, in := range realInputs {
		path := testkit.SharedData(t, in)
		dir := t.TempDir()
		ds, store, err := job.BuildCatalog(context.Background(), path, filepath.Join(dir, "catalog.db"), reader.Options{})
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		vars, err := store.Variables()
		if err != nil {
			t.Fatal(err)
		}
		for _, pc := range planCases {
			p, err := planner.NewPlanner(pc.opts)
			if err != nil {
				t.Fatal(err)
			}
			var plans []planner.VariablePlan
			for _, v := range vars {
				vp := p.Variable(v.Name, v.DType)
				if err := store.EachArray(context.Background(), v.Name, vp.Add); err != nil {
					t.Fatalf("%s %s: %v", in, pc.name, err)
				}
				plans = append(plans, vp.Plan())
			}
			got[in+" "+pc.name] = digest(t, plans)
		}
		store.Close()
		ds.Close()
		// relayout plan plans each array as the catalog is built
		// (job.BuildCatalogEach), not read back: the same plans.
		for _, pc := range planCases {
			p, err := planner.NewPlanner(pc.opts)
			if err != nil {
				t.Fatal(err)
			}
			vps := map[string]*planner.VariablePlanner{}
			ds, store, err := job.BuildCatalogEach(context.Background(), path, filepath.Join(dir, "each-"+pc.name+".db"), reader.Options{}, 0, false,
				func(a *catalog.Array) error {
					if vps[a.Var] == nil {
						vps[a.Var] = p.Variable(a.Var, a.DType)
					}
					return vps[a.Var].Add(a)
				}, nil)
			if err != nil {
				t.Fatalf("%s %s: %v", in, pc.name, err)
			}
			var plans []planner.VariablePlan
			for _, v := range vars {
				plans = append(plans, vps[v.Name].Plan())
			}
			if d := digest(t, plans); d != got[in+" "+pc.name] {
				t.Errorf("%s %s: planned while cataloguing: digest %s, from the catalog %s", in, pc.name, d, got[in+" "+pc.name])
			}
			store.Close()
			ds.Close()
		}
	}
	a := blocks100k()
	for _, pc := range planCases {
		p, err := planner.NewPlanner(pc.opts)
		if err != nil {
			t.Fatal(err)
		}
		ap, err := p.PlanArray(a)
		if err != nil {
			t.Fatal(err)
		}
		got["blocks100k "+pc.name] = digest(t, ap)
	}
	golden := filepath.Join("testdata", "plans.golden")
	if *update {
		var b strings.Builder
		b.WriteString("# sha256 (16 hex digits) of the JSON plan: input, options, digest (TestPlansUnchanged -update)\n")
		for _, k := range slices.Sorted(maps.Keys(got)) {
			fmt.Fprintf(&b, "%s %s\n", k, got[k])
		}
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := readGolden(t, golden)
	for k, d := range got {
		if w, ok := want[k]; !ok {
			t.Errorf("%s: no recorded plan (run with -update once, before changing the planner)", k)
		} else if w != d {
			t.Errorf("%s: plan changed: digest %s, recorded %s", k, d, w)
		}
	}
}

func digest(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:8])
}

func readGolden(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		want[line[:i]] = line[i+1:]
	}
	return want
}
