package h5

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
)

func TestFemm3D(t *testing.T) {
	file := filepath.Join(dataDir(t, "hdf5/openpmd-femm"), "example-femm-3d.h5")
	want := oracle(t, file)
	d, err := Open(file, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	info := d.Info()
	if info.Format != "openpmd-hdf5" || info.Root != filepath.Dir(file) {
		t.Errorf("info = %+v", info)
	}
	if a := attr(info.Attrs, "openPMD"); a == nil || a.Strings[0] != "1.1.0" {
		t.Errorf("dataset attrs lack openPMD=1.1.0: %+v", info.Attrs)
	}
	arrays := scanAll(t, d)
	if got := keys(arrays); !slices.Equal(got, []key{{"B/x", 1}, {"B/y", 1}, {"B/z", 1}, {"E/x", 1}, {"E/y", 1}, {"E/z", 1}}) {
		t.Fatalf("arrays = %v", got)
	}
	// E is constant (value 0 over 47^3, h5py's values checked below).
	for _, a := range arrays[3:] {
		if !a.Constant || len(a.Blocks) != 0 || !slices.Equal(a.Shape, []int64{47, 47, 47}) || a.DType.NumPy() != "<f8" ||
			attr(a.Attrs, "value") != nil || attr(a.Attrs, "shape") != nil || attr(a.Attrs, "unitSI") == nil {
			t.Errorf("%s: constant %v, %d blocks, shape %v, attrs %+v", a.Var, a.Constant, len(a.Blocks), a.Shape, a.Attrs)
		}
	}
	for _, a := range arrays[:3] {
		// 47³ in 32x16x16 chunks: 2x3x3 = 18 chunks, all allocated (h5ls:
		// 1179648 allocated bytes = 18 x 65536).
		if !slices.Equal(a.Shape, []int64{47, 47, 47}) || len(a.Blocks) != 18 {
			t.Errorf("%s: shape %v, %d blocks; want [47 47 47] in 18 chunks", a.Var, a.Shape, len(a.Blocks))
		}
		var covered int64
		partial := 0
		for _, b := range a.Blocks {
			covered += b.Box.Elements()
			if !slices.Equal(b.Stored(), []int64{32, 16, 16}) || b.File != "example-femm-3d.h5" || b.Rank != -1 {
				t.Errorf("%s block %v: stored %v file %q rank %d", a.Var, b.Box, b.Stored(), b.File, b.Rank)
			}
			if b.Box.Elements() < 32*16*16 {
				partial++
			}
		}
		// 47 = 32+15 = 16+16+15: only 1x2x2 chunks are whole.
		if partial != 14 || covered != 47*47*47 {
			t.Errorf("%s: %d partial chunks covering %d elements, want 14 covering %d", a.Var, partial, covered, 47*47*47)
		}
		// Attrs: record (B) merged with component; StepAttrs: iteration.
		if g := attr(a.Attrs, "geometry"); g == nil || g.Strings[0] != "cartesian" {
			t.Errorf("%s: record attr geometry missing: %+v", a.Var, a.Attrs)
		}
		if attr(a.Attrs, "unitSI") == nil || attr(a.Attrs, "position") == nil {
			t.Errorf("%s: component attrs missing: %+v", a.Var, a.Attrs)
		}
		if dt := attr(a.StepAttrs, "dt"); dt == nil || dt.Floats[0] != 1 {
			t.Errorf("%s: step attrs %+v", a.Var, a.StepAttrs)
		}
	}
	checkValues(t, d, arrays, want)
}

func TestFemmThetaMode(t *testing.T) {
	file := filepath.Join(dataDir(t, "hdf5/openpmd-femm"), "example-femm-thetaMode.h5")
	want := oracle(t, file)
	d, err := Open(file, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	arrays := scanAll(t, d)
	if got := keys(arrays); !slices.Equal(got, []key{{"B/r", 1}, {"B/t", 1}, {"B/z", 1}, {"E/r", 1}, {"E/t", 1}, {"E/z", 1}}) {
		t.Fatalf("arrays = %v", got)
	}
	for _, a := range arrays {
		switch a.Var {
		case "B/r", "B/z":
			// {1,47,47} in (1,32,32) chunks: 4 chunks, three partial.
			if a.Constant || !slices.Equal(a.Shape, []int64{1, 47, 47}) || len(a.Blocks) != 4 {
				t.Errorf("%s: shape %v, %d blocks", a.Var, a.Shape, len(a.Blocks))
			}
		default: // constant record components
			if !a.Constant || len(a.Blocks) != 0 {
				t.Errorf("%s: constant %v, %d blocks", a.Var, a.Constant, len(a.Blocks))
			}
		}
	}
	checkValues(t, d, arrays, want)
}

func TestFBPICSeries(t *testing.T) {
	dir := dataDir(t, "hdf5/fbpic")
	want := oracle(t, filepath.Join(dir, "data00000000.h5"), filepath.Join(dir, "data00000100.h5"))
	d, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Info().Format != "openpmd-hdf5" || d.Info().Root != dir {
		t.Errorf("info %+v", d.Info())
	}
	if a := attr(d.Info().Attrs, "iterationEncoding"); a == nil || a.Strings[0] != "fileBased" {
		t.Errorf("root attrs %+v", d.Info().Attrs)
	}
	all := scanAll(t, d)
	var wantKeys []key
	for _, v := range []string{"B/r", "B/t", "B/z", "E/r", "E/t", "E/z", "J/r", "J/t", "J/z",
		"particles/electrons/charge", "particles/electrons/gamma", "particles/electrons/id", "particles/electrons/mass",
		"particles/electrons/position/x", "particles/electrons/position/y", "particles/electrons/position/z",
		"particles/electrons/positionOffset/x", "particles/electrons/positionOffset/y", "particles/electrons/positionOffset/z",
		"particles/electrons/weighting", "rho"} {
		wantKeys = append(wantKeys, key{v, 0}, key{v, 100})
	}
	if got := keys(all); !slices.Equal(got, wantKeys) {
		t.Fatalf("arrays = %v", got)
	}
	// The species "electrons" holds no particle in either iteration (h5dump:
	// datasets of shape {0}); charge, mass and positionOffset are constant
	// records (groups with value and shape attributes).
	var arrays []*catalog.Array
	for _, a := range all {
		if !strings.HasPrefix(a.Var, "particles/") {
			arrays = append(arrays, a)
			continue
		}
		constant := strings.Contains(a.Var, "charge") || strings.Contains(a.Var, "mass") || strings.Contains(a.Var, "positionOffset")
		shape := []int64{0}
		if constant {
			shape = []int64{1} // their shape attribute (h5dump)
		}
		if a.Species != "electrons" || !slices.Equal(a.Shape, shape) || len(a.Blocks) != 0 {
			t.Errorf("%s@%d: species %q, shape %v, %d blocks", a.Var, a.Step, a.Species, a.Shape, len(a.Blocks))
		}
		if a.Constant != constant {
			t.Errorf("%s@%d: constant %v", a.Var, a.Step, a.Constant)
		}
		// species, record and component attributes where the input has them
		if sp := attr(a.Attrs, "particleShape"); sp == nil || !sp.Species {
			t.Errorf("%s@%d: species attribute particleShape %+v", a.Var, a.Step, sp)
		}
		if wp := attr(a.Attrs, "weightingPower"); wp == nil || wp.Species {
			t.Errorf("%s@%d: record attribute weightingPower %+v", a.Var, a.Step, wp)
		} else if wp.Record != strings.Contains(a.Var, "position") {
			t.Errorf("%s@%d: weightingPower from the record group: %v", a.Var, a.Step, wp.Record)
		}
		if u := attr(a.Attrs, "unitSI"); u == nil || u.Record || u.Species {
			t.Errorf("%s@%d: component attribute unitSI %+v", a.Var, a.Step, u)
		}
		if ts := attr(a.StepAttrs, "time"); ts == nil {
			t.Errorf("%s@%d: no iteration attr time", a.Var, a.Step)
		}
	}
	for _, a := range arrays {
		if !slices.Equal(a.Shape, []int64{3, 50, 200}) || len(a.Blocks) != 1 || a.Blocks[0].Length != 3*50*200*8 {
			t.Errorf("%s@%d: shape %v, blocks %+v", a.Var, a.Step, a.Shape, a.Blocks)
		}
		wantFile := map[int64]string{0: "data00000000.h5", 100: "data00000100.h5"}[a.Step]
		if a.Blocks[0].File != wantFile {
			t.Errorf("%s@%d: block in %s", a.Var, a.Step, a.Blocks[0].File)
		}
		if ts := attr(a.StepAttrs, "time"); ts == nil {
			t.Errorf("%s@%d: no iteration attr time: %+v", a.Var, a.Step, a.StepAttrs)
		}
	}
	if slices.ContainsFunc(d.Info().Skipped, func(s string) bool { return strings.Contains(s, "particles") }) {
		t.Errorf("particles skipped: %q", d.Info().Skipped)
	}
	checkValues(t, d, arrays, want)

	// One file of the series on its own.
	one, err := Open(filepath.Join(dir, "data00000100.h5"), Config{Match: func(v string) bool { return v == "rho" }})
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	if got := keys(scanAll(t, one)); !slices.Equal(got, []key{{"rho", 100}}) {
		t.Errorf("single file: %v", got)
	}
}

func TestADIOS2Engine(t *testing.T) {
	file := dataDir(t, "hdf5/adios2-hdf5-engine-types_np.h5")
	want := oracle(t, file)
	d, err := Open(file, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if d.Info().Format != "hdf5" {
		t.Errorf("format %q", d.Info().Format)
	}
	arrays := scanAll(t, d)
	wantKeys := []key{{"gvarI8", 0}}
	for s := int64(0); s < 5; s++ {
		wantKeys = append(wantKeys, key{"varR64", s})
	}
	if got := keys(arrays); !slices.Equal(got, wantKeys) {
		t.Fatalf("arrays = %v", got)
	}
	if a := arrays[0]; len(a.Shape) != 0 || a.DType.NumPy() != "|i1" || len(a.Blocks) != 1 {
		t.Errorf("gvarI8: %s %v %d blocks", a.DType, a.Shape, len(a.Blocks))
	}
	for _, s := range []string{"/Step0/steps", "/Step0/tag", "/Step4/steps"} {
		if !containsPrefix(d.Info().Skipped, "adios2-hdf5-engine-types_np.h5:"+s+": non-numeric dataset") {
			t.Errorf("%s not skipped: %q", s, d.Info().Skipped)
		}
	}
	checkValues(t, d, arrays, want)
}

func TestTruncatedRealFile(t *testing.T) {
	file := filepath.Join(dataDir(t, "hdf5/openpmd-femm"), "example-femm-3d.h5")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(t.TempDir(), "cut.h5")
	if err := os.WriteFile(tmp, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(tmp, Config{}); !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "cut.h5") {
		t.Errorf("truncated file: %v, want ErrCorrupt naming cut.h5", err)
	}
}
