package h5

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

const python = "/usr/bin/python3"

// dataDir returns ../shared/data/<sub> (relative to the repository), skipping
// when absent and failing under CI=true.
func dataDir(t *testing.T, sub string) string {
	return testkit.SharedData(t, sub)
}

// runPython runs a script with the Debian python (h5py), skipping when absent
// and failing under CI=true.
func runPython(t *testing.T, script string, args ...string) {
	t.Helper()
	testkit.NeedPython(t, "the h5py oracle: Debian python3-h5py", "h5py")
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
}

type oracleDS struct {
	DType string  `json:"dtype"`
	Shape []int64 `json:"shape"`
	Bin   string  `json:"bin"`
	data  []byte
}

// oracle dumps every numeric dataset of files through h5py, keyed
// "<file base name>:<dataset path>" (the reader's Array.Source).
func oracle(t *testing.T, files ...string) map[string]*oracleDS {
	t.Helper()
	dir := t.TempDir()
	script, err := os.ReadFile("testdata/dump.py")
	if err != nil {
		t.Fatal(err)
	}
	runPython(t, string(script), append([]string{dir}, files...)...)
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]*oracleDS{}
	if err := json.Unmarshal(b, &idx); err != nil {
		t.Fatal(err)
	}
	for _, o := range idx {
		if o.data, err = os.ReadFile(filepath.Join(dir, o.Bin)); err != nil {
			t.Fatal(err)
		}
	}
	return idx
}

// assemble builds the array's row-major bytes (in its DType's byte order)
// from its blocks: each block is read through src and the valid Box region of
// its stored array copied into place; uncovered elements get the fill value.
func assemble(t *testing.T, src catalog.Source, a *catalog.Array) []byte {
	t.Helper()
	es := int64(a.DType.Size)
	out := make([]byte, a.Elements()*es)
	if a.Fill != nil {
		for i := int64(0); i < a.Elements(); i++ {
			copy(out[i*es:], a.Fill)
		}
	}
	rank := len(a.Shape)
	for bi := range a.Blocks {
		b := &a.Blocks[bi]
		data, err := catalog.ReadBlock(context.Background(), src, b, a.DType)
		if err != nil {
			t.Fatalf("%s block %d %v: %v", a.Source, bi, b.Box, err)
		}
		stored := b.StoredShape()
		if b.Order != catalog.RowMajor {
			t.Fatalf("%s: block order %v", a.Source, b.Order)
		}
		idx := make([]int64, rank) // position within the box
		for n := int64(0); n < b.Box.Elements(); n++ {
			var so, do int64 // stored and destination element offsets
			for d := 0; d < rank; d++ {
				so = so*stored[d] + idx[d]
				do = do*a.Shape[d] + b.Box.Lower[d] + idx[d]
			}
			copy(out[do*es:(do+1)*es], data[so*es:(so+1)*es])
			for d := rank - 1; d >= 0; d-- {
				idx[d]++
				if idx[d] < b.Box.Count[d] {
					break
				}
				idx[d] = 0
			}
		}
	}
	return out
}

// scanAll collects every emitted array, checking the emission order.
func scanAll(t *testing.T, d *Dataset) []*catalog.Array { return testkit.ScanAll(t, d) }

// checkValues compares every array with the oracle's dtype, shape and bytes.
func checkValues(t *testing.T, d *Dataset, arrays []*catalog.Array, want map[string]*oracleDS) {
	t.Helper()
	for _, a := range arrays {
		o := want[a.Source]
		if o == nil {
			t.Errorf("%s (%s@%d): not in the h5py dump", a.Source, a.Var, a.Step)
			continue
		}
		if a.DType.NumPy() != o.DType || !slices.Equal(a.Shape, o.Shape) {
			t.Errorf("%s: %s %v, h5py says %s %v", a.Source, a.DType.NumPy(), a.Shape, o.DType, o.Shape)
			continue
		}
		got := assemble(t, d, a)
		if string(got) != string(o.data) {
			for i := range got {
				if got[i] != o.data[i] {
					t.Errorf("%s: bytes differ from h5py first at byte %d (element %d)", a.Source, i, i/a.DType.Size)
					break
				}
			}
		}
	}
}

type key struct {
	Var  string
	Step int64
}

func keys(arrays []*catalog.Array) []key {
	var out []key
	for _, a := range arrays {
		out = append(out, key{a.Var, a.Step})
	}
	return out
}

func attr(attrs []catalog.Attr, name string) *catalog.Attr {
	for i := range attrs {
		if attrs[i].Name == name {
			return &attrs[i]
		}
	}
	return nil
}

func containsPrefix(list []string, prefix string) bool {
	return slices.ContainsFunc(list, func(s string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix })
}
