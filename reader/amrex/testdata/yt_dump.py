"""Dump an AMR dataset through yt (the oracle for reader/amrex and reader/chombo).

usage: yt_dump.py <dataset> <fieldtype> <outdir> [field ...]   (no fields = all)

Writes <outdir>/index.json: {"levels": n, "domain": [...], "level_domains":
[[...] per level: the domain's extent in the level's cells, domain width / the
level's grid spacing], "fields": [...], "grids": [{"level", "start", "dims"}]} and, per field i, <outdir>/<i>.bin: every
grid's values (float64 little endian, Fortran order: first index fastest),
grids concatenated in index order.
"""
import json
import os
import sys

import numpy as np
import yt

yt.set_log_level(50)
path, ftype, out = sys.argv[1], sys.argv[2], sys.argv[3]
ds = yt.load(path)
names = sys.argv[4:] or sorted(f for t, f in ds.field_list if t == ftype)
grids = sorted(ds.index.grids, key=lambda g: g.id)


def start(g):
    """The grid's lower corner in its level's index space.

    yt's Chombo frontend assumes every level refines by level 0's ref_ratio,
    so get_global_startindex() is off on files whose ratios differ per level
    (mushy-layer: 4 then 2); there the index is recomputed from yt's LeftEdge
    and the level's own cell size.
    """
    s = g.get_global_startindex()
    h = getattr(ds, "_handle", None)
    if ftype == "chombo" and h is not None:
        dx = float(h["level_%d" % g.Level].attrs["dx"])
        s = np.rint((g.LeftEdge - ds.domain_left_edge).d / dx)
    return [int(x) for x in s]


level_dds = {}
for g in grids:
    level_dds.setdefault(int(g.Level), g.dds.d)
nlev = int(ds.index.max_level) + 1
idx = {
    "levels": nlev,
    "domain": [int(x) for x in ds.domain_dimensions],
    "level_domains": [[int(x) for x in np.rint(ds.domain_width.d / level_dds[l])] for l in range(nlev)],
    "fields": names,
    "grids": [{"level": int(g.Level),
               "start": start(g),
               "dims": [int(x) for x in g.ActiveDimensions]} for g in grids],
}
for i, name in enumerate(names):
    with open(os.path.join(out, "%d.bin" % i), "wb") as f:
        for g in grids:
            v = np.asarray(g[(ftype, name)].d, dtype="<f8")
            f.write(v.tobytes(order="F"))
            g.clear_data()
with open(os.path.join(out, "index.json"), "w") as f:
    json.dump(idx, f)
