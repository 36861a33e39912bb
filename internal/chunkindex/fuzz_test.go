package chunkindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/h5"
)

// seedFiles returns (file bytes, object header address) pairs for every
// chunked dataset of the real openPMD files (when present) and of small
// generated files covering each index type.
func seedFiles(tb testing.TB) (seeds []seed) {
	tb.Helper()
	var paths []string
	real := filepath.Join("..", "..", "..", "..", "shared", "data", "hdf5", "openpmd-femm")
	// Only the 85 KB file: the fuzzer copies and minimizes whole inputs, and
	// the 3.5 MB example-femm-3d.h5 slows it to a crawl.
	for _, n := range []string{"example-femm-thetaMode.h5"} {
		if _, err := os.Stat(filepath.Join(real, n)); err == nil {
			paths = append(paths, filepath.Join(real, n))
		}
	}
	if exec.Command(python, "-c", "import h5py").Run() == nil {
		dir := tb.TempDir()
		runPython(tb, genSmall, dir)
		paths = append(paths, filepath.Join(dir, "small.h5"), filepath.Join(dir, "small-latest.h5"))
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		f, err := h5.Open(p)
		if err != nil {
			tb.Fatal(err)
		}
		err = f.Walk(func(path string, isDataset bool) error {
			if !isDataset {
				return nil
			}
			info, err := f.Dataset(path)
			if err == nil && info.Layout == "chunked" {
				seeds = append(seeds, seed{p + ":" + path, data, info.ObjAddr})
			}
			return err
		})
		f.Close()
		if err != nil {
			tb.Fatal(err)
		}
	}
	return seeds
}

type seed struct {
	name string
	data []byte
	addr uint64
}

// genSmall writes small files (a few KiB) with each chunk index type, as
// fuzz seeds: mutations of small inputs reach the parsers' corners faster.
const genSmall = `
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(d + '/small.h5', 'w') as f:
    f.create_dataset('b', shape=(12, 12), chunks=(2, 2), dtype='u1')[...] = 1
    f.create_dataset('z', shape=(20,), chunks=(4,), dtype='f4', compression='gzip', shuffle=True)[...] = np.arange(20)
with h5py.File(d + '/small-latest.h5', 'w', libver='latest') as f:
    f.create_dataset('single', shape=(3,), chunks=(3,), dtype='u1')[...] = 1
    f.create_dataset('single_gz', shape=(30,), chunks=(30,), dtype='u1', compression='gzip')[...] = 1
    f.create_dataset('fixed', shape=(9, 9), chunks=(2, 2), dtype='u1')[2:] = 1
    f.create_dataset('fixed_gz', shape=(9,), chunks=(2,), dtype='f4', compression='gzip')[...] = np.arange(9)
    f.create_dataset('ea', shape=(40, 3), maxshape=(None, 3), chunks=(2, 2), dtype='u1')[...] = 1
    f.create_dataset('ea_gz', shape=(40,), maxshape=(None,), chunks=(2,), dtype='u1', compression='gzip')[...] = 1
    f.create_dataset('bt2', shape=(20, 20), maxshape=(None, None), chunks=(2, 2), dtype='u1')[...] = 1
    f.create_dataset('bt2_gz', shape=(8, 8), maxshape=(None, None), chunks=(2, 2), dtype='u1', compression='gzip')[...] = 1
`

// FuzzList feeds mutated HDF5 files to List: it must never panic, loop or
// allocate without bound, whatever the bytes say.
func FuzzList(f *testing.F) {
	for _, s := range seedFiles(f) {
		f.Add(s.data, s.addr)
	}
	f.Fuzz(func(t *testing.T, data []byte, addr uint64) {
		if len(data) > 64<<20 {
			return // memory cap: the parser reads at most ~2x the input
		}
		n := 0
		err := List(bytes.NewReader(data), int64(len(data)), addr, func(c Chunk) error {
			n++
			if c.Address < 0 || c.Address > int64(len(data)) || c.Size < 0 {
				t.Fatalf("chunk %+v outside a %d-byte file", c, len(data))
			}
			return nil
		})
		if err != nil && !errors.Is(err, catalog.ErrCorrupt) && !errors.Is(err, catalog.ErrUnsupported) {
			t.Fatalf("error without a sentinel: %v", err)
		}
		if ce := (*catalog.CorruptError)(nil); errors.Is(err, catalog.ErrCorrupt) && !errors.As(err, &ce) {
			t.Fatalf("damage without a CorruptError: %v", err)
		}
	})
}

// TestCorrupt damages real structures and checks for ErrCorrupt (never a
// panic, never a silent partial list).
func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	runPython(t, genSmall, dir)
	p := filepath.Join(dir, "small.h5")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	addr := objAddr(t, p, "/b")
	list := func(b []byte) error {
		return List(bytes.NewReader(b), int64(len(b)), addr, func(Chunk) error { return nil })
	}
	if err := list(data); err != nil {
		t.Fatal(err)
	}
	tree := bytes.Index(data, []byte("TREE\x01")) // node type 1: chunks (type 0 indexes groups)
	if tree < 0 {
		t.Fatal("no v1 B-tree node in small.h5")
	}
	cases := map[string]func(b []byte){
		"truncated":     func(b []byte) {},
		"bad signature": func(b []byte) { copy(b[tree:], "TRAE") },
		"level":         func(b []byte) { b[tree+5] = 200 },
		// the root's first child pointing back to the root: a cycle
		"cycle": func(b []byte) {
			b[tree+5] = 1
			binary.LittleEndian.PutUint64(b[tree+8+16+8+8*3:], uint64(tree))
		},
		"child outside": func(b []byte) {
			binary.LittleEndian.PutUint64(b[tree+8+16+8+8*3:], 1<<40)
		},
		// Structural checks of the leaf (keys: size u32, mask u32, 3 u64
		// offsets; entries of 40 bytes after the 24-byte node header).
		"key off the chunk grid": func(b []byte) { binary.LittleEndian.PutUint64(b[tree+24+8+8:], 1) },
		"keys not increasing":    func(b []byte) { binary.LittleEndian.PutUint64(b[tree+24+40+8+8:], 0) },
		"chunk past the end":     func(b []byte) { binary.LittleEndian.PutUint32(b[tree+24:], 0xffffff00) },
		// 65 entries: more than a node of the default K = 32 holds
		"more than 2K entries": func(b []byte) { binary.LittleEndian.PutUint16(b[tree+6:], 65) },
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			b := bytes.Clone(data)
			damage(b)
			if name == "truncated" {
				b = b[:tree+30]
			}
			err := list(b)
			if !errors.Is(err, catalog.ErrCorrupt) {
				t.Fatalf("got %v, want ErrCorrupt", err)
			}
			t.Log(err)
		})
	}
	if err := List(bytes.NewReader(data[:100]), 100, addr, nil); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("object header past the end: %v", err)
	}
	if err := List(bytes.NewReader([]byte("not an HDF5 file at all")), 23, 0, nil); !errors.Is(err, catalog.ErrCorrupt) {
		t.Errorf("not HDF5: %v", err)
	}
}

// TestCallbackError checks that fn's error stops the walk and comes back.
func TestCallbackError(t *testing.T) {
	dir := t.TempDir()
	runPython(t, genSmall, dir)
	stop := errors.New("stop")
	for _, name := range []string{"small.h5:/b", "small-latest.h5:/fixed", "small-latest.h5:/ea", "small-latest.h5:/bt2"} {
		file, dset, _ := strings.Cut(name, ":")
		p := filepath.Join(dir, file)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		err = List(bytes.NewReader(data), int64(len(data)), objAddr(t, p, dset), func(Chunk) error {
			n++
			if n == 3 {
				return stop
			}
			return nil
		})
		if err != stop || n != 3 {
			t.Errorf("%s: err %v after %d chunks, want the callback's error after 3", name, err, n)
		}
	}
}
