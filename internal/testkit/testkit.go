package testkit

import (
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"relayout/catalog"
)

// Python is Debian's interpreter, which has h5py, numpy and yt.
const Python = "/usr/bin/python3"

// SharedData returns ../shared/data/<sub> (relative to the repository), skipping
// when absent and failing under CI=true.
func SharedData(t testing.TB, sub string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(repoRoot(t), "..", "shared", "data", sub))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		Unavailable(t, "test data %s not present (../shared/data is not part of a checkout): %v", p, err)
	}
	return p
}

// YTGrid and YTDump mirror testdata/yt_dump.py's output.
type YTGrid struct {
	Level int     `json:"level"`
	Start []int64 `json:"start"`
	Dims  []int64 `json:"dims"`
}

type YTDump struct {
	Levels int     `json:"levels"`
	Domain []int64 `json:"domain"`
	// LevelDomains is the domain's extent in each level's cells (yt's
	// domain width over the level's grid spacing).
	LevelDomains [][]int64   `json:"level_domains"`
	Fields       []string    `json:"fields"`
	Grids        []YTGrid    `json:"grids"`
	Values       [][]float64 `json:"-"`
}

// RunYT dumps fields of a dataset through yt; it skips when yt is missing
// and fails under CI=true.
func RunYT(t *testing.T, script, path, ftype string, fields ...string) *YTDump {
	t.Helper()
	NeedPython(t, "the yt oracle: Debian python3-yt", "yt")
	out := t.TempDir()
	cmd := exec.Command(Python, append([]string{script, path, ftype, out}, fields...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("yt: %v\n%s", err, b)
	}
	b, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	d := &YTDump{}
	if err := json.Unmarshal(b, d); err != nil {
		t.Fatal(err)
	}
	for i := range d.Fields {
		raw, err := os.ReadFile(filepath.Join(out, strconv.Itoa(i)+".bin"))
		if err != nil {
			t.Fatal(err)
		}
		d.Values = append(d.Values, Floats(raw, catalog.DType{Kind: catalog.Float, Size: 8}))
	}
	return d
}

func Floats(raw []byte, dt catalog.DType) []float64 {
	var bo binary.ByteOrder = binary.LittleEndian
	if dt.BigEndian {
		bo = binary.BigEndian
	}
	out := make([]float64, len(raw)/dt.Size)
	for i := range out {
		if dt.Size == 4 {
			out[i] = float64(math.Float32frombits(bo.Uint32(raw[4*i:])))
		} else {
			out[i] = math.Float64frombits(bo.Uint64(raw[8*i:]))
		}
	}
	return out
}

// AssembleFortran builds the dense array a describes from its blocks: Fortran order
// (first index fastest), the fill value where no block writes. It honours
// Stored and StoredLower the way the catalog documents them.
func AssembleFortran(t *testing.T, src catalog.Source, a *catalog.Array) []float64 {
	t.Helper()
	fill := Floats(a.Fill, a.DType)[0]
	out := make([]float64, a.Elements())
	for i := range out {
		out[i] = fill
	}
	for bi := range a.Blocks {
		b := &a.Blocks[bi]
		if b.Order != catalog.ColMajor {
			t.Fatalf("%s: block %d order %v", a.Source, bi, b.Order)
		}
		raw, err := catalog.ReadBlock(context.Background(), src, b, a.DType)
		if err != nil {
			t.Fatal(err)
		}
		vals := Floats(raw, a.DType)
		st := b.StoredShape()
		sl := b.StoredLower()
		if sl == nil {
			sl = make([]int64, len(st))
		}
		EachIndex(b.Box.Count, func(idx []int64) {
			src, dst := int64(0), int64(0)
			for k := len(idx) - 1; k >= 0; k-- {
				src = src*st[k] + sl[k] + idx[k]
				dst = dst*a.Shape[k] + b.Box.Lower[k] + idx[k]
			}
			out[dst] = vals[src]
		})
	}
	return out
}

// EachIndex visits every index of a box of extent count, first index fastest.
func EachIndex(count []int64, fn func(idx []int64)) {
	idx := make([]int64, len(count))
	for _, c := range count {
		if c <= 0 {
			return
		}
	}
	for {
		fn(idx)
		k := 0
		for ; k < len(idx); k++ {
			if idx[k]++; idx[k] < count[k] {
				break
			}
			idx[k] = 0
		}
		if k == len(idx) {
			return
		}
	}
}

// At reads the assembled value At a global index.
func At(a *catalog.Array, dense []float64, global []int64) (float64, bool) {
	lin := int64(0)
	for k := len(a.Shape) - 1; k >= 0; k-- {
		i := global[k] - a.Offset[k]
		if i < 0 || i >= a.Shape[k] {
			return 0, false
		}
		lin = lin*a.Shape[k] + i
	}
	return dense[lin], true
}

// ScanAll collects every array of a dataset, checking the emission order.
func ScanAll(t *testing.T, d interface {
	Scan(context.Context, func(*catalog.Array) error) error
}) []*catalog.Array {
	t.Helper()
	var out []*catalog.Array
	if err := d.Scan(context.Background(), func(a *catalog.Array) error {
		// The reader contract: arrays come ordered by variable, step, level.
		if n := len(out); n > 0 {
			p := out[n-1]
			if p.Var > a.Var || p.Var == a.Var && (p.Step > a.Step || p.Step == a.Step && p.Level >= a.Level) {
				return fmt.Errorf("order: %s@%d/%d after %s@%d/%d", a.Var, a.Step, a.Level, p.Var, p.Step, p.Level)
			}
		}
		out = append(out, a)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// CopyTree copies a directory (regular files only) into dst.
func CopyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}

func KeyOf(level int, lower, count []int64) string {
	return string(MustJSON(struct {
		L    int
		Lo   []int64
		Dims []int64
	}{level, lower, count}))
}

func MustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TrimDims drops trailing extents of 1 (yt pads 2-D data to 3-D).
func TrimDims(v []int64, d int) []int64 { return slices.Clone(v[:d]) }

// repoRoot is the directory holding go.mod, found upwards from the test's
// working directory (its package directory).
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if d == filepath.Dir(d) {
			t.Fatalf("no go.mod above %s", dir)
		}
	}
}

// Gunzip writes the gzip file src decompressed to dst (the real data ship
// some netCDF files gzipped).
func Gunzip(t testing.TB, src, dst string) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, z); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
