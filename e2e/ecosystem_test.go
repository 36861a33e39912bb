package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// readers runs readers.py (h5py, yt) and fails the test on a non-zero exit.
func readers(t *testing.T, args ...string) {
	t.Helper()
	readersEnv(t, nil, args...)
}

// peersReaders is readers with ../shared/peers in reach (openPMD-api,
// openpmd-viewer, openpmd_gen.py as PEERS_DIR).
func peersReaders(t *testing.T, args ...string) {
	t.Helper()
	dir, env := testkit.PeersEnv(t)
	readersEnv(t, append(env, "PEERS_DIR="+dir), args...)
}

// readersEnv runs readers.py in env (nil: this process's) and fails the
// test when it reports a problem.
func readersEnv(t *testing.T, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(python, append([]string{"readers.py"}, args...)...)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("readers.py %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	t.Logf("readers.py %s:\n%s", args[0], b)
}

var (
	ncVar   = regexp.MustCompile(`(?m)^\s+(?:double|float|int|uint|short|ushort|byte|ubyte|int64|uint64) (\w+)\(([\w, ]+)\) ;$`)
	ncCoord = regexp.MustCompile(`(?m)^\s+double (\w+)\((\w+)\) ;$`)
)

// checkNcdump asserts that ncdump -h (netCDF-4) reads every per-variable
// file and lists, for each dataset, its dimensions with a coordinate
// variable each.
func checkNcdump(t *testing.T, out string, m manifest) {
	t.Helper()
	testkit.NeedTool(t, "ncdump", "Debian netcdf-bin")
	for _, v := range m.Variables {
		if v.Species != "" {
			// --netcdf gives meshes coordinates; particle components have
			// none (no physical axis), netCDF names their dimension phony_dim.
			if _, err := exec.Command("ncdump", "-h", filepath.Join(out, v.File)).CombinedOutput(); err != nil {
				t.Errorf("ncdump -h %s: %v", v.File, err)
			}
			continue
		}
		b, err := exec.Command("ncdump", "-h", filepath.Join(out, v.File)).CombinedOutput()
		if err != nil {
			t.Fatalf("ncdump -h %s: %v\n%s", v.File, err, b)
		}
		s := string(b)
		coords := map[string]bool{}
		for _, c := range ncCoord.FindAllStringSubmatch(s, -1) {
			if c[1] == c[2] {
				coords[c[1]] = true
			}
		}
		vars := 0
		for _, mv := range ncVar.FindAllStringSubmatch(s, -1) {
			dims := strings.Split(mv[2], ", ")
			if len(dims) == 1 && dims[0] == mv[1] {
				continue // a coordinate variable
			}
			vars++
			for _, d := range dims {
				if !coords[d] || strings.HasPrefix(d, "phony_dim") {
					t.Errorf("%s: variable %s dimension %s has no coordinate variable:\n%s", v.File, mv[1], d, s)
				}
			}
		}
		if want := len(v.Datasets); vars < want || !strings.Contains(s, "dimensions:") {
			t.Errorf("%s: ncdump lists %d variables with dimensions, want %d:\n%s", v.File, vars, want, s)
		}
	}
}

// noDimensionScales asserts that no dataset of the output carries a
// DIMENSION_LIST attribute (written by attached dimension scales, which
// openPMD-api 0.16 cannot read: it skips the component), as h5dump shows.
func noDimensionScales(t *testing.T, out string, m manifest) {
	t.Helper()
	files := []string{"series.h5"}
	for _, v := range m.Variables {
		files = append(files, v.File)
	}
	for _, f := range files {
		b, err := exec.Command("h5dump", "-A", filepath.Join(out, f)).CombinedOutput()
		if err != nil {
			t.Fatalf("h5dump -A %s: %v\n%s", f, err, b)
		}
		if strings.Contains(string(b), "DIMENSION_LIST") || strings.Contains(string(b), `"CLASS"`) {
			t.Errorf("%s: dimension scales written without --netcdf", f)
		}
	}
}

var h5Offset = regexp.MustCompile(`OFFSET (\d+)`)

// TestOpenPMDOutputReaders checks the output with the ecosystem's readers:
// h5py through series.h5's virtual datasets, yt on series.h5, ncdump -h and
// xarray on each file written with --netcdf (and no DIMENSION_LIST, which
// openPMD-api cannot read, without it), h5dump -p for alignment and filters.
func TestOpenPMDOutputReaders(t *testing.T) {
	t.Run("femm-3d", func(t *testing.T) {
		in := sharedData(t, "hdf5/openpmd-femm/example-femm-3d.h5")
		out := filepath.Join(t.TempDir(), "out")
		r := mustRun(t, "run", in, "-o", out, "--align", "1MiB:4KiB")
		if !strings.Contains(r.stderr, "storage: ") || !strings.Contains(r.stderr, "HDF5 alignment 1 MiB") {
			t.Errorf("run does not report the storage decision:\n%s", r.stderr)
		}
		m := readManifest(t, out)
		oracle(t, in, out)
		readers(t, "links", out, in)
		noDimensionScales(t, out, m)
		// femm's E components are constant records, kept as such: yt sees
		// the output as it sees the original.
		readers(t, "yt", out, in, "1")
		for _, v := range m.Variables {
			if strings.HasPrefix(v.Name, "E/") {
				if len(v.Datasets) != 0 || len(v.Constants) != 1 || v.Constants[0].Layout != "constant" {
					t.Errorf("%s: %d datasets, constants %+v; want one constant", v.Name, len(v.Datasets), v.Constants)
				}
				continue
			}
			b, err := exec.Command("h5dump", "-p", "-H", "-d", v.Datasets[0].Path, filepath.Join(out, v.File)).CombinedOutput()
			if err != nil {
				t.Fatalf("h5dump: %v\n%s", err, b)
			}
			off := h5Offset.FindStringSubmatch(string(b))
			if off == nil {
				t.Fatalf("h5dump -p shows no OFFSET:\n%s", b)
			}
			if n, _ := strconv.ParseInt(off[1], 10, 64); n == 0 || n%(1<<20) != 0 {
				t.Errorf("%s: contiguous data at %d, not aligned to 1 MiB", v.File, n)
			}
		}
	})
	t.Run("generated-deflate", func(t *testing.T) {
		dir := t.TempDir()
		in := filepath.Join(dir, "sample")
		mustRun(t, "generate", in, "--shape", "32,32,32", "--chunk", "16,16,16", "--steps", "0,7")
		sizes := map[string]int64{}
		for _, c := range []string{"raw", "deflate"} {
			out := filepath.Join(dir, c)
			args := []string{"run", in, "-o", out, "-q", "--layout", "chunked", "--chunk-shape", "16,16,16", "--align", "64KiB:512", "--netcdf"}
			if c == "deflate" {
				args = append(args, "--compress", "deflate:6")
			}
			mustRun(t, args...)
			m := readManifest(t, out)
			for _, v := range m.Variables {
				fi, err := os.Stat(filepath.Join(out, v.File))
				if err != nil {
					t.Fatal(err)
				}
				sizes[c] += fi.Size()
				for _, d := range v.Datasets {
					if (c == "deflate") != (d.Compression == "shuffle+deflate:6") {
						t.Errorf("%s %s: manifest compression %q", c, d.Path, d.Compression)
					}
				}
			}
			if c == "raw" {
				continue
			}
			mustRun(t, "verify", in, out)
			oracle(t, in, out)
			checkH5dumpLayout(t, out, m) // FILTERS: SHUFFLE and DEFLATE { LEVEL 6 }
			readers(t, "aligned", out, fmt.Sprint(64<<10), "512")
			readers(t, "links", out, in)
			readers(t, "yt", out, filepath.Join(in, "data00000000.h5"), "0")
			readers(t, "yt", out, filepath.Join(in, "data00000007.h5"), "7")
			checkNcdump(t, out, m)
			readers(t, "xarray", out)
		}
		if sizes["deflate"] >= sizes["raw"] {
			t.Errorf("compressed output %d bytes, uncompressed %d", sizes["deflate"], sizes["raw"])
		}
	})
	t.Run("fbpic", func(t *testing.T) {
		// File-based input, meshesPath "fields/", thetaMode geometry.
		in := sharedData(t, "hdf5/fbpic")
		out := filepath.Join(t.TempDir(), "out")
		mustRun(t, "run", in, "-o", out, "-q", "--netcdf")
		m := readManifest(t, out)
		readers(t, "links", out, in)
		checkNcdump(t, out, m)
		readers(t, "xarray", out)
	})
	t.Run("picongpu-bp4", func(t *testing.T) {
		// openPMD on ADIOS2 BP4 (PIConGPU): no reader here opens the input
		// but relayout's own, so verify establishes input = output and the
		// external readers are checked against the output. PIConGPU's
		// picongpu_idProvider records are 3-D arrays whose attributes describe
		// one axis (scalar gridSpacing): yt cannot load a series holding them,
		// the original's fault, so the test selects the physical meshes.
		in := sharedData(t, "bp4/picongpu-lwfa/pic_n2.bp")
		out := filepath.Join(t.TempDir(), "out")
		mustRun(t, "run", in, "-o", out, "-q", "--var", "E", "--var", "B", "--var", "e_*")
		m := readManifest(t, out)
		if m.Input.Format != "openpmd-bp4" {
			t.Errorf("input format %q, want openpmd-bp4", m.Input.Format)
		}
		if len(m.Variables) != 9 {
			t.Errorf("%d variables, want E/x..z, B/x..z and 3 e_* densities", len(m.Variables))
		}
		mustRun(t, "verify", in, out, "--var", "E", "--var", "B", "--var", "e_*")
		readers(t, "links", out, in)
		readers(t, "yt-out", out, "550")
		noDimensionScales(t, out, m)
	})
}
