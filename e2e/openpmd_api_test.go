package e2e

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// pmdCheck is the part of `openpmd_gen.py check --json` the tests assert.
type pmdCheck struct {
	Iterations        []int64  `json:"iterations"`
	Problems          []string `json:"problems"`
	H5pyProblems      []string `json:"h5py_problems"`
	H5pyElementsEqual int      `json:"h5py_elements_equal"`
	Lacks             []string `json:"lacks_summary"`
	OKElements        int64    `json:"ok_elements"`
	Files             map[string]string
}

// notYetWritten are the lacks openpmd_gen.py check may still report: what
// relayout changes on purpose.
var notYetWritten = []string{
	// By design: every output is one group-based series, whatever the
	// input's encoding.
	"root attr iterationEncoding: in 'fileBased' out 'groupBased'",
	"root attr iterationFormat: in 'openpmd_%06T' out '/data/%T/'",
	"root attr iterationEncoding: in 'variableBased' out 'groupBased'",
	"root attr iterationFormat: in '/data' out '/data/%T/'",
	// The iteration of a variable-based step: the output's group name.
	"it * iteration attr snapshot missing",
}

// checkOpenPMD runs openpmd_gen.py check on a relayout output of a series
// openpmd_gen.py wrote: openPMD-api reads every mesh of series.h5 and of
// every per-variable file equal to the input and to the value rule, and
// every attribute of the input is there (the lacks not in notYetWritten).
func checkOpenPMD(t *testing.T, series, out string) pmdCheck {
	t.Helper()
	j := filepath.Join(t.TempDir(), "check.json")
	// check exits 1 for any problem, all of which are in its JSON (judged
	// below); anything else, or no JSON, ends the test.
	dir, env := testkit.PeersEnv(t)
	cmd := exec.Command(python, filepath.Join(dir, "openpmd_gen.py"), "check", series, out, "--json", j)
	cmd.Env = env
	outb, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("openpmd_gen.py check %s %s: %v\n%s", series, out, err, outb)
	}
	b, err := os.ReadFile(j)
	if err != nil {
		t.Fatalf("openpmd_gen.py check: %v\n%s", err, outb)
	}
	var c pmdCheck
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	// openpmd_gen.py's h5py pass looks every manifest variable up among
	// the input's meshes; particle variables (manifest "species") are
	// checked by readers.py particles instead (openPMD-api, every element
	// of series.h5 and of their own files), see checkParticles.
	c.H5pyProblems = slices.DeleteFunc(c.H5pyProblems, func(p string) bool {
		return strings.HasPrefix(p, "h5py: particles/") && strings.HasSuffix(p, " not in the input")
	})
	if len(c.Problems) > 0 || len(c.H5pyProblems) > 0 {
		t.Errorf("openpmd_gen.py check %s %s: problems %q, h5py problems %q", series, out, c.Problems, c.H5pyProblems)
	}
	if c.OKElements == 0 {
		t.Errorf("openpmd_gen.py check: no element read by openPMD-api (%v)", c.Files)
	}
	for _, l := range c.Lacks {
		known := false
		for _, k := range notYetWritten {
			known = known || strings.HasPrefix(l, k)
		}
		if !known {
			t.Errorf("openpmd_gen.py check: the output lacks %s", l)
		}
	}
	return c
}

// TestOpenPMDAPIReadsOutput writes WarpX/PIConGPU-like series with the real
// openPMD-api (every backend, group- and file-based, several seeds), rewrites
// them with each layout and reads the result back through openPMD-api
// (series.h5 and each per-variable file) and openpmd-viewer (series.h5,
// both backends), element by element against the input.
func TestOpenPMDAPIReadsOutput(t *testing.T) {
	for _, c := range []struct {
		name, backend, encoding, seed, series string
		layouts                               [][]string
		extra                                 []string
	}{
		{"bp5", "bp5", "group", "7", "openpmd.bp",
			[][]string{nil, {"--layout", "chunked", "--chunks", "2x2x2"}, {"--layout", "merged"}}, nil},
		{"bp4", "bp4", "group", "11", "openpmd.bp", [][]string{nil}, nil},
		// position as Python's openPMD-api stores it: long double (x87 on
		// x86-64, with uninitialised padding).
		{"bp4-ldouble", "bp4", "group", "13", "openpmd.bp", [][]string{nil}, []string{"--position-ldouble"}},
		{"h5", "h5", "group", "3", "openpmd.h5", [][]string{nil, {"--layout", "chunked", "--chunk-shape", "8,8,8"}}, nil},
		{"h5-file", "h5", "file", "5", "openpmd_%06T.h5", [][]string{nil}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			gen := filepath.Join(dir, "gen")
			testkit.OpenPMDGen(t, append([]string{"write", gen, "--backend", c.backend, "--encoding", c.encoding,
				"--shape", "24,20,16", "--particles", "300", "--seed", c.seed}, c.extra...)...)
			in := filepath.Join(gen, c.series)
			if c.encoding == "file" {
				in = gen
			}
			for i, layout := range c.layouts {
				out := filepath.Join(dir, "out", string(rune('a'+i)))
				mustRun(t, append([]string{"run", in, "-o", out, "-q"}, layout...)...)
				checkOpenPMD(t, filepath.Join(gen, c.series), out)
				checkParticles(t, filepath.Join(gen, c.series), out)
				if i == 0 {
					viewer(t, gen, out, "")
				}
			}
		})
	}
}

// checkParticles runs readers.py particles: openPMD-api reads every
// particle species of OUT/series.h5 and every particle variable's own file
// equal to the input series (elements, dtype, constant or not, species,
// record and component attributes).
func checkParticles(t *testing.T, series, out string) {
	t.Helper()
	peersReaders(t, "particles", series, out)
}

// viewer compares openpmd-viewer's get_field on OUT/series.h5 (h5py and
// openpmd-api backends) with the same call on the input series.
func viewer(t *testing.T, in, out, missing string) {
	t.Helper()
	peersReaders(t, "viewer", in, filepath.Join(out, "series.h5"), missing)
}

// TestOpenPMDAPIRealData rewrites the real openPMD datasets (and AMReX
// plotfiles, which openPMD-api cannot read: their per-variable files are the
// reference there, checked against the input by verify) and reads
// OUT/series.h5 with openPMD-api: every mesh and constant record equal to
// the input's through openPMD-api, with the input's attributes.
func TestOpenPMDAPIRealData(t *testing.T) {
	for _, c := range []struct{ name, data string }{
		{"picongpu-bp4", "bp4/picongpu-lwfa/pic_n2.bp"},
		{"quokka-bp5", "bp5/quokka-2d/plt00758.bp"},
		{"fbpic-h5", "hdf5/fbpic"},
		{"femm-3d", "hdf5/openpmd-femm/example-femm-3d.h5"},
		{"femm-thetaMode", "hdf5/openpmd-femm/example-femm-thetaMode.h5"},
		{"pelelmex-2d", "amrex/pelelmex-2d"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := sharedData(t, c.data)
			out := filepath.Join(t.TempDir(), "out")
			mustRun(t, "run", in, "-o", out, "-q")
			ref := in
			if c.name == "fbpic-h5" {
				ref = filepath.Join(in, "data%08T.h5")
			}
			if strings.HasPrefix(c.name, "pelelmex") {
				ref = "-"
			}
			peersReaders(t, "pmd", ref, out)
		})
	}
}
