package amrex

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// compareYT checks arrays against yt's grids: level count, every level's shape, the
// box list of every level, and every value of every box for the dumped fields.
func compareYT(t *testing.T, ds *Dataset, y *testkit.YTDump, dim int) {
	t.Helper()
	arrays := map[string][]*catalog.Array{}
	for _, a := range testkit.ScanAll(t, ds) {
		arrays[a.Var] = append(arrays[a.Var], a)
	}
	for fi, name := range y.Fields {
		levels := arrays[name]
		if len(levels) != y.Levels {
			t.Fatalf("%s: %d levels, yt has %d", name, len(levels), y.Levels)
		}
		if got, want := levels[0].Shape, testkit.TrimDims(y.Domain, dim); !slices.Equal(got, want) {
			t.Errorf("%s: level 0 shape %v, yt domain %v", name, got, want)
		}
		// Every level spans the whole domain in its own cells (the
		// openPMD mesh-refinement layout), from the domain's corner.
		for l, a := range levels {
			if got, want := a.Shape, testkit.TrimDims(y.LevelDomains[l], dim); !slices.Equal(got, want) || slices.ContainsFunc(a.Offset, func(o int64) bool { return o != 0 }) {
				t.Errorf("%s: level %d shape %v offset %v, yt's domain in the level's cells %v", name, l, got, a.Offset, want)
			}
		}
		ytBoxes := map[int][]string{}
		for _, g := range y.Grids {
			ytBoxes[g.Level] = append(ytBoxes[g.Level], testkit.KeyOf(g.Level, testkit.TrimDims(g.Start, dim), testkit.TrimDims(g.Dims, dim)))
		}
		dense := make([][]float64, len(levels))
		for l, a := range levels {
			if a.Level != l {
				t.Fatalf("%s: array %d is level %d", name, l, a.Level)
			}
			var ours []string
			for _, b := range a.Boxes {
				lo := make([]int64, dim)
				for k := range lo {
					lo[k] = b.Lower[k] + a.Offset[k]
				}
				ours = append(ours, testkit.KeyOf(l, lo, b.Count))
			}
			slices.Sort(ours)
			slices.Sort(ytBoxes[l])
			if !slices.Equal(ours, ytBoxes[l]) {
				t.Fatalf("%s level %d: boxes differ from yt's grids:\n ours %v\n yt   %v", name, l, ours, ytBoxes[l])
			}
			dense[l] = testkit.AssembleFortran(t, ds, a)
		}
		vals, n, bad := y.Values[fi], 0, 0
		for _, g := range y.Grids {
			a := levels[g.Level]
			testkit.EachIndex(testkit.TrimDims(g.Dims, dim), func(idx []int64) {
				glob := make([]int64, dim)
				for k := range glob {
					glob[k] = g.Start[k] + idx[k]
				}
				got, ok := testkit.At(a, dense[g.Level], glob)
				want := vals[n]
				n++
				if !ok || (got != want && !(math.IsNaN(got) && math.IsNaN(want))) {
					if bad++; bad <= 5 {
						t.Errorf("%s level %d At %v: ours %v (in array %v), yt %v", name, g.Level, glob, got, ok, want)
					}
				}
			})
		}
		if n != len(vals) {
			t.Fatalf("%s: compared %d values, yt dumped %d", name, n, len(vals))
		}
		if bad > 0 {
			t.Errorf("%s: %d of %d values differ", name, bad, n)
		}
	}
}

// pelelmex-3d: 3 levels, 38 fields; yt is the oracle for every box of every
// level on a sample of fields (first, last, names with parentheses, middle).
func TestPeleLMeX3DAgainstYT(t *testing.T) {
	dir := testkit.SharedData(t, "amrex/pelelmex-3d")
	ds, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	if len(ds.vars) != 38 {
		t.Fatalf("%d variables, want 38", len(ds.vars))
	}
	fields := []string{"x_velocity", "z_velocity", "temp", "density", "Y(CH2(S))", "Y(AR)", "enstrophy", "progress_variable"}
	y := testkit.RunYT(t, "testdata/yt_dump.py", dir, "boxlib", fields...)
	if y.Levels != 3 {
		t.Fatalf("yt sees %d levels", y.Levels)
	}
	compareYT(t, ds, y, 3)

	// Every array: float64 little endian, NaN fill, ranks = Cell_D numbers
	// (4 ranks wrote 4 files), blocks' byte ranges inside their files.
	for _, a := range testkit.ScanAll(t, ds) {
		if a.DType != (catalog.DType{Kind: catalog.Float, Size: 8}) || !math.IsNaN(testkit.Floats(a.Fill, a.DType)[0]) {
			t.Fatalf("%s: dtype %v fill %v", a.Source, a.DType, a.Fill)
		}
		if a.Step != 20 {
			t.Fatalf("%s: step %d, want 20", a.Source, a.Step)
		}
		for _, b := range a.Blocks {
			n, _ := strconv.Atoi(b.File[strings.LastIndexByte(b.File, '_')+1:])
			if int(b.Rank) != n {
				t.Fatalf("%s: block in %s has rank %d", a.Source, b.File, b.Rank)
			}
		}
	}
}

// pelelmex-2d: yt aborts on it, so every box of every component is checked
// against the per-box min/max AMReX wrote in Cell_H (parsed here by plain
// string splitting, not by the reader's parser).
func TestPeleLMeX2DAgainstCellHMinMax(t *testing.T) {
	dir := testkit.SharedData(t, "amrex/pelelmex-2d")
	ds, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	if !slices.ContainsFunc(ds.Info().Skipped, func(s string) bool { return strings.Contains(s, "Header: line") }) {
		t.Errorf("the trimmed Header's leftover level blocks are not reported: %v", ds.Info().Skipped)
	}
	hdr := ds.plots[0].hdr
	wantBoxes := []int{256, 551}
	byVar := map[string][]*catalog.Array{}
	for _, a := range testkit.ScanAll(t, ds) {
		byVar[a.Var] = append(byVar[a.Var], a)
	}
	if len(byVar) != 8 {
		t.Fatalf("%d variables, want 8", len(byVar))
	}
	for l := 0; l < 2; l++ {
		mins, maxs := cellHMinMax(t, filepath.Join(dir, "Level_"+strconv.Itoa(l), "Cell_H"))
		if len(mins) != wantBoxes[l] {
			t.Fatalf("level %d: Cell_H has %d min rows", l, len(mins))
		}
		for c, v := range hdr.Vars {
			a := byVar[v][l]
			if len(a.Blocks) != wantBoxes[l] || len(a.Boxes) != wantBoxes[l] {
				t.Fatalf("%s level %d: %d blocks, want %d", v, l, len(a.Blocks), wantBoxes[l])
			}
			for b := range a.Blocks {
				raw, err := catalog.ReadBlock(t.Context(), ds, &a.Blocks[b], a.DType)
				if err != nil {
					t.Fatal(err)
				}
				vals := testkit.Floats(raw, a.DType)
				lo, hi := slices.Min(vals), slices.Max(vals)
				// Cell_H holds 17 significant digits: exact after parsing.
				if lo != mins[b][c] || hi != maxs[b][c] {
					t.Errorf("%s level %d box %d: min/max %v/%v, Cell_H says %v/%v", v, l, b, lo, hi, mins[b][c], maxs[b][c])
				}
			}
		}
	}
	// Level 1 spans the level-0 domain (256x256, Header line 17) refined by
	// 2, not the bounding box of its boxes (448x512).
	if a := byVar["temp"][1]; !slices.Equal(a.Shape, []int64{512, 512}) || !slices.Equal(a.Offset, []int64{0, 0}) {
		t.Errorf("level 1 shape %v offset %v, want the refined domain [512 512] at [0 0]", a.Shape, a.Offset)
	}
}

// cellHMinMax extracts the two "N,M" tables At the end of a version-1 Cell_H.
func cellHMinMax(t *testing.T, path string) (mins, maxs [][]float64) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var tables [][][]float64
	for i := 0; i < len(lines); i++ {
		f := strings.Split(lines[i], ",")
		if len(f) != 2 || strings.HasPrefix(lines[i], "(") {
			continue
		}
		n, err1 := strconv.Atoi(f[0])
		_, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			continue
		}
		var tab [][]float64
		for _, row := range lines[i+1 : i+1+n] {
			var r []float64
			for _, s := range strings.Split(strings.TrimSuffix(strings.TrimSpace(row), ","), ",") {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil {
					t.Fatal(err)
				}
				r = append(r, v)
			}
			tab = append(tab, r)
		}
		tables = append(tables, tab)
		i += n
	}
	if len(tables) != 2 {
		t.Fatalf("%s: %d min/max tables", path, len(tables))
	}
	return tables[0], tables[1]
}
