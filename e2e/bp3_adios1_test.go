package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"relayout/catalog"
	"relayout/internal/testkit"
	"relayout/reader"
)

// The real ADIOS 1.x writer (Debian python3-adios) in testdata/adios1.
const writeBP3Script = "../testdata/adios1/write_bp3.py"

// needADIOS1 skips when ADIOS 1.x, its Python bindings or Open MPI are
// missing (a user's machine), except under CI where that is a failure.
func needADIOS1(tb testing.TB) {
	tb.Helper()
	var missing []string
	for _, tool := range []string{"mpirun", "bpls"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if b, err := exec.Command(python, "-c", "import adios_mpi, mpi4py, h5py").CombinedOutput(); err != nil {
		missing = append(missing, fmt.Sprintf("%s modules adios_mpi/mpi4py/h5py (%s)", python, strings.TrimSpace(string(b))))
	}
	if len(missing) == 0 {
		return
	}
	msg := fmt.Sprintf("ADIOS 1.x writer unavailable: missing %s (Debian: libadios-bin python3-adios python3-mpi4py openmpi-bin; see scripts/deps.sh)",
		strings.Join(missing, ", "))
	testkit.Unavailable(tb, "%s", msg)
}

// mpirunArgs start np ranks on a small machine, also as root (containers):
// oversubscribe because np may exceed the cores, shared memory and self
// transports only, and no single-copy mechanism (CMA needs ptrace rights a
// container usually lacks).
func mpirunArgs(np int) []string {
	return []string{"-np", fmt.Sprint(np), "--oversubscribe",
		"--mca", "btl", "self,vader", "--mca", "btl_vader_single_copy_mechanism", "none"}
}

// writeBP3 runs the ADIOS 1.x writer with 4 MPI ranks and returns the path of
// dir/name.bp.
func writeBP3(tb testing.TB, dir, name string, args ...string) string {
	tb.Helper()
	script, err := filepath.Abs(writeBP3Script)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bp := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "mpirun", append(mpirunArgs(4), append([]string{python, script, bp}, args...)...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1")
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("mpirun %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, b)
	}
	tb.Logf("ADIOS 1.x wrote %s in %v", name, time.Since(start).Round(time.Millisecond))
	return bp
}

// writerLayout is what write_bp3.py records in NAME.bp.blocks.json.
type writerLayout struct {
	Ranks, Aggregators, Steps int
	Variables                 []writerVar
}

type writerVar struct {
	Name   string
	Shape  []int64
	Blocks []struct{ Start, Count []int64 }
	Owner  [][]int // [step][block] = writer rank
}

// catalogVar is one variable of `relayout catalog --json`.
type catalogVar struct {
	Name, DType string
	Steps       []int64
	Blocks      int
	Bytes       int64
	StoredBytes int64 `json:"stored_bytes"`
	Files       int
}

// bplsVar is one variable as `bpls -l -D` lists it (through bpls_oracle.py).
type bplsVar struct {
	Name, Type, DType string
	Steps             int
	Shape             []int64
	Blocks            []int // per step
}

func bplsList(t *testing.T, bp string) []bplsVar {
	t.Helper()
	b, err := exec.Command(python, "bpls_oracle.py", "list", bp).Output()
	if err != nil {
		t.Fatalf("bpls_oracle.py list: %v\n%s", err, b)
	}
	var vs []bplsVar
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatalf("bpls_oracle.py list: %v\n%s", err, b)
	}
	return vs
}

// TestADIOS1SubfiledBP3 writes a sub-filed BP3 dataset with real ADIOS 1.x
// (4 ranks, MPI_AGGREGATE into 2 sub-files, blocks dealt to ranks by a seeded
// shuffle that changes between the 2 steps), then checks relayout's catalog
// against bpls and the writer's record, runs both layouts, verifies, and
// compares every output element with `bpls -d` and the value rule.
func TestADIOS1SubfiledBP3(t *testing.T) {
	needADIOS1(t)
	dir := t.TempDir()
	bp := writeBP3(t, dir, "fields.bp")
	for _, f := range []string{"fields.bp", "fields.bp.dir/fields.bp.0", "fields.bp.dir/fields.bp.1"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("ADIOS 1.x did not write %s: %v", f, err)
		}
	}
	var wrote writerLayout
	if b, err := os.ReadFile(bp + ".blocks.json"); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &wrote); err != nil {
		t.Fatal(err)
	}
	listed := bplsList(t, bp)

	// The catalog lists what bpls lists: every variable, its steps, its
	// blocks; or names it among the skipped objects with a reason.
	r := mustRun(t, "catalog", bp, "--json")
	var cat struct {
		Format    string
		Variables []catalogVar
		Skipped   []string
	}
	if err := json.Unmarshal([]byte(r.stdout), &cat); err != nil {
		t.Fatalf("catalog --json: %v\n%s", err, r.stdout)
	}
	t.Logf("catalog: format %q, %d variables, skipped %q", cat.Format, len(cat.Variables), cat.Skipped)
	for _, lv := range listed {
		name := strings.TrimPrefix(lv.Name, "/")
		i := slices.IndexFunc(cat.Variables, func(cv catalogVar) bool {
			return strings.TrimPrefix(cv.Name, "/") == name
		})
		if i < 0 {
			if !slices.ContainsFunc(cat.Skipped, func(s string) bool { return strings.Contains(s, name) }) {
				t.Errorf("bpls lists %s (%s %v, %d steps) but the catalog neither lists nor skips it", lv.Name, lv.Type, lv.Shape, lv.Steps)
			}
			continue
		}
		cv := cat.Variables[i]
		blocks := 0
		for _, n := range lv.Blocks {
			blocks += n
		}
		wantSteps := make([]int64, lv.Steps)
		for s := range wantSteps {
			wantSteps[s] = int64(s)
		}
		elems := int64(1)
		for _, n := range lv.Shape {
			elems *= n
		}
		size := map[byte]int64{'1': 1, '2': 2, '4': 4, '8': 8}[lv.DType[len(lv.DType)-1]]
		if cv.DType != lv.DType || !slices.Equal(cv.Steps, wantSteps) || cv.Blocks != blocks || cv.Bytes != int64(lv.Steps)*elems*size {
			t.Errorf("catalog %s: dtype %s steps %v blocks %d bytes %d; bpls: dtype %s steps %v blocks %d (%v per step) bytes %d",
				cv.Name, cv.DType, cv.Steps, cv.Blocks, cv.Bytes, lv.DType, wantSteps, blocks, lv.Blocks, int64(lv.Steps)*elems*size)
		}
	}
	for _, wv := range wrote.Variables {
		if !slices.ContainsFunc(cat.Variables, func(cv catalogVar) bool {
			return cv.Name == wv.Name && cv.Files == wrote.Aggregators
		}) {
			t.Errorf("catalog has no variable %s with blocks in %d sub-files", wv.Name, wrote.Aggregators)
		}
	}

	// In process: every block's box, step and writer rank is what the writer
	// wrote, and each rank's blocks sit in one sub-file shared by
	// ranks/aggregators ranks.
	checkBlocks(t, bp, wrote)

	// Both layouts; the chunked run takes one variable per rank of chunk spec.
	runs := []struct {
		name       string
		sel, flags []string
	}{
		{"contiguous", nil, []string{"--layout", "contiguous"}},
		{"chunked-3d", []string{"--var", "rho"}, []string{"--layout", "chunked", "--chunks", "2x3x2"}},
		{"chunked-2d", []string{"--var", "ncell"}, []string{"--layout", "chunked", "--chunk-shape", "7,5"}},
	}
	var dirs []string
	for _, run := range runs {
		name, out := run.name, filepath.Join(dir, run.name)
		mustRun(t, slices.Concat([]string{"run", bp, "-o", out, "-q", "--jobs", "2"}, run.sel, run.flags)...)
		mustRun(t, slices.Concat([]string{"verify", bp, out}, run.sel)...)
		m := readManifest(t, out)
		checkH5dumpLayout(t, out, m)
		if name == "contiguous" && len(m.Variables) != len(cat.Variables) {
			t.Errorf("contiguous run wrote %d variables, the catalog has %d", len(m.Variables), len(cat.Variables))
		}
		if name != "contiguous" && (len(m.Variables) != 1 || m.Variables[0].Datasets[0].Layout != "chunked") {
			t.Errorf("%s: manifest %+v, want one chunked variable", name, m.Variables)
		}
		dirs = append(dirs, out)
	}
	b, err := exec.Command(python, append([]string{"bpls_oracle.py", "compare", bp}, dirs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("bpls -d oracle found differences or failed: %v\n%s", err, b)
	}
	t.Logf("bpls -d oracle:\n%s", b)
}

// checkBlocks opens the dataset in process and compares every block of the
// writer's variables with the writer's own record.
func checkBlocks(t *testing.T, bp string, wrote writerLayout) {
	t.Helper()
	ds, err := reader.Open(bp, reader.Options{})
	if err != nil {
		t.Errorf("reader.Open(%s): %v", bp, err)
		return
	}
	defer ds.Close()
	type key struct {
		v     string
		step  int64
		lower string
	}
	got := map[key]catalog.Block{}
	err = ds.Scan(context.Background(), func(a *catalog.Array) error {
		for _, b := range a.Blocks {
			got[key{a.Var, a.Step, fmt.Sprint(b.Box.Lower)}] = b
		}
		return nil
	})
	if err != nil {
		t.Errorf("Scan(%s): %v", bp, err)
		return
	}
	subfile := map[int32]string{} // writer rank -> sub-file
	ranksIn := map[string]map[int]bool{}
	for _, wv := range wrote.Variables {
		for step, owners := range wv.Owner {
			for i, wb := range wv.Blocks {
				k := key{wv.Name, int64(step), fmt.Sprint(wb.Start)}
				b, ok := got[k]
				if !ok {
					t.Errorf("%s step %d: no block at %v (the writer wrote %v there)", wv.Name, step, wb.Start, wb.Count)
					continue
				}
				delete(got, k)
				if !slices.Equal(b.Box.Count, wb.Count) || int(b.Rank) != owners[i] {
					t.Errorf("%s step %d block at %v: count %v rank %d, writer wrote count %v from rank %d",
						wv.Name, step, wb.Start, b.Box.Count, b.Rank, wb.Count, owners[i])
				}
				f := filepath.Base(b.File)
				if prev, ok := subfile[b.Rank]; ok && prev != f {
					t.Errorf("rank %d wrote into %s and %s", b.Rank, prev, f)
				}
				subfile[b.Rank] = f
				if ranksIn[f] == nil {
					ranksIn[f] = map[int]bool{}
				}
				ranksIn[f][int(b.Rank)] = true
			}
		}
	}
	for k := range got {
		if slices.ContainsFunc(wrote.Variables, func(wv writerVar) bool {
			return wv.Name == k.v
		}) {
			t.Errorf("%s step %d: block at %s the writer never wrote", k.v, k.step, k.lower)
		}
	}
	if len(ranksIn) != wrote.Aggregators {
		t.Errorf("blocks in sub-files %v, want %d sub-files", ranksIn, wrote.Aggregators)
	}
	for f, ranks := range ranksIn {
		if !strings.HasPrefix(f, filepath.Base(bp)+".") || len(ranks) != wrote.Ranks/wrote.Aggregators {
			t.Errorf("sub-file %s holds blocks of ranks %v, want %d ranks in a NAME.bp.N sub-file", f, ranks, wrote.Ranks/wrote.Aggregators)
		}
	}
}
