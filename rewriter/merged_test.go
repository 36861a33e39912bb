package rewriter

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"relayout/catalog"
	"relayout/planner"
)

// TestRunMerged writes the synthetic input (blocks of several ranks, all
// arrays fully covered) with the merged layout and a budget small enough to
// split cuboids into pieces; the h5py oracle checks every element and the
// digest, and the manifest records layout merged with a cuboid count.
func TestRunMerged(t *testing.T) {
	for _, scope := range []planner.Scope{planner.ScopeRank, planner.ScopeGlobal} {
		t.Run(scope.String(), func(t *testing.T) {
			dir := t.TempDir()
			vars := inputVars()
			st, src := buildInput(t, dir, vars)
			stage := filepath.Join(dir, "stage")
			m, err := Run(context.Background(), st, src, stage, Options{Layout: planner.Merged, Jobs: 3, MaxMem: 16000,
				Version: "test-1", Merge: MergeOptions{Scope: scope}})
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range m.Variables {
				for _, d := range v.Datasets {
					if len(d.Shape) > 0 && (d.Layout != planner.Merged || d.Cuboids < 1) {
						t.Errorf("%s %s: layout %s, %d cuboids", v.Name, d.Path, d.Layout, d.Cuboids)
					}
				}
			}
			checkOutput(t, stage, m, vars, func([]int64) []int64 { return nil })
		})
	}
}

// TestRunMergedSparse writes a partially covered level with the merged
// layout: only the cuboids are stored, behind a virtual dataset whose fill
// (NaN) shows elsewhere; h5py reads the whole array.
func TestRunMergedSparse(t *testing.T) {
	needTool(t, python)
	dir := t.TempDir()
	st, err := catalog.CreateStore(filepath.Join(dir, "in.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SetInfo(catalog.DatasetInfo{Path: "plt", Root: dir, Format: "test"}); err != nil {
		t.Fatal(err)
	}
	dt := catalog.DType{Kind: catalog.Float, Size: 8}
	val := func(g []int64) uint64 { return math.Float64bits(float64(g[0]*1000 + g[1])) }
	a := catalog.Array{Var: "rho", Step: 5, Level: 1, DType: dt, Shape: []int64{16, 12}, Offset: []int64{0, 0},
		Fill: binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))}
	src := &fakeSource{files: map[string][]byte{}}
	// Rank 0: two blocks that merge into one cuboid; rank 1: one far away.
	boxes := []catalog.Box{
		{Lower: []int64{0, 0}, Count: []int64{3, 5}}, {Lower: []int64{3, 0}, Count: []int64{2, 5}},
		{Lower: []int64{9, 6}, Count: []int64{7, 6}},
	}
	for i, b := range boxes {
		data := encode(b.Count, b.Lower, catalog.RowMajor, dt, val)
		name := fmt.Sprint("f", i)
		src.files[name] = data
		a.Blocks = append(a.Blocks, catalog.Block{Box: b, File: name, Length: int64(len(data)), Rank: int32(min(i/2, 1))})
	}
	if err := st.Put(&a); err != nil {
		t.Fatal(err)
	}
	stage := filepath.Join(dir, "stage")
	m, err := Run(context.Background(), st, src, stage, Options{Layout: planner.Merged, Jobs: 2, MaxMem: 4000, Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	ds := m.Variables[0].Datasets[0]
	if ds.Layout != planner.Merged || ds.Cuboids != 2 {
		t.Fatalf("manifest entry %+v", ds)
	}
	script := `
import sys, json, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
d = f[sys.argv[2]]
want = np.full((16, 12), np.nan)
for (lo, n) in [((0, 0), (5, 5)), ((9, 6), (7, 6))]:
    for i in range(lo[0], lo[0] + n[0]):
        for j in range(lo[1], lo[1] + n[1]):
            want[i, j] = i * 1000 + j
print(json.dumps({"equal": bool(np.array_equal(d[()], want, equal_nan=True)), "virtual": d.is_virtual,
    "sources": len(d.virtual_sources()), "stored": int(sum(x.size for x in f["/data/5/cuboids/rho_lvl1"].values()))}))
`
	out, err := exec.Command(python, "-c", script, filepath.Join(stage, "rho.h5"), ds.Path).CombinedOutput()
	if err != nil {
		t.Fatalf("h5py: %v\n%s", err, out)
	}
	var r struct {
		Equal, Virtual  bool
		Sources, Stored int
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !r.Equal || !r.Virtual || r.Sources != 2 || r.Stored != 25+42 {
		t.Errorf("h5py: %+v", r)
	}
}

// TestWriteBox checks the coalesced pwrite of a box into a row-major array.
func TestWriteBox(t *testing.T) {
	shape := []int64{3, 4, 5}
	for _, box := range []catalog.Box{
		{Lower: []int64{1, 1, 2}, Count: []int64{2, 2, 3}},
		{Lower: []int64{0, 1, 0}, Count: []int64{3, 2, 5}},
		{Lower: []int64{1, 0, 0}, Count: []int64{2, 4, 5}},
		{Lower: []int64{0, 0, 0}, Count: []int64{3, 4, 5}},
	} {
		f, err := os.CreateTemp(t.TempDir(), "box")
		if err != nil {
			t.Fatal(err)
		}
		n := product(shape)
		if _, err := f.WriteAt(make([]byte, n+7), 0); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, box.Elements())
		for i := range buf {
			buf[i] = byte(i + 1)
		}
		if err := writeBox(f, 7, shape, box, buf, 1, nil); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, n)
		f.ReadAt(got, 7)
		f.Close()
		want := make([]byte, n)
		copyRegion(want, view{origin: make([]int64, 3), strides: rowMajorStrides(shape)}, buf,
			view{origin: box.Lower, strides: rowMajorStrides(box.Count)}, box, 1, false)
		if string(got) != string(want) {
			t.Errorf("box %v: got %v want %v", box, got, want)
		}
	}
}
