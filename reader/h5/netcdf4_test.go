package h5

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNetCDF4: a netCDF-4 file written by netCDF-C (python3-netcdf4) reads
// as netCDF: format "netcdf4", each variable's dimensions named after its
// scales (a coordinate variable after itself), dimensions without a
// coordinate variable listed as skipped and not as variables (a 2^40 one
// among them), netCDF-C's hidden attributes dropped and the netCDF ones
// kept, the unlimited dimension (time) the dataset's, no other, known at
// Open before any Scan (relayout plan chunks by it as it builds the
// catalog); values equal h5py's, the sparse variable's one chunk its only block.
func TestNetCDF4(t *testing.T) {
	dir := t.TempDir()
	runPython(t, `
import sys, os, numpy as np, netCDF4
d = netCDF4.Dataset(os.path.join(sys.argv[1], "h.nc"), "w", format="NETCDF4")
d.title = "netCDF-4 history"
d.createDimension("time", None); d.createDimension("lat", 4); d.createDimension("lon", 5)
t = d.createVariable("time", "f8", ("time",)); t.units = "days since 0001-01-01"
la = d.createVariable("lat", "f4", ("lat",)); la[:] = np.arange(4)
T = d.createVariable("T", "f4", ("time", "lat", "lon"), fill_value=np.float32(1e20)); T.units = "K"
for r in range(3):
    t[r] = r; T[r] = np.arange(20, dtype=np.float32).reshape(4, 5) + 100 * r
d.close()
s = netCDF4.Dataset(os.path.join(sys.argv[1], "sparse.nc"), "w", format="NETCDF4")
s.createDimension("n", 2**40)
B = s.createVariable("B", "f8", ("n",), chunksizes=(1024,)); B[0:5] = np.arange(5.0)
s.close()
`, dir)
	file := filepath.Join(dir, "h.nc")
	d, err := Open(file, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	info := d.Info()
	if u := info.Unlimited; !slices.Equal(u, []string{"time"}) { // known at Open
		t.Errorf("unlimited dimensions %q before Scan, want time", u)
	}
	if info.Format != "netcdf4" {
		t.Errorf("format %q, want netcdf4", info.Format)
	}
	if attr(info.Attrs, "title") == nil || attr(info.Attrs, "_NCProperties") != nil {
		t.Errorf("global attributes %+v: want title, no _NCProperties", info.Attrs)
	}
	if !containsPrefix(info.Skipped, "h.nc:/lon: netCDF dimension") {
		t.Errorf("skipped %q: want the dimension lon", info.Skipped)
	}
	arrays := scanAll(t, d)
	dims := map[string][]string{}
	for _, a := range arrays {
		dims[a.Var] = a.Dims
		for _, at := range a.Attrs {
			if slices.Contains(ncHidden, at.Name) || strings.HasPrefix(at.Name, "_Netcdf4") {
				t.Errorf("%s: hidden attribute %s kept", a.Var, at.Name)
			}
		}
		switch a.Var {
		case "T":
			if attr(a.Attrs, "units") == nil || attr(a.Attrs, "_FillValue") == nil {
				t.Errorf("T attributes %+v: want units and _FillValue", a.Attrs)
			}
		}
	}
	want := map[string][]string{"T": {"time", "lat", "lon"}, "lat": {"lat"}, "time": {"time"}}
	if len(dims) != len(want) {
		t.Fatalf("variables %v, want %v", dims, want)
	}
	for v, w := range want {
		if !slices.Equal(dims[v], w) {
			t.Errorf("%s: dimensions %q, want %q", v, dims[v], w)
		}
	}
	checkValues(t, d, arrays, oracle(t, file))
	if u := d.Info().Unlimited; !slices.Equal(u, []string{"time"}) { // and still after Scan
		t.Errorf("unlimited dimensions %q after Scan, want time", u)
	}

	// A variable of 2^40 elements with one chunk written: one block, the
	// dimension skipped, nothing allocated for the rest.
	sp, err := Open(filepath.Join(dir, "sparse.nc"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if u := sp.Info().Unlimited; u != nil {
		t.Errorf("sparse.nc: unlimited dimensions %q at Open, want none", u)
	}
	if !containsPrefix(sp.Info().Skipped, "sparse.nc:/n: netCDF dimension of length [1099511627776]") {
		t.Errorf("skipped %q: want the dimension n", sp.Info().Skipped)
	}
	b := scanAll(t, sp)
	if u := sp.Info().Unlimited; u != nil {
		t.Errorf("sparse.nc: unlimited dimensions %q, want none", u)
	}
	if len(b) != 1 || b[0].Var != "B" || len(b[0].Blocks) != 1 || b[0].Blocks[0].Box.Count[0] != 1024 ||
		!slices.Equal(b[0].Dims, []string{"n"}) || b[0].Shape[0] != 1<<40 {
		t.Fatalf("sparse.nc: %+v, want B over n (2^40) with one block of 1024", b)
	}
}
