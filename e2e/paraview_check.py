"""Check relayout's ParaView views through ParaView's own reader.

Usage: pvpython paraview_check.py OUT [INPUT_RULE_FILE]

Run under pvpython (paraview.simple, ParaView 5.11's VTKHDFReader). For every
view the manifest OUT/relayout.json lists, it opens OUT/<view> with ParaView,
fetches every array and compares every value, point by point, with the
variable's dataset read independently with h5py (its own file and path, not
the view), VTK's point id p = vx + nx*(vy + ny*vz) being the array's row-major
index with vx its last axis. With INPUT_RULE_FILE (a file written by relayout
generate, whose root attribute value_rule gives every element as a function
of its index) the values are also compared with that rule.

Orientation: for points at the corners of the array and at fixed interior
indices, the physical position is computed from the variable's own openPMD
attributes (gridGlobalOffset, gridSpacing, position, axisLabels, dataOrder)
read with h5py, and ParaView's ProbeLocation at that position must return the
array's element at that index: a transposed or mirrored view fails here.
Also checks each view's extent against the array's shape, axis by axis.

Prints one OK line per view; exits 1 with a DIFF line at the first mismatch.
"""

import json
import os
import sys

import h5py
import numpy as np
from paraview import servermanager as sm
from paraview.simple import Delete, ProbeLocation, VTKHDFReader
from vtkmodules.util.numpy_support import vtk_to_numpy

COMPONENTS = ["E/x", "E/y", "E/z", "rho"]  # internal/gen's components, comp = index


def fail(msg):
    print("DIFF " + msg)
    sys.exit(1)


def strs(v):
    if isinstance(v, bytes):
        return [v.decode()]
    if isinstance(v, str):
        return [v]
    return [x.decode() if isinstance(x, bytes) else str(x) for x in v]


def geometry(f, path):
    """The openPMD attributes of a dataset, record attributes first."""
    attrs = {}
    ds = f[path]
    if "gridSpacing" not in ds.attrs:
        attrs.update(ds.parent.attrs)
    attrs.update(ds.attrs)
    rank = ds.ndim
    spacing = np.array(attrs["gridSpacing"], dtype=float)
    offset = np.array(attrs["gridGlobalOffset"], dtype=float)
    pos = np.array(attrs.get("position", np.zeros(rank)), dtype=float)
    labels = strs(attrs["axisLabels"])
    if len(pos) != rank:  # one value for every axis (Quokka writes three for 2-D), else nodes
        pos = np.full(rank, pos[0] if len(pos) and (pos == pos[0]).all() else 0.0)
    if strs(attrs.get("dataOrder", b"C"))[0] == "F":
        spacing, offset, pos, labels = spacing[::-1], offset[::-1], pos[::-1], labels[::-1]
    return spacing, offset, pos, labels


def physical(idx, shape, spacing, offset, pos, labels):
    """ParaView's (X, Y, Z) of the array element at idx, nudged a millionth
    of a cell inwards on the faces (a point on the face may round outside)."""
    p = [0.0, 0.0, 0.0]
    known = all(lab.lower() in "xyz" and len(lab) == 1 for lab in labels) and len(set(labels)) == len(labels)
    for d, i in enumerate(idx):
        axis = "xyz".index(labels[d].lower()) if known else len(idx) - 1 - d
        nudge = 1e-6 if i == 0 else -1e-6 if i == shape[d] - 1 else 0.0
        p[axis] = offset[d] + (i + pos[d] + nudge) * spacing[d]
    return p


def main():
    out = sys.argv[1]
    rule = None
    if len(sys.argv) > 2:
        with h5py.File(sys.argv[2], "r") as g:
            rule = g.attrs["value_rule"].decode()
    with open(os.path.join(out, "relayout.json")) as fh:
        m = json.load(fh)
    views = m.get("views") or []
    if not views:
        fail("%s: the manifest lists no views" % out)
    arrays_checked = 0
    for v in views:
        if v["type"] != "ImageData":
            continue  # paraview_amr_check.py, paraview_particles_check.py; GDF: yt
        path = os.path.join(out, v["file"])
        r = VTKHDFReader(FileName=[path])
        r.UpdatePipeline()
        d = sm.Fetch(r)
        if d.GetClassName() != "vtkImageData":
            fail("%s: %s, want vtkImageData" % (path, d.GetClassName()))
        dims = d.GetDimensions()
        pd = d.GetPointData()
        names = sorted(pd.GetArrayName(i) for i in range(pd.GetNumberOfArrays()))
        want_names = sorted(a["name"] for a in v["arrays"])
        if names != want_names:
            fail("%s: arrays %s, want %s" % (path, names, want_names))
        for a in v["arrays"]:
            with h5py.File(os.path.join(out, a["file"]), "r") as f:
                want = f[a["path"]][()]
                spacing, offset, pos, labels = geometry(f, a["path"])
            shape = want.shape
            padded = tuple(shape) + (1,) * (3 - len(shape))
            if tuple(dims) != tuple(reversed(padded)):
                fail("%s: %s: dimensions %s, want %s (the array's shape %s reversed)" % (path, a["name"], dims, tuple(reversed(padded)), shape))
            got = vtk_to_numpy(pd.GetArray(a["name"]))
            flat = want.ravel(order="C")
            if got.shape != flat.shape or got.dtype != flat.dtype:
                fail("%s: %s: %s %s, want %s %s" % (path, a["name"], got.dtype, got.shape, flat.dtype, flat.shape))
            same = (got == flat) | (np.isnan(got) & np.isnan(flat)) if got.dtype.kind == "f" else got == flat
            if not same.all():
                p = int(np.argmin(same))
                fail("%s: %s: point %d (array index %s) is %r, want %r" % (path, a["name"], p, np.unravel_index(p, shape), got[p], flat[p]))
            if rule is not None:
                if len(shape) != 3:
                    fail("%s: %s: value rule needs 3-D, got %s" % (path, a["name"], shape))
                i, j, k = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
                NX, NY, NZ = shape
                expect = eval(rule, {"float64": np.float64}, {"step": v["step"], "NX": NX, "NY": NY, "NZ": NZ,
                                                                "i": i, "j": j, "k": k, "comp": COMPONENTS.index(a["var"])})
                bad = got != expect.ravel(order="C")
                if bad.any():
                    p = int(np.argmax(bad))
                    fail("%s: %s: point %d is %r, the value rule gives %r" % (path, a["name"], p, got[p], expect.ravel()[p]))
            # Orientation: probe at the physical position of known indices.
            samples = {tuple(c) for c in np.ndindex(*([2] * len(shape)))}
            samples = [tuple((n - 1) * c for n, c in zip(shape, s)) for s in samples]
            samples += [tuple((n * q) // 7 for n in shape) for q in (1, 3, 5)]
            samples += [tuple(min(n - 1, q + d) for d, n in enumerate(shape)) for q in (1, 2)]
            for idx in samples:
                at = physical(idx, shape, spacing, offset, pos, labels)
                probe = ProbeLocation(Input=r, ProbeType="Fixed Radius Point Source")
                probe.ProbeType.Center = at
                pv = sm.Fetch(probe).GetPointData().GetArray(a["name"])
                val = pv.GetValue(0) if pv is not None else None
                w = float(want[idx])
                Delete(probe)
                # Interpolation weights at a grid point are 1 within rounding:
                # a tolerance far below one grid step of these values.
                tol = 1e-7 * max(1.0, float(np.nanmax(np.abs(flat))) if flat.dtype.kind in "fiu" else 1.0)
                if val is None or not (abs(val - w) <= tol or (np.isnan(w) and np.isnan(val))):
                    fail("%s: %s: ParaView's probe at %s (array index %s) gives %r, want %r: the view is not oriented as the array" % (path, a["name"], at, idx, val, w))
            arrays_checked += 1
        Delete(r)
        print("OK  %s  %d arrays, dimensions %s" % (v["file"], len(v["arrays"]), dims))
    print("OK  %d views, %d arrays" % (len(views), arrays_checked))


main()
