package h5

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

// writePlugins skips without Debian's python3-hdf5plugin (failing under
// CI=true) and writes the plugin-filter inputs with plugins_gen.py, returning
// the file and the filters it wrote.
func writePlugins(t *testing.T, mode string) (string, []string) {
	t.Helper()
	testkit.NeedPython(t, "Debian python3-h5py python3-hdf5plugin", "h5py", "hdf5plugin")
	file := filepath.Join(t.TempDir(), mode+".h5")
	out, err := exec.Command(python, "testdata/plugins_gen.py", mode, file).CombinedOutput()
	if err != nil {
		t.Fatalf("plugins_gen.py %s: %v\n%s", mode, err, out)
	}
	return file, strings.Fields(string(out))
}

// TestPluginFilters: datasets written by h5py with HDF5 plugin filters (lz4,
// bzip2, zfp reversible; bitshuffle, zstd, blosc2 when the library has them)
// are read through the HDF5 library, block by block, and every element
// equals what h5py reads; LZF (h5py's own filter) is decoded natively, as
// are deflate and shuffle beside them. The I/O counters count the library
// reads apart from the preads.
func TestPluginFilters(t *testing.T) {
	file, wrote := writePlugins(t, "write")
	for _, f := range []string{"lz4", "bzip2", "zfp", "lzf"} {
		if !slices.Contains(wrote, f) {
			t.Fatalf("plugins_gen.py wrote %v: no %s (Debian hdf5-filter-plugin, hdf5-filter-plugin-zfp-serial)", wrote, f)
		}
	}
	t.Logf("filters written: %v", wrote)
	want := oracle(t, file)
	d, err := Open(file, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	arrays := scanAll(t, d)
	if len(arrays) != len(want) {
		t.Fatalf("%d arrays, h5py sees %d datasets", len(arrays), len(want))
	}
	var libBlocks, libBytes int64
	for _, a := range arrays {
		native := strings.HasPrefix(a.Var, "lzf/") || a.Var == "native/deflate"
		for _, b := range a.Blocks {
			switch {
			case native && !libraryBlock(&b):
			case !native && libraryBlock(&b):
				ds := "/" + a.Var
				if b.Codecs[0].Dataset != ds {
					t.Fatalf("%s: library block of dataset %q", a.Var, b.Codecs[0].Dataset)
				}
				libBlocks++
				libBytes += int64(a.DType.Size) * (&catalog.Array{Shape: b.StoredShape()}).Elements()
			default:
				t.Fatalf("%s: block codecs %+v", a.Var, b.Codecs)
			}
		}
	}
	before := d.IOStats()
	checkValues(t, d, arrays, want)
	after := d.IOStats()
	if got := after.LibraryBlocks - before.LibraryBlocks; got != libBlocks {
		t.Errorf("IOStats: %d library blocks, read %d", got, libBlocks)
	}
	if got := after.LibraryBytes - before.LibraryBytes; got != libBytes {
		t.Errorf("IOStats: %d library bytes, want %d", got, libBytes)
	}
	if after.LibraryNanos <= before.LibraryNanos {
		t.Errorf("IOStats: library time %d ns", after.LibraryNanos-before.LibraryNanos)
	}
	t.Logf("%d blocks (%d bytes) read through the HDF5 library; preads: %d", libBlocks, libBytes, after.ReadCalls-before.ReadCalls)

	// ReadBlocks over library and native blocks at once (same dtype):
	// each block exactly once, with the bytes ReadBlock returns.
	byVar := map[string]*catalog.Array{}
	for _, a := range arrays {
		byVar[a.Var] = a
	}
	var mixed []*catalog.Block
	for _, v := range []string{"native/deflate", "lz4/f8", "lzf/f8", "zfp/f8", "virtual/lz4"} {
		for i := range byVar[v].Blocks {
			mixed = append(mixed, &byVar[v].Blocks[i])
		}
	}
	seen := make([]int, len(mixed))
	dt := byVar["lz4/f8"].DType
	err = d.ReadBlocks(t.Context(), catalog.Reads{Blocks: mixed, DTypes: []catalog.DType{dt}}, func(i int, data []byte) error {
		seen[i]++
		one, err := catalog.ReadBlock(t.Context(), d, mixed[i], dt)
		if err != nil {
			return err
		}
		if string(one) != string(data) {
			t.Errorf("ReadBlocks block %d (%s): bytes differ from ReadBlock", i, mixed[i].File)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range seen {
		if n != 1 {
			t.Errorf("ReadBlocks: block %d delivered %d times", i, n)
		}
	}

	// A damaged bzip2 chunk fails in the library: corrupt input naming the
	// file and the chunk's offset.
	a := byVar["bzip2/f8"]
	b := a.Blocks[2]
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for k := b.Offset + b.Length/2; k < b.Offset+b.Length/2+16; k++ {
		raw[k] ^= 0x5a
	}
	bad := filepath.Join(t.TempDir(), "damaged.h5")
	if err := os.WriteFile(bad, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	d2, err := Open(bad, Config{Match: func(v string) bool { return v == "bzip2/f8" }})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	arrays2 := scanAll(t, d2)
	_, err = catalog.ReadBlock(t.Context(), d2, &arrays2[0].Blocks[2], a.DType)
	if !errors.Is(err, catalog.ErrCorrupt) || !strings.Contains(err.Error(), "damaged.h5") || !strings.Contains(err.Error(), "offset "+strconv.FormatInt(b.Offset, 10)) {
		t.Errorf("damaged bzip2 chunk: %v", err)
	}
}

// TestPluginFilterMissing: a filter no plugin provides is refused at Open,
// naming the file, the dataset, the filter id and HDF5_PLUGIN_PATH.
func TestPluginFilterMissing(t *testing.T) {
	file, _ := writePlugins(t, "mystery")
	_, err := Open(file, Config{})
	if !errors.Is(err, catalog.ErrUnsupported) {
		t.Fatalf("Open: %v, want ErrUnsupported", err)
	}
	for _, s := range []string{"mystery.h5", "/mystery", "id 40000", "HDF5_PLUGIN_PATH", "serial/plugins"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message does not name %q: %v", s, err)
		}
	}
	// The rest of the file stays readable by leaving the dataset out.
	d, err := Open(file, Config{Match: func(v string) bool { return v == "plain" }})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	arrays := scanAll(t, d)
	if len(arrays) != 1 {
		t.Fatalf("%d arrays", len(arrays))
	}
	got := assemble(t, d, arrays[0]) // written as np.arange(16.0)
	for i := range 16 {
		if v := math.Float64frombits(binary.LittleEndian.Uint64(got[8*i:])); v != float64(i) {
			t.Fatalf("plain[%d] = %v", i, v)
		}
	}
}

// TestPluginFilterSeries: a file-based series of 20 lz4 files read through
// the library from several goroutines at once keeps at most
// maxLibraryFiles files open, and every element equals h5py's.
func TestPluginFilterSeries(t *testing.T) {
	writePlugins(t, "mystery") // skips without hdf5plugin
	dir := t.TempDir()
	runPython(t, `
import sys, os, numpy as np, h5py, hdf5plugin
for it in range(20):
    with h5py.File(os.path.join(sys.argv[1], "data_%06d.h5" % (it * 10)), "w") as f:
        f.create_dataset("rho", data=np.arange(3000.0).reshape(30, 100) + it, chunks=(8, 64), **hdf5plugin.LZ4())
`, dir)
	var files []string
	for it := range 20 {
		files = append(files, filepath.Join(dir, fmt.Sprintf("data_%06d.h5", it*10)))
	}
	want := oracle(t, files...)
	d, err := Open(dir, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	arrays := scanAll(t, d)
	if len(arrays) != 20 {
		t.Fatalf("%d arrays", len(arrays))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range arrays {
				a := arrays[(k+5*g)%len(arrays)]
				for i := range a.Blocks {
					if _, err := catalog.ReadBlock(t.Context(), d, &a.Blocks[i], a.DType); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	checkValues(t, d, arrays, want)
	d.lib.mu.Lock()
	open := len(d.lib.files)
	d.lib.mu.Unlock()
	if open > maxLibraryFiles {
		t.Errorf("%d files open for library reads", open)
	}
	if n := d.IOStats().LibraryBlocks; n != 5*20*4*2 {
		t.Errorf("%d library blocks read, want %d", n, 5*20*4*2)
	}
}
