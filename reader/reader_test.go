package reader

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

func runPython(t *testing.T, script string, args ...string) {
	t.Helper()
	testkit.NeedPython(t, "Debian python3-h5py", "h5py")
	if out, err := exec.Command("/usr/bin/python3", append([]string{"-c", script}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
}

func vars(t *testing.T, ds Dataset) []string {
	t.Helper()
	var out []string
	if err := ds.Scan(context.Background(), func(a *catalog.Array) error {
		out = append(out, a.Var)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenDetection(t *testing.T) {
	dir := t.TempDir()
	runPython(t, `
import sys, os, numpy as np, h5py
d = sys.argv[1]
with h5py.File(os.path.join(d, "plain.h5"), "w") as f:
    f.create_dataset("B/x", data=np.arange(4.0)); f.create_dataset("B/y", data=np.arange(4.0)); f.create_dataset("rho", data=np.arange(4.0))
# HDF5 signature after a 512-byte user block, odd extension
with h5py.File(os.path.join(d, "ub.data"), "w", userblock_size=512) as f:
    f.create_dataset("v", data=np.arange(3, dtype="<i4"))
os.mkdir(os.path.join(d, "series"))
for i in (10, 20):
    with h5py.File(os.path.join(d, "series", "data%08d.h5" % i), "w") as f:
        f.attrs["openPMD"] = np.bytes_("1.1.0"); f.attrs["basePath"] = np.bytes_("/data/%T/")
        f.attrs["meshesPath"] = np.bytes_("meshes/"); f.attrs["iterationEncoding"] = np.bytes_("fileBased")
        f.create_dataset("data/%d/meshes/E/x" % i, data=np.arange(5.0) + i)
`, dir)
	os.WriteFile(filepath.Join(dir, "x.txt"), []byte("hello"), 0o644)
	os.Mkdir(filepath.Join(dir, "emptydir"), 0o755)

	_, err := Open(filepath.Join(dir, "x.txt"), Options{})
	want := "reader: " + filepath.Join(dir, "x.txt") + ": not a recognised format (" + formatsRead + "): unsupported"
	if !errors.Is(err, catalog.ErrUnsupported) || err.Error() != want {
		t.Errorf("text file: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "emptydir"), Options{}); !errors.Is(err, catalog.ErrUnsupported) {
		t.Errorf("empty dir: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "missing.h5"), Options{}); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("missing: %v", err)
	}

	ds, err := Open(filepath.Join(dir, "ub.data"), Options{})
	if err != nil {
		t.Fatalf("user block file: %v", err)
	}
	a := scanOne(t, ds)
	got, err := catalog.ReadBlock(context.Background(), ds, &a.Blocks[0], a.DType)
	if err != nil || string(got) != "\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00" {
		t.Errorf("user block data %v %v (block at %d)", got, err, a.Blocks[0].Offset)
	}
	ds.Close()

	ds, err = Open(filepath.Join(dir, "series"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Info().Format != "openpmd-hdf5" {
		t.Errorf("series format %q", ds.Info().Format)
	}
	var steps []int64
	ds.Scan(context.Background(), func(a *catalog.Array) error { steps = append(steps, a.Step); return nil })
	if !slices.Equal(steps, []int64{10, 20}) {
		t.Errorf("series steps %v", steps)
	}
	ds.Close()

	// Selection: names, globs, parents; a pattern that selects nothing is an error.
	for _, c := range []struct {
		pats []string
		want []string
	}{
		{nil, []string{"B/x", "B/y", "rho"}},
		{[]string{"B"}, []string{"B/x", "B/y"}},
		{[]string{"B/*"}, []string{"B/x", "B/y"}},
		{[]string{"*"}, []string{"B/x", "B/y", "rho"}},
		{[]string{"rho", "B/[y]"}, []string{"B/y", "rho"}},
	} {
		ds, err := Open(filepath.Join(dir, "plain.h5"), Options{Vars: c.pats})
		if err != nil {
			t.Fatalf("%v: %v", c.pats, err)
		}
		if got := vars(t, ds); !slices.Equal(got, c.want) {
			t.Errorf("Vars %v selected %v, want %v", c.pats, got, c.want)
		}
		ds.Close()
	}
	if _, err := Open(filepath.Join(dir, "plain.h5"), Options{Vars: []string{"rho", "Bx"}}); !errors.Is(err, catalog.ErrNotFound) {
		t.Errorf("unknown variable: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "plain.h5"), Options{Vars: []string{"B/["}}); err == nil {
		t.Error("bad glob accepted")
	}

	// A directory with relayout.json is relayout output.
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	os.WriteFile(filepath.Join(out, catalog.ManifestName), []byte(`{"tool":"relayout","version":"t","input":{"path":"x","format":"hdf5"},"variables":[]}`), 0o644)
	ds, err = Open(out, Options{})
	if err != nil || ds.Info().Format != "relayout" {
		t.Fatalf("relayout dir: %v", err)
	}
	ds.Close()
}

func scanOne(t *testing.T, ds Dataset) *catalog.Array {
	t.Helper()
	var got []*catalog.Array
	if err := ds.Scan(context.Background(), func(a *catalog.Array) error { got = append(got, a); return nil }); err != nil || len(got) != 1 {
		t.Fatalf("scan: %d arrays, %v", len(got), err)
	}
	return got[0]
}

func TestMatchName(t *testing.T) {
	for _, c := range []struct {
		pat, name string
		want      bool
	}{
		{"B/x", "B/x", true}, {"B", "B/x", true}, {"B*", "Bx", true}, {"B*", "B/x", true},
		{"B/*", "B", false}, {"E", "B/x", false}, {"B/x", "B/xy", false}, {"a/b", "a/b/c", true},
	} {
		if got := matchName(c.pat, c.name); got != c.want {
			t.Errorf("matchName(%q, %q) = %v", c.pat, c.name, got)
		}
	}
}
