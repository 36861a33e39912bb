package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// TestParaViewAMR: relayout's OverlappingAMR view of the real PeleLMeX 3-D
// plotfile (3 levels, 1 + 8 + 64 boxes) opens in ParaView 5.11's
// vtkHDFReader with every level's every box where the level datasets' box
// tables put it and every value of every array equal to the level dataset
// at the box read with h5py (paraview_amr_check.py), the coarse cells under
// level 1 blanked; run and a journaled run --resume alike. An AMRBox row
// changed in the view fails relayout verify and the ParaView check.
func TestParaViewAMR(t *testing.T) {
	needParaView(t)
	in := sharedData(t, "amrex/pelelmex-3d")
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
	}{{"run", nil}, {"resume", []string{"--resume"}}} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			mustRun(t, append([]string{"run", in, "-o", out, "-q"}, c.args...)...)
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
			if len(amr) != 1 || m.Views[amr[0]].File != "view-amr_20.hdf" {
				t.Fatalf("views %+v, want one OverlappingAMR view-amr_20.hdf", m.Views)
			}
			v := m.Views[amr[0]]
			if len(v.Levels) != 3 || v.Levels[0].Boxes != 1 || v.Levels[1].Boxes != 8 || v.Levels[2].Boxes != 64 || len(v.Levels[2].Arrays) != 38 {
				t.Errorf("levels %+v, want 1 + 8 + 64 boxes of 38 arrays", v.Levels)
			}
			if s := strings.Join(m.ViewsSkipped, "\n"); strings.Contains(s, "refined level") {
				t.Errorf("views_skipped lists refined levels: %s", s)
			}
			if fi, err := os.Stat(filepath.Join(out, v.File)); err != nil || fi.Size() > 1<<20 {
				t.Errorf("%s: %v, %d bytes: a view should copy no data", v.File, err, fi.Size())
			}
			msg, ok := pvScript(t, "paraview_amr_check.py", out)
			if !ok {
				t.Fatalf("ParaView check failed:\n%s", msg)
			}
			t.Logf("ParaView:\n%s", msg)
		})
	}

	t.Run("changed-box", func(t *testing.T) {
		out := filepath.Join(dir, "run")
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
