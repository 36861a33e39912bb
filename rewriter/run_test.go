package rewriter

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
	"relayout/planner"
)

const python = "/usr/bin/python3"

func needTool(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		testkit.Unavailable(t, "%s not found", path)
	}
}

// testVar is one array of the synthetic input: val gives element values as
// raw bits (Go side), expr the same function in NumPy over index arrays i, j,
// k and the scalar step (the oracle side).
type testVar struct {
	a      catalog.Array
	val    func(idx []int64) uint64
	expr   string
	blocks []testBlock
}

type testBlock struct {
	lo, n, stored []int64
	order         catalog.Order
	inline        bool
}

func f64(v float64) uint64 { return math.Float64bits(v) }

// inputVars is the synthetic input: every element is a known function of its
// index and step; blocks are stored in several orders and byte orders, one
// has padded (partial-edge-chunk) storage, and one region is left uncovered.
func inputVars() []testVar {
	le8 := catalog.DType{Kind: catalog.Float, Size: 8}
	be8 := catalog.DType{Kind: catalog.Float, Size: 8, BigEndian: true}
	var vars []testVar
	for _, step := range []int64{1, 2} {
		dt, order := le8, catalog.RowMajor
		blocks := []testBlock{
			{lo: []int64{0, 0, 0}, n: []int64{6, 5, 9}}, {lo: []int64{0, 5, 0}, n: []int64{6, 6, 9}},
			{lo: []int64{6, 0, 0}, n: []int64{7, 5, 9}}, {lo: []int64{6, 5, 0}, n: []int64{7, 6, 9}},
		}
		if step == 2 {
			dt, order = be8, catalog.ColMajor
			blocks = []testBlock{{lo: []int64{0, 0, 0}, n: []int64{13, 11, 4}}, {lo: []int64{0, 0, 4}, n: []int64{13, 11, 5}}}
		}
		for i := range blocks {
			blocks[i].order = order
		}
		s := step
		vars = append(vars, testVar{
			a: catalog.Array{Var: "B/x", Step: step, DType: dt, Shape: []int64{13, 11, 9}, Offset: []int64{0, 0, 0},
				Attrs: []catalog.Attr{
					{Name: "unitSI", Type: "float64", Scalar: true, Floats: []float64{1}},
					{Name: "axisLabels", Type: "string", Strings: []string{"x", "y", "z"}}},
				StepAttrs: []catalog.Attr{{Name: "time", Type: "float64", Scalar: true, Floats: []float64{0.5 * float64(step)}}}},
			val:    func(x []int64) uint64 { return f64(float64(((s*13+x[0])*11+x[1])*9+x[2]) + 0.25) },
			expr:   "((step*13 + i)*11 + j)*9 + k + 0.25",
			blocks: blocks,
		})
	}
	vars = append(vars, testVar{
		a:      catalog.Array{Var: "B/x", Step: 2, Level: 1, DType: le8, Shape: []int64{6, 4, 3}, Offset: []int64{2, 2, 2}},
		val:    func(x []int64) uint64 { return f64(float64(-(x[0]*100 + x[1]*10 + x[2]))) }, // integer negation: no -0.0
		expr:   "-(i*100 + j*10 + k)",
		blocks: []testBlock{{lo: []int64{0, 0, 0}, n: []int64{6, 4, 3}, inline: true}},
	})
	bei4 := catalog.DType{Kind: catalog.Int, Size: 4, BigEndian: true}
	vars = append(vars, testVar{
		a: catalog.Array{Var: "rho", Step: 1, DType: bei4, Shape: []int64{10, 7}, Offset: []int64{0, 0},
			Fill: binary.BigEndian.AppendUint32(nil, uint32(0xfffffff9))}, // -7
		val:  func(x []int64) uint64 { return uint64(uint32(int32(x[0]*100000 - x[1]*3 - 5000000))) },
		expr: "np.where((i >= 6) & (j >= 4), -7, i*100000 - j*3 - 5000000)",
		blocks: []testBlock{
			{lo: []int64{0, 0}, n: []int64{6, 7}},
			{lo: []int64{6, 0}, n: []int64{4, 4}, stored: []int64{5, 5}},
		},
	})
	for _, step := range []int64{1, 2} {
		s := step
		vars = append(vars, testVar{
			a:      catalog.Array{Var: "t", Step: step, DType: le8, Shape: []int64{}},
			val:    func([]int64) uint64 { return f64(1.5 * float64(s)) },
			expr:   "1.5*step",
			blocks: []testBlock{{lo: []int64{}, n: []int64{}}},
		})
	}
	vars = append(vars, testVar{
		a:      catalog.Array{Var: "E x", Step: 0, DType: catalog.DType{Kind: catalog.Uint, Size: 2}, Shape: []int64{20}},
		val:    func(x []int64) uint64 { return uint64(x[0]*3001) % 65536 },
		expr:   "(i*3001) % 65536",
		blocks: []testBlock{{lo: []int64{0}, n: []int64{12}}, {lo: []int64{12}, n: []int64{8}}},
	})
	return vars
}

// buildInput puts vars into a new store whose blocks live in a fake source.
func buildInput(t *testing.T, dir string, vars []testVar) (*catalog.Store, *fakeSource) {
	t.Helper()
	st, err := catalog.CreateStore(filepath.Join(dir, "in.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	err = st.SetInfo(catalog.DatasetInfo{Path: "/sim/out", Root: dir, Format: "test",
		Attrs: []catalog.Attr{{Name: "software", Type: "string", Scalar: true, Strings: []string{"synthetic"}}}})
	if err != nil {
		t.Fatal(err)
	}
	src := &fakeSource{files: map[string][]byte{}}
	for vi, v := range vars {
		a := v.a
		for bi, tb := range v.blocks {
			stored := tb.stored
			if stored == nil {
				stored = tb.n
			}
			data := encode(stored, tb.lo, tb.order, a.DType, func(idx []int64) uint64 {
				for d := range idx {
					if idx[d] >= tb.lo[d]+tb.n[d] {
						return 0xdeadbeef // padding of a partial edge chunk
					}
				}
				return v.val(idx)
			})
			b := catalog.Block{Box: catalog.Box{Lower: tb.lo, Count: tb.n}, Order: tb.order, Rank: -1}
			if tb.stored != nil {
				b = b.WithStored(tb.stored, nil)
			}
			if tb.inline {
				b = b.WithInline(data)
			} else {
				b.File = fmt.Sprintf("v%d.b%d", vi, bi)
				b.Length = int64(len(data))
				src.files[b.File] = data
			}
			a.Blocks = append(a.Blocks, b)
		}
		if err := st.Put(&a); err != nil {
			t.Fatal(err)
		}
	}
	return st, src
}

const oracleScript = `
import sys, json, hashlib, h5py, xxhash, numpy as np
spec = json.load(sys.stdin)
out = []
for d in spec:
    f = h5py.File(d["file"], "r")
    ds = f[d["path"]]
    shape = tuple(d["shape"])
    step = d["step"]
    if shape:
        idx = np.indices(shape, dtype=np.int64)
        i = idx[0]
        j = idx[1] if len(shape) > 1 else None
        k = idx[2] if len(shape) > 2 else None
        l = idx[3] if len(shape) > 3 else None
    want = np.asarray(eval(d["expr"])).astype(np.dtype(d["dtype"]))
    got = ds[()]
    res = {"dtype": ds.dtype.str, "shape": list(ds.shape), "chunks": list(ds.chunks) if ds.chunks else None,
           "sha256": hashlib.sha256(np.ascontiguousarray(want).tobytes()).hexdigest(),
           "xxh64": xxhash.xxh64(np.ascontiguousarray(want).tobytes()).hexdigest()}
    if got.shape != want.shape:
        res["error"] = "shape %s want %s" % (got.shape, want.shape)
    else:
        bad = np.argwhere(np.asarray(got != want).reshape(want.shape)) if shape else ([] if got == want else [[]])
        res["mismatches"] = len(bad)
        if len(bad):
            b = tuple(bad[0])
            res["error"] = "at %s got %r want %r" % (b, np.asarray(got)[b], np.asarray(want)[b])
    # openPMD: a vector record's attributes are on its group, the component's on the dataset
    rec = dict(ds.parent.attrs) if not ds.parent.name.endswith("/meshes") else {}
    res["attrs"] = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in {**rec, **ds.attrs}.items() if k != "DIMENSION_LIST"}
    res["step_attrs"] = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in f["/data/%d" % step].attrs.items()}
    res["root_attrs"] = {k: (v.tolist() if hasattr(v, "tolist") else v) for k, v in f.attrs.items()}
    out.append(res)
print(json.dumps(out, default=lambda b: b.decode() if isinstance(b, bytes) else str(b)))
`

type oracleResult struct {
	DType      string         `json:"dtype"`
	Shape      []int64        `json:"shape"`
	Chunks     []int64        `json:"chunks"`
	SHA256     string         `json:"sha256"`
	XXH64      string         `json:"xxh64"`
	Mismatches int            `json:"mismatches"`
	Error      string         `json:"error"`
	Attrs      map[string]any `json:"attrs"`
	StepAttrs  map[string]any `json:"step_attrs"`
	RootAttrs  map[string]any `json:"root_attrs"`
}

// checkOutput reads every dataset of the manifest back with h5py and
// compares each element with the NumPy form of the index function.
func checkOutput(t *testing.T, dir string, m *catalog.Manifest, vars []testVar, wantChunk func(shape []int64) []int64) {
	t.Helper()
	needTool(t, python)
	var reqs []map[string]any
	var want []testVar
	var entries []catalog.ManifestDataset
	for _, v := range vars {
		mv := findVar(m, v.a.Var)
		if mv == nil {
			t.Fatalf("manifest lacks %s", v.a.Var)
		}
		if mv.DType != v.a.DType.LittleEndian().NumPy() {
			t.Errorf("%s: manifest dtype %s", v.a.Var, mv.DType)
		}
		e := findDataset(mv, v.a.Key())
		if e == nil {
			t.Fatalf("manifest lacks %v", v.a.Key())
		}
		reqs = append(reqs, map[string]any{"file": filepath.Join(dir, mv.File), "path": e.Path, "expr": v.expr,
			"dtype": v.a.DType.LittleEndian().NumPy(), "shape": v.a.Shape, "step": v.a.Step})
		want = append(want, v)
		entries = append(entries, *e)
	}
	in, _ := json.Marshal(reqs)
	cmd := exec.Command(python, "-c", oracleScript)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle: %v\n%s", err, stderr.String())
	}
	var res []oracleResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("oracle output %s: %v", out, err)
	}
	for n, r := range res {
		v, e := want[n], entries[n]
		name := fmt.Sprintf("%s step %d level %d", v.a.Var, v.a.Step, v.a.Level)
		if r.Error != "" || r.Mismatches != 0 {
			t.Errorf("%s: %d mismatches: %s", name, r.Mismatches, r.Error)
		}
		if r.DType != v.a.DType.LittleEndian().NumPy() || !reflect.DeepEqual(nonNil(r.Shape), nonNil(v.a.Shape)) {
			t.Errorf("%s: dtype %s shape %v", name, r.DType, r.Shape)
		}
		if e.XXH64 == "" && r.SHA256 != e.SHA256 {
			t.Errorf("%s: manifest sha256 %s, oracle %s", name, e.SHA256, r.SHA256)
		}
		if e.XXH64 != "" && (r.XXH64 != e.XXH64 || e.SHA256 != "") {
			t.Errorf("%s: manifest xxh64 %s (sha256 %q), oracle %s", name, e.XXH64, e.SHA256, r.XXH64)
		}
		if wc := wantChunk(v.a.Shape); !reflect.DeepEqual(r.Chunks, wc) || !reflect.DeepEqual(e.Chunk, wc) {
			t.Errorf("%s: chunks %v (manifest %v), want %v", name, r.Chunks, e.Chunk, wc)
		}
		if v.a.Var == "B/x" && v.a.Level == 0 {
			if r.Attrs["unitSI"] != 1.0 || !reflect.DeepEqual(r.Attrs["axisLabels"], []any{"x", "y", "z"}) {
				t.Errorf("%s: attrs %v", name, r.Attrs)
			}
			if r.StepAttrs["time"] != 0.5*float64(v.a.Step) {
				t.Errorf("%s: step attrs %v", name, r.StepAttrs)
			}
		}
		if r.RootAttrs["relayout_input_software"] != "synthetic" || r.RootAttrs["software"] != "relayout" ||
			r.RootAttrs["relayout_version"] != "test-1" || r.RootAttrs["relayout_source"] != "/sim/out" ||
			r.RootAttrs["iterationEncoding"] != "groupBased" || r.RootAttrs["openPMD"] != "1.1.0" {
			t.Errorf("%s: root attrs %v", name, r.RootAttrs)
		}
	}
}

func findVar(m *catalog.Manifest, name string) *catalog.ManifestVariable {
	for i := range m.Variables {
		if m.Variables[i].Name == name {
			return &m.Variables[i]
		}
	}
	return nil
}

func findDataset(mv *catalog.ManifestVariable, k catalog.Key) *catalog.ManifestDataset {
	for i := range mv.Datasets {
		if d := &mv.Datasets[i]; d.Step == k.Step && d.Level == k.Level {
			return d
		}
	}
	return nil
}

func TestRunContiguous(t *testing.T) {
	dir := t.TempDir()
	vars := inputVars()
	st, src := buildInput(t, dir, vars)
	stage := filepath.Join(dir, "stage")
	var progress bytes.Buffer
	// 3 jobs and 2.4 KB: slabs of 400 bytes, so many slabs per array.
	// Fill: the partly covered rho stays contiguous too (TestRunHoles).
	m, err := Run(context.Background(), st, src, stage, Options{Jobs: 3, MaxMem: 16000, Version: "test-1", Progress: &progress, Verbose: &progress, Fill: true})
	if err != nil {
		t.Fatal(err)
	}
	files := []string{}
	for _, v := range m.Variables {
		files = append(files, v.File)
	}
	if want := []string{"B.x.h5", "E_x.h5", "rho.h5", "t.h5"}; !reflect.DeepEqual(files, want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	entries, _ := os.ReadDir(stage)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"B.x.h5", "E_x.h5", "relayout.json", "rho.h5", "series.h5", "t.h5",
		"view-rho_1.hdf", "view_0.hdf", "view_1.hdf", "view_2.hdf"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("stage holds %v, want %v", names, want)
	}
	disk, err := catalog.ReadManifest(filepath.Join(stage, catalog.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, disk), mustJSON(t, m); a != b {
		t.Fatalf("manifest on disk differs from the returned one:\n%s\n%s", a, b)
	}
	if m.Input.Path != "/sim/out" || m.Input.Format != "test" || m.Version != "test-1" {
		t.Errorf("manifest header %+v", m)
	}
	if d := findDataset(findVar(m, "B/x"), catalog.Key{Step: 2, Level: 1}); d.Path != "/data/2/meshes/B_lvl1/x" ||
		!reflect.DeepEqual(d.Offset, []int64{2, 2, 2}) || d.Layout != "contiguous" {
		t.Errorf("level 1 entry %+v", d)
	}
	if !strings.Contains(progress.String(), "B/x: 3 arrays, 0.0 MiB, ") || strings.Count(progress.String(), "\n") != 4 {
		t.Errorf("progress %q", progress.String())
	}
	checkOutput(t, stage, m, vars, func([]int64) []int64 { return nil })
}

func TestRunChunked(t *testing.T) {
	var vars []testVar
	for _, v := range inputVars() {
		if v.a.Var == "B/x" {
			vars = append(vars, v)
		}
	}
	for _, tc := range []struct {
		name  string
		opts  Options
		chunk func(shape []int64) []int64
		dump  string
	}{
		{"decomposition", Options{Chunks: []int64{2, 2, 2}},
			func(s []int64) []int64 { return []int64{(s[0] + 1) / 2, (s[1] + 1) / 2, (s[2] + 1) / 2} }, "CHUNKED ( 7, 6, 5 )"},
		{"chunk shape", Options{Layout: "chunked", ChunkShape: []int64{4, 4, 4}},
			func(s []int64) []int64 { return []int64{min(4, s[0]), min(4, s[1]), min(4, s[2])} }, "CHUNKED ( 4, 4, 4 )"},
		// Per-array layouts override Layout: level 0 chunked (the chunk clipped
		// to the shape like a user's), the AMR level contiguous.
		{"layout per array", Options{Layout: "contiguous", LayoutFor: func(a *catalog.Array) (planner.Layout, error) {
			if a.Level > 0 {
				return planner.Layout{Kind: planner.Contiguous}, nil
			}
			return planner.Layout{Kind: planner.Chunked, Chunk: []int64{4, 4, 100}}, nil
		}}, func(s []int64) []int64 {
			if s[0] != 13 {
				return nil
			}
			return []int64{4, 4, 9}
		}, "CHUNKED ( 4, 4, 9 )"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			st, src := buildInput(t, dir, vars)
			stage := filepath.Join(dir, "stage")
			tc.opts.Jobs, tc.opts.MaxMem, tc.opts.Version = 3, 16000, "test-1" // tiny; a column-major block is read whole
			m, err := Run(context.Background(), st, src, stage, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			checkOutput(t, stage, m, vars, tc.chunk)
			needTool(t, "/usr/bin/h5dump")
			out, err := exec.Command("/usr/bin/h5dump", "-p", "-H", filepath.Join(stage, "B.x.h5")).CombinedOutput()
			if err != nil {
				t.Fatalf("h5dump: %v\n%s", err, out)
			}
			if n := strings.Count(string(out), tc.dump); n != 2 {
				t.Errorf("h5dump shows %q %d times, want 2 (steps 1, 2):\n%s", tc.dump, n, out)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	vars := inputVars()
	st, src := buildInput(t, dir, vars)
	stage := filepath.Join(dir, "stage")
	// A 3-D decomposition does not fit the 2-D and 1-D variables.
	_, err := Run(context.Background(), st, src, stage, Options{Chunks: []int64{2, 2, 2}, Version: "x"})
	if err == nil || !strings.Contains(err.Error(), "rewriter: E x step 0: ") {
		t.Fatalf("err %v, want a usage error naming E x step 0", err)
	}
	// A block the source cannot find: the sentinel survives the wrapping.
	delete(src.files, "v3.b0") // rho's first block
	_, err = Run(context.Background(), st, src, stage, Options{Version: "x"})
	if !errors.Is(err, catalog.ErrNotFound) || !strings.Contains(err.Error(), "rewriter: rho step 1: ") {
		t.Fatalf("err %v, want ErrNotFound for rho step 1", err)
	}
	// No temporary or partial files remain; no manifest was written.
	entries, _ := os.ReadDir(stage)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || e.Name() == "rho.h5" || e.Name() == catalog.ManifestName {
			t.Errorf("stage holds %s after a failed run", e.Name())
		}
	}
	// A cancelled context stops the run.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, st, src, filepath.Join(dir, "stage2"), Options{Version: "x"}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
