package reader

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// netcdf4StreamPy writes the members of the cases of TestNetCDF4Members:
// DIR/CASE/h.0001-MM.nc, month 1 CDF-2 with one record, month 2 netCDF-4
// (deflate, shuffle, T in chunks of two records) with two, T's record g
// holding 100*g + its flat index, and one thing changed per case.
const netcdf4StreamPy = `
import os, sys, numpy as np, netCDF4, h5py
root, case = sys.argv[1], sys.argv[2]
out = os.path.join(root, case); os.makedirs(out)
g = 0
for m, fmt in ((1, "NETCDF3_64BIT_OFFSET"), (2, "NETCDF4")):
    p = os.path.join(out, "h.0001-%02d.nc" % m)
    if case == "plain" and m == 2:
        with h5py.File(p, "w") as f:
            f["T"] = np.zeros((2, 3, 4), "f4")
        break
    d = netCDF4.Dataset(p, "w", format=fmt)
    nc4 = fmt == "NETCDF4"
    d.createDimension("time", None); d.createDimension("lat", 3); d.createDimension("lon", 4)
    t = d.createVariable("time", "f8", ("time",)); t.units = "days since 0001-01-01"
    area = d.createVariable("area", "f8", ("lat", "lon"))
    area[:] = np.arange(12.0).reshape(3, 4) + (0.5 if case == "area" and nc4 else 0)
    fill = np.float32(7 if case == "fill" and nc4 else 1e36)
    T = d.createVariable("T", "f4", ("time", "lat", "lon"), fill_value=fill,
                         **({"zlib": True, "shuffle": True, "chunksizes": (2, 3, 4)} if nc4 else {}))
    if nc4 and case == "group":
        d.createGroup("extra").createDimension("n", 1)
    if nc4 and case == "string":
        s = d.createVariable("label", str, ("time",))
    for r in range(m):
        t[r] = 30 * (m - 1) + r - (30 if case == "overlap" and nc4 else 0)
        if not (case == "fill" and r == 1):
            T[r] = np.arange(12, dtype=np.float32).reshape(3, 4) + 100 * g
        if nc4 and case == "string":
            s[r] = "x"
        g += 1
    d.close()
`

// TestNetCDF4Members: a netCDF-4 member of a stream of classic files
// (month 2 after a CDF-2 month 1) continues its record dimension: the
// stream is big-endian, T's record 0 the classic slab, records 1-2 the
// netCDF-4 member's one chunk placed at record 1 with a byteswap stage
// before its shuffle and deflate, values as written. What the member may
// not hold is refused naming it and the difference (ErrUnsupported): a
// fixed variable with other values (the element and both files), a fill
// value that is not the stream's where the member left elements unwritten,
// a group, a string variable, an HDF5 file netCDF-C did not write, records
// that overlap the classic member's.
func TestNetCDF4Members(t *testing.T) {
	testkit.NeedPython(t, "apt-get install python3-netcdf4 python3-h5py", "netCDF4", "h5py")
	root := t.TempDir()
	gen := func(c string) string {
		if b, err := exec.Command(testkit.Python, "-c", netcdf4StreamPy, root, c).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c, err, b)
		}
		return filepath.Join(root, c)
	}
	good := gen("good")
	for _, in := range []string{good, filepath.Join(good, "h.*.nc")} {
		ds, err := Open(in, Options{Vars: []string{"T"}})
		if err != nil {
			t.Fatal(err)
		}
		if u := ds.Info().Unlimited; !slices.Equal(u, []string{"time"}) {
			t.Errorf("%s: unlimited %q", in, u)
		}
		var a *catalog.Array
		if err := ds.Scan(context.Background(), func(x *catalog.Array) error { a = x; return nil }); err != nil {
			t.Fatal(err)
		}
		if a == nil || !slices.Equal(a.Shape, []int64{3, 3, 4}) || !a.DType.BigEndian || len(a.Blocks) != 2 {
			t.Fatalf("%s: T %+v, want 3 records big-endian in 2 blocks", in, a)
		}
		b := a.Blocks[1]
		if b.File != "h.0001-02.nc" || !slices.Equal(b.Box.Lower, []int64{1, 0, 0}) || !slices.Equal(b.Box.Count, []int64{2, 3, 4}) ||
			len(b.Codecs) != 3 || b.Codecs[0].Name != "byteswap" || b.Codecs[1].Name != "shuffle" || b.Codecs[2].Name != "deflate" {
			t.Errorf("%s: netCDF-4 block %+v, want records 1-2 of h.0001-02.nc, byteswap, shuffle, deflate", in, b)
		}
		if len(a.Blocks[0].Codecs) != 0 || a.Blocks[0].Box.Lower[0] != 0 {
			t.Errorf("%s: classic block %+v", in, a.Blocks[0])
		}
		for i := range a.Blocks {
			data, err := catalog.ReadBlock(context.Background(), ds, &a.Blocks[i], a.DType)
			if err != nil {
				t.Fatal(err)
			}
			box := a.Blocks[i].Box
			for k := int64(0); k < box.Elements(); k++ {
				want := float32(100*(box.Lower[0]+k/12) + k%12)
				if got := math.Float32frombits(binary.BigEndian.Uint32(data[4*k:])); got != want {
					t.Fatalf("%s: block %d element %d = %v, want %v", in, i, k, got, want)
				}
			}
		}
		ds.Close()
	}

	for c, want := range map[string]string{
		"area":    "fixed-size variable area differs at element 0 (offset",
		"fill":    "variable T: h.0001-02.nc leaves 12 of its 24 elements unwritten, which read as its fill value",
		"group":   "h.0001-02.nc: netCDF-4 file: group /extra",
		"string":  "h.0001-02.nc: netCDF-4 file: variable label of type",
		"plain":   "h.0001-02.nc: an HDF5 file without _NCProperties, not written by netCDF-C: not a member of a stream of netCDF history files",
		"overlap": "their records overlap in time",
	} {
		dir := gen(c)
		for _, in := range []string{dir, filepath.Join(dir, "h.*.nc")} {
			_, err := Open(in, Options{})
			if !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want ErrUnsupported saying %q", in, err, want)
			}
			if c == "area" && err != nil && !strings.Contains(err.Error(), "element 0 of h.0001-02.nc's dataset /area") {
				t.Errorf("%s: %v, want the element of the netCDF-4 member named", in, err)
			}
		}
	}

	// A damaged netCDF-4 member (cut short) is refused as corrupt, naming
	// it and the offset, through the folder and the glob alike.
	cut := gen("cut")
	member := filepath.Join(cut, "h.0001-02.nc")
	b, err := os.ReadFile(member)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(member, b[:len(b)-1000], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{cut, filepath.Join(cut, "h.*.nc")} {
		_, err := Open(in, Options{})
		ce := (*catalog.CorruptError)(nil)
		if !errors.As(err, &ce) || !strings.HasSuffix(ce.File, "h.0001-02.nc") || ce.Offset != int64(len(b)-1000) {
			t.Errorf("%s: %v, want corrupt input naming h.0001-02.nc at offset %d", in, err, len(b)-1000)
		}
	}
}
