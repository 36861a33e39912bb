package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"relayout/internal/testkit"
)

// overlapWriter writes a BP4 file through ADIOS2 with a 16x16 float64 "f"
// in two blocks that overlap in rows 6..9 (a halo) and leave rows 14..15
// uncovered, and an int32 "n" covering rows 0..9. With "disagree", element
// [7,3] of the second block differs from the first's.
const overlapWriter = `
import sys
import numpy as np
import adios2
path, mode = sys.argv[1], sys.argv[2]
N = 16
adios = adios2.Adios()
io = adios.declare_io("w")
io.set_engine("BP4")
i, j = np.indices((N, N))
val = (i * N + j).astype(np.float64)
with adios2.Stream(io, path, "w") as s:
    for _ in s.steps(1):
        a, b = val[0:10].copy(), val[6:14].copy()
        if mode == "disagree":
            b[1, 3] += 1.0
        s.write("f", a, [N, N], [0, 0], [10, N])
        s.write("f", b, [N, N], [6, 0], [8, N])
        s.write("n", (i * N + j).astype(np.int32)[0:10].copy(), [N, N], [0, 0], [10, N])
`

// holeCheck reads f and n of OUT with h5py: covered elements equal i*16+j,
// holes read as the dataset's fill value, NaN for f and 0 for n.
const holeCheck = `
import sys, json, h5py, numpy as np
out = sys.argv[1]
m = json.load(open(out + "/relayout.json"))
N = 16
i, j = np.indices((N, N))
for v in m["variables"]:
    d = m["variables"][m["variables"].index(v)]["datasets"][0]
    with h5py.File(out + "/" + v["file"], "r") as f:
        ds = f[d["path"]]
        got = ds[()]
        rows = 14 if v["name"] == "f" else 10
        want = np.where(i < rows, i * N + j, np.nan if v["name"] == "f" else 0).astype(got.dtype)
        fill = ds.fillvalue
        ok = np.array_equal(got, want, equal_nan=True) and (np.isnan(fill) if v["name"] == "f" else fill == 0)
        print("%s %s %s holes=%d fill=%r %s" % ("OK " if ok else "BAD", v["name"], d["layout"], N * N - rows * N, fill, "" if ok else got))
        if not ok:
            sys.exit(1)
`

// TestOverlapsAndHoles: blocks that overlap with equal values (a halo) are
// rewritten in every layout, and the holes read back through h5py as the
// fill value (NaN for floats, 0 for integers); blocks that overlap with
// different values are refused as corrupt input (exit 2) naming both, with
// nothing under OUT's final names.
func TestOverlapsAndHoles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, mode string) string {
		path := filepath.Join(dir, name)
		testkit.PeersPython(t, "-c", overlapWriter, path, mode)
		return path
	}
	agree, disagree := write("agree.bp", "agree"), write("disagree.bp", "disagree")
	layouts := [][]string{{"--layout", "contiguous"}, {"--layout", "chunked", "--chunks", "2x2"}, {"--layout", "merged"},
		{"--layout", "contiguous", "--resume"}, {"--layout", "chunked", "--chunks", "2x2", "--resume"}}
	for k, l := range layouts {
		out := filepath.Join(dir, "agree", string(rune('a'+k)))
		mustRun(t, append([]string{"run", agree, "-o", out, "-q"}, l...)...)
		cmd := exec.Command(python, "-c", holeCheck, out)
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: h5py: %v\n%s", l, err, b.String())
		}
		t.Logf("%v:\n%s", l, b.String())
		out = filepath.Join(dir, "disagree", string(rune('a'+k)))
		r := relayout(t, append([]string{"run", disagree, "-o", out, "-q"}, l...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "block 0 [0:10,0:16]") || !strings.Contains(r.stderr, "block 1 [6:14,0:16]") ||
			!strings.Contains(r.stderr, "different values (first at [7,3])") {
			t.Fatalf("%v: disagreeing overlap: exit %d\n%s", l, r.code, r.stderr)
		}
		if names := finalNames(t, out); len(names) > 0 {
			t.Fatalf("%v: disagreeing overlap left %v under final names", l, names)
		}
	}
}
