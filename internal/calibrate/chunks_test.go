package calibrate

import (
	"math"
	"os"
	"testing"

	"relayout/internal/h5"
)

// TestMeasureChunks runs the probes in this process (the command runs
// each in a new one): every probe dataset read whole with the values
// written, the fit non-negative, the scratch file removed.
func TestMeasureChunks(t *testing.T) {
	dir := t.TempDir()
	var seen []string
	probe := func(file, dset string) (float64, error) {
		seen = append(seen, dset)
		return Probe(file, dset)
	}
	r, err := MeasureChunks(dir, 1, probe, 7, 1<<20, 1e-9)
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1+len(probeSides) || len(r.ReadS) != len(seen) {
		t.Errorf("probed %v, figures %v", seen, r.ReadS)
	}
	for d, s := range r.ReadS {
		if s <= 0 || s > 60 {
			t.Errorf("%s: %g s", d, s)
		}
	}
	if r.ChunkS < 0 || r.ChunkByteS < 0 || math.IsNaN(r.ChunkS+r.ChunkByteS) {
		t.Errorf("fit %+v", r)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("scratch file left behind: %v %v", left, err)
	}
	if _, err := Probe(dir+"/missing.h5", "/contiguous"); err == nil {
		t.Error("probe of a missing file succeeded")
	}
}

// TestProbeFileValues checks the scratch file against HDF5's own reading:
// every chunked dataset holds the same shape as the contiguous one, and
// no dataset is left at the fill value (the probes read real bytes).
func TestProbeFileValues(t *testing.T) {
	name := t.TempDir() + "/p.h5"
	if err := writeProbeFile(name, 3); err != nil {
		t.Fatal(err)
	}
	f, err := h5.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, s := range append([]int64{0}, probeSides...) {
		d := probeDataset(s)
		buf := make([]byte, probeSide*probeSide*probeSide*8)
		shape := []int64{probeSide, probeSide, probeSide}
		if err := f.ReadHyperslab(d, []int64{0, 0, 0}, shape, probeType, buf); err != nil {
			t.Fatal(d, err)
		}
		zeros := 0
		for i := 0; i < len(buf); i += 8 {
			if string(buf[i:i+8]) == "\x00\x00\x00\x00\x00\x00\x00\x00" {
				zeros++
			}
		}
		if zeros > 0 {
			t.Errorf("%s: %d elements never written", d, zeros)
		}
	}
}

func TestFitLine(t *testing.T) {
	for _, c := range []struct {
		xs, ys []float64
		a, b   float64
	}{
		{[]float64{1, 2, 4}, []float64{3, 5, 9}, 1, 2},        // exact line
		{[]float64{1, 2, 4}, []float64{5, 4, 2}, 11.0 / 3, 0}, // falling: mean alone
		{[]float64{1, 2}, []float64{1, 4}, 0, 9.0 / 5},        // negative intercept: slope through 0
		{[]float64{2, 2}, []float64{1, 3}, 2, 0},              // one size: mean
	} {
		a, b := fitLine(c.xs, c.ys)
		if math.Abs(a-c.a) > 1e-9 || math.Abs(b-c.b) > 1e-9 {
			t.Errorf("fitLine(%v, %v) = %g, %g; want %g, %g", c.xs, c.ys, a, b, c.a, c.b)
		}
	}
}
