package e2e

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// TestParticlesRealData rewrites the real particle species of PIConGPU
// (BP4: species "e", 35915 particles from two ranks, particle patches,
// constant charge and mass) and FBPIC (file-based HDF5: species
// "electrons" without particles, constant charge, mass and
// positionOffset), verifies them, and reads them back through
// openPMD-api (readers.py particles: series.h5 and each component's own
// file equal to the input, attributes included) and h5py (readers.py
// links: series.h5 presents the same values; particle attributes on the
// species, record and component).
func TestParticlesRealData(t *testing.T) {
	for _, c := range []struct {
		name, input, series string
		species             string
		components          int
		layouts             [][]string
	}{
		{"picongpu-bp4", "bp4/picongpu-lwfa/pic_n2.bp", "", "e", 20,
			[][]string{nil, {"--layout", "chunked", "--chunks", "2x2x2"}}},
		{"fbpic", "hdf5/fbpic", "data%08T.h5", "electrons", 11, [][]string{nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := sharedData(t, c.input)
			series := in
			if c.series != "" {
				series = filepath.Join(in, c.series)
			}
			_, env := testkit.PeersEnv(t)
			for i, layout := range c.layouts {
				out := filepath.Join(t.TempDir(), "out")
				mustRun(t, append([]string{"run", in, "-o", out, "-q"}, layout...)...)
				m := readManifest(t, out)
				n := 0
				for _, v := range m.Variables {
					if v.Species != "" {
						n++
						if v.Species != c.species {
							t.Errorf("%s: species %q, want %q", v.Name, v.Species, c.species)
						}
					}
				}
				if n != c.components {
					t.Errorf("%d particle variables, want %d", n, c.components)
				}
				if slices.ContainsFunc(m.Skipped, func(s string) bool { return strings.Contains(s, "particle") }) {
					t.Errorf("particles skipped: %q", m.Skipped)
				}
				mustRun(t, "verify", in, out)
				if i == 0 {
					readersEnv(t, env, "particles", series, out)
					readersEnv(t, env, "links", out, in)
				}
			}
		})
	}
}

// readersEnv runs readers.py with env (the peers' openPMD-api on
// PYTHONPATH) and fails the test when it reports a problem.
func readersEnv(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(python, append([]string{"readers.py"}, args...)...)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("readers.py %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	t.Logf("readers.py %s: %s", args[0], lastLine(b))
}
