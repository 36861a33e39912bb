package bp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// seriesScript writes a plain BP4 series with ADIOS2: run_<it>.bp for it
// in 1..7, one step each, T = arange(12) + it and U = arange(12) + 100 * it
// in 3 writer blocks each.
const seriesScript = `
import sys, os, numpy as np, adios2.bindings as ab
d = sys.argv[1]
adios = ab.ADIOS()
for it in range(1, 8):
    io = adios.DeclareIO("w%d" % it)
    io.SetEngine("BP4")
    t = io.DefineVariable("T", np.zeros(1), [12], [0], [4], False)
    u = io.DefineVariable("U", np.zeros(1), [12], [0], [4], False)
    w = io.Open(os.path.join(d, "run_%04d.bp" % it), ab.Mode.Write)
    w.BeginStep()
    for b in range(3):
        t.SetSelection([[4 * b], [4]])
        w.Put(t, np.arange(4.0) + 4 * b + it, ab.Mode.Sync)
        u.SetSelection([[4 * b], [4]])
        w.Put(u, np.arange(4.0) + 4 * b + 100 * it, ab.Mode.Sync)
    w.EndStep()
    w.Close()
`

func openTestSeries(t *testing.T, dir string) *Series {
	t.Helper()
	var members []SeriesMember
	for it := int64(1); it <= 7; it++ {
		members = append(members, SeriesMember{Name: fmt.Sprintf("run_%04d.bp", it), Iteration: it})
	}
	s, err := OpenSeries(dir, members, Config{MaxOpenFiles: 16})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSeriesScanWorkers: a series scanned on 1, 2, 3 or 8 workers emits
// the same arrays in the same order (by variable, then iteration), whose
// blocks read back what ADIOS2 wrote; an error of emit stops the scan and
// is returned; a member whose metadata were cut short fails the scan with
// the error of the first such member in order, whichever worker parses it.
func TestSeriesScanWorkers(t *testing.T) {
	dir := t.TempDir()
	testkit.PeersPython(t, "-c", seriesScript, dir)
	s := openTestSeries(t, dir)
	type row struct {
		key    string
		blocks []string
	}
	scan := func(workers int) []row {
		var rows []row
		err := s.scan(context.Background(), func(a *catalog.Array) error {
			r := row{key: fmt.Sprintf("%s@%d %s", a.Var, a.Step, a.Source)}
			for i := range a.Blocks {
				b := &a.Blocks[i]
				r.blocks = append(r.blocks, fmt.Sprintf("%s:%d+%d %v", b.File, b.Offset, b.Length, b.Box.Lower))
				raw, err := catalog.ReadBlock(context.Background(), s, b, a.DType)
				if err != nil {
					return err
				}
				for k, v := range testkit.Floats(raw, a.DType) {
					want := float64(b.Box.Lower[0]+int64(k)) + float64(a.Step)
					if a.Var == "U" {
						want = float64(b.Box.Lower[0]+int64(k)) + 100*float64(a.Step)
					}
					if v != want {
						return fmt.Errorf("%s@%d[%d] = %v, want %v", a.Var, a.Step, b.Box.Lower[0]+int64(k), v, want)
					}
				}
			}
			rows = append(rows, r)
			return nil
		}, workers)
		if err != nil {
			t.Fatalf("%d workers: %v", workers, err)
		}
		return rows
	}
	one := scan(1)
	if len(one) != 14 || !strings.HasPrefix(one[0].key, "T@1 run_0001.bp:") || !strings.HasPrefix(one[7].key, "U@1 ") || len(one[13].blocks) != 3 {
		t.Fatalf("1 worker: %d arrays, first %q, eighth %q", len(one), one[0].key, one[min(7, len(one)-1)].key)
	}
	for _, w := range []int{2, 3, 8} {
		if got := scan(w); !slices.EqualFunc(got, one, func(a, b row) bool { return a.key == b.key && slices.Equal(a.blocks, b.blocks) }) {
			t.Errorf("%d workers: arrays differ from 1 worker's:\n%v\n%v", w, got, one)
		}
	}

	stop := errors.New("stop")
	n := 0
	err := s.scan(context.Background(), func(*catalog.Array) error {
		if n++; n == 5 {
			return stop
		}
		return nil
	}, 3)
	if !errors.Is(err, stop) || n != 5 {
		t.Errorf("emit failing at the 5th array: %v after %d arrays", err, n)
	}

	// Members 3 and 6 (indexes 2 and 5) cut short after the series was
	// opened: on 3 workers both go to worker 2, on 2 workers to 0 and 1.
	// Either way the scan reports member 3 (T@3 comes first).
	opened := map[int]*Series{}
	for _, w := range []int{1, 2, 3} {
		opened[w] = openTestSeries(t, dir)
	}
	for _, it := range []int{3, 6} {
		if err := os.Truncate(filepath.Join(dir, fmt.Sprintf("run_%04d.bp", it), "md.0"), 64); err != nil {
			t.Fatal(err)
		}
	}
	for w, s := range opened {
		err := s.scan(context.Background(), func(*catalog.Array) error { return nil }, w)
		if err == nil || !strings.Contains(err.Error(), "run_0003.bp") || !errors.Is(err, catalog.ErrCorrupt) {
			t.Errorf("%d workers, members 3 and 6 cut short: %v, want a corruption of run_0003.bp", w, err)
		}
	}
	// Opened now, their index records point past their md.0: the members
	// open in parallel, the error is the first member's in order, named.
	var members []SeriesMember
	for it := int64(1); it <= 7; it++ {
		members = append(members, SeriesMember{Name: fmt.Sprintf("run_%04d.bp", it), Iteration: it})
	}
	if _, err := OpenSeries(dir, members, Config{MaxOpenFiles: 16}); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "run_0003.bp")+": ") || !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("opening with members 3 and 6 cut short: %v, want a corruption naming %s", err, filepath.Join(dir, "run_0003.bp"))
	}
}
