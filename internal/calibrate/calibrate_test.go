package calibrate

import (
	"os"
	"testing"
)

func TestMeasure(t *testing.T) {
	dir := t.TempDir()
	r, err := Measure(dir, Options{Size: 8 << 20, Samples: 64, Streams: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", r)
	if r.LatencyS <= 0 || r.LatencyS > 1 {
		t.Errorf("latency %g s", r.LatencyS)
	}
	// Between 1 MB/s and 1 TB/s: any real directory.
	for _, bw := range []float64{r.ReaderBps, r.AggregateBps} {
		if bw < 1e6 || bw > 1e12 {
			t.Errorf("bandwidth %g B/s", bw)
		}
	}
	for _, v := range []float64{r.Random4KS, r.Random256KS, r.StreamLatency, r.CallS} {
		if v <= 0 || v > 1 {
			t.Errorf("library figure %g s: %+v", v, r)
		}
	}
	if r.RandomBps <= 0 || r.RandomBps > r.ReaderBps || r.CopyBps < 1e6 || r.PageBytes < 512 || r.Cores < 1 || r.CPUShare <= 0 || r.CPUShare > 1 {
		t.Errorf("%+v", r)
	}
	if r.AggregateBps < r.ReaderBps || r.FileBytes != 8<<20 {
		t.Errorf("%+v", r)
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) != 0 {
		t.Errorf("scratch file left behind: %v %v", left, err)
	}
	if _, err := Measure(dir+"/missing", Options{Size: 1 << 20}); err == nil {
		t.Error("missing directory accepted")
	}
}
