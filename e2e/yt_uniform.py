"""yt reads relayout's series.h5 of a uniform openPMD output (yt's openPMD frontend).

Usage: python3 yt_uniform.py OUT INPUT_DIR

For every iteration yt finds in OUT/series.h5 it checks the domain's
dimensions against the input's array shape, axis by axis (a non-cubic array
catches a transposition), and compares every element of every mesh field of
the covering grid with the input file of that iteration read with h5py
(INPUT_DIR/data%08d.h5, as relayout generate names them).
"""

import sys

import h5py
import numpy as np
import yt

out, indir = sys.argv[1], sys.argv[2]
n = 0
for ds in yt.load(out + "/series.h5"):
    step = int(ds.iteration) if hasattr(ds, "iteration") else int(ds.current_time)
    with h5py.File("%s/data%08d.h5" % (indir, step), "r") as f:
        meshes = f["/data/%d/meshes" % step]
        arrays = {}
        meshes.visititems(lambda name, o: arrays.__setitem__(name, o[()]) if isinstance(o, h5py.Dataset) else None)
    shape = next(iter(arrays.values())).shape
    if tuple(int(x) for x in ds.domain_dimensions) != shape:
        print("DIFF step %d: yt's domain %s, the input's arrays %s" % (step, ds.domain_dimensions, shape))
        sys.exit(1)
    cg = ds.covering_grid(0, ds.domain_left_edge, ds.domain_dimensions)
    for name, want in arrays.items():
        got = cg[("openPMD", name.replace("/", "_"))].v
        if not np.array_equal(got, want):
            print("DIFF step %d %s: yt's values differ from the input's" % (step, name))
            sys.exit(1)
        n += 1
    print("OK  step %d: %d fields, domain %s" % (step, len(arrays), shape))
print("OK  %d fields" % n)
