package netcdf

import (
	"bytes"
	"encoding/hex"
	"path/filepath"
	"slices"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// TestNetcdfRealOffsets: for every real file, every variable's extents (each
// record's, for record variables) equal PnetCDF's ncoffsets -r -s, through
// the header (char variables too) and through the catalog's blocks.
func TestNetcdfRealOffsets(t *testing.T) {
	need(t, "ncoffsets", "-h")
	for _, f := range realFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) { checkOffsets(t, f) })
	}
}

// checkOffsets compares f's header and catalog with ncoffsets -r -s.
func checkOffsets(t *testing.T, f string) {
	want, types := ncoffsets(t, f)
	d, err := OpenFile(f, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	h := d.members[0].hdr
	if len(h.Vars) != len(want) {
		t.Fatalf("%d variables, ncoffsets lists %d", len(h.Vars), len(want))
	}
	for i := range h.Vars {
		v := &h.Vars[i]
		w, ok := want[v.Name]
		if !ok {
			t.Fatalf("variable %s unknown to ncoffsets", v.Name)
		}
		if types[v.Name] != v.Type.String() {
			t.Errorf("%s: type %s, ncoffsets %s", v.Name, v.Type, types[v.Name])
		}
		var got []extent
		if !v.Record {
			got = []extent{{v.Begin, v.Begin + v.Slab}}
		} else {
			for r := int64(0); r < h.NumRecs; r++ {
				s := v.Begin + r*h.RecSize
				got = append(got, extent{s, s + v.Slab})
			}
		}
		if !slices.Equal(got, w) {
			t.Errorf("%s: extents %v, ncoffsets %v", v.Name, got, w)
		}
	}
	// The catalog: one block per extent, at the same offsets.
	n := 0
	for _, a := range testkit.ScanAll(t, d) {
		n++
		w := want[a.Var]
		if len(a.Blocks) != len(w) {
			t.Errorf("%s: %d blocks, %d extents", a.Var, len(a.Blocks), len(w))
			continue
		}
		for i, b := range a.Blocks {
			if (extent{b.Offset, b.Offset + b.Length}) != w[i] || b.File != filepath.Base(f) {
				t.Errorf("%s block %d: %s %d-%d, ncoffsets %v", a.Var, i, b.File, b.Offset, b.Offset+b.Length, w[i])
			}
			if len(a.Shape) > 0 && h.RecDim >= 0 && a.Shape[0] == h.NumRecs && b.Box.Lower[0] != int64(i) && len(a.Blocks) > 1 {
				t.Errorf("%s block %d at record %d", a.Var, i, b.Box.Lower[0])
			}
		}
	}
	if n != len(want) || len(d.Info().Skipped) != 0 {
		t.Errorf("%d arrays (text included; %d skipped), ncoffsets lists %d", n, len(d.Info().Skipped), len(want))
	}
}

// TestNetcdfRealValues: a few variables per real file, read block by block
// through the Source, equal netCDF-C's values (netCDF4-python), and every
// attribute, global and per variable, equals netCDF4-python's.
func TestNetcdfRealValues(t *testing.T) {
	needPython(t)
	for _, f := range realFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) { checkValues(t, f, false) })
	}
}

// checkValues compares some (all: every) variables of f read through the
// catalog, their fill values and every attribute with netCDF4-python's.
func checkValues(t *testing.T, f string, all bool) {
	d, err := OpenFile(f, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	arrays := testkit.ScanAll(t, d)
	if len(arrays) == 0 {
		t.Fatal("no arrays")
	}
	// First, last, a middle one, and every record variable
	// of a small file.
	var pick []*catalog.Array
	for i, a := range arrays {
		if all || i == 0 || i == len(arrays)-1 || i == len(arrays)/2 || len(arrays) < 12 {
			pick = append(pick, a)
		}
	}
	names := make([]string, len(pick))
	for i, a := range pick {
		names[i] = a.Var
	}
	o, vals := oracle(t, f, names...)
	for _, a := range pick {
		got := assemble(t, d, a)
		if !bytes.Equal(got, vals[a.Var]) {
			t.Errorf("%s: %d bytes differ from netCDF-C's %d", a.Var, len(got), len(vals[a.Var]))
		}
		if hex.EncodeToString(a.Fill) != o.Fills[a.Var] && !d.zeroed[a.Var] {
			t.Errorf("%s: fill %x, netCDF4 %s", a.Var, a.Fill, o.Fills[a.Var])
		}
		if !slices.Equal(a.Dims, o.Dims[a.Var]) && (len(a.Dims) > 0 || len(o.Dims[a.Var]) > 0) {
			t.Errorf("%s: dimensions %q, netCDF4 %q", a.Var, a.Dims, o.Dims[a.Var])
		}
		if o.Types[a.Var] != a.DType.Name() {
			t.Errorf("%s: type %s, netCDF4 %s", a.Var, a.DType.Name(), o.Types[a.Var])
		}
	}
	checkAttrs(t, "global", d.Info().Attrs, o.Global)
	for _, a := range arrays {
		checkAttrs(t, a.Var, a.Attrs, o.Vars[a.Var])
	}
	// Every variable, text included, is an array.
	for name := range o.Types {
		if !slices.ContainsFunc(arrays, func(a *catalog.Array) bool { return a.Var == name }) {
			t.Errorf("%s (%s): no array", name, o.Types[name])
		}
	}
}

func checkAttrs(t *testing.T, where string, got []catalog.Attr, want map[string]oracleAttr) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d attributes, netCDF4 %d", where, len(got), len(want))
	}
	for _, a := range got {
		w, ok := want[a.Name]
		if !ok || !sameAttr(a, w) {
			t.Errorf("%s:%s = %+v, netCDF4 %+v", where, a.Name, a, w)
		}
	}
}
