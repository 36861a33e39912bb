package netcdf

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// genFiles writes nc_oracle.py's edge cases (netCDF-C through
// netCDF4-python) into a temporary folder.
func genFiles(t *testing.T) string {
	t.Helper()
	needPython(t)
	dir := t.TempDir()
	out, err := execPython("testdata/nc_oracle.py", "gen", dir)
	if err != nil {
		t.Fatalf("nc_oracle.py gen: %v\n%s", err, out)
	}
	return dir
}

// TestNetcdfGenerated: every type (CDF-5's unsigned and 64-bit ones included),
// fixed and record variables, a scalar, attributes of every type, exactly
// one record variable of shorts (records unpadded), a record dimension
// with 0 records, in CDF-1, CDF-2 and CDF-5: offsets equal ncoffsets,
// values, fills and attributes netCDF4-python's.
func TestNetcdfGenerated(t *testing.T) {
	need(t, "ncoffsets", "-h")
	dir := genFiles(t)
	for _, kind := range []string{"types", "onerec", "zerorec"} {
		for _, v := range []string{"cdf1", "cdf2", "cdf5"} {
			f := filepath.Join(dir, kind+"-"+v+".nc")
			t.Run(filepath.Base(f), func(t *testing.T) {
				checkOffsets(t, f)
				checkValues(t, f, true)
				d, err := OpenFile(f, Config{})
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				h := d.members[0].hdr
				if want := "CDF-" + v[3:]; h.Format() != want {
					t.Errorf("format %s, want %s", h.Format(), want)
				}
				arrays := testkit.ScanAll(t, d)
				switch kind {
				case "types":
					want := 12 // 5 types fixed and record, a scalar, text
					if v == "cdf5" {
						want = 22 // and 5 more types
					}
					if len(arrays) != want {
						t.Errorf("%d arrays, want %d", len(arrays), want)
					}
					if sk := d.Info().Skipped; len(sk) != 0 {
						t.Errorf("skipped %q, want nothing", sk)
					}
					if !slices.ContainsFunc(arrays, func(a *catalog.Array) bool { return a.Var == "text" && a.DType.Kind == catalog.Char }) {
						t.Errorf("no char array text")
					}
				case "onerec":
					if h.RecSize != 6 {
						t.Errorf("recsize %d, want 6 (one record variable of 3 shorts: unpadded)", h.RecSize)
					}
				case "zerorec":
					for _, a := range arrays {
						if a.Var == "r" && (a.Shape[0] != 0 || len(a.Blocks) != 0) {
							t.Errorf("r: shape %v with %d blocks", a.Shape, len(a.Blocks))
						}
					}
				}
			})
		}
	}
}

// TestNetcdfShortFile: a file cut inside the last slab of its last variable
// (a record variable; a fixed one) reads as netCDF-C reads it, zeros past
// the end, from at most rank boxes (and one inline element cut in two);
// cut inside another variable it is refused naming the file and offset.
func TestNetcdfShortFile(t *testing.T) {
	dir := genFiles(t)
	for _, c := range []struct {
		file, last string
		cut        []int64 // bytes removed from the end
		bad        int64   // a cut reaching the previous variable
	}{
		{"short-cdf1.nc", "b", []int64{1, 2, 31, 37, 64, 119, 120}, 121},
		{"short-cdf2.nc", "b", []int64{2, 38}, 153},
		{"short-cdf5.nc", "b", []int64{6}, 150},
		{"shortfix-cdf2.nc", "g", []int64{1, 4, 13, 200, 240}, 241},
		{"shortfix-cdf5.nc", "g", []int64{5}, 241},
	} {
		src := filepath.Join(dir, c.file)
		full, _ := os.ReadFile(src)
		for _, cut := range c.cut {
			t.Run(fmt.Sprintf("%s-%d", c.file, cut), func(t *testing.T) {
				f := filepath.Join(t.TempDir(), c.file)
				os.WriteFile(f, full[:int64(len(full))-cut], 0o644)
				d, err := OpenFile(f, Config{})
				if err != nil {
					t.Fatal(err)
				}
				defer d.Close()
				checkValues(t, f, true)
				for _, a := range testkit.ScanAll(t, d) {
					if a.Var != c.last {
						continue
					}
					if !bytes.Equal(a.Fill, make([]byte, a.DType.Size)) {
						t.Errorf("%s: fill %x, want zeros", a.Var, a.Fill)
					}
					tail := 0
					for _, b := range a.Blocks {
						if b.Box.Lower[0] == a.Shape[0]-1 || len(a.Shape) == 3 {
							tail++
						}
					}
					if tail > len(a.Shape)+1 {
						t.Errorf("%s: the cut slab is %d blocks", a.Var, tail)
					}
				}
				sk := strings.Join(d.Info().Skipped, "\n")
				if !strings.Contains(sk, c.file+": variable "+c.last) || !strings.Contains(sk, "read as zeros, as netCDF-C does") {
					t.Errorf("skipped: %s", sk)
				}
			})
		}
		t.Run(fmt.Sprintf("%s-%d-refused", c.file, c.bad), func(t *testing.T) {
			f := filepath.Join(t.TempDir(), c.file)
			os.WriteFile(f, full[:int64(len(full))-c.bad], 0o644)
			_, err := OpenFile(f, Config{})
			if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), c.file) || !strings.Contains(err.Error(), "offset ") {
				t.Fatalf("got %v, want a CorruptError naming %s and an offset", err, c.file)
			}
			t.Log(err)
		})
	}
}
