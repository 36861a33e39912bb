"""Dump every FArrayBox data set of a Chombo file through h5py (the oracle for
per-variable checkpoint arrays, which yt does not read).

usage: h5py_dump.py <file> <outdir>

<outdir>/index.json: {"<level>/<set>": {"comps": n, "lo": [[...]], "dims": [[...]]}};
<outdir>/<level>.<set>.<c>.bin: the valid cells of every box of component c,
float64 little endian, Fortran order, boxes concatenated.
"""
import json
import sys

import h5py
import numpy as np

path, out = sys.argv[1], sys.argv[2]
idx = {}
with h5py.File(path, "r") as f:
    dim = int(f["Chombo_global"].attrs["SpaceDim"])
    ax = "ijk"[:dim]
    for lname in sorted(k for k in f if k.startswith("level_")):
        lv = f[lname]
        boxes = lv["boxes"][()]
        lo = [[int(b["lo_" + a]) for a in ax] for b in boxes]
        hi = [[int(b["hi_" + a]) for a in ax] for b in boxes]
        for key in lv:
            if not key.endswith(":datatype=0"):
                continue
            s = key[: -len(":datatype=0")]
            attrs = lv[s + "_attributes"].attrs
            if attrs.get("objectType", b"FArrayBox") != b"FArrayBox":
                continue
            g = attrs["outputGhost"]
            ghost = [int(g["intvect" + a]) for a in ax]
            comps = int(attrs["comps"])
            data = lv[key][()]
            offs = lv[s + ":offsets=0"][()]
            dims = [[h - l + 1 for l, h in zip(L, H)] for L, H in zip(lo, hi)]
            idx["%s/%s" % (lname[6:], s)] = {"comps": comps, "lo": lo, "dims": dims}
            for c in range(comps):
                with open("%s/%s.%s.%d.bin" % (out, lname[6:], s, c), "wb") as w:
                    for b, d in enumerate(dims):
                        st = [n + 2 * gh for n, gh in zip(d, ghost)]
                        n = int(np.prod(st))
                        a = data[offs[b] + c * n: offs[b] + (c + 1) * n].reshape(st, order="F")
                        sl = tuple(slice(gh, gh + n) for gh, n in zip(ghost, d))
                        w.write(np.asarray(a[sl], dtype="<f8").tobytes(order="F"))
with open(out + "/index.json", "w") as w:
    json.dump(idx, w)
