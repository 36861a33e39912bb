package verify

import (
	"encoding/binary"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
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
//	poke       the element at index argv[5] ("i,j,k") plus one
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
        elif mode == "poke":
            b = a.copy(); i = tuple(int(x) for x in sys.argv[5].split(","))
            b[i] = b[i] + 1
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

// Damage in arrays verified as a joint group (the variables of a step of
// ADIOS2 output interleave block by block in its sub-files) is found in
// the array it is in, at its index, and the group's other arrays still
// verify: one element of one variable changed in the output (h5py, its
// sha256 recorded anew), and one element of one input block changed in
// the sub-file (a copy of the input, the output written from the
// original).
func TestDamageJoint(t *testing.T) {
	lb := shared(t, "bp4/generated-lb")
	out := rewrite(t, lb, "--layout", "contiguous")
	lines := func(t *testing.T, log string) (diffs []string, oks map[string]bool) {
		oks = map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
			if strings.HasPrefix(l, "DIFF") {
				diffs = append(diffs, l)
			} else if f := strings.Fields(l); len(f) > 1 && f[0] == "OK" {
				oks[f[1]] = true
			}
		}
		return diffs, oks
	}
	verifyJoint := func(t *testing.T, in, out string) (diffs []string, oks map[string]bool) {
		ds, store := input(t, in)
		var st *stats
		statsHook = func(s *stats) { st = s }
		defer func() { statsHook = nil }()
		ok, log := check(t, ds, store, out, Options{Jobs: 2, Exact: true})
		if ok {
			t.Fatalf("damage not found:\n%s", log)
		}
		if st.counter("joint") < 4 {
			t.Fatalf("no joint group verified: %s", st)
		}
		// The checksum path: the damaged array's sums differ, it is
		// compared again exactly and the same difference reported.
		qok, qlog := check(t, ds, store, out, Options{Jobs: 2})
		if qok || st.counter("rechecked") != 1 || st.counter("checksummed") == 0 {
			t.Fatalf("checksum path: ok %v, %s\n%s", qok, st, qlog)
		}
		qd, qo := lines(t, qlog)
		ed, eo := lines(t, log)
		if !slices.Equal(qd, ed) || !maps.Equal(qo, eo) || !strings.Contains(qlog, "compare: ") {
			t.Errorf("checksum path reports\n%s\nexact path\n%s", qlog, log)
		}
		return lines(t, log)
	}
	others := func(t *testing.T, oks map[string]bool, damaged string) {
		for _, v := range []string{"fields/Bx", "fields/id", "fields/rho", "fine/Ez"} {
			if v != damaged && !oks[v] {
				t.Errorf("%s (in the damaged array's joint group) not verified OK: %v", v, oks)
			}
		}
	}

	t.Run("output", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "out")
		if b, err := exec.Command("cp", "-r", out, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, b)
		}
		// fields/rho = (i*N*N + j*N + k)*0.25 + step, N = 32: 1330.75 at [5,6,7] of step 1.
		python(t, damagePy, dir, "fields/rho", "/data/1/meshes/fields/rho", "poke", "5,6,7")
		diffs, oks := verifyJoint(t, lb, dir)
		want := regexp.MustCompile(`^DIFF fields/rho step 1 level 0 at \[5,6,7\]: in=1330.75 out=1331.75$`)
		if len(diffs) != 1 || !want.MatchString(diffs[0]) {
			t.Fatalf("want one line matching %s, got %q", want, diffs)
		}
		others(t, oks, "fields/rho")
	})

	t.Run("input", func(t *testing.T) {
		in := filepath.Join(t.TempDir(), "in.bp")
		if b, err := exec.Command("cp", "-r", lb, in).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v %s", err, b)
		}
		// One element of a block of fields/id (int32, raw, row-major) at
		// step 2, plus one, in the copy's sub-file.
		ds, store := input(t, in)
		a, err := store.Array(catalog.Key{Var: "fields/id", Step: 2})
		if err != nil {
			t.Fatal(err)
		}
		b := a.Blocks[len(a.Blocks)/2]
		st := b.StoredShape()
		if len(b.Codecs) != 0 || b.StoredLower() != nil || len(st) != 3 || b.Length != 4*st[0]*st[1]*st[2] {
			t.Fatalf("block %+v: not a raw block", b)
		}
		at := []int64{3, 4, 5}
		off := b.Offset + 4*((at[0]*st[1]+at[1])*st[2]+at[2])
		f, err := os.OpenFile(filepath.Join(ds.Info().Root, b.File), os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		var v [4]byte
		if _, err := f.ReadAt(v[:], off); err != nil {
			t.Fatal(err)
		}
		old := int32(binary.LittleEndian.Uint32(v[:]))
		binary.LittleEndian.PutUint32(v[:], uint32(old+1))
		if _, err := f.WriteAt(v[:], off); err != nil {
			t.Fatal(err)
		}
		f.Close()
		g := slices.Clone(b.Box.Lower)
		for d := range g {
			g[d] += at[d]
		}
		// fields/id = i*N*N + j*N + k + step*N^3: the output holds the original.
		if lin := (g[0]*32+g[1])*32 + g[2] + 2*32768; int64(old) != lin {
			t.Fatalf("block %v holds %d at %v, want %d", b.Box, old, g, lin)
		}
		diffs, oks := verifyJoint(t, in, out)
		want := fmt.Sprintf("DIFF fields/id step 2 level 0 at [%d,%d,%d]: in=%d out=%d", g[0], g[1], g[2], old+1, old)
		if len(diffs) != 1 || diffs[0] != want {
			t.Fatalf("want %q, got %q", want, diffs)
		}
		others(t, oks, "fields/id")
	})
}
