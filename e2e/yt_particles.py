"""yt's particles from a relayout output against the input (for ytparticles_test.go).

usage: yt_particles.py write IN_FILE
    writes with openPMD-api an HDF5 series (iteration 100): mesh rho 8x8x8
    over [0, 8)^3 and species "electrons" of 50 particles inside it
    (position x, y, z = 0.5 + 0.1 n + 0, 0.5, 1; positionOffset 0; weighting 1).
usage: yt_particles.py check IN_FILE OUT
    yt (4.1's openPMD frontend) on IN_FILE and on OUT/series.h5 by relative
    and by absolute path: the same particles (count and positions), without
    and with the workaround of the README (yt looks species' records up as
    "/position" and "/particlePatches/numParticles", which h5py resolves from
    the file root: the KeyError is swallowed and no particle grid made).
    With the workaround every particle must be seen.
"""
import importlib
import inspect
import os
import sys
import textwrap

import numpy as np

N = 50


def write(path):
    import openpmd_api as io
    s = io.Series(path, io.Access.create)
    it = s.iterations[100]
    m = it.meshes["rho"]
    m.grid_spacing, m.grid_global_offset, m.axis_labels = [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], ["x", "y", "z"]
    rc = m[io.Mesh_Record_Component.SCALAR]
    rc.reset_dataset(io.Dataset(np.dtype("float64"), [8, 8, 8]))
    rc.store_chunk(np.arange(512, dtype=np.float64).reshape(8, 8, 8), [0, 0, 0], [8, 8, 8])
    e = it.particles["electrons"]
    for k, c in enumerate("xyz"):
        for rec, val in (("position", 0.5 + 0.1 * np.arange(N) + 0.5 * k), ("positionOffset", np.zeros(N))):
            r = e[rec][c]
            r.reset_dataset(io.Dataset(np.dtype("float64"), [N]))
            r.store_chunk(np.ascontiguousarray(val))
    w = e["weighting"][io.Record_Component.SCALAR]
    w.reset_dataset(io.Dataset(np.dtype("float64"), [N]))
    w.store_chunk(np.ones(N))
    s.flush()
    s.close()


def workaround():
    # The README's workaround: _count_grids with the species' records
    # looked up relative to the species group (no leading "/").
    m = importlib.import_module("yt.frontends.open_pmd.data_structures")
    src = textwrap.dedent(inspect.getsource(m.OpenPMDHierarchy._count_grids))
    src = src.replace('species["/', 'species["')
    ns = {}
    exec(src, m.__dict__, ns)
    m.OpenPMDHierarchy._count_grids = ns["_count_grids"]


def positions(fn):
    import yt
    yt.set_log_level(50)
    ds = yt.load(fn)
    if hasattr(ds, "_pre_outputs"):
        ds = ds[100]
    ad = ds.all_data()
    return np.sort(np.asarray(ad["io", "particle_position_x"].d))


def check(inp, out):
    paths = [os.path.join(out, "series.h5"), os.path.abspath(os.path.join(out, "series.h5"))]
    bad = []
    for fixed in (False, True):
        if fixed:
            workaround()
        want = positions(inp)
        for p in paths:
            got = positions(p)
            same = got.shape == want.shape and np.array_equal(got, want)
            print(("OK " if same else "BAD ") + f"yt {'with' if fixed else 'without'} the workaround: {p}: {got.size} particles, input {want.size}")
            if not same:
                bad.append(p)
        if fixed and want.size != N:
            bad.append(f"the workaround shows {want.size} of {N} input particles")
            print(f"BAD the workaround shows {want.size} of {N} input particles")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
