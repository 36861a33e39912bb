package bp

import (
	"context"
	"encoding/binary"
	"math"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// dataDir returns ../shared/data/<sub> (relative to the repository), skipping
// when absent and failing under CI=true.
func dataDir(t testing.TB, sub string) string {
	t.Helper()
	return testkit.SharedData(t, sub)
}

// needBpls returns the path of ADIOS 1.x bpls, skipping when absent and
// failing under CI=true.
func needBpls(t *testing.T) string {
	t.Helper()
	return testkit.NeedTool(t, "bpls", "Debian libadios-bin")
}

func open(t *testing.T, path string) *Dataset {
	t.Helper()
	d, err := Open(path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// scanAll collects every emitted array, checking the emission order.
func scanAll(t *testing.T, d *Dataset) []*catalog.Array { return testkit.ScanAll(t, d) }

// values assembles an array through src and returns its elements as float64
// in row-major order of the array's shape, plus a coverage mask. Column-major
// blocks are transposed here, independently of the rewriter.
func values(t *testing.T, src catalog.Source, a *catalog.Array) ([]float64, []bool) {
	t.Helper()
	n := a.Elements()
	out := make([]float64, n)
	seen := make([]bool, n)
	rank := len(a.Shape)
	es := int64(a.DType.Size)
	for bi := range a.Blocks {
		b := &a.Blocks[bi]
		data, err := catalog.ReadBlock(context.Background(), src, b, a.DType)
		if err != nil {
			t.Fatalf("%s block %d %v: %v", a.Source, bi, b.Box, err)
		}
		idx := make([]int64, rank)
		for k := int64(0); k < b.Box.Elements(); k++ {
			var so, do int64
			if b.Order == catalog.ColMajor {
				for d := rank - 1; d >= 0; d-- {
					so = so*b.Box.Count[d] + idx[d]
				}
			} else {
				for d := 0; d < rank; d++ {
					so = so*b.Box.Count[d] + idx[d]
				}
			}
			for d := 0; d < rank; d++ {
				do = do*a.Shape[d] + b.Box.Lower[d] + idx[d]
			}
			if seen[do] {
				t.Fatalf("%s: element %d covered twice", a.Source, do)
			}
			seen[do] = true
			out[do] = decode(data[so*es:(so+1)*es], a.DType)
			for d := rank - 1; d >= 0; d-- {
				idx[d]++
				if idx[d] < b.Box.Count[d] {
					break
				}
				idx[d] = 0
			}
		}
	}
	return out, seen
}

func decode(p []byte, dt catalog.DType) float64 {
	var bo binary.ByteOrder = binary.LittleEndian
	if dt.BigEndian {
		bo = binary.BigEndian
	}
	switch dt.Kind {
	case catalog.Float:
		if dt.Size == 4 {
			return float64(math.Float32frombits(bo.Uint32(p)))
		}
		return math.Float64frombits(bo.Uint64(p))
	case catalog.Int:
		return float64(signed(p, bo))
	}
	return float64(unsigned(p, bo))
}

func attr(attrs []catalog.Attr, name string) *catalog.Attr {
	for i := range attrs {
		if attrs[i].Name == name {
			return &attrs[i]
		}
	}
	return nil
}
