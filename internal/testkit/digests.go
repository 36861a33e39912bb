package testkit

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// h5DigestsPy computes, with h5py, hashlib, python3-xxhash and b3sum (not
// relayout), the sha256, the BLAKE3 and the XXH64 (seed 0) of the row-major
// little-endian bytes of every dataset and constant record (its value
// repeated over its shape) the manifest of OUT lists.
const h5DigestsPy = `
import sys, json, hashlib, os, subprocess
import numpy as np, h5py, xxhash
out = sys.argv[1]
m = json.load(open(os.path.join(out, "relayout.json")))
res = {}
for v in m["variables"]:
    with h5py.File(os.path.join(out, v["file"]), "r") as f:
        for kind in ("datasets", "constants"):
            for d in v.get(kind) or []:
                if kind == "datasets":
                    a = f[d["path"]][...]
                else:
                    g = f[d["path"]]
                    val = np.asarray(g.attrs["value"]).reshape(1)
                    a = np.repeat(val, int(np.prod(g.attrs["shape"])))
                b = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"))).tobytes()
                res["%s %d %d" % (v["name"], d["step"], d.get("level", 0))] = {
                    "sha256": hashlib.sha256(b).hexdigest(), "xxh64": xxhash.xxh64(b).hexdigest(),
                    "blake3": subprocess.run(["b3sum", "--no-names"], input=b, capture_output=True, check=True).stdout.split()[0].decode()}
print(json.dumps(res))
`

// H5Digests reads every dataset and constant record of the relayout output
// out with h5py and returns, by "var step level", their digests by
// algorithm name ("sha256", "blake3", "xxh64") computed by hashlib, b3sum and
// python3-xxhash.
func H5Digests(t testing.TB, out string) map[string]map[string]string {
	t.Helper()
	b, err := exec.Command(Python, "-c", h5DigestsPy, out).CombinedOutput()
	if err != nil {
		t.Fatalf("digests (h5py, hashlib, b3sum, python3-xxhash) of %s: %v\n%s", out, err, b)
	}
	var res map[string]map[string]string
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("digests of %s: %v\n%s", out, err, b)
	}
	return res
}
