package e2e

import (
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// needNetCDF4 skips (fails under CI=true) when netCDF4-python is missing.
func needNetCDF4(t *testing.T) {
	t.Helper()
	if err := exec.Command(python, "-c", "import netCDF4, h5py").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("netCDF4 and h5py unavailable under CI: %v", err)
		}
		t.Skipf("skipping: %s with netCDF4 and h5py unavailable: %v", python, err)
	}
}

// netcdfCheck compares out with the input files (in time order) through
// netCDF4-python and h5py (netcdf_check.py).
func netcdfCheck(t *testing.T, out string, files ...string) {
	t.Helper()
	b, err := exec.Command(python, append([]string{"netcdf_check.py", out}, files...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("netcdf_check.py: %v\n%s", err, b)
	}
	t.Logf("netcdf_check.py: %d variables equal", strings.Count(string(b), "OK "))
}

// TestNetcdfStream: the 12 monthly MPAS-Ocean history files, selected by
// a folder holding them alone (symbolic links to them) or by a glob, are
// one stream (OUT the folder of the glob's files is refused):
// run and verify succeed, each variable is one dataset of 12 records whose
// values equal netCDF4-python's of the files stacked in date order, and
// the text variables are listed as skipped. Their own folder, which also
// holds the restart file (another stream), is refused with exit 2 listing
// both streams.
func TestNetcdfStream(t *testing.T) {
	needNetCDF4(t)
	src := sharedData(t, "netcdf/mpas-o-monthly")
	files, _ := filepath.Glob(filepath.Join(src, "mpaso.hist.*.nc"))
	sort.Strings(files)
	if len(files) != 12 {
		t.Fatalf("%d history files", len(files))
	}
	hist := filepath.Join(t.TempDir(), "hist")
	os.Mkdir(hist, 0o755)
	for _, f := range files {
		if err := os.Symlink(f, filepath.Join(hist, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, "run", hist, "-o", out, "-q")
	mustRun(t, "verify", hist, out)
	m := readManifest(t, out)
	if len(m.Variables) != 2 {
		t.Errorf("%d variables written", len(m.Variables))
	}
	netcdfCheck(t, out, files...)
	// The same stream selected by a glob reads the same: verify through it,
	// and run through it (OUT may not be the files' own folder).
	glob := filepath.Join(src, "mpaso.hist.*")
	mustRun(t, "verify", glob, out)
	out2 := filepath.Join(t.TempDir(), "out")
	mustRun(t, "run", glob, "-o", out2, "-q")
	netcdfCheck(t, out2, files...)
	in := filepath.Join(hist, "mpaso.hist.*")
	if r := relayout(t, "run", in, "-o", hist); r.code != 2 || !strings.Contains(r.stderr, "relayout never writes into its input") {
		t.Errorf("run %s -o %s: exit %d\n%s", in, hist, r.code, r.stderr)
	}

	r := relayout(t, "run", src, "-o", filepath.Join(t.TempDir(), "out"))
	if r.code != 2 || !strings.Contains(r.stderr, "mpaso.hist.am.timeSeriesStatsMonthly.* (12 files)") || !strings.Contains(r.stderr, "mpaso.rst.* (1 file)") {
		t.Errorf("folder of two streams: exit %d\n%s", r.code, r.stderr)
	}
}

// TestNetcdfRealFiles: every real classic file (CDF-2 and CDF-5 E3SM
// history files written by PnetCDF, MPAS files written by netCDF-C, a mesh
// with 0 records) goes through run and verify, and every variable of the
// output equals netCDF4-python's reading of the input.
func TestNetcdfRealFiles(t *testing.T) {
	needNetCDF4(t)
	tmp := t.TempDir()
	var inputs []string
	for _, set := range []string{"e3sm-io-f-cdf2", "e3sm-io-f-cdf5", "e3sm-io-g-cdf2", "e3sm-io-g-cdf5", "mpas-mesh-0rec", "mpas-o-timeseries"} {
		dir := sharedData(t, "netcdf/"+set)
		des, _ := os.ReadDir(dir)
		for _, de := range des {
			p := filepath.Join(dir, de.Name())
			switch {
			case strings.HasSuffix(p, ".nc"):
				inputs = append(inputs, p)
			case strings.HasSuffix(p, ".nc.gz"):
				dst := filepath.Join(tmp, set+"-"+strings.TrimSuffix(de.Name(), ".gz"))
				gunzipTo(t, p, dst)
				inputs = append(inputs, dst)
			}
		}
	}
	for _, in := range inputs {
		t.Run(filepath.Base(filepath.Dir(in))+"_"+filepath.Base(in), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			mustRun(t, "run", in, "-o", out, "-q")
			mustRun(t, "verify", in, out, "-q")
			netcdfCheck(t, out, in)
		})
	}
}

func gunzipTo(t *testing.T, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, z); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestNetcdfShortFile: a CDF-2 file cut inside the last record of its last
// variable (what PnetCDF's NC_NOFILL leaves when the tail was never
// written) goes through run and verify; the output holds what netCDF-C
// reads (the missing elements as zeros, the element cut in two as its
// bytes then zeros), and the manifest's skipped says so.
func TestNetcdfShortFile(t *testing.T) {
	needNetCDF4(t)
	gen := t.TempDir()
	if b, err := exec.Command(python, "../reader/netcdf/testdata/nc_oracle.py", "gen", gen).CombinedOutput(); err != nil {
		t.Fatalf("nc_oracle.py gen: %v\n%s", err, b)
	}
	full, err := os.ReadFile(filepath.Join(gen, "short-cdf2.nc"))
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "short.nc")
	if err := os.WriteFile(in, full[:len(full)-37], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	mustRun(t, "run", in, "-o", out, "-q")
	mustRun(t, "verify", in, out, "-q")
	netcdfCheck(t, out, in)
	b, _ := os.ReadFile(filepath.Join(out, "relayout.json"))
	if !strings.Contains(string(b), "short.nc: variable b (CDF-2): elements 41 to 59 of the file's record 1") || !strings.Contains(string(b), "read as zeros, as netCDF-C does") {
		t.Errorf("relayout.json does not list the missing tail:\n%s", b)
	}
}
