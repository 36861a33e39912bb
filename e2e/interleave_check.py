"""interleave_check.py IN OUT: every variable bp_gen.py wrote, read from the
BP input through ADIOS2's Python API and from relayout's output through
h5py, compared element by element (fine/Ez, partly covered, against its
value rule where covered and NaN elsewhere)."""
import json, os, sys
import numpy as np
import h5py
import adios2

inp, out = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(out, "relayout.json")))
got = {}
for v in m["variables"]:
    for d in v["datasets"]:
        if d["step"] == 0 and d.get("shape"):
            with h5py.File(os.path.join(out, v["file"]), "r") as f:
                got[v["name"]] = f[d["path"]][...]
with adios2.FileReader(inp) as r:
    n = None
    for name in ("fields/Bx", "fields/rho", "fields/id"):
        want = r.read(name)
        n = want.shape[0]
        if not np.array_equal(want, got[name]):
            sys.exit("%s differs from ADIOS2's read at %d elements" % (name, int(np.sum(want != got[name]))))
    ez = got["fine/Ez"]
    lin = np.arange(n ** 3, dtype="f8").reshape(n, n, n)
    cov = ~np.isnan(ez)
    if not cov.any() or cov.all():
        sys.exit("fine/Ez covers %d of %d elements" % (int(cov.sum()), ez.size))
    if not np.array_equal(ez[cov], -lin[cov]):
        sys.exit("fine/Ez differs from its value rule")
print("ok: %d variables equal ADIOS2's reads" % len(got))
