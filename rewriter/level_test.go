package rewriter

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
)

// TestRunSparseLevel writes an AMR-like level: two boxes with ghost cells in a
// larger level, NaN fill, chunked 4x4 — as asked, and whatever the layout
// asked (a refined level with its box table is always chunked; the chunk
// rule gives 4x4 for these boxes too, with a note in the manifest). h5py
// checks the values, that only chunks touched by a box were stored, and the
// box table.
func TestRunSparseLevel(t *testing.T) {
	needTool(t, python)
	for _, opts := range []Options{
		{Layout: "chunked", ChunkShape: []int64{4, 4}},
		{Layout: "contiguous"},
		{Layout: "merged"},
	} {
		t.Run(opts.Layout, func(t *testing.T) { testSparseLevel(t, opts) })
	}
}

func testSparseLevel(t *testing.T, opts Options) {
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
	offset := []int64{10, 20}
	val := func(g []int64) uint64 { return math.Float64bits(float64((offset[0]+g[0])*1000 + offset[1] + g[1])) }
	a := catalog.Array{Var: "rho", Step: 5, Level: 1, DType: dt, Shape: []int64{16, 12}, Offset: offset,
		Fill: binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))}
	src := &fakeSource{files: map[string][]byte{}}
	for i, b := range []catalog.Box{{Lower: []int64{0, 0}, Count: []int64{3, 5}}, {Lower: []int64{9, 6}, Count: []int64{7, 6}}} {
		stored := []int64{b.Count[0] + 2, b.Count[1] + 2}
		data := encode(stored, []int64{b.Lower[0] - 1, b.Lower[1] - 1}, catalog.ColMajor, dt, func(g []int64) uint64 {
			if in(g, b.Lower, []int64{b.Lower[0] + b.Count[0], b.Lower[1] + b.Count[1]}) {
				return val(g)
			}
			return math.Float64bits(-1) // ghost
		})
		name := fmt.Sprint("Cell_D_", i)
		src.files[name] = data
		a.Blocks = append(a.Blocks, catalog.Block{Box: b,
			File: name, Length: int64(len(data)), Order: catalog.ColMajor, Rank: int32(i)}.WithStored(stored, []int64{1, 1}))
		a.Boxes = append(a.Boxes, b)
	}
	if err := st.Put(&a); err != nil {
		t.Fatal(err)
	}
	stage := filepath.Join(dir, "stage")
	opts.Jobs, opts.Version = 2, "t"
	var log strings.Builder
	opts.Progress = &log
	m, err := Run(context.Background(), st, src, stage, opts)
	if err != nil {
		t.Fatal(err)
	}
	ds := m.Variables[0].Datasets[0]
	if ds.Path != "/data/5/meshes/rho_lvl1" || ds.Boxes != "/data/5/relayout_boxes/rho_lvl1" || fmt.Sprint(ds.Offset) != "[10 20]" ||
		ds.Layout != "chunked" || fmt.Sprint(ds.Chunk) != "[4 4]" {
		t.Fatalf("manifest entry %+v", ds)
	}
	if !strings.Contains(ds.Note, "refined level 1: chunked 4x4") || !strings.Contains(log.String(), "layout: rho: "+ds.Note) {
		t.Errorf("note %q, log:\n%s", ds.Note, log.String())
	}
	script := `
import sys, json, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
d = f[sys.argv[2]]
boxes = [((0, 0), (3, 5)), ((9, 6), (7, 6))]
want = np.full((16, 12), np.nan)
touched = set()
for (lo, n) in boxes:
    for i in range(lo[0], lo[0] + n[0]):
        for j in range(lo[1], lo[1] + n[1]):
            want[i, j] = (10 + i) * 1000 + 20 + j
            touched.add((i // 4, j // 4))
got = d[()]
table = f[sys.argv[3]][()].tolist()
print(json.dumps({
    "equal": bool(np.array_equal(got, want, equal_nan=True)),
    "fill_nan": bool(np.isnan(d.fillvalue)),
    "chunks": d.id.get_num_chunks(), "want_chunks": len(touched),
    "table": table,
    "want_table": [[[10 + lo[0], 20 + lo[1]], [10 + lo[0] + n[0] - 1, 20 + lo[1] + n[1] - 1]] for (lo, n) in boxes],
    "boxes_attr": d.attrs["boxes"].decode() if isinstance(d.attrs["boxes"], bytes) else d.attrs["boxes"],
}))
`
	out, err := exec.Command(python, "-c", script, filepath.Join(stage, "rho.h5"), ds.Path, ds.Boxes).CombinedOutput()
	if err != nil {
		t.Fatalf("h5py: %v\n%s", err, out)
	}
	var r struct {
		Equal      bool `json:"equal"`
		FillNaN    bool `json:"fill_nan"`
		Chunks     int
		WantChunks int `json:"want_chunks"`
		Table      [][][]int64
		WantTable  [][][]int64 `json:"want_table"`
		BoxesAttr  string      `json:"boxes_attr"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !r.FillNaN {
		t.Error("dataset fill value is not NaN")
	}
	if !r.Equal {
		t.Error("level values differ from boxes + NaN")
	}
	if r.Chunks != r.WantChunks {
		t.Errorf("%d chunks stored, want %d (only those a box touches)", r.Chunks, r.WantChunks)
	}
	if fmt.Sprint(r.Table) != fmt.Sprint(r.WantTable) {
		t.Errorf("box table %v, want %v", r.Table, r.WantTable)
	}
	if r.BoxesAttr != ds.Boxes {
		t.Errorf("boxes attribute %q", r.BoxesAttr)
	}
}
