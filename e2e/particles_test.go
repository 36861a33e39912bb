package e2e

import (
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
					peersReaders(t, "particles", series, out)
					peersReaders(t, "links", out, in)
				}
			}
		})
	}
}

// joinedScript writes, with openPMD-api's ADIOS2 BP5 backend, a species
// whose position components are joined arrays (Dataset.JOINED_DIMENSION:
// blocks without offsets, three "ranks" of 3, 5 and 2 particles appended
// in write order) beside a global scalar record, in two iterations.
const joinedScript = `
import sys, numpy as np, openpmd_api as io
s = io.Series(sys.argv[1], io.Access.create, '{"backend": "adios2", "adios2": {"engine": {"type": "bp5"}}}')
for itn in (0, 10):
    it = s.iterations[itn]
    e = it.particles["e"]
    held = []
    for comp in "xy":
        rc = e["position"][comp]
        rc.reset_dataset(io.Dataset(np.dtype("float64"), [io.Dataset.JOINED_DIMENSION]))
        for r, n in enumerate((3, 5, 2)):
            d = np.arange(n, dtype=np.float64) + 100 * r + 1000 * (comp == "y") + itn
            held.append(d)
            rc.store_chunk(d, [], [n])
    w = e["weighting"][io.Record_Component.SCALAR]
    w.reset_dataset(io.Dataset(np.dtype("float64"), [10]))
    d = np.arange(10, dtype=np.float64) / 8
    held.append(d)
    w.store_chunk(d, [0], [10])
    it.close()
s.close()
`

// TestParticlesJoinedBP: particle records written as ADIOS2 joined arrays
// are one 1-D array whose blocks follow in ADIOS2's order (as openPMD-api
// reads them), rewritten and read back equal through openPMD-api.
func TestParticlesJoinedBP(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "joined.bp")
	testkit.PeersPython(t, "-c", joinedScript, in)
	out := filepath.Join(dir, "out")
	mustRun(t, "run", in, "-o", out, "-q")
	m := readManifest(t, out)
	var names []string
	for _, v := range m.Variables {
		names = append(names, v.Name)
		if v.Species != "e" || len(v.Datasets) != 2 || !slices.Equal(v.Datasets[0].Shape, []int64{10}) {
			t.Errorf("%s: species %q, datasets %+v", v.Name, v.Species, v.Datasets)
		}
	}
	if want := []string{"particles/e/position/x", "particles/e/position/y", "particles/e/weighting"}; !slices.Equal(names, want) {
		t.Errorf("variables %v, want %v", names, want)
	}
	mustRun(t, "verify", in, out)
	peersReaders(t, "particles", in, out)
}

// patchesScript writes, with openPMD-api (HDF5 or ADIOS2 by the file
// name), a species "ions" with a float32 position/x stored by two "ranks",
// an int64 scalar record id, a species attribute and particle patches
// (numParticles, numParticlesOffset, offset/x, extent/x) in two
// iterations.
const patchesScript = `
import sys, numpy as np, openpmd_api as io
s = io.Series(sys.argv[1], io.Access.create)
for itn in (0, 7):
    it = s.iterations[itn]
    e = it.particles["ions"]
    e.set_attribute("particleShape", 3.0)
    held = []
    x = e["position"]["x"]
    x.reset_dataset(io.Dataset(np.dtype("float32"), [12]))
    d = (np.arange(12, dtype=np.float32) + itn) / 4; held.append(d)
    x.store_chunk(d[:5], [0], [5]); x.store_chunk(d[5:], [5], [7])
    idr = e["id"][io.Record_Component.SCALAR]
    idr.reset_dataset(io.Dataset(np.dtype("int64"), [12]))
    ids = np.arange(12, dtype=np.int64) * 3; held.append(ids)
    idr.store_chunk(ids, [0], [12])
    pp = e.particle_patches
    for rec, vals in (("numParticles", [5, 7]), ("numParticlesOffset", [0, 5])):
        rc = pp[rec][io.Record_Component.SCALAR]
        rc.reset_dataset(io.Dataset(np.dtype("uint64"), [2]))
        for i, v in enumerate(vals):
            rc.store(i, np.uint64(v))
    for rec, vals in (("offset", [0.0, 1.25]), ("extent", [1.25, 1.75])):
        rc = pp[rec]["x"]
        rc.reset_dataset(io.Dataset(np.dtype("float32"), [2]))
        for i, v in enumerate(vals):
            rc.store(i, np.float32(v))
    it.close()
s.close()
`

// TestParticlePatches: particle patches and the records they index go
// through HDF5 and BP inputs and come back equal through openPMD-api
// (readers.py particles reads particle_patches too), with the species
// attribute on the species group.
func TestParticlePatches(t *testing.T) {
	for _, name := range []string{"p.h5", "p.bp"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, name)
			testkit.PeersPython(t, "-c", patchesScript, in)
			out := filepath.Join(dir, "out")
			mustRun(t, "run", in, "-o", out, "-q")
			m := readManifest(t, out)
			var names []string
			for _, v := range m.Variables {
				names = append(names, v.Name)
			}
			want := []string{"particles/ions/id", "particles/ions/particlePatches/extent/x", "particles/ions/particlePatches/numParticles",
				"particles/ions/particlePatches/numParticlesOffset", "particles/ions/particlePatches/offset/x", "particles/ions/position/x"}
			if !slices.Equal(names, want) {
				t.Errorf("variables %v, want %v", names, want)
			}
			mustRun(t, "verify", in, out)
			peersReaders(t, "particles", in, out)
		})
	}
}
