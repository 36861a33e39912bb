package chunkindex

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"relayout/internal/h5"
	"relayout/internal/testkit"
)

const python = "/usr/bin/python3"

// dataDir returns ../shared/data/<sub> (relative to the repository), skipping
// when absent and failing under CI=true.
func dataDir(tb testing.TB, sub string) string {
	return testkit.SharedData(tb, sub)
}

// runPython runs an h5py script with args, skipping when h5py is missing
// (failing under CI=true).
func runPython(tb testing.TB, script string, args ...string) {
	tb.Helper()
	testkit.NeedPython(tb, "Debian python3-h5py", "h5py")
	out, err := exec.Command(python, append([]string{"-c", script}, args...)...).CombinedOutput()
	if err != nil {
		tb.Fatalf("python: %v\n%s", err, out)
	}
}

// native lists the chunks of dataset dset through List.
func native(tb testing.TB, path string, objAddr uint64) ([]Chunk, error) {
	tb.Helper()
	fh, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		tb.Fatal(err)
	}
	var got []Chunk
	err = List(fh, st.Size(), objAddr, func(c Chunk) error {
		got = append(got, c)
		return nil
	})
	return got, err
}

// oracle lists the chunks of dset through the HDF5 library.
func oracle(tb testing.TB, f *h5.File, dset string) []Chunk {
	tb.Helper()
	var want []Chunk
	err := f.Chunks(dset, func(c h5.Chunk) error {
		want = append(want, Chunk{Offset: c.Offset, FilterMask: c.FilterMask, Address: c.Address, Size: c.Size})
		return nil
	})
	if err != nil {
		tb.Fatalf("%s: library chunk listing: %v", dset, err)
	}
	return want
}

func sortChunks(cs []Chunk) {
	slices.SortFunc(cs, func(a, b Chunk) int {
		if c := slices.Compare(a.Offset, b.Offset); c != 0 {
			return c
		}
		return cmp.Compare(a.Address, b.Address)
	})
}

// sameChunks compares two chunk lists regardless of order.
func sameChunks(got, want []Chunk) error {
	sortChunks(got)
	sortChunks(want)
	if len(got) != len(want) {
		return fmt.Errorf("%d chunks, library lists %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if !slices.Equal(g.Offset, w.Offset) || g.FilterMask != w.FilterMask || g.Address != w.Address || g.Size != w.Size {
			return fmt.Errorf("chunk %d: got %+v, library %+v", i, g, w)
		}
	}
	return nil
}

// compareFile checks List against the library for every chunked dataset of
// path (or only those named), returning how many were compared.
func compareFile(t *testing.T, path string, only ...string) int {
	t.Helper()
	f, err := h5.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var dsets []string
	if len(only) > 0 {
		dsets = only
	} else if err := f.Walk(func(p string, isDataset bool) error {
		if isDataset {
			dsets = append(dsets, p)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dsets {
		info, err := f.Dataset(d)
		if err != nil {
			t.Fatal(err)
		}
		if info.Layout != "chunked" {
			continue
		}
		want := oracle(t, f, d)
		got, err := native(t, path, info.ObjAddr)
		if err != nil {
			t.Errorf("%s %s: %v", filepath.Base(path), d, err)
			continue
		}
		if err := sameChunks(got, want); err != nil {
			t.Errorf("%s %s: %v", filepath.Base(path), d, err)
		}
		n++
	}
	return n
}

// objAddr returns the object header address of dset.
func objAddr(tb testing.TB, path, dset string) uint64 {
	tb.Helper()
	f, err := h5.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	info, err := f.Dataset(dset)
	if err != nil {
		tb.Fatal(err)
	}
	return info.ObjAddr
}
