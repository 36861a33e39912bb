#!/usr/bin/python3
"""holes.py IN.bp VAR OUT.h5 DATASET [SERIES MESH COMPONENT] - checks a relayout output of a
partly covered ADIOS2 array.

Reads VAR of IN.bp block by block through the adios2 Python API (the reference reader) and
DATASET of OUT.h5 through h5py, and checks that every block's values equal the output's at the
block's box, and that every element no block covers (a hole) reads NaN. Prints one JSON line:
{"blocks": n, "covered_bytes": b, "holes": h, "chunks": [...] or null, "fillvalue": "nan" or
repr, "file_bytes": size} and exits 1 listing the mismatches when there are any. With SERIES
(OUT/series.h5), openPMD-api also loads MESH/COMPONENT of iteration 0 from it, which must equal
what h5py read, NaN for NaN, and so must yt's covering grid of ('openPMD', '<MESH>_<COMPONENT>')
from SERIES (when yt is installed).
"""
import json, math, os, sys

import adios2
import h5py
import numpy as np

inp, var, out, path = sys.argv[1:5]
problems = []
with h5py.File(out, "r") as f:
    d = f[path]
    got = d[...]
    chunks = d.chunks
    fv = d.fillvalue
covered = np.zeros(got.shape, bool)
nblocks = 0
covered_bytes = 0
with adios2.FileReader(inp) as r:
    v = r.inquire_variable(var)
    for bi, b in enumerate(r.all_blocks_info(var)[0]):
        start = [int(x) for x in b["Start"].split(",")]
        count = [int(x) for x in b["Count"].split(",")]
        v.set_block_selection(bi)
        want = r.read(v)
        sl = tuple(slice(s, s + c) for s, c in zip(start, count))
        if not np.array_equal(got[sl], want):
            problems.append("block %d at %s: values differ" % (bi, start))
        covered[sl] = True
        nblocks += 1
        covered_bytes += want.nbytes
holes = got[~covered]
if not np.all(np.isnan(holes)):
    problems.append("%d of %d hole elements do not read NaN" % (np.count_nonzero(~np.isnan(holes)), holes.size))
if len(sys.argv) > 5:
    import openpmd_api as io
    series, mesh, comp = sys.argv[5:8]
    ser = io.Series(series, io.Access.read_only)
    it = ser.iterations[next(iter(ser.iterations))]
    rc = it.meshes[mesh][comp]
    pmd = rc.load_chunk()
    ser.flush()
    if not np.array_equal(pmd, got, equal_nan=True):
        problems.append("openPMD-api reads %s/%s of %s unlike h5py" % (mesh, comp, series))
    ser.close()
    try:
        import yt
    except ImportError:
        yt = None
    if yt is not None:
        yt.set_log_level(50)
        ds = yt.load(series)
        if hasattr(ds, "_pre_outputs"):  # a group-based series
            ds = ds[0]
        field = ("openPMD", mesh.replace("/", "_") + "_" + comp)
        g = np.asarray(ds.covering_grid(0, ds.domain_left_edge, ds.domain_dimensions)[field])
        if not np.array_equal(g, got, equal_nan=True):
            problems.append("yt reads %s of %s unlike h5py" % (field, series))
print(json.dumps({"blocks": nblocks, "covered_bytes": covered_bytes, "holes": int(holes.size),
                  "chunks": list(chunks) if chunks else None,
                  "fillvalue": "nan" if isinstance(fv, float) and math.isnan(fv) else repr(fv),
                  "file_bytes": os.path.getsize(out), "problems": problems}))
sys.exit(1 if problems else 0)
