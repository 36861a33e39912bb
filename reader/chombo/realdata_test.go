package chombo

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// ytScript is shared with reader/amrex, whose tests use the same oracle.
const ytScript = "../amrex/testdata/yt_dump.py"

// compareYT checks arrays against yt's grids: level count, every level's shape, the
// box list of every level, and every value of every box of every field.
func compareYT(t *testing.T, ds *Dataset, y *testkit.YTDump, dim int) {
	t.Helper()
	arrays := map[string][]*catalog.Array{}
	for _, a := range testkit.ScanAll(t, ds) {
		arrays[a.Var] = append(arrays[a.Var], a)
	}
	if len(arrays) != len(y.Fields) {
		t.Errorf("%d variables, yt has %d fields", len(arrays), len(y.Fields))
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
			if a.Level != l || !slices.Equal(ours, ytBoxes[l]) {
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
		if n != len(vals) || bad > 0 {
			t.Errorf("%s: %d of %d values differ (yt dumped %d)", name, bad, n, len(vals))
		}
	}
}

func TestMushyLayer2DAgainstYT(t *testing.T) {
	dir := testkit.SharedData(t, "chombo/mushy-layer")
	for _, name := range []string{"plt025000.2d.hdf5", "plt000100.2d.hdf5"} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			if !Detect(p) {
				t.Fatal("not detected")
			}
			ds, err := Open(p, Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			y := testkit.RunYT(t, ytScript, p, "chombo")
			compareYT(t, ds, y, 2)
			step, _ := strconv.Atoi(name[3:9])
			for _, a := range testkit.ScanAll(t, ds) {
				if a.Step != int64(step) || !math.IsNaN(testkit.Floats(a.Fill, a.DType)[0]) {
					t.Fatalf("%s: step %d fill % x", a.Source, a.Step, a.Fill)
				}
			}
		})
	}
}

// The 3-D checkpoint stores one data set per variable; yt does not read it,
// so h5py slices every box of every component out of the datasets.
func TestCheckpointAgainstH5py(t *testing.T) {
	p := filepath.Join(testkit.SharedData(t, "chombo/mushy-layer"), "chk000100.3d.hdf5")
	ds, err := Open(p, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	if sk := strings.Join(ds.Info().Skipped, "\n"); !strings.Contains(sk, "advVel:datatype=0: objectType \"unknown\"") {
		t.Errorf("advVel (face data) not reported as skipped: %s", sk)
	}
	out := t.TempDir()
	if b, err := exec.Command(testkit.Python, "testdata/h5py_dump.py", p, out).CombinedOutput(); err != nil {
		t.Fatalf("h5py: %v\n%s", err, b)
	}
	var idx map[string]struct {
		Comps int
		Lo    [][]int64
		Dims  [][]int64
	}
	b, _ := os.ReadFile(filepath.Join(out, "index.json"))
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	// The checkpoint's root names the flattened components; vector sets
	// take them ("Darcy velocity" → "xDarcy velocity", ...).
	want := map[string]string{}
	for key, e := range idx {
		set := strings.SplitN(key, "/", 2)[1]
		for c := 0; c < e.Comps; c++ {
			v := set
			if e.Comps > 1 {
				v = "xyz"[c:c+1] + set
			}
			want[v] = strings.Replace(key, "/", ".", 1) + "." + strconv.Itoa(c)
		}
	}
	arrays := testkit.ScanAll(t, ds)
	if len(arrays) != len(want) || len(arrays) != 7 {
		t.Fatalf("%d arrays, h5py finds %d components", len(arrays), len(want))
	}
	for _, a := range arrays {
		f, ok := want[a.Var]
		if !ok {
			t.Fatalf("variable %q not in h5py's dump", a.Var)
		}
		raw, err := os.ReadFile(filepath.Join(out, f+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		vals := testkit.Floats(raw, catalog.DType{Kind: catalog.Float, Size: 8})
		dense := testkit.AssembleFortran(t, ds, a)
		e := idx[strings.Replace(strings.TrimSuffix(f, f[strings.LastIndexByte(f, '.'):]), ".", "/", 1)]
		n := 0
		for bi := range e.Lo {
			testkit.EachIndex(e.Dims[bi], func(ix []int64) {
				g := make([]int64, 3)
				for k := range g {
					g[k] = e.Lo[bi][k] + ix[k]
				}
				if got, _ := testkit.At(a, dense, g); got != vals[n] {
					t.Fatalf("%s At %v: %v, h5py %v", a.Var, g, got, vals[n])
				}
				n++
			})
		}
		if n != len(vals) || n != 32*32*32 {
			t.Fatalf("%s: compared %d of %d values", a.Var, n, len(vals))
		}
	}
}

// makeFiles writes the generated Chombo files of testdata/make_chombo.py.
func makeFiles(t *testing.T) string {
	t.Helper()
	testkit.NeedPython(t, "Debian python3-h5py", "h5py", "numpy")
	dir := t.TempDir()
	if b, err := exec.Command(testkit.Python, "testdata/make_chombo.py", dir).CombinedOutput(); err != nil {
		t.Fatalf("make_chombo.py: %v\n%s", err, b)
	}
	return dir
}

// Ghost cells stored around each box (outputGhost), float32 data: yt strips
// the ghosts itself, the blocks say where the valid region sits.
func TestGhostsAgainstYT(t *testing.T) {
	dir := makeFiles(t)
	p := filepath.Join(dir, "ghost.2d.hdf5")
	ds, err := Open(p, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	for _, a := range testkit.ScanAll(t, ds) {
		if a.DType != (catalog.DType{Kind: catalog.Float, Size: 4}) || a.Step != 42 {
			t.Fatalf("%s: %v step %d", a.Source, a.DType, a.Step)
		}
		for i, b := range a.Blocks {
			want := []int64{b.Box.Count[0] + 2, b.Box.Count[1] + 4}
			if !slices.Equal(b.Stored(), want) || !slices.Equal(b.StoredLower(), []int64{1, 2}) || int(b.Rank) != i {
				t.Fatalf("%s block %d: stored %v lower %v rank %d", a.Source, i, b.Stored(), b.StoredLower(), b.Rank)
			}
		}
		// Level 1 spans its prob_domain (0,0)-(31,15), not its boxes'
		// bounding box (4,2)-(27,13).
		if a.Level == 1 && (!slices.Equal(a.Offset, []int64{0, 0}) || !slices.Equal(a.Shape, []int64{32, 16})) {
			t.Errorf("level 1 offset %v shape %v, want the level's domain [0 0] [32 16]", a.Offset, a.Shape)
		}
	}
	compareYT(t, ds, testkit.RunYT(t, ytScript, p, "chombo"), 2)
}

func TestBadInput(t *testing.T) {
	dir := makeFiles(t)
	for _, c := range []struct {
		file     string
		sentinel error
		mention  []string
	}{
		{"chunked.2d.hdf5", catalog.ErrUnsupported, []string{"chunked.2d.hdf5: /level_0/data:datatype=0: chunked layout"}},
		{"outside.2d.hdf5", catalog.ErrCorrupt, []string{"outside.2d.hdf5: /level_1/boxes: box 2", "outside the level 1 domain"}},
		{"levels.2d.hdf5", catalog.ErrCorrupt, []string{"levels.2d.hdf5: /level_2: num_levels is 3"}},
	} {
		_, err := Open(filepath.Join(dir, c.file), Config{})
		t.Log(err)
		if !errors.Is(err, c.sentinel) {
			t.Errorf("%s: error %v does not wrap %v", c.file, err, c.sentinel)
			continue
		}
		for _, m := range c.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: error %q does not mention %q", c.file, err, m)
			}
		}
	}
}

// A directory of Chombo files is a time series (steps from "iteration").
// Entries that are symlinks to regular files are followed wherever they
// point (the one symlink policy, README); an entry with an HDF5 name that is
// not a regular file is refused with its name.
func TestSeries(t *testing.T) {
	src := testkit.SharedData(t, "chombo/mushy-layer")
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(src, "plt000100.2d.hdf5"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "plt000100.2d.hdf5"), b, 0o644)
	if err := os.Symlink(filepath.Join(src, "plt025000.2d.hdf5"), filepath.Join(dir, "plt025000.2d.hdf5")); err != nil {
		t.Fatal(err)
	}
	if !Detect(dir) {
		t.Fatal("not detected")
	}
	ds, err := Open(dir, Config{Match: func(v string) bool { return v == "Porosity" }})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, a := range testkit.ScanAll(t, ds) {
		keys = append(keys, a.Var+"@"+strconv.FormatInt(a.Step, 10)+"/"+strconv.Itoa(a.Level)+":"+a.Blocks[0].File)
	}
	ds.Close()
	want := []string{"Porosity@100/0:plt000100.2d.hdf5", "Porosity@100/1:plt000100.2d.hdf5", "Porosity@100/2:plt000100.2d.hdf5",
		"Porosity@25000/0:plt025000.2d.hdf5", "Porosity@25000/1:plt025000.2d.hdf5", "Porosity@25000/2:plt025000.2d.hdf5"}
	if !slices.Equal(keys, want) {
		t.Errorf("arrays %v, want %v", keys, want)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "zz.hdf5")); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Config{}); !errors.Is(err, catalog.ErrUnsupported) || !strings.Contains(err.Error(), "zz.hdf5: is a directory") {
		t.Errorf("symlink to a directory in the series: %v", err)
	}
}
