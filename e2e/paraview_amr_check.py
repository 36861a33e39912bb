"""Check relayout's OverlappingAMR views through ParaView's own reader.

Usage: pvpython paraview_amr_check.py OUT

Run under pvpython: ParaView 5.11's vtkHDFReader (VTK 9.2, the class the
VTKHDFReader proxy wraps; paraview.servermanager.Fetch cannot carry an
OverlappingAMR through its multiblock reduction, so the reader is run in
process). For every OverlappingAMR view the manifest OUT/relayout.json
lists, it opens OUT/<view> and, level by level and box by box, compares
with relayout's variable files read independently with h5py:

- the number of levels, and of boxes per level, with the level datasets'
  box tables (/data/<step>/relayout_boxes/...);
- each box's grid: its spacing is the level's gridSpacing (VTK's x the
  dataset's last axis), its origin is the level's gridGlobalOffset plus the
  table's lower corner times the spacing (x from the last axis), its cell
  counts are the box's;
- every value of every array of every box equals the level dataset at the
  box (h5py's dataset[box], row-major, x fastest in VTK);
- a 2-D level is a slab as thick as level 0's one cell along VTK's z: its
  refinement ratio to level 0 in cells, every layer equal to the box;
- every level's cells under the next level's boxes are blanked (vtkGhostType
  REFINEDCELL), as many as the finer boxes cover divided by the refinement,
  2-D and 3-D.

Prints one OK line per view; exits 1 with a DIFF line at the first mismatch.
"""

import json
import os
import sys

import h5py
import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOHDF import vtkHDFReader

REFINEDCELL = 8  # vtkDataSetAttributes::REFINEDCELL


def fail(msg):
    print("DIFF " + msg)
    sys.exit(1)


def grid_of(ds):
    """gridSpacing and gridGlobalOffset of a dataset, in its axes' order."""
    attrs = dict(ds.parent.attrs) if "gridSpacing" not in ds.attrs else {}
    attrs.update(ds.attrs)
    sp = np.array(attrs["gridSpacing"], dtype=float)
    off = np.array(attrs["gridGlobalOffset"], dtype=float)
    order = attrs.get("dataOrder", b"C")
    if (order.decode() if isinstance(order, bytes) else str(order)) == "F":
        sp, off = sp[::-1], off[::-1]
    return sp, off


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "relayout.json")) as fh:
        m = json.load(fh)
    views = [v for v in m.get("views") or [] if v["type"] == "OverlappingAMR"]
    if not views:
        fail("%s: the manifest lists no OverlappingAMR view" % out)
    for v in views:
        path = os.path.join(out, v["file"])
        r = vtkHDFReader()
        r.SetFileName(path)
        r.Update()
        amr = r.GetOutput()
        if amr is None or amr.GetClassName() != "vtkOverlappingAMR":
            fail("%s: %s, want vtkOverlappingAMR" % (path, amr and amr.GetClassName()))
        if amr.GetNumberOfLevels() != len(v["levels"]):
            fail("%s: %d levels, the manifest lists %d" % (path, amr.GetNumberOfLevels(), len(v["levels"])))
        values = boxes_total = rank = 0
        note = ""
        level_cells = []
        for lv in v["levels"]:
            L = lv["level"]
            arrays = lv["arrays"]
            tables = {}
            cells = 0
            for a in arrays:
                with h5py.File(os.path.join(out, a["file"]), "r") as f:
                    ds = f[a["path"]]
                    bpath = ds.attrs.get("boxes")
                    if bpath is None:
                        table = np.array([[[0] * ds.ndim, [n - 1 for n in ds.shape]]])
                    else:
                        table = f[bpath.decode() if isinstance(bpath, bytes) else bpath][()]
                    sp, origin = grid_of(ds)
                    sp, origin = sp[::-1], origin[::-1]  # VTK x: the last axis
                    n = amr.GetNumberOfDataSets(L)
                    if n != len(table):
                        fail("%s level %d: %d boxes, the box table of %s:%s has %d" % (path, L, n, a["file"], a["path"], len(table)))
                    for i in range(n):
                        g = amr.GetDataSet(L, i)
                        lo, hi = table[i][0], table[i][1]
                        count = hi - lo + 1
                        rank = ds.ndim
                        if not np.allclose(g.GetSpacing()[:rank], sp, rtol=1e-12, atol=0):
                            fail("%s level %d box %d: spacing %s, gridSpacing (x last) %s" % (path, L, i, g.GetSpacing(), sp))
                        vlo = np.rint((np.array(g.GetOrigin()[:rank]) - origin) / sp).astype(int)
                        dims = np.array(g.GetDimensions()) - 1
                        layers = int(round(amr.GetDataSet(0, 0).GetSpacing()[0] / sp[0])) if rank == 2 else 1
                        if list(vlo) != list(lo[::-1]) or list(dims[:rank]) != list(count[::-1]) or any(dims[rank:] != layers):
                            fail("%s level %d box %d: at %s with %s cells (x, y, z), the box table says lower %s count %s (z, y, x)"
                                 % (path, L, i, list(vlo), list(dims), list(lo), list(count)))
                        got = g.GetCellData().GetArray(a["name"])
                        if got is None:
                            fail("%s level %d box %d: no array %s" % (path, L, i, a["name"]))
                        got = vtk_to_numpy(got).reshape((layers,) * (3 - rank) + tuple(count))
                        want = ds[tuple(slice(l, h + 1) for l, h in zip(lo, hi))]
                        if rank == 2:
                            want = np.broadcast_to(want, got.shape)
                        if not np.array_equal(got, want, equal_nan=True):
                            bad = np.argwhere(~((got == want) | (np.isnan(got) & np.isnan(want))))[0]
                            fail("%s level %d box %d %s at %s: ParaView %r, %s:%s %r"
                                 % (path, L, i, a["name"], list(bad + lo), got[tuple(bad)], a["file"], a["path"], want[tuple(bad)]))
                        values += got.size
                        if a is arrays[0]:
                            cells += got.size
                            boxes_total += 1
            level_cells.append(cells)
        # Blanking: each level's cells under the next level's boxes.
        blank = []
        for L in range(len(level_cells) - 1):
            ratio = np.prod(np.array(amr.GetDataSet(L, 0).GetSpacing()) / np.array(amr.GetDataSet(L + 1, 0).GetSpacing()))
            blanked = 0
            for i in range(amr.GetNumberOfDataSets(L)):
                gh = amr.GetDataSet(L, i).GetCellData().GetArray("vtkGhostType")
                if gh is None:
                    fail("%s: level %d has no blanking (vtkGhostType)" % (path, L))
                blanked += int(np.count_nonzero(vtk_to_numpy(gh) & REFINEDCELL))
            if blanked != round(level_cells[L + 1] / ratio):
                fail("%s: %d level-%d cells blanked, level %d covers %d" % (path, blanked, L, L + 1, round(level_cells[L + 1] / ratio)))
            blank.append("%d of level %d" % (blanked, L))
        note = ", cells blanked under finer boxes: " + ", ".join(blank)
        print("OK %s: %d levels, %s boxes, %d values equal to the level datasets (h5py)%s"
              % (v["file"], len(v["levels"]), "+".join(str(lv["boxes"]) for lv in v["levels"]), values, note))


main()
