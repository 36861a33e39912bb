package verify

import (
	"regexp"
	"strings"
	"testing"
)

// damage.py rewrites one dataset of a relayout output the way a wrong
// writer would, with h5py, and (unless the mode leaves the manifest alone)
// records the new data's sha256 in relayout.json, as a writer whose
// assembly is wrong would record the digest of what it wrote:
//
//	transpose  the array transposed (a cube keeps its shape)
//	fortran    the elements in column-major order under the same shape
//	byteswap   every element's bytes reversed, type unchanged
//	bigendian  the same values stored as a big-endian type
//	flip       one byte of the stored data flipped in the file (offset
//	           from h5py's id.get_offset()), manifest untouched
//	hole       a hole element (NaN in the input's fill) set to 0
//	gridoffset an AMR level's gridGlobalOffset moved by one cell
//	constvalue a constant record's value attribute plus one
//	constshape a constant record's shape attribute changed
const damagePy = `
import sys, json, hashlib, os
import numpy as np, h5py
out, var, path, mode = sys.argv[1:5]
man = os.path.join(out, "relayout.json")
m = json.load(open(man))
v = [v for v in m["variables"] if v["name"] == var][0]
fn = os.path.join(out, v["file"])
record = True
if mode == "flip":
    with h5py.File(fn, "r") as f:
        d = f[path]
        off = d.id.get_offset()
        assert off is not None and d.chunks is None, "not contiguous"
        k = off + d.dtype.itemsize * (d.size // 3) + 1
    with open(fn, "r+b") as g:
        g.seek(k); b = g.read(1); g.seek(k); g.write(bytes([b[0] ^ 0x10]))
    record = False
    print(k)
elif mode in ("constvalue", "constshape"):
    with h5py.File(fn, "r+") as f:
        g = f[path]
        if mode == "constvalue":
            g.attrs["value"] = g.attrs["value"] + 1
        else:
            g.attrs["shape"] = np.array([47, 46, 47], dtype="<u8")
    record = False
elif mode == "gridoffset":
    with h5py.File(fn, "r+") as f:
        o = f[path]
        o = o if "gridGlobalOffset" in o.attrs else o.parent
        o.attrs["gridGlobalOffset"] = o.attrs["gridGlobalOffset"] + o.attrs["gridSpacing"]
    record = False
elif mode == "bigendian":
    with h5py.File(fn, "r+") as f:
        a = f[path][...]
        attrs = dict(f[path].attrs)
        del f[path]
        d = f.create_dataset(path, data=a.astype(a.dtype.newbyteorder(">")))
        for n, x in attrs.items():
            d.attrs[n] = x
    record = False
else:
    with h5py.File(fn, "r+") as f:
        d = f[path]
        a = d[...]
        if mode == "transpose":
            assert len(set(a.shape)) == 1
            b = a.transpose().copy()
        elif mode == "fortran":
            b = a.ravel(order="F").reshape(a.shape)
        elif mode == "byteswap":
            b = a.byteswap()
        elif mode == "hole":
            i = np.flatnonzero(np.isnan(a.ravel()))[0]
            b = a.copy(); b.ravel()[i] = 0
            print(np.unravel_index(i, a.shape))
        else:
            raise SystemExit("mode " + mode)
        assert not np.array_equal(a, b, equal_nan=True)
        d[...] = b
if record:
    with h5py.File(fn, "r") as f:
        data = np.ascontiguousarray(f[path][...].astype(f[path].dtype.newbyteorder("<"))).tobytes()
    for ds in v["datasets"]:
        if ds["path"] == path:
            ds["sha256"] = hashlib.sha256(data).hexdigest()
    json.dump(m, open(man, "w"), indent=2)
`

// Deliberately wrong outputs are caught: a transposed array, a column-major
// one, a byte-swapped one, a big-endian one, a flipped byte in the file and
// a hole that lost its fill value.
func TestDamage(t *testing.T) {
	lb := shared(t, "bp4/generated-lb")
	femm := shared(t, "hdf5/openpmd-femm/example-femm-3d.h5")
	amr := shared(t, "amrex/pelelmex-2d")
	cases := []struct {
		name, in, layout, var_, path, mode string
		want                               string // regexp of the DIFF line
	}{
		{"transpose", lb, "contiguous", "fields/Bx", "/data/1/meshes/fields/Bx", "transpose",
			`^DIFF fields/Bx step 1 level 0 at \[0,0,1\]: in=\S+ out=\S+$`},
		{"transpose-chunked", lb, "chunked", "fields/rho", "/data/2/meshes/fields/rho", "transpose",
			`^DIFF fields/rho step 2 level 0 at \[0,0,1\]: in=\S+ out=\S+$`},
		{"fortran-amr", amr, "contiguous", "temp", "/data/70100/meshes/temp_lvl1", "fortran",
			`^DIFF temp step 70100 level 1 at \[\d+,\d+\]: (in|fill)=\S+ out=\S+$`},
		{"gridoffset-amr", amr, "merged", "temp", "/data/70100/meshes/temp_lvl1", "gridoffset",
			`^DIFF temp step 70100 level 1: gridGlobalOffset \[0.000625 0.000625\], want 0 .*$`},
		{"constvalue", femm, "contiguous", "E/y", "/data/1/meshes/E/y", "constvalue",
			`^DIFF E/y step 1 level 0: constant value in=\S+ out=\S+$`},
		{"constshape", femm, "contiguous", "E/z", "/data/1/meshes/E/z", "constshape",
			`^DIFF E/z step 1 level 0: constant shape in=\[47 47 47\] out=\[47 46 47\]$`},
		{"byteswap", lb, "merged", "fields/id", "/data/0/meshes/fields/id", "byteswap",
			`^DIFF fields/id step 0 level 0 at \[0,0,1\]: in=1 out=16777216$`},
		{"bigendian", lb, "contiguous", "fields/Bx", "/data/0/meshes/fields/Bx", "bigendian",
			`^DIFF fields/Bx step 0 level 0: .* holds float64 >f8, want <f8$`},
		{"flip", lb, "contiguous", "fields/rho", "/data/1/meshes/fields/rho", "flip",
			`^DIFF fields/rho step 1 level 0 at \[10,21,10\]: in=\S+ out=\S+$`},
		{"hole", lb, "contiguous", "fine/Ez", "/data/0/meshes/fine/Ez", "hole",
			`^DIFF fine/Ez step 0 level 0 at \[\d+,\d+,\d+\]: fill=NaN\(0x7ff8000000000000\) out=0$`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			flags := []string{"--layout", c.layout}
			if c.layout == "chunked" {
				flags = append(flags, "--chunks", "2x2x2", "--compress", "deflate:1")
			}
			out := rewrite(t, c.in, flags...)
			ds, store := input(t, c.in)
			if ok, log := check(t, ds, store, out, Options{}); !ok {
				t.Fatalf("undamaged output fails:\n%s", log)
			}
			msg := python(t, damagePy, out, c.var_, c.path, c.mode)
			ok, log := check(t, ds, store, out, Options{MaxMem: 64 << 10, Jobs: 2})
			if ok {
				t.Fatalf("damage %s (%s) not found:\n%s", c.mode, msg, log)
			}
			var diffs []string
			for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
				if strings.HasPrefix(l, "DIFF") {
					diffs = append(diffs, l)
				}
			}
			if len(diffs) != 1 || !regexp.MustCompile(c.want).MatchString(diffs[0]) {
				t.Fatalf("damage %s (%s): want one line matching %s, got:\n%s", c.mode, msg, c.want, log)
			}
			t.Logf("%s: %s", c.mode, diffs[0])
		})
	}
}
