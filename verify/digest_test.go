package verify

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"relayout/catalog"
	"relayout/internal/testkit"
)

func keyString(k catalog.Key) string { return fmt.Sprintf("%s %d %d", k.Var, k.Step, k.Level) }

// staged is the manifest of out (written by run --digest none) as commit
// hands it to the verifier of a run whose digests the verifier takes: no
// digest recorded, options.digest the algorithm asked for.
func staged(t *testing.T, out string, kind catalog.Digest) *catalog.Manifest {
	t.Helper()
	m, err := catalog.ReadManifest(filepath.Join(out, catalog.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	m.Options.Digest = kind.String()
	return m
}

// Check returns the digest of every dataset and constant record it
// verified, of the manifest's algorithm, equal to what hashlib, xxhash or
// b3sum compute from h5py's bytes; recorded digests are checked (sha256,
// blake3, xxh64);
// with FillDigests and a manifest that records none (as commit stages it)
// the constant records' digests are computed too and the lines say so.
func TestDigests(t *testing.T) {
	for _, c := range []struct {
		data  string
		flags []string
		fill  catalog.Digest // with --digest none: the algorithm the caller fills
		kind  catalog.Digest // of the digests returned
	}{
		{"bp4/generated-lb", []string{"--layout", "chunked", "--chunks", "2x2x2"}, 0, catalog.SHA256},
		{"bp4/generated-lb", []string{"--digest", "xxh64", "--layout", "chunked", "--chunks", "2x2x2"}, 0, catalog.XXH64},
		{"bp4/generated-lb", []string{"--digest", "none"}, catalog.SHA256, catalog.SHA256},
		{"bp4/generated-lb", []string{"--digest", "none"}, catalog.XXH64, catalog.XXH64},
		{"hdf5/openpmd-femm/example-femm-3d.h5", []string{"--digest", "none"}, catalog.XXH64, catalog.XXH64},
		{"hdf5/fbpic", []string{"--layout", "merged", "--digest", "xxh64"}, 0, catalog.XXH64},
		{"hdf5/fbpic", []string{"--layout", "merged"}, 0, catalog.SHA256},
		{"bp4/generated-lb", []string{"--digest", "blake3", "--layout", "chunked", "--chunks", "2x2x2"}, 0, catalog.BLAKE3},
		{"hdf5/fbpic", []string{"--digest", "none"}, catalog.BLAKE3, catalog.BLAKE3},
	} {
		t.Run(filepath.Base(c.data)+strings.Join(c.flags, "")+c.kind.String(), func(t *testing.T) {
			in := shared(t, c.data)
			ds, store := input(t, in)
			out := rewrite(t, in, c.flags...)
			want := testkit.H5Digests(t, out)
			var log strings.Builder
			none := slices.Contains(c.flags, "none")
			var m *catalog.Manifest // nil: Check reads out's
			if none {
				m = staged(t, out, c.fill)
			}
			res, err := Check(context.Background(), store, ds, out, m, Options{Log: &log, FillDigests: none})
			if err != nil || !res.OK {
				t.Fatalf("ok %v err %v\n%s", res.OK, err, log.String())
			}
			if len(res.Digests) != len(want) || len(want) == 0 {
				t.Errorf("%d digests returned, h5py computed %d", len(res.Digests), len(want))
			}
			for k, sum := range res.Digests {
				if w := want[keyString(k)][c.kind.String()]; sum != w {
					t.Errorf("%s: %v %s, h5py %s", keyString(k), c.kind, sum, w)
				}
			}
			word := c.kind.String() + " ok"
			if none {
				word = c.kind.String() + " computed"
			}
			for _, l := range strings.Split(strings.TrimSpace(log.String()), "\n") {
				if !strings.HasPrefix(l, "OK  series.h5") && !strings.HasPrefix(l, "OK  views") && !strings.HasPrefix(l, "compare: ") && !strings.HasSuffix(l, "  "+word) { // compare: how the arrays were compared
					t.Errorf("line %q does not end in %q", l, word)
				}
			}
		})
	}
	// A variable that differs gets no digest for the array that differs.
	in := shared(t, "bp4/generated-lb")
	ds, store := input(t, in)
	out := rewrite(t, in, "--digest", "none")
	python(t, damagePy, out, "fields/Bx", "/data/2/meshes/fields/Bx", "flip")
	res, err := Check(context.Background(), store, ds, out, staged(t, out, catalog.SHA256), Options{FillDigests: true})
	if err != nil || res.OK {
		t.Fatalf("flipped byte: ok %v err %v", res.OK, err)
	}
	if _, ok := res.Digests[catalog.Key{Var: "fields/Bx", Step: 2}]; ok {
		t.Error("a digest for the array that differs")
	}
	if _, ok := res.Digests[catalog.Key{Var: "fields/rho", Step: 2}]; !ok {
		t.Error("no digest for an array of another variable that is equal")
	}
}

// Arrays verified in parallel: with two arrays of a variable that differ,
// the line names the first in step order, whichever finished first, and
// the other variables' lines still come in catalog order.
func TestParallelFirstDifference(t *testing.T) {
	in := shared(t, "bp4/generated-lb")
	ds, store := input(t, in)
	out := rewrite(t, in)
	python(t, damagePy, out, "fields/Bx", "/data/2/meshes/fields/Bx", "flip")
	python(t, damagePy, out, "fields/Bx", "/data/1/meshes/fields/Bx", "flip")
	for range 3 {
		ok, log := check(t, ds, store, out, Options{Jobs: 4, MaxMem: 1 << 30})
		lines := strings.Split(strings.TrimSpace(log), "\n")
		if ok || len(lines) < 3 || !strings.HasPrefix(lines[0], "DIFF fields/Bx step 1 level 0 at ") ||
			!strings.HasPrefix(lines[1], "OK  fields/id ") || !strings.HasPrefix(lines[2], "OK  fields/rho ") {
			t.Fatalf("ok %v:\n%s", ok, log)
		}
	}
}
