"""Check the units and values of relayout's yt view (GDF) of an openPMD
mesh-refinement output (amr_gen.py's series).

Usage: python3 yt_gdf_units.py OUT/view-amr_<step>.gdf NAME=UNITS...

yt.load of the view (yt's gdf frontend): for every NAME=UNITS, the field's
units as yt reports them (field_info and a data object's array) equal
UNITS as yt parses it (so "kg*m/(A*s**3)" may be given as "V/m"); every
grid of every field equals, element by element, the box of the level
dataset it maps (read with h5py from the files the manifest OUT/relayout.json
lists). Prints OK lines; exits 1 with a DIFF line at the first mismatch.
"""

import json
import os
import sys

import h5py
import numpy as np
import yt
from yt.units import Unit


def fail(msg):
    print("DIFF " + msg)
    sys.exit(1)


def main():
    yt.set_log_level(40)
    gdf = sys.argv[1]
    out = os.path.dirname(gdf)
    ds = yt.load(gdf)
    ds.index  # field_info is made with the index
    for arg in sys.argv[2:]:
        name, want = arg.split("=", 1)
        fi = ds.field_info[("gdf", name)]
        got = ds.r[("gdf", name)].units
        if Unit(fi.units) != Unit(want) or got != Unit(want):
            fail("%s: yt's units %r (field_info %r), want %r" % (name, str(got), fi.units, want))
        print("OK %s: yt's units %s = %s" % (name, got, want))
    with open(os.path.join(out, "relayout.json")) as fh:
        man = json.load(fh)
    view = next(v for v in man["views"] if v["file"] == os.path.basename(gdf))
    values = 0
    for g in ds.index.grids:
        lo = np.asarray(g.get_global_startindex()).astype(int)
        n = g.ActiveDimensions
        for a in view["levels"][g.Level]["arrays"]:
            with h5py.File(os.path.join(out, a["file"]), "r") as f:
                lvl = f[a["path"]]
                sl = tuple(slice(lo[d], lo[d] + n[d]) for d in range(lvl.ndim))
                want = lvl[sl].reshape(tuple(n))
            got = g[("gdf", a["name"])].d
            if not np.array_equal(got, want):
                fail("grid %d (level %d at %s) %s differs from %s:%s" % (g.id, g.Level, lo, a["name"], a["file"], a["path"]))
            values += got.size
    print("OK %s: %d grids on %d levels, %d values equal to the level datasets" % (gdf, ds.index.num_grids, ds.index.max_level + 1, values))


main()
