package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// amrViewsManifest is the manifest's OverlappingAMR views part.
type amrViewsManifest struct {
	Views []struct {
		File   string
		Type   string
		Levels []struct {
			Level  int
			Boxes  int
			Arrays []struct{ Name, Var, File, Path string }
		}
	}
	ViewsSkipped []string `json:"views_skipped"`
}

// TestParaViewAMR: relayout's OverlappingAMR views of the real PeleLMeX
// 3-D plotfile (3 levels, 1 + 8 + 64 boxes; run and a journaled run
// --resume), the PeleLMeX 2-D one and a Chombo 2-D one open in ParaView
// 5.11's vtkHDFReader with every level's every box where the level
// datasets' box tables put it and every value of every array equal to the
// level dataset at the box read with h5py (paraview_amr_check.py), and
// every level's cells under the next level's boxes blanked, 2-D (a slab of
// its refinement ratio to level 0 in cells) as 3-D. Chombo's levels refine
// by 4 then 2: no GDF view, and views_skipped says why. An AMRBox row
// changed in the view fails relayout verify and the ParaView check.
func TestParaViewAMR(t *testing.T) {
	needParaView(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name, in, view string
		boxes          []int
		arrays         int
		args           []string
		skipped        string // a views_skipped line
	}{
		{"pelelmex-3d", "amrex/pelelmex-3d", "view-amr_20.hdf", []int{1, 8, 64}, 38, nil, ""},
		{"pelelmex-3d-resume", "amrex/pelelmex-3d", "view-amr_20.hdf", []int{1, 8, 64}, 38, []string{"--resume"}, ""},
		{"pelelmex-2d", "amrex/pelelmex-2d", "view-amr_70100.hdf", []int{256, 551}, 0, nil, ""},
		{"chombo-2d", "chombo/mushy-layer/plt025000.2d.hdf5", "view-amr_25000.hdf", []int{1, 8, 8}, 0, nil,
			"view-amr_25000.hdf: no yt view (GDF): its levels refine by 4x4 then 2x2, not by one integer ratio"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			mustRun(t, append([]string{"run", sharedData(t, c.in), "-o", out, "-q"}, c.args...)...)
			var m amrViewsManifest
			b, err := os.ReadFile(filepath.Join(out, "relayout.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			var amr []int
			for i, v := range m.Views {
				if v.Type == "OverlappingAMR" {
					amr = append(amr, i)
				}
			}
			if len(amr) != 1 || m.Views[amr[0]].File != c.view {
				t.Fatalf("views %+v, want one OverlappingAMR %s", m.Views, c.view)
			}
			v := m.Views[amr[0]]
			var boxes []int
			for _, l := range v.Levels {
				boxes = append(boxes, l.Boxes)
			}
			if !slices.Equal(boxes, c.boxes) || (c.arrays > 0 && len(v.Levels[len(v.Levels)-1].Arrays) != c.arrays) {
				t.Errorf("levels %+v, want %v boxes of %d arrays", v.Levels, c.boxes, c.arrays)
			}
			if s := strings.Join(m.ViewsSkipped, "\n"); strings.Contains(s, "refined level") {
				t.Errorf("views_skipped lists refined levels: %s", s)
			}
			if s := strings.Join(m.ViewsSkipped, "\n"); c.skipped != "" && !strings.Contains(s, c.skipped) {
				t.Errorf("views_skipped %q, want a line with %q", s, c.skipped)
			}
			if fi, err := os.Stat(filepath.Join(out, v.File)); err != nil || fi.Size() > 2<<20 {
				t.Errorf("%s: %v: a view should copy no data", v.File, err)
			}
			msg, ok := pvScript(t, "paraview_amr_check.py", out)
			if !ok {
				t.Fatalf("ParaView check failed:\n%s", msg)
			}
			t.Logf("ParaView:\n%s", msg)
		})
	}

	t.Run("changed-box", func(t *testing.T) {
		in := sharedData(t, "amrex/pelelmex-3d")
		out := filepath.Join(dir, "pelelmex-3d")
		cmd := exec.Command(python, "-c", `import sys, h5py
with h5py.File(sys.argv[1], "a") as f:
    b = f["VTKHDF/Level1/AMRBox"]
    r = b[1]
    b[1] = b[2]
    b[2] = r`, filepath.Join(out, "view-amr_20.hdf"))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		r := relayout(t, "verify", in, out)
		if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "AMRBox is not the box table") {
			t.Errorf("verify of a changed AMRBox: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		if msg, ok := pvScript(t, "paraview_amr_check.py", out); ok || !strings.Contains(msg, "box table says") {
			t.Errorf("a changed AMRBox passed the ParaView check:\n%s", msg)
		}
	})
}

// TestYTAMR: relayout's GDF view of the real PeleLMeX 3-D plotfile
// (view-amr_20.gdf) loads in yt (Debian's 4.1, its gdf frontend) with the
// plotfile's grids, levels, domain and refinement, every grid's every
// field equal element by element to yt's reading of the plotfile itself
// (its AMReX frontend), per-level sums and whole-domain values equal
// (yt_amr.py). relayout verify checks the view's grids against the box
// tables; a grid's left index changed fails it.
func TestYTAMR(t *testing.T) {
	testkit.NeedPython(t, "Debian python3-yt and python3-h5py", "yt", "h5py")
	in := sharedData(t, "amrex/pelelmex-3d")
	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, "run", in, "-o", out, "-q")
	gdf := filepath.Join(out, "view-amr_20.gdf")
	b, err := exec.Command(python, "yt_amr.py", gdf, in).CombinedOutput()
	if err != nil {
		t.Fatalf("yt: %v\n%s", err, b)
	}
	t.Logf("yt:\n%s", b)
	cmd := exec.Command(python, "-c", `import sys, h5py
with h5py.File(sys.argv[1], "a") as f:
    f["grid_left_index"][5, 0] += 8`, gdf)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	r := relayout(t, "verify", in, out)
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "grids are not the box table") {
		t.Errorf("verify of a changed GDF grid: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestYTAMRUnits: relayout's views of an openPMD mesh-refinement series
// (amr_gen.py: rho and E on 2 levels, each with unitDimension and unitSI)
// carry the input's units: yt loads the GDF view with E's components in
// kg*m/(A*s**3) (equal to V/m) and rho in 0.001*A*s/m**3 (its unitSI 1e-3
// times C/m**3), and every grid of every field equal to its box of the
// level dataset (yt_gdf_units.py); ParaView reads the OverlappingAMR view
// of the same levels (paraview_amr_check.py) and the particle view of its
// 2-D particles, their z 0 (paraview_particles_check.py). A field_units
// changed in the view fails relayout verify.
func TestYTAMRUnits(t *testing.T) {
	testkit.NeedPython(t, "Debian python3-yt and python3-h5py", "yt", "h5py")
	dir := t.TempDir()
	in := filepath.Join(dir, "in", "openpmd.bp")
	testkit.PeersPython(t, "amr_gen.py", "write", in)
	out := filepath.Join(dir, "out")
	mustRun(t, "run", in, "-o", out, "-q")
	m := readViews(t, out)
	var types []string
	for _, v := range m.Views {
		types = append(types, v.File+" "+v.Type)
	}
	if !slices.Contains(types, "view-amr_100.hdf OverlappingAMR") || !slices.Contains(types, "view-amr_100.gdf GDF") {
		t.Fatalf("views %v, want the OverlappingAMR and GDF views of the mesh-refinement levels", types)
	}
	gdf := filepath.Join(out, "view-amr_100.gdf")
	b, err := exec.Command(python, "yt_gdf_units.py", gdf, "E_x=V/m", "E_y=kg*m/(A*s**3)", "rho=1e-3*C/m**3").CombinedOutput()
	if err != nil {
		t.Fatalf("yt: %v\n%s", err, b)
	}
	t.Logf("yt:\n%s", b)
	if _, err := exec.LookPath("pvpython"); err == nil {
		for _, script := range []string{"paraview_amr_check.py", "paraview_particles_check.py"} {
			msg, ok := pvScript(t, script, out)
			if !ok {
				t.Fatalf("ParaView check failed:\n%s", msg)
			}
			t.Logf("ParaView:\n%s", msg)
		}
	}
	cmd := exec.Command(python, "-c", `import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "a") as f:
    f["field_types/E_x"].attrs["field_units"] = np.bytes_("kg*m/(A*s**2)")`, gdf)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	r := relayout(t, "verify", in, out)
	if r.code != 1 || !strings.Contains(r.stdout+r.stderr, "field_units") {
		t.Errorf("verify of a changed field_units: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	b, err = exec.Command(python, "yt_gdf_units.py", gdf, "E_x=V/m").CombinedOutput()
	if err == nil || !strings.Contains(string(b), "DIFF E_x") {
		t.Errorf("yt_gdf_units.py passed changed units: %v\n%s", err, b)
	}
}
