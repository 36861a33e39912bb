package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRunMergedGeneratedLB writes bp4/bp5 generated-lb with --layout merged
// --scope rank and checks: run and verify pass; h5py reads every array
// element by element equal to a contiguous rewrite of the same input (the
// oracle; the contiguous rewrite is itself verified against the input) and
// equal to the value rules of PROVENANCE.txt; the manifest records layout
// "merged" and the plan's cuboid count for every array; the partially
// covered fine/Ez stores exactly that many cuboid datasets behind an HDF5
// virtual dataset, and its file is smaller than the contiguous one.
func TestRunMergedGeneratedLB(t *testing.T) {
	for _, c := range []struct{ name, input string }{
		{"bp4", "bp4/generated-lb/lb-bp4.bp"},
		{"bp5", "bp5/generated-lb/lb-bp5.bp"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := sharedData(t, c.input)
			var p planJSON
			r := mustRun(t, "plan", in, "--json", "--layout", "merged", "--scope", "rank")
			if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
				t.Fatal(err)
			}
			want := map[string]int{} // "var/step" -> cuboids of the rank scope
			for _, v := range p.Variables {
				for _, l := range v.Layouts {
					if l.Layout.Kind != "merged" && len(l.Shape) > 0 {
						t.Errorf("plan: %s layout %s, want merged", v.Name, l.Layout.Kind)
					}
					for _, s := range l.Steps {
						want[fmt.Sprintf("%s/%d", v.Name, s)] = l.Cuboids.Rank
					}
				}
			}
			dir := t.TempDir()
			out, ref := filepath.Join(dir, "merged"), filepath.Join(dir, "ref")
			mustRun(t, "run", in, "-o", out, "--layout", "merged", "--scope", "rank", "-q")
			mustRun(t, "verify", in, out)
			// --fill: the dense contiguous reference the merged file must beat
			// (without it the partly covered fine/Ez is chunked, holes unstored).
			mustRun(t, "run", in, "-o", ref, "-q", "--fill")
			oracle(t, ref, out)

			b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Variables []struct {
					Name, File string
					Datasets   []struct {
						Step    int64
						Path    string
						Layout  string
						Shape   []int64
						Cuboids int
					}
				}
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			ezFile, ezCuboids := "", 0
			for _, v := range m.Variables {
				for _, d := range v.Datasets {
					if len(d.Shape) == 0 {
						continue // the scalar time stays contiguous
					}
					k := fmt.Sprintf("%s/%d", v.Name, d.Step)
					if d.Layout != "merged" || d.Cuboids != want[k] || d.Cuboids == 0 {
						t.Errorf("%s: manifest layout %s with %d cuboids, plan says merged with %d", k, d.Layout, d.Cuboids, want[k])
					}
					if v.Name == "fine/Ez" {
						ezFile, ezCuboids = v.File, d.Cuboids
					}
				}
			}
			if ezFile == "" {
				t.Fatal("fine/Ez not in the manifest")
			}
			// h5py: stored pieces behind the VDS, and the value rules.
			script := fmt.Sprintf(`
import h5py, numpy as np, sys
N = 32
i, j, k = np.meshgrid(np.arange(N), np.arange(N), np.arange(N), indexing="ij")
out, want = %q, %d
with h5py.File(out + "/" + %q) as f:
    for s in range(3):
        d = f["/data/%%d/meshes/fine/Ez" %% s]
        assert d.is_virtual, "fine/Ez is not a virtual dataset"
        n = len(d.virtual_sources())
        stored = [x for x in f["/data/%%d/cuboids/fine/Ez" %% s].values()]
        assert n == want == len(stored), (n, want, len(stored))
        v = d[()]
        rule = -(((s*N+i)*N+j)*N+k).astype(np.float64)
        covered = ~np.isnan(v)  # holes read as the fill value, NaN
        assert np.isnan(d.fillvalue), "fine/Ez fill value %%r, want NaN" %% d.fillvalue
        assert 0 < covered.sum() <= sum(x.size for x in stored) < v.size, "stored cuboids do not match the covered part"
        assert np.array_equal(v[covered], rule[covered]), "fine/Ez values"
with h5py.File(out + "/fields.Bx.h5") as f:
    for s in range(3):
        v = f["/data/%%d/meshes/fields/Bx" %% s][()]
        assert np.array_equal(v, (((s*N+i)*N+j)*N+k).astype(np.float64)), "fields/Bx values"
print("ok")
`, out, ezCuboids, ezFile)
			if b, err := exec.Command(python, "-c", script).CombinedOutput(); err != nil {
				t.Fatalf("h5py check: %v\n%s", err, b)
			}
			mi, _ := os.Stat(filepath.Join(out, ezFile))
			ri, _ := os.Stat(filepath.Join(ref, ezFile))
			if mi == nil || ri == nil || mi.Size() >= ri.Size() {
				t.Errorf("fine/Ez: merged file not smaller than the contiguous one (%v, %v)", mi, ri)
			}
		})
	}
}
