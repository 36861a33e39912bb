package verify

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"relayout/catalog"
)

// bigInput writes an HDF5 input with h5py: a contiguous 4 MiB array (one
// raw block, read band by band in part), a deflated one in 2 MiB chunks
// that each span several bands (kept across them), and a big-endian
// chunked one with partial edge chunks.
func bigInput(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "big.h5")
	python(t, `
import sys, numpy as np, h5py
i, j = np.meshgrid(np.arange(512), np.arange(1024), indexing="ij")
v = (i * 1024 + j).astype("<f8")
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("raw", data=v)
    f.create_dataset("zip", data=v, chunks=(256, 1024), compression="gzip", compression_opts=1)
    f.create_dataset("be", data=v[:300, :700].astype(">i4"), chunks=(64, 96))
`, p)
	return p
}

// The budget holds: with 256 KiB, the contiguous array is read in rows per
// band and never more than the budget of blocks is held; the 2 MiB
// compressed chunks are each fetched once and kept across their bands
// (the one case the budget yields to: the blocks a band meets must be
// whole in memory).
func TestBudget(t *testing.T) {
	in := bigInput(t)
	ds, store := input(t, in)
	for _, flags := range [][]string{{"--layout", "contiguous"}, {"--layout", "chunked", "--chunk-shape", "100,1000", "--compress", "deflate:1"}} {
		out := rewrite(t, in, flags...)
		for _, jobs := range []int{1, 3} {
			var st *stats
			statsHook = func(s *stats) { st = s }
			const budget = 256 << 10
			ok, log := check(t, ds, store, out, Options{MaxMem: budget, Jobs: jobs, Exact: true})
			statsHook = nil
			if !ok {
				t.Fatalf("%v: %s", flags, log)
			}
			t.Logf("%v jobs %d: %s", flags, jobs, st)
			if st.trimmed.Load() == 0 || st.cached.Load() == 0 || st.bands.Load() < 3*16 {
				t.Errorf("%v: expected rows read in part, kept blocks and many bands: %s", flags, st)
			}
			// A band meets at most two of the 2 MiB chunks (rows 256
			// apart), which must then both be whole in memory.
			if p := st.peakMem.Load(); p > 2*(2<<20) {
				t.Errorf("%v: %d block bytes held at once, more than the two chunks a band meets", flags, p)
			}
		}
	}
	// Only the raw array: within the budget.
	raw := rewrite(t, in, "--var", "raw")
	ds2, store2 := inputVars(t, in, "raw")
	var st *stats
	statsHook = func(s *stats) { st = s }
	defer func() { statsHook = nil }()
	if ok, log := check(t, ds2, store2, raw, Options{MaxMem: 256 << 10, Jobs: 2}); !ok {
		t.Fatal(log)
	}
	if p := st.peakMem.Load(); p > 256<<10 || st.trimmed.Load() == 0 {
		t.Errorf("raw: peak %d block bytes (budget 256 KiB), %s", p, st)
	}
}

// Cancelling stops verification with the context's error.
func TestCancel(t *testing.T) {
	in := bigInput(t)
	ds, store := input(t, in)
	out := rewrite(t, in)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	ok, err := Output(ctx, store, ds, out, nil, Options{MaxMem: 256 << 10, Jobs: 2, Progress: func(Progress) {
		if calls++; calls == 3 {
			cancel()
		}
	}})
	if ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled verify: ok %v, err %v", ok, err)
	}
}

// A directory without a manifest is not an output: ErrNotFound (exit 2).
func TestNotAnOutput(t *testing.T) {
	in := shared(t, "bp4/generated-lb")
	ds, store := input(t, in)
	_, err := Output(context.Background(), store, ds, t.TempDir(), nil, Options{})
	if !errors.Is(err, catalog.ErrNotFound) || !strings.Contains(err.Error(), "not a relayout output") {
		t.Fatalf("err %v, want ErrNotFound naming the directory", err)
	}
}

// What is missing from the output is a difference, not an error.
func TestMissing(t *testing.T) {
	in := shared(t, "bp4/generated-lb")
	ds, store := input(t, in)
	cases := []struct {
		name  string
		harm  func(out string, m map[string]any)
		want  string
		flags []string // of the run that wrote the output
	}{
		{"dataset", func(out string, m map[string]any) {
			python(t, `import sys, h5py; f = h5py.File(sys.argv[1], "r+"); del f["/data/1/meshes/fields/rho"]; f.close()`, filepath.Join(out, "fields.rho.h5"))
		}, `^DIFF fields/rho step 1 level 0: dataset /data/1/meshes/fields/rho missing from fields.rho.h5$`, nil},
		{"file", func(out string, m map[string]any) {
			os.Remove(filepath.Join(out, "fields.Bx.h5"))
		}, `^DIFF fields/Bx: output file .*fields.Bx.h5 is missing$`, nil},
		{"manifest", func(out string, m map[string]any) {
			vars := m["variables"].([]any)
			v := vars[0].(map[string]any)
			v["datasets"] = v["datasets"].([]any)[1:]
		}, `^DIFF fields/Bx step 0 level 0: missing from output \(not in the manifest\)$`, nil},
		{"shape", func(out string, m map[string]any) {
			d := m["variables"].([]any)[1].(map[string]any)["datasets"].([]any)[2].(map[string]any)
			d["shape"] = []int{32, 32, 31}
		}, `^DIFF fields/id step 2 level 0: shape in=\[32 32 32\] out=\[32 32 31\]$`, nil},
		{"digest", func(out string, m map[string]any) {
			d := m["variables"].([]any)[2].(map[string]any)["datasets"].([]any)[0].(map[string]any)
			d["sha256"] = strings.Repeat("0", 64)
		}, `^DIFF fields/rho step 0 level 0: sha256 of output [0-9a-f]{64}, manifest says 0{64}$`, nil},
		{"xxh64", func(out string, m map[string]any) {
			d := m["variables"].([]any)[2].(map[string]any)["datasets"].([]any)[1].(map[string]any)
			d["xxh64"] = strings.Repeat("0", 16)
		}, `^DIFF fields/rho step 1 level 0: xxh64 of output [0-9a-f]{16}, manifest says 0{16}$`, []string{"--digest", "xxh64"}},
		{"series", func(out string, m map[string]any) {
			os.Remove(filepath.Join(out, "time.h5"))
		}, `^DIFF series.h5: series.h5 needs time.h5, which is missing$`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := rewrite(t, in, c.flags...)
			mp := filepath.Join(out, catalog.ManifestName)
			b, err := os.ReadFile(mp)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			c.harm(out, m)
			if b, err = json.Marshal(m); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(mp, b, 0o644); err != nil {
				t.Fatal(err)
			}
			ok, log := check(t, ds, store, out, Options{})
			re := regexp.MustCompile(c.want)
			found := false
			for _, l := range strings.Split(log, "\n") {
				found = found || re.MatchString(l)
			}
			if ok || !found {
				t.Fatalf("ok %v, want a line matching %s:\n%s", ok, c.want, log)
			}
		})
	}
}

// run --digest none: every element is still compared; the lines say no
// digest was asked for.
func TestDigestNone(t *testing.T) {
	in := shared(t, "bp4/generated-lb")
	ds, store := input(t, in)
	out := rewrite(t, in, "--digest", "none")
	ok, log := check(t, ds, store, out, Options{})
	if !ok || !strings.Contains(log, "OK  fields/Bx  3 steps  98304 elements  no digest (--digest none)") {
		t.Fatalf("ok %v:\n%s", ok, log)
	}
	python(t, damagePy, out, "fields/Bx", "/data/2/meshes/fields/Bx", "flip")
	if ok, log := check(t, ds, store, out, Options{}); ok || !strings.Contains(log, "DIFF fields/Bx step 2 level 0 at [10,21,10]") {
		t.Fatalf("flipped byte with --digest none: ok %v:\n%s", ok, log)
	}
}
