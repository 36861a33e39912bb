package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"relayout/internal/testkit"
)

// viewsManifest is the manifest's views part.
type viewsManifest struct {
	Views []struct {
		File        string
		Step        int64
		Type        string
		WholeExtent []int64 `json:"whole_extent"`
		Arrays      []struct{ Name, Var, File, Path string }
	}
	ViewsSkipped []string `json:"views_skipped"`
}

func readViews(t *testing.T, out string) viewsManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m viewsManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// pvCheck runs paraview_check.py under xvfb-run pvpython on out (with the
// generated input's value rule when rule is set) and returns its output
// and whether it passed. The context's limit only guards against a hung
// ParaView (5.11 aborts, and may then wait, on files it cannot read).
func pvCheck(t *testing.T, out, rule string) (string, bool) {
	t.Helper()
	args := []string{out}
	if rule != "" {
		args = append(args, rule)
	}
	return pvScript(t, "paraview_check.py", args...)
}

// pvScript runs a check script under xvfb-run pvpython as pvCheck does.
func pvScript(t *testing.T, script string, scriptArgs ...string) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := scriptArgs[0]
	args := append([]string{"-a", "pvpython", script}, scriptArgs...)
	cmd := exec.CommandContext(ctx, "xvfb-run", args...)
	b, err := cmd.CombinedOutput()
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "OK") || strings.HasPrefix(l, "DIFF") || strings.Contains(l, "Error") || strings.Contains(l, "rror:") {
			lines = append(lines, l)
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("pvpython %s %s did not finish: %v\n%s", script, out, ctx.Err(), b)
	}
	return strings.Join(lines, "\n"), err == nil
}

func needParaView(t *testing.T) {
	t.Helper()
	testkit.NeedTool(t, "pvpython", "Debian paraview")
	testkit.NeedTool(t, "xvfb-run", "Debian xvfb")
	testkit.NeedPython(t, "Debian python3-h5py", "h5py", "numpy")
}

// TestParaViewViews: relayout's views of uniform meshes open in ParaView
// 5.11 (pvpython, VTKHDFReader) with every value equal, point by point, to
// the variable's dataset read with h5py (and, for the generated input, to
// its value rule), and ParaView's probe at the physical position of
// corners and interior indices (from the variable's own openPMD
// attributes) returns the element at that index: a generated non-cubic
// 64x48x40 array (run, and run --resume, a journaled job whose commit
// moves the views), openPMD HDF5 (example-femm-3d), PIConGPU's openPMD BP4
// (staggered components, particles) and Quokka's 2-D openPMD BP5. A view
// whose Direction is made the identity fails the check, as does relayout
// verify.
func TestParaViewViews(t *testing.T) {
	needParaView(t)
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen")
	mustRun(t, "generate", gen, "--shape", "64,48,40", "--chunk-shape", "16,16,8", "--steps", "0,100", "-q")
	rule := filepath.Join(gen, "data00000000.h5")

	t.Run("generated", func(t *testing.T) {
		out := filepath.Join(dir, "gen-out")
		mustRun(t, "run", gen, "-o", out, "-q")
		m := readViews(t, out)
		if len(m.Views) != 2 || m.Views[0].File != "view_0.hdf" || m.Views[1].File != "view_100.hdf" ||
			len(m.Views[0].Arrays) != 4 {
			t.Fatalf("views %+v, want view_0.hdf and view_100.hdf of 4 arrays each", m.Views)
		}
		// VTK's x is the array's last axis: 40 points, then 48, then 64.
		if got := m.Views[0].WholeExtent; len(got) != 6 || got[1] != 39 || got[3] != 47 || got[5] != 63 {
			t.Errorf("WholeExtent %v, want [0 39 0 47 0 63]", got)
		}
		for _, v := range m.Views {
			fi, err := os.Stat(filepath.Join(out, v.File))
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size() > 64<<10 {
				t.Errorf("%s is %d bytes: a view should cost kilobytes (virtual datasets, no data)", v.File, fi.Size())
			}
		}
		msg, ok := pvCheck(t, out, rule)
		if !ok {
			t.Fatalf("ParaView check failed:\n%s", msg)
		}
		t.Logf("ParaView:\n%s", msg)

		// A transposed view: ParaView's probe finds other values, and
		// relayout verify sees the Direction differ from the manifest.
		view := filepath.Join(out, "view_0.hdf")
		cmd := exec.Command(python, "-c", `import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "a") as f:
    f["VTKHDF"].attrs["Direction"] = np.eye(3).ravel()`, view)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		msg, ok = pvCheck(t, out, "")
		if ok || !strings.Contains(msg, "not oriented") {
			t.Errorf("a view with an identity Direction passed the ParaView check:\n%s", msg)
		}
		r := relayout(t, "verify", gen, out)
		if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "Direction differs") {
			t.Errorf("verify of a changed view: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("resume", func(t *testing.T) {
		out := filepath.Join(dir, "gen-resume")
		mustRun(t, "run", gen, "-o", out, "--resume", "-q")
		if m := readViews(t, out); len(m.Views) != 2 {
			t.Fatalf("journaled job: views %+v", m.Views)
		}
		if msg, ok := pvCheck(t, out, rule); !ok {
			t.Fatalf("ParaView check failed:\n%s", msg)
		}
	})

	for _, c := range []struct{ name, in, skipped string }{
		{"openpmd-hdf5", "hdf5/openpmd-femm/example-femm-3d.h5", "E/x: a constant record component"},
		{"picongpu-bp4", "bp4/picongpu-lwfa", "particles/e: no particle view: positionOffset/x is not constant 0"},
		{"quokka-2d-bp5", "bp5/quokka-2d", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := sharedData(t, c.in)
			out := filepath.Join(dir, c.name)
			mustRun(t, "run", in, "-o", out, "-q")
			m := readViews(t, out)
			if len(m.Views) == 0 {
				t.Fatalf("no views: %+v", m)
			}
			if c.skipped != "" && !strings.Contains(strings.Join(m.ViewsSkipped, "\n"), c.skipped) {
				t.Errorf("views_skipped %q does not say %q", m.ViewsSkipped, c.skipped)
			}
			msg, ok := pvCheck(t, out, "")
			if !ok {
				t.Fatalf("ParaView check failed:\n%s", msg)
			}
			t.Logf("ParaView:\n%s", msg)
		})
	}
}

// TestViewsSkipped: --no-views makes none and says so; a netCDF input's
// time series get no ImageData view, which the manifest says.
func TestViewsSkipped(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen")
	mustRun(t, "generate", gen, "--shape", "16,12,8", "--chunk-shape", "8,4,4", "--steps", "0", "-q")
	out := filepath.Join(dir, "none")
	mustRun(t, "run", gen, "-o", out, "--no-views", "-q")
	m := readViews(t, out)
	if len(m.Views) != 0 || len(m.ViewsSkipped) != 1 || !strings.Contains(m.ViewsSkipped[0], "--no-views") {
		t.Errorf("--no-views: views %+v, skipped %q", m.Views, m.ViewsSkipped)
	}
	if names, _ := filepath.Glob(filepath.Join(out, "*.hdf")); len(names) != 0 {
		t.Errorf("--no-views left %v", names)
	}
	nc := sharedData(t, "netcdf/mpas-mesh-0rec/mesh.QU.1920km.151026.nc")
	out = filepath.Join(dir, "nc")
	mustRun(t, "run", nc, "-o", out, "-q")
	m = readViews(t, out)
	if len(m.Views) != 0 || len(m.ViewsSkipped) != 1 || !strings.Contains(m.ViewsSkipped[0], "netCDF time series") {
		t.Errorf("netCDF input: views %+v, skipped %q", m.Views, m.ViewsSkipped)
	}
}

// TestYTUniform: yt (Debian python3-yt, its openPMD frontend) loads
// OUT/series.h5 of a uniform output as it is: every iteration, the domain
// of a non-cubic 64x48x40 array with each axis right, and every element of
// every field equal to the input read with h5py.
func TestYTUniform(t *testing.T) {
	testkit.NeedPython(t, "Debian python3-yt and python3-h5py", "yt", "h5py")
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen")
	mustRun(t, "generate", gen, "--shape", "64,48,40", "--chunk-shape", "16,16,8", "--steps", "0,100", "-q")
	out := filepath.Join(dir, "out")
	mustRun(t, "run", gen, "-o", out, "-q")
	b, err := exec.Command(python, "yt_uniform.py", out, gen).CombinedOutput()
	if err != nil {
		t.Fatalf("yt: %v\n%s", err, b)
	}
	t.Logf("yt:\n%s", b)
}

// TestParaViewParticles: an openPMD series with particles whose
// positionOffset is constant 0 (openpmd_gen.py, WarpX-like: 3000 electrons,
// 3 iterations) gets a particle view a step, VTKHDF UnstructuredGrid of
// VERTEX cells, that ParaView 5.11's vtkHDFReader reads with as many points
// as particles, their coordinates and point arrays equal to the record
// components read with h5py (paraview_particles_check.py); the view is
// small (positions and records virtual, the cell arrays compressed).
// PIConGPU's (positionOffset the particle's cell) gets none, and says why
// (TestParaViewViews). A changed Connectivity fails relayout verify.
func TestParaViewParticles(t *testing.T) {
	needParaView(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	testkit.OpenPMDGen(t, "write", in, "--backend", "bp5", "--particles", "3000")
	out := filepath.Join(dir, "out")
	mustRun(t, "run", filepath.Join(in, "openpmd.bp"), "-o", out, "-q")
	m := readViews(t, out)
	var files []string
	for _, v := range m.Views {
		if v.Type != "UnstructuredGrid" {
			continue
		}
		files = append(files, v.File)
		fi, err := os.Stat(filepath.Join(out, v.File))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 64<<10 {
			t.Errorf("%s is %d bytes: a particle view should cost kilobytes", v.File, fi.Size())
		}
	}
	want := []string{"view-particles-electrons_0.hdf", "view-particles-electrons_100.hdf", "view-particles-electrons_200.hdf"}
	if !slices.Equal(files, want) {
		t.Fatalf("particle views %v, want %v", files, want)
	}
	if s := strings.Join(m.ViewsSkipped, "\n"); !strings.Contains(s, "particles/electrons: not in its particle view: charge (constant") {
		t.Errorf("views_skipped %q does not say that the constant records are not in the view", s)
	}
	msg, ok := pvScript(t, "paraview_particles_check.py", out)
	if !ok {
		t.Fatalf("ParaView check failed:\n%s", msg)
	}
	t.Logf("ParaView:\n%s", msg)
	cmd := exec.Command(python, "-c", `import sys, h5py
with h5py.File(sys.argv[1], "a") as f:
    f["VTKHDF/Connectivity"][5] = 7`, filepath.Join(out, want[1]))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	r := relayout(t, "verify", filepath.Join(in, "openpmd.bp"), out)
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "Connectivity differs") {
		t.Errorf("verify of a changed Connectivity: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if msg, ok := pvScript(t, "paraview_particles_check.py", out); ok || !strings.Contains(msg, "not one VERTEX a point") {
		t.Errorf("a changed Connectivity passed the ParaView check:\n%s", msg)
	}
}
