//go:build cgo

package h5

import (
	"encoding/binary"
	"errors"
	"math"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// TestReadRegion reads the chunks of an lz4-compressed dataset h5py wrote
// (hdf5plugin) through ReadRegion, edge chunks into their whole stored
// shape, from several goroutines at once, and compares with the values the
// script wrote: element (i, j) = i*1000 + j.
func TestReadRegion(t *testing.T) {
	if err := exec.Command(python, "-c", "import h5py, hdf5plugin").Run(); err != nil || !available(32004) {
		testkit.Unavailable(t, "h5py, hdf5plugin or the lz4 plugin (on %v) unavailable (Debian python3-hdf5plugin hdf5-filter-plugin): %v", PluginPath(), err)
	}
	path := filepath.Join(t.TempDir(), "lz4.h5")
	runPython(t, `
import sys, numpy as np, h5py, hdf5plugin
with h5py.File(sys.argv[1], "w") as f:
    i, j = np.meshgrid(np.arange(50), np.arange(70), indexing="ij")
    f.create_dataset("g/x", data=(i * 1000 + j).astype(">f8"), chunks=(16, 32), **hdf5plugin.LZ4())
`, path)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Dataset("/g/x")
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Filters) != 1 || info.Filters[0].ID != 32004 || info.Filters[0].Name != "lz4" {
		t.Fatalf("filters %+v", info.Filters)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for ci := int64(0); ci < 50; ci += 16 {
		for cj := int64(0); cj < 70; cj += 32 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				count := []int64{min(16, 50-ci), min(32, 70-cj)}
				dst := make([]byte, 16*32*8)
				if err := f.ReadRegion("/g/x", []int64{ci, cj}, count, []int64{16, 32}, dst); err != nil {
					errs <- err
					return
				}
				for a := range count[0] {
					for b := range count[1] {
						v := math.Float64frombits(binary.BigEndian.Uint64(dst[(a*32+b)*8:]))
						if want := float64((ci+a)*1000 + cj + b); v != want {
							t.Errorf("chunk %d,%d: element %d,%d = %v, want %v", ci, cj, a, b, v, want)
							return
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	// Wrong buffer size and a region outside the dataset are refused.
	if err := f.ReadRegion("/g/x", []int64{0, 0}, []int64{16, 32}, []int64{16, 32}, make([]byte, 100)); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("short buffer: %v", err)
	}
	if err := f.ReadRegion("/g/x", []int64{48, 64}, []int64{16, 32}, []int64{16, 32}, make([]byte, 16*32*8)); !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "outside") {
		t.Errorf("region outside: %v", err)
	}
	if err := f.ReadRegion("/g/nope", []int64{0, 0}, []int64{1, 1}, []int64{1, 1}, make([]byte, 8)); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("missing dataset: %v", err)
	}
}

// TestFilterAvailable: built-in filters are available, an unregistered id
// is not, and the plugin path is listed.
func TestFilterAvailable(t *testing.T) {
	if !available(1) || !available(2) || !available(3) {
		t.Error("deflate, shuffle or fletcher32 not available")
	}
	if ok, msg := FilterAvailable(40000); ok {
		t.Error("filter 40000 available")
	} else {
		t.Logf("filter 40000: HDF5 says %q", msg)
	}
	if len(PluginPath()) == 0 {
		t.Error("no plugin directories")
	}
}

func available(id int) bool { ok, _ := FilterAvailable(id); return ok }
