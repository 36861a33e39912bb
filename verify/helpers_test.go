package verify

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
	"relayout/reader"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// relayoutBin builds the relayout binary once per test process.
func relayoutBin(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "verify-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "relayout")
		cmd := exec.Command("go", "build", "-o", binPath, "relayout")
		cmd.Dir = ".."
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			binErr = err
			binPath = out.String()
		}
	})
	if binErr != nil {
		t.Fatalf("go build relayout: %v\n%s", binErr, binPath)
	}
	return binPath
}

// rewrite runs relayout run IN -o OUT with extra flags and returns OUT.
func rewrite(t *testing.T, in string, flags ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(relayoutBin(t), append([]string{"run", in, "-o", out, "-q"}, flags...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("relayout run %s %v: %v\n%s", in, flags, err, b)
	}
	return out
}

// input opens in through its reader into a fresh catalog.
func input(t *testing.T, in string) (reader.Dataset, *catalog.Store) {
	t.Helper()
	return inputVars(t, in)
}

// inputVars is input with only the variables vars (all when none).
func inputVars(t *testing.T, in string, vars ...string) (reader.Dataset, *catalog.Store) {
	t.Helper()
	return openInput(t, in, 0, vars...)
}

// keptInput is input with every block list kept by the store (as a run
// keeps them), so that a tap knows them.
func keptInput(t *testing.T, in string) (reader.Dataset, *catalog.Store) {
	t.Helper()
	return openInput(t, in, 1<<30)
}

// openInput is inputVars with keep bytes of block lists kept by the store
// (catalog.Store.KeepBlocks).
func openInput(t *testing.T, in string, keep int64, vars ...string) (reader.Dataset, *catalog.Store) {
	t.Helper()
	ds, err := reader.Open(in, reader.Options{Vars: vars})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ds.Close() })
	store, err := catalog.CreateStore(filepath.Join(t.TempDir(), "in.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	store.KeepBlocks(keep)
	if err := ds.Scan(context.Background(), store.Put); err != nil {
		t.Fatal(err)
	}
	if err := store.SetInfo(ds.Info()); err != nil {
		t.Fatal(err)
	}
	return ds, store
}

// check verifies out against in and returns ok and the log.
func check(t *testing.T, ds reader.Dataset, store *catalog.Store, out string, opts Options) (bool, string) {
	t.Helper()
	var log strings.Builder
	opts.Log = &log
	ok, err := Output(context.Background(), store, ds, out, nil, opts)
	if err != nil {
		t.Fatalf("verify %s: %v\n%s", out, err, log.String())
	}
	return ok, log.String()
}

// python runs Debian's python3 (h5py, numpy) with a script and arguments.
func python(t *testing.T, script string, args ...string) string {
	t.Helper()
	cmd := exec.Command(testkit.Python, append([]string{"-c", script}, args...)...)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, b)
	}
	return string(b)
}

// eachIndex calls fn with g at every index of box, row-major.
func eachIndex(box catalog.Box, g []int64, fn func()) {
	if box.Elements() == 0 {
		return
	}
	copy(g, box.Lower)
	for {
		fn()
		d := len(g) - 1
		for ; d >= 0; d-- {
			if g[d]++; g[d] < box.Lower[d]+box.Count[d] {
				break
			}
			g[d] = box.Lower[d]
		}
		if d < 0 {
			return
		}
	}
}

func shared(t *testing.T, sub string) string { return testkit.SharedData(t, sub) }
