package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"relayout/catalog"
)

// h5Digests computes, with h5py and hashlib (not relayout), the sha256 of
// the row-major little-endian bytes of every dataset and constant record
// the manifest of out lists: "var step level" -> hex.
const h5DigestsPy = `
import sys, json, hashlib, os
import numpy as np, h5py
out = sys.argv[1]
m = json.load(open(os.path.join(out, "relayout.json")))
res = {}
for v in m["variables"]:
    with h5py.File(os.path.join(out, v["file"]), "r") as f:
        for d in v.get("datasets") or []:
            a = f[d["path"]][...]
            a = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<")))
            res["%s %d %d" % (v["name"], d["step"], d.get("level", 0))] = hashlib.sha256(a.tobytes()).hexdigest()
        for d in v.get("constants") or []:
            g = f[d["path"]]
            val = np.asarray(g.attrs["value"]).reshape(1)
            val = val.astype(val.dtype.newbyteorder("<"))
            n = int(np.prod(g.attrs["shape"]))
            res["%s %d %d" % (v["name"], d["step"], d.get("level", 0))] = hashlib.sha256(np.repeat(val, n).tobytes()).hexdigest()
print(json.dumps(res))
`

func h5Digests(t *testing.T, out string) map[string]string {
	t.Helper()
	var res map[string]string
	if err := json.Unmarshal([]byte(python(t, h5DigestsPy, out)), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func keyString(k catalog.Key) string { return fmt.Sprintf("%s %d %d", k.Var, k.Step, k.Level) }

// Check returns the digest of every dataset and constant record it
// verified, equal to the sha256 h5py's bytes give; with --digest none and
// FillDigests the constant records' digests are computed too and the lines
// say so.
func TestDigests(t *testing.T) {
	for _, c := range []struct {
		data  string
		flags []string
	}{
		{"bp4/generated-lb", []string{"--layout", "chunked", "--chunks", "2x2x2"}},
		{"bp4/generated-lb", []string{"--digest", "none"}},
		{"hdf5/openpmd-femm/example-femm-3d.h5", []string{"--digest", "none"}},
		{"hdf5/fbpic", []string{"--layout", "merged"}},
	} {
		t.Run(filepath.Base(c.data)+strings.Join(c.flags, ""), func(t *testing.T) {
			in := shared(t, c.data)
			ds, store := input(t, in)
			out := rewrite(t, in, c.flags...)
			want := h5Digests(t, out)
			var log strings.Builder
			none := len(c.flags) > 0 && c.flags[0] == "--digest"
			res, err := Check(context.Background(), store, ds, out, nil, Options{Log: &log, FillDigests: none})
			if err != nil || !res.OK {
				t.Fatalf("ok %v err %v\n%s", res.OK, err, log.String())
			}
			if len(res.Digests) != len(want) || len(want) == 0 {
				t.Errorf("%d digests returned, h5py computed %d", len(res.Digests), len(want))
			}
			for k, sum := range res.Digests {
				if w := want[keyString(k)]; sum != w {
					t.Errorf("%s: digest %s, h5py %s", keyString(k), sum, w)
				}
			}
			if none && (strings.Contains(log.String(), "not recorded") || !strings.Contains(log.String(), "sha256 computed")) {
				t.Errorf("--digest none with FillDigests:\n%s", log.String())
			}
		})
	}
	// A variable that differs gets no digest for the array that differs.
	in := shared(t, "bp4/generated-lb")
	ds, store := input(t, in)
	out := rewrite(t, in, "--digest", "none")
	python(t, damagePy, out, "fields/Bx", "/data/2/meshes/fields/Bx", "flip")
	res, err := Check(context.Background(), store, ds, out, nil, Options{FillDigests: true})
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
