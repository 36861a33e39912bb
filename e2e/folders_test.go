package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// TestFolderMessagesCLI: what a user sees for folders and for paths inside a
// dataset (messages and exit codes of the built binary; the data path shown
// as DATA).
func TestFolderMessagesCLI(t *testing.T) {
	data := sharedData(t, "")
	text := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(text, []byte("my lab notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	formats := "relayout reads ADIOS2 BP3 files (NAME.bp), BP4 and BP5 directories, HDF5 files (plain, openPMD, ADIOS2 HDF5 engine, Chombo), AMReX plotfiles, netCDF classic files (CDF-1/2/5; a folder or glob of history files is one stream), relayout outputs, and folders of these (a file-based series, or a folder holding one dataset)"
	for _, c := range []struct {
		name, in string
		code     int
		stderr   string // exact, for exit 2
	}{
		{"folder-of-one", "DATA/bp4/picongpu-lwfa", 0, ""},
		{"two-unrelated", "DATA/bp4/archive", 2,
			"relayout: reader: DATA/bp4/archive: this folder holds 2 unrelated datasets, pass one of them: Attribute.2.5.bp4.bp (BP4), Common.2.10.bp4.bp (BP4): unsupported\n"},
		{"md.idx", "DATA/bp4/picongpu-lwfa/pic_n2.bp/md.idx", 2,
			"relayout: reader: DATA/bp4/picongpu-lwfa/pic_n2.bp/md.idx: this is part of the BP4 dataset DATA/bp4/picongpu-lwfa/pic_n2.bp: pass that directory: unsupported\n"},
		{"data.0", "DATA/bp4/generated-lb/lb-bp4.bp/data.0", 2,
			"relayout: reader: DATA/bp4/generated-lb/lb-bp4.bp/data.0: this is part of the BP4 dataset DATA/bp4/generated-lb/lb-bp4.bp: pass that directory: unsupported\n"},
		{"amrex-level", "DATA/amrex/pelelmex-2d/Level_0", 2,
			"relayout: reader: DATA/amrex/pelelmex-2d/Level_0: this is part of the AMReX plotfile DATA/amrex/pelelmex-2d: pass that directory: unsupported\n"},
		{"text-file", text, 2,
			"relayout: reader: " + text + ": not a recognised format (" + formats + "): unsupported\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Replace(c.in, "DATA", data, 1)
			out := filepath.Join(t.TempDir(), "out")
			r := relayout(t, "run", in, "-o", out, "--progress", "none")
			stderr := strings.ReplaceAll(r.stderr, data, "DATA")
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, c.code, r.stdout, stderr)
			}
			if c.code == 2 {
				if stderr != c.stderr {
					t.Errorf("stderr:\n%s\nwant:\n%s", stderr, c.stderr)
				}
				if names := finalNames(t, out); len(names) > 0 {
					t.Errorf("files under OUT's final names after a refused run: %v", names)
				}
				return
			}
			m := readManifest(t, out)
			if m.Input.Path != filepath.Join(in, "pic_n2.bp") || m.Input.Format != "openpmd-bp4" || len(m.Variables) == 0 {
				t.Errorf("manifest input %+v, %d variables", m.Input, len(m.Variables))
			}
			mustRun(t, "verify", in, out)
		})
	}
}

// TestOpenPMDEncodingsRun writes series with openPMD-api in every iteration
// encoding and backend, runs relayout on the folder (a file-based series, or
// the folder holding the one dataset) and checks the output with
// openpmd_gen.py check: every mesh element through h5py against the input
// (openPMD-api) and the value rule.
func TestOpenPMDEncodingsRun(t *testing.T) {
	meshes := []string{"B/x", "B/y", "B/z", "E/x", "E/y", "E/z", "j/x", "j/y", "j/z", "phi", "rho"}
	constant := map[string]bool{"j/z": true, "phi": true} // openPMD constant record components
	var particles []string                                // species "electrons"
	for _, r := range []string{"charge", "id", "mass", "momentum/x", "momentum/y", "momentum/z", "position/x", "position/y", "position/z",
		"positionOffset/x", "positionOffset/y", "positionOffset/z", "weighting"} {
		particles = append(particles, "particles/electrons/"+r)
	}
	const elems = 16 * 12 * 10
	for i, c := range []struct {
		backend, encoding string
		extra             []string
	}{
		{"bp5", "file", nil}, {"bp4", "file", nil}, {"h5", "file", nil},
		{"bp5", "variable", nil}, {"bp4", "variable", nil},
		{"bp5", "group", nil}, {"bp4", "group", nil}, {"h5", "group", nil},
		// other seeds, many small boxes over more ranks
		{"bp5", "variable", []string{"--ranks", "9", "--min-box", "2", "--max-box", "5"}},
		{"bp4", "file", []string{"--ranks", "9", "--min-box", "2", "--max-box", "5"}},
	} {
		name := c.backend + "-" + c.encoding
		if c.extra != nil {
			name += "-small-boxes"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "diags")
			seed := fmt.Sprint(21 + i)
			testkit.OpenPMDGen(t, append([]string{"write", in, "--backend", c.backend, "--encoding", c.encoding,
				"--shape", "16,12,10", "--particles", "30", "--seed", seed}, c.extra...)...)
			ext := map[string]string{"bp4": ".bp", "bp5": ".bp", "h5": ".h5"}[c.backend]
			series := filepath.Join(in, "openpmd"+ext)
			if c.encoding == "file" {
				series = filepath.Join(in, "openpmd_%06T"+ext)
			}
			out := filepath.Join(dir, "out")
			mustRun(t, "run", in, "-o", out, "--progress", "none")
			mustRun(t, "verify", in, out)
			m := readManifest(t, out)
			var names, species []string
			for _, v := range m.Variables {
				if v.Species != "" {
					species = append(species, v.Name)
				} else {
					names = append(names, v.Name)
				}
				var steps []int64
				ds := v.Datasets
				if constant[v.Name] || v.Species != "" && len(v.Datasets) == 0 {
					ds = v.Constants
				}
				for _, d := range ds {
					steps = append(steps, d.Step)
				}
				if !slices.Equal(steps, []int64{0, 100, 200}) {
					t.Errorf("%s: steps %v, want the iterations 0, 100, 200", v.Name, steps)
				}
			}
			if !slices.Equal(names, meshes) {
				t.Errorf("variables %v, want %v", names, meshes)
			}
			if !slices.Equal(species, particles) {
				t.Errorf("particle variables %v, want %v", species, particles)
			}
			checkParticles(t, series, out)

			rep := checkOpenPMD(t, series, out)
			// Every mesh element, in series.h5 and in its own file (constant
			// records are read by openPMD-api only: they are no datasets).
			if want := 2 * (len(meshes) - len(constant)) * 3 * elems; rep.H5pyElementsEqual != want {
				t.Errorf("h5py: %d elements equal the input and the rule, want %d", rep.H5pyElementsEqual, want)
			}
			t.Logf("lacks: %s", strings.Join(rep.Lacks, "; "))
		})
	}
}

// localScript writes, per step, a global array g, a local array loc (three
// blocks without a global shape) and a local value lv (one per block) with
// ADIOS2, then prints what ADIOS2 reads back for lv per step as JSON.
const localScript = `
import sys, json, numpy as np, adios2, adios2.bindings as ab
out, engine = sys.argv[1], sys.argv[2]
adios = ab.ADIOS()
io = adios.DeclareIO("w")
io.SetEngine(engine)
g = io.DefineVariable("g", np.zeros(6), [6], [0], [6], False)
loc = io.DefineVariable("loc", np.zeros(4), [], [], [4], False)
lv = io.DefineVariable("lv", np.zeros(1, "i4"), [ab.LocalValueDim], [], [], False)
w = io.Open(out, ab.Mode.Write)
for step in range(2):
    w.BeginStep()
    w.Put(g, np.arange(6.0) + 10 * step, ab.Mode.Sync)
    for b in range(3):
        w.Put(loc, np.arange(4.0) + 100 * b + 1000 * step, ab.Mode.Sync)
        w.Put(lv, np.array([7 + 10 * b + step], dtype="i4"), ab.Mode.Sync)
    w.EndStep()
w.Close()
with adios2.FileReader(out) as f:
    print(json.dumps([f.read("lv", step_selection=[s, 1]).tolist() for s in range(2)]))
`

// TestBPLocalArraysAndValues: a local array is not rewritten but listed in
// the run's skipped list by name with the reason; a local value becomes the
// documented 1-d array of one element per block, equal to what ADIOS2 reads.
func TestBPLocalArraysAndValues(t *testing.T) {
	_, env := testkit.PeersEnv(t)
	for _, engine := range []string{"BP4", "BP5"} {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "local.bp")
			cmd := exec.Command(python, "-c", localScript, in, engine)
			cmd.Env = env
			b, err := cmd.Output()
			if err != nil {
				t.Fatalf("adios2 writer: %v", err)
			}
			var want [][]int64
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatalf("adios2 read-back %q: %v", b, err)
			}
			out := filepath.Join(dir, "out")
			r := mustRun(t, "run", in, "-o", out, "--progress", "none")
			const reason = "loc: local array (blocks have no global position) is not supported by run"
			if !strings.Contains(r.stderr+r.stdout, "skipped: 1 objects not rewritten") {
				t.Errorf("run does not say it skipped an object:\n%s", r.stderr)
			}
			raw, err := os.ReadFile(filepath.Join(out, "relayout.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Skipped   []string `json:"skipped"`
				Variables []struct{ Name, File string }
			}
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(m.Skipped, []string{reason}) {
				t.Errorf("skipped %q, want [%q]", m.Skipped, reason)
			}
			var names []string
			for _, v := range m.Variables {
				names = append(names, v.Name)
			}
			if !slices.Equal(names, []string{"g", "lv"}) {
				t.Errorf("variables %v, want g and lv", names)
			}
			script := "import h5py, json, sys\nf = h5py.File(sys.argv[1])\nprint(json.dumps([f['data/%d/meshes/lv' % s][()].tolist() for s in range(2)]))"
			b, err = exec.Command(python, "-c", script, filepath.Join(out, "lv.h5")).CombinedOutput()
			if err != nil {
				t.Fatalf("h5py: %v\n%s", err, b)
			}
			var got [][]int64
			if err := json.Unmarshal(b, &got); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("lv in the output %s (%v), ADIOS2 reads %v", b, err, want)
			}
			mustRun(t, "verify", in, out)
		})
	}
}
