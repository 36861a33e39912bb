package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// TestAMRLevels rewrites the real AMR datasets with several layouts and
// checks every level against an independent reader of the input (amr.py):
// yt on the input, or for pelelmex-2d (on which yt aborts) numpy reading
// the plotfile's FABs. A refined level's dataset spans the domain refined
// by the cumulative ratio, carries refinementRatio, holds every input grid
// at its index and NaN elsewhere, is chunked whatever the layout with only
// the chunks its boxes touch allocated, and lists its boxes; yt on
// series.h5 shows each field's level 0 as the input's; openPMD-api reads
// every record of series.h5, the levels included, equal to the
// per-variable files.
func TestAMRLevels(t *testing.T) {
	testkit.NeedPython(t, "Debian python3-yt python3-h5py", "yt", "h5py")
	for _, c := range []struct {
		name, data, oracle string
		args, fields       []string
	}{
		{"pelelmex-2d", "amrex/pelelmex-2d", "fab", nil, []string{"temp", "HeatRelease", "Y(OH)"}},
		{"pelelmex-2d-merged", "amrex/pelelmex-2d", "fab", []string{"--layout", "merged"}, []string{"temp"}},
		{"pelelmex-3d", "amrex/pelelmex-3d", "yt", nil, []string{"temp", "x_velocity"}},
		{"pelelmex-3d-chunked", "amrex/pelelmex-3d", "yt", []string{"--layout", "chunked", "--chunks", "2x2x2"}, []string{"temp"}},
		{"mushy-layer-plt025000", "chombo/mushy-layer/plt025000.2d.hdf5", "yt", nil, []string{"Temperature", "Porosity"}},
		{"mushy-layer-plt000100-chunked", "chombo/mushy-layer/plt000100.2d.hdf5", "yt", []string{"--layout", "chunked", "--chunk-shape", "4,64"}, []string{"Temperature"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := sharedData(t, c.data)
			out := filepath.Join(t.TempDir(), "out")
			r := mustRun(t, append([]string{"run", in, "-o", out}, c.args...)...)
			if !strings.Contains(r.stdout+r.stderr, "refined level 1: chunked") {
				t.Errorf("the run's log does not say why level 1 is chunked:\n%s%s", r.stdout, r.stderr)
			}
			b, err := exec.Command(python, append([]string{"amr.py", in, out, c.oracle}, c.fields...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("amr.py: %v\n%s", err, b)
			}
			t.Logf("amr.py:\n%s", b)
			if c.args == nil {
				peersReaders(t, "pmd", "-", out)
			}
		})
	}
	// The sharded path (plan -o, rewrite per shard, commit) writes the same
	// sparse levels, and so does a rewrite of that output.
	t.Run("pelelmex-2d-shards", func(t *testing.T) {
		in := sharedData(t, "amrex/pelelmex-2d")
		out := filepath.Join(t.TempDir(), "out")
		mustRun(t, "plan", in, "-o", out, "--shards", "2", "-q")
		mustRun(t, "rewrite", out, "--shard", "0/2", "-q")
		mustRun(t, "rewrite", out, "--shard", "1/2", "-q")
		mustRun(t, "commit", out, "-q")
		b, err := exec.Command(python, "amr.py", in, out, "fab", "temp").CombinedOutput()
		if err != nil {
			t.Fatalf("amr.py: %v\n%s", err, b)
		}
		t.Logf("amr.py:\n%s", b)
		// relayout's output rewritten again (read back through its
		// manifest: the level's chunks become its boxes) stays sparse.
		again := filepath.Join(t.TempDir(), "again")
		mustRun(t, "run", out, "-o", again, "-q")
		if b, err = exec.Command(python, "amr.py", in, again, "fab", "temp").CombinedOutput(); err != nil {
			t.Fatalf("amr.py on the rewritten output: %v\n%s", err, b)
		}
	})
}

// TestAMROpenPMDInput rewrites openPMD mesh-refinement series written by
// openPMD-api (amr_gen.py: rho, rho_lvl1 and E_lvl1 of two patches stored
// as chunks) on every backend: each level record keeps its name and
// refinementRatio, spans the refined domain, is chunked with a note and a
// box table of the patches, and openPMD-api reads it equal to the input.
// BP keeps the patches as blocks, so only their chunks are allocated;
// openPMD-api's HDF5 datasets are dense (one block), the holes read as the
// input holds them.
func TestAMROpenPMDInput(t *testing.T) {
	for _, c := range []struct{ backend, sparse string }{{"bp", "1"}, {"bp4", "1"}, {"h5", "0"}} {
		t.Run(c.backend, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in", "openpmd."+c.backend)
			testkit.PeersPython(t, "amr_gen.py", "write", in)
			out := filepath.Join(dir, "out")
			r := mustRun(t, "run", in, "-o", out)
			if !strings.Contains(r.stdout+r.stderr, "layout: rho_lvl1: refined level 1: chunked") {
				t.Errorf("the run's log does not say why rho_lvl1 is chunked:\n%s%s", r.stdout, r.stderr)
			}
			t.Logf("amr_gen.py check:\n%s", testkit.PeersPython(t, "amr_gen.py", "check", in, out, c.sparse))
		})
	}
}
