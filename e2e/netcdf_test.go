package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"relayout/internal/testkit"
)

// needNetCDF4 skips (fails under CI=true) when the netCDF readers are
// missing.
func needNetCDF4(t *testing.T) {
	t.Helper()
	testkit.NeedPython(t, "apt-get install python3-netcdf4 python3-h5py python3-xarray", "netCDF4", "h5py", "xarray")
	testkit.NeedTool(t, "ncdump", "apt-get install netcdf-bin")
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
// values equal netCDF4-python's of the files stacked in date order, the
// text timestamps (xtime_startMonthly, xtime_endMonthly) included. Their
// own folder, which also
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
	if len(m.Variables) != 4 {
		t.Errorf("%d variables written, want 2 and the 2 text timestamps", len(m.Variables))
	}
	for _, v := range m.Variables {
		if strings.HasPrefix(v.Name, "xtime") && v.DType != "|S1" {
			t.Errorf("%s: dtype %s, want |S1", v.Name, v.DType)
		}
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
				testkit.Gunzip(t, p, dst)
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

// TestNetcdfTimeSeries: a stream of EAM-like history files written through
// netCDF-C (scripts/gen_history.py), months 1-6 CDF-2 and 7-12 CDF-5,
// becomes one netCDF-4 time series file per variable that netCDF-C
// (ncdump, netCDF4-python), xarray and h5py read with the input's values,
// dimension names and attributes, named as ncclimo names them
// (T001_000101_000112.nc), each holding copies of the coordinate and
// ancillary variables it needs (T001: time, time_bnds, lev, lat, lon);
// the record dimension (time) stays unlimited, so that ncrcat appends the
// series of the stream's second half to those of its first; verify finds
// a changed element of a variable and of a copy.
func TestNetcdfTimeSeries(t *testing.T) {
	needNetCDF4(t)
	tmp := t.TempDir()
	in := filepath.Join(tmp, "hist")
	for _, k := range []struct{ dir, format string }{{"a", "NETCDF3_64BIT_OFFSET"}, {"b", "NETCDF3_64BIT_DATA"}} {
		if b, err := exec.Command(python, "../scripts/gen_history.py", filepath.Join(tmp, k.dir), "--format", k.format,
			"--vars3d", "2", "--vars2d", "3", "--lev", "3", "--lat", "5", "--lon", "7", "--records", "2").CombinedOutput(); err != nil {
			t.Fatalf("gen_history.py: %v\n%s", err, b)
		}
	}
	os.Mkdir(in, 0o755)
	var files []string
	for m := 1; m <= 12; m++ {
		dir := "a"
		if m > 6 {
			dir = "b"
		}
		name := fmt.Sprintf("bench.eam.h0.0001-%02d.nc", m)
		if err := os.Rename(filepath.Join(tmp, dir, name), filepath.Join(in, name)); err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(in, name))
	}
	out := filepath.Join(tmp, "out")
	mustRun(t, "run", in, "-o", out, "-q")
	mustRun(t, "verify", in, out, "-q")
	netcdfCheck(t, out, files...)

	m := readManifest(t, out)
	if m.Series != "" {
		t.Errorf("series %q: a netCDF output has none", m.Series)
	}
	copies := map[string][]string{}
	for _, v := range m.Variables {
		if v.File != v.Name+"_000101_000112.nc" { // as ncclimo names it
			t.Errorf("%s: file %s", v.Name, v.File)
		}
		for _, d := range v.Datasets {
			if d.Var != "" {
				copies[v.Name] = append(copies[v.Name], d.Var)
			}
		}
	}
	sort.Strings(copies["T001"])
	if got := strings.Join(copies["T001"], " "); got != "lat lev lon time time_bnds" {
		t.Errorf("T001.nc holds copies of %q, want lat lev lon time time_bnds", got)
	}

	// The record dimension is unlimited (netcdf_check.py checks it through
	// netCDF4-python and ncdump): NCO's ncrcat appends the time series of
	// months 7-12 (CDF-5 inputs) to that of months 1-6 (CDF-2), and the
	// joined files hold the whole stream's values (netcdf_ncrcat.py).
	testkit.NeedTool(t, "ncrcat", "apt-get install nco")
	var halves []string
	for h, months := range [][]string{files[:6], files[6:]} {
		dir := filepath.Join(tmp, fmt.Sprint("half", h))
		os.Mkdir(dir, 0o755)
		for _, f := range months {
			if err := os.Symlink(f, filepath.Join(dir, filepath.Base(f))); err != nil {
				t.Fatal(err)
			}
		}
		o := filepath.Join(tmp, fmt.Sprint("out", h))
		mustRun(t, "run", dir, "-o", o, "-q")
		halves = append(halves, o)
	}
	joined := filepath.Join(tmp, "ncrcat")
	os.Mkdir(joined, 0o755)
	if b, err := exec.Command(python, append([]string{"netcdf_ncrcat.py", joined, halves[0], halves[1]}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("netcdf_ncrcat.py: %v\n%s", err, b)
	} else if n := strings.Count(string(b), "OK "); n != 5+3 { // T001-2, V001-3; time, time_bnds, date
		t.Errorf("netcdf_ncrcat.py: %d record variables appended, want 8\n%s", n, b)
	}

	// verify checks it too: the file of V001 made fixed-size by nccopy -u
	// (the same values) is a difference.
	v001 := filepath.Join(halves[0], "V001_000101_000106.nc")
	if b, err := exec.Command("nccopy", "-u", v001, v001+".fixed").CombinedOutput(); err != nil {
		t.Fatalf("nccopy -u: %v\n%s", err, b)
	}
	if err := os.Rename(v001+".fixed", v001); err != nil {
		t.Fatal(err)
	}
	if r := relayout(t, "verify", filepath.Join(tmp, "half0"), halves[0]); r.code != 1 || !strings.Contains(r.stdout, "is unlimited along [], want [0]") {
		t.Errorf("verify of a fixed record dimension: exit %d, want 1 naming it\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A changed element of the variable, then of a copy: DIFF, exit 1.
	for _, c := range []struct{ path, want string }{{"T001", "DIFF T001"}, {"lat", "copy of lat"}} {
		script := `import h5py, sys
with h5py.File(sys.argv[1], "r+") as f:
    d = f[sys.argv[2]]
    v = d[...]
    v.flat[3] += 1
    d[...] = v`
		t001 := filepath.Join(out, "T001_000101_000112.nc")
		if b, err := exec.Command(python, "-c", script, t001, c.path).CombinedOutput(); err != nil {
			t.Fatalf("changing %s: %v\n%s", c.path, err, b)
		}
		r := relayout(t, "verify", in, out)
		if r.code != 1 || !strings.Contains(r.stdout, c.want) {
			t.Errorf("verify after changing T001.nc:/%s: exit %d, want 1 and %q\n%s%s", c.path, r.code, c.want, r.stdout, r.stderr)
		}
		if c.path == "T001" { // put it back: the copy's check comes after the arrays pass
			b, err := exec.Command(python, "-c", strings.Replace(script, "+= 1", "-= 1", 1), t001, c.path).CombinedOutput()
			if err != nil {
				t.Fatalf("restoring %s: %v\n%s", c.path, err, b)
			}
		}
	}
}

// TestNetcdfSparse (issue 40): a netCDF-4 variable over a dimension of 2^40
// with three chunks written (the first, one in the middle, the short last
// one) is a valid file, not a hostile one: run (verified) and run --resume
// --no-verify (the commit's read back) write it sparse under the
// address-space cap, in time and memory of its chunks. The output opens in
// netCDF4-python and h5py with shape 2^40; its allocated chunks are the
// input's, their values the input's (h5py); a hole reads as the input's
// _FillValue; the file is under 1 MiB; the manifest's digest, of the stored
// chunks (digest_of), equals one computed here from the input's values; and
// relayout verify passes, and fails on a changed value in a stored chunk,
// a value written into a hole, a hole's chunk stored (of fill values) or a
// changed digest.
func TestNetcdfSparse(t *testing.T) {
	needNetCDF4(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "sparse.nc")
	py(t, `
import sys, netCDF4, numpy as np
s = netCDF4.Dataset(sys.argv[1], "w", format="NETCDF4")
s.createDimension("n", 2**40)
B = s.createVariable("B", "f8", ("n",), chunksizes=(1024,), fill_value=-999.0)
B.units = "m"
B[0:5] = np.arange(5.0)
B[2**39 + 7:2**39 + 10] = [7.0, 8.0, 9.0]
B[2**40 - 2:] = [1.5, 2.5]
s.close()
`, in)
	for _, args := range [][]string{{}, {"--resume", "--no-verify"}} {
		out := filepath.Join(dir, "out"+strings.Join(args, ""))
		start := time.Now()
		r := capped(t, append([]string{"run", in, "-o", out, "-q"}, args...)...)
		if r.code != 0 {
			t.Fatalf("run %v: exit %d\n%s", args, r.code, r.stderr)
		}
		t.Logf("run %v: %.2f s, %d bytes on disk", args, time.Since(start).Seconds(), diskBytes(t, out))
		if n := diskBytes(t, out); n > 1<<20 {
			t.Errorf("run %v: the output takes %d bytes on disk, want < 1 MiB", args, n)
		}
		got := py(t, `
import sys, json, hashlib, h5py, netCDF4, numpy as np
src, out = sys.argv[1], sys.argv[2]
m = json.load(open(out + "/relayout.json"))
[d] = [d for v in m["variables"] if v["name"] == "B" for d in v["datasets"]]
assert d.get("digest_of") == "stored chunks", d
x, y = h5py.File(src)["B"], h5py.File(out + "/B.nc")["B"]
assert y.shape == (2**40,) and netCDF4.Dataset(out + "/B.nc")["B"].shape == (2**40,)
chunks = lambda ds: sorted(ds.id.get_chunk_info(i).chunk_offset for i in range(ds.id.get_num_chunks()))
assert chunks(x) == chunks(y), (chunks(x), chunks(y))
h = hashlib.sha256()
for (o,) in chunks(x):
    e = min(o + 1024, 2**40)
    assert np.array_equal(x[o:e], y[o:e]), o
    h.update(np.array([o], "<i8").tobytes()); h.update(x[o:e].astype("<f8").tobytes())
assert h.hexdigest() == d["sha256"], (h.hexdigest(), d["sha256"])
assert y[2**38] == -999.0 and y.fillvalue == -999.0, (y[2**38], y.fillvalue)
assert list(y[2**39 + 6:2**39 + 11]) == [-999.0, 7.0, 8.0, 9.0, -999.0]
v = netCDF4.Dataset(out + "/B.nc")["B"]
assert v.units == "m" and np.ma.is_masked(v[12345]) and v[2**40 - 1] == 2.5
print("ok", len(chunks(y)))
`, in, out)
		if strings.TrimSpace(got) != "ok 3" {
			t.Errorf("run %v: %s", args, got)
		}
		mustRun(t, "verify", in, out)
	}
	// Damage found without reading the holes: a value of a stored chunk,
	// a value written into a hole (a chunk allocated where none was
	// touched), a manifest digest.
	for _, c := range []struct{ edit, want string }{
		{`h5py.File(sys.argv[1] + "/B.nc", "r+")["B"][3] = 42.0`, "DIFF B step 0 level 0 at [3]: in=3 out=42"},
		{`h5py.File(sys.argv[1] + "/B.nc", "r+")["B"][2**38] = 7.0`, "DIFF B step 0 level 0 at [274877906944]: fill=-999 out=7"},
		{`h5py.File(sys.argv[1] + "/B.nc", "r+")["B"][2**38] = -999.0`, "DIFF B step 0 level 0: chunk at [274877906944] of B.nc:/B is stored, but no input block touches it"},
		{`p = sys.argv[1] + "/relayout.json"; s = open(p).read(); d = json.loads(s)["variables"][0]["datasets"][0]["sha256"]; open(p, "w").write(s.replace(d, "0" * 64))`,
			"sha256 of output"},
	} {
		out := filepath.Join(dir, "damaged")
		os.RemoveAll(out)
		testkit.CopyTree(t, filepath.Join(dir, "out"), out)
		py(t, "import sys, json, h5py\n"+c.edit, out)
		r := relayout(t, "verify", in, out)
		if r.code != 1 || !strings.Contains(r.stdout, c.want) {
			t.Errorf("verify after %s: exit %d, want 1 and %q\n%s\n%s", c.edit, r.code, c.want, r.stdout, r.stderr)
		}
	}
}

// TestNetcdf4PlanUnlimited: relayout plan without -o on a netCDF-4 file
// with an unlimited dimension predicts the layouts plan -o and run use:
// the record variables chunked along time (known from the input before
// the catalog is built): a record slab a chunk for T, several records a
// chunk for time (planner.RecordLayout), the fixed lat as it is.
func TestNetcdf4PlanUnlimited(t *testing.T) {
	needNetCDF4(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "h.nc")
	script := `
import sys, numpy as np, netCDF4
d = netCDF4.Dataset(sys.argv[1], "w", format="NETCDF4")
d.createDimension("time", None); d.createDimension("lat", 64); d.createDimension("lon", 128)
t = d.createVariable("time", "f8", ("time",)); t.units = "days since 0001-01-01"
la = d.createVariable("lat", "f4", ("lat",)); la[:] = np.arange(64)
T = d.createVariable("T", "f4", ("time", "lat", "lon"), zlib=True, chunksizes=(2, 32, 128))
for r in range(5):
    t[r] = r; T[r] = np.arange(64 * 128, dtype=np.float32).reshape(64, 128) + 100 * r
d.close()
`
	if b, err := exec.Command(python, "-c", script, in).CombinedOutput(); err != nil {
		t.Fatalf("writing %s: %v\n%s", in, err, b)
	}
	layouts := func(args ...string) map[string]string {
		var p planJSON
		r := mustRun(t, append([]string{"plan", in, "--json", "-q"}, args...)...)
		if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
			t.Fatalf("plan %v: %v\n%s", args, err, r.stdout)
		}
		out := map[string]string{}
		for _, v := range p.Variables {
			for _, l := range v.Layouts {
				out[v.Name] += fmt.Sprintf("%s%v ", l.Layout.Kind, l.Layout.Chunk)
			}
		}
		return out
	}
	alone, withOut := layouts(), layouts("-o", filepath.Join(dir, "out"))
	if len(alone) != 3 || fmt.Sprint(alone) != fmt.Sprint(withOut) {
		t.Errorf("plan --json predicts %v, plan -o %v", alone, withOut)
	}
	for v, want := range map[string]string{"T": "chunked[1 64 128] ", "time": "chunked[5] "} {
		if alone[v] != want {
			t.Errorf("%s: plan predicts %q, want %q", v, alone[v], want)
		}
	}
}

// TestNetcdfSparse2D: a sparse 2-D netCDF-4 variable asked chunked in chunks
// smaller than its input's (so that each written input chunk, a block,
// spans several runs of output chunks, which verify fetches once): run
// writes it sparse (the note, digest_of), verify passes, and a value
// changed in a later run of the block's chunks is found.
func TestNetcdfSparse2D(t *testing.T) {
	needNetCDF4(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "sparse2d.nc")
	py(t, `
import sys, netCDF4, numpy as np
s = netCDF4.Dataset(sys.argv[1], "w", format="NETCDF4")
s.createDimension("n", 2**34); s.createDimension("k", 8)
C = s.createVariable("C", "f4", ("n", "k"), chunksizes=(64, 8), fill_value=np.float32(-1))
C[0:64] = np.arange(512, dtype=np.float32).reshape(64, 8)
C[2**33 + 1:2**33 + 3] = np.float32(5)
s.close()
`, in)
	out := filepath.Join(dir, "out")
	r := capped(t, "run", in, "-o", out, "--layout", "chunked", "--chunk-shape", "16,4")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr+r.stdout, "layout: C: sparse (") {
		t.Errorf("no sparse note:\n%s", r.stderr)
	}
	got := py(t, `
import sys, json, h5py, numpy as np
m = json.load(open(sys.argv[2] + "/relayout.json"))
[d] = [d for v in m["variables"] if v["name"] == "C" for d in v["datasets"]]
x, y = h5py.File(sys.argv[1])["C"], h5py.File(sys.argv[2] + "/C.nc")["C"]
assert d.get("digest_of") == "stored chunks" and y.chunks == (16, 4) and y.shape == (2**34, 8), (d, y.chunks)
assert y.id.get_num_chunks() == 16, y.id.get_num_chunks()  # two input chunks of 64x8, each 4x2 output chunks
assert np.array_equal(x[0:64], y[0:64]) and np.array_equal(x[2**33:2**33 + 16], y[2**33:2**33 + 16])
assert y[2**32, 3] == -1
print("ok")
`, in, out)
	if strings.TrimSpace(got) != "ok" {
		t.Errorf("output: %s", got)
	}
	mustRun(t, "verify", in, out)
	py(t, `import sys, h5py; h5py.File(sys.argv[1] + "/C.nc", "r+")["C"][50, 6] = 7`, out)
	r = relayout(t, "verify", in, out)
	if want := "DIFF C step 0 level 0 at [50,6]: in=406 out=7"; r.code != 1 || !strings.Contains(r.stdout, want) {
		t.Errorf("verify after an edit: exit %d, want 1 and %q\n%s\n%s", r.code, want, r.stdout, r.stderr)
	}
}

// TestNetcdfMixedStream: a stream whose members mix netCDF classic (CDF-2)
// and netCDF-4 files (deflate and shuffle in chunks that do not follow the
// records; netcdf_mixed_gen.py), as a model that switched its output format
// mid-run leaves it, is one stream through its folder and through a glob:
// run and verify succeed, every output time series equals the inputs read
// through netCDF4-python and concatenated in time order, and equals
// ncrcat's concatenation of the inputs (netcdf_check.py with it as the one
// input: values, attributes, the record dimension UNLIMITED with every
// record). A stream that starts with a netCDF-4 member, and one of
// netCDF-4 members only, read so too. A member whose variable has another
// shape is refused naming both files (exit 2).
func TestNetcdfMixedStream(t *testing.T) {
	needNetCDF4(t)
	testkit.NeedTool(t, "ncrcat", "apt-get install nco")
	tmp := t.TempDir()
	in := filepath.Join(tmp, "hist")
	if b, err := exec.Command(python, "netcdf_mixed_gen.py", in).CombinedOutput(); err != nil {
		t.Fatalf("netcdf_mixed_gen.py: %v\n%s", err, b)
	}
	files, _ := filepath.Glob(filepath.Join(in, "case.eam.h0.*.nc"))
	sort.Strings(files)
	if len(files) != 6 {
		t.Fatalf("%d history files", len(files))
	}
	cat := filepath.Join(tmp, "cat.nc")
	// -h: no history line; --no_cll_mth: no cell_methods added to the
	// record variables (ncrcat's own additions, not the inputs').
	if b, err := exec.Command("ncrcat", append(append([]string{"-O", "-h", "--no_cll_mth"}, files...), cat)...).CombinedOutput(); err != nil {
		t.Fatalf("ncrcat: %v\n%s", err, b)
	}
	out := filepath.Join(tmp, "out-folder")
	mustRun(t, "run", in, "-o", out, "-q")
	mustRun(t, "verify", in, out, "-q")
	netcdfCheck(t, out, files...)
	netcdfCheck(t, out, cat)
	m := readManifest(t, out)
	if len(m.Variables) != 11 {
		t.Errorf("%d variables written, want 11", len(m.Variables))
	}

	glob := filepath.Join(in, "case.eam.h0.*.nc")
	out = filepath.Join(tmp, "out-glob")
	mustRun(t, "run", glob, "-o", out, "-q")
	mustRun(t, "verify", glob, out, "-q", "--exact")
	netcdfCheck(t, out, files...)
	netcdfCheck(t, out, cat)

	// Months 2-5: the first member netCDF-4; months 4-5: netCDF-4 only.
	for _, part := range []struct{ glob string }{{"case.eam.h0.0001-0[2-5].nc"}, {"case.eam.h0.0001-0[45].nc"}} {
		sel, _ := filepath.Glob(filepath.Join(in, part.glob))
		out := filepath.Join(t.TempDir(), "out")
		mustRun(t, "run", filepath.Join(in, part.glob), "-o", out, "-q")
		mustRun(t, "verify", filepath.Join(in, part.glob), out, "-q")
		netcdfCheck(t, out, sel...)
	}

	bad := filepath.Join(tmp, "bad")
	if b, err := exec.Command(python, "netcdf_mixed_gen.py", bad, "bad").CombinedOutput(); err != nil {
		t.Fatalf("netcdf_mixed_gen.py: %v\n%s", err, b)
	}
	for _, p := range []string{bad, filepath.Join(bad, "case.eam.h0.*.nc")} {
		o := filepath.Join(t.TempDir(), "out")
		r := relayout(t, "run", p, "-o", o, "-q")
		if r.code != 2 || !strings.Contains(r.stderr, "case.eam.h0.0001-01.nc and case.eam.h0.0001-04.nc are not one stream of history files: variable PS is double(time, lat, lon) against double(time, lat, nbnd)") {
			t.Errorf("run %s: exit %d, want 2 naming both files and the difference\n%s", p, r.code, r.stderr)
		}
		if _, err := os.Stat(o); err == nil {
			if des, _ := os.ReadDir(o); len(des) > 0 && !(len(des) == 1 && des[0].Name() == ".relayout") {
				t.Errorf("run %s: refused but %s holds %d entries", p, o, len(des))
			}
		}
	}
}
