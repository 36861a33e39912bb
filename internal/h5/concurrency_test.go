//go:build cgo

package h5

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"relayout/catalog"
)

// TestConcurrentQuietErrors hammers one File and failing Opens from many
// goroutines (hence many OS threads) with stderr redirected, and checks that
// results stay right and HDF5 prints nothing: its auto-print setting is per
// thread, so silencing it only in init would not be enough.
func TestConcurrentQuietErrors(t *testing.T) {
	path := filepath.Join(dataDir(t), "hdf5/openpmd-femm/example-femm-3d.h5")
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := filepath.Join(t.TempDir(), "junk.h5")
	if err := os.WriteFile(junk, []byte(strings.Repeat("\x89HDF\r\n\x1a\n garbage ", 64)), 0o644); err != nil {
		t.Fatal(err)
	}

	capture, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	saved, err := syscall.Dup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup3(int(capture.Fd()), 2, 0); err != nil {
		t.Fatal(err)
	}
	restore := func() { syscall.Dup3(saved, 2, 0); syscall.Close(saved) }

	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread() // force distinct threads
			defer runtime.UnlockOSThread()
			for i := 0; i < 20; i++ {
				if _, err := Open(junk); !errors.Is(err, catalog.ErrCorrupt) {
					errs <- err
				}
				if _, err := f.Dataset("/data/1/meshes/nope"); !errors.Is(err, catalog.ErrNotFound) {
					errs <- err
				}
				info, err := f.Dataset("/data/1/meshes/B/y")
				if err != nil || len(info.Chunk) != 3 {
					errs <- err
				}
				n := 0
				if err := f.Chunks("/data/1/meshes/B/z", func(Chunk) error { n++; return nil }); err != nil || n != 18 {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	restore()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent call: %v", err)
	}
	out, _ := os.ReadFile(capture.Name())
	if strings.Contains(string(out), "HDF5-DIAG") {
		t.Errorf("HDF5 printed errors:\n%.2000s", out)
	}
}
