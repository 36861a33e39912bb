"""Check relayout's particle views through ParaView's own reader.

Usage: pvpython paraview_particles_check.py OUT

For every UnstructuredGrid view the manifest OUT/relayout.json lists,
ParaView 5.11's vtkHDFReader (VTK 9.2) opens OUT/<view> and this compares
it with relayout's variable files read with h5py: as many points and cells
as the manifest's particles, every cell a VERTEX of its own point; each
column of the points equals the position component the manifest maps
there (a column no component maps is 0), every PointData array the record
component it maps, element by element. Prints one OK line per view; exits
1 with a DIFF line at the first mismatch.
"""

import json
import os
import sys

import h5py
import numpy as np
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOHDF import vtkHDFReader

VTK_VERTEX = 1


def fail(msg):
    print("DIFF " + msg)
    sys.exit(1)


def read(out, a):
    with h5py.File(os.path.join(out, a["file"]), "r") as f:
        return f[a["path"]][()]


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "relayout.json")) as fh:
        m = json.load(fh)
    views = [v for v in m.get("views") or [] if v["type"] == "UnstructuredGrid"]
    if not views:
        fail("%s: the manifest lists no particle view" % out)
    for v in views:
        path = os.path.join(out, v["file"])
        r = vtkHDFReader()
        r.SetFileName(path)
        r.Update()
        ug = r.GetOutput()
        n = v["points"]
        if ug is None or ug.GetClassName() != "vtkUnstructuredGrid":
            fail("%s: %s, want vtkUnstructuredGrid" % (path, ug and ug.GetClassName()))
        if ug.GetNumberOfPoints() != n or ug.GetNumberOfCells() != n:
            fail("%s: %d points, %d cells; the manifest says %d particles" % (path, ug.GetNumberOfPoints(), ug.GetNumberOfCells(), n))
        types = vtk_to_numpy(ug.GetCellTypesArray())
        conn = vtk_to_numpy(ug.GetCells().GetConnectivityArray())
        if not (types == VTK_VERTEX).all() or not np.array_equal(conn, np.arange(n)):
            fail("%s: cells are not one VERTEX a point" % path)
        pts = vtk_to_numpy(ug.GetPoints().GetData())
        mapped = set()
        for a in v["arrays"]:
            want = read(out, a)
            if a["name"].startswith("Points/"):
                c = "xyz".index(a["name"][len("Points/"):])
                got = pts[:, c]
                mapped.add(c)
            else:
                arr = ug.GetPointData().GetArray(a["name"])
                if arr is None:
                    fail("%s: no point array %s" % (path, a["name"]))
                got = vtk_to_numpy(arr)
            if not np.array_equal(got, want):
                i = int(np.argwhere(got != want)[0][0])
                fail("%s %s at particle %d: ParaView %r, %s:%s %r" % (path, a["name"], i, got[i], a["file"], a["path"], want[i]))
        for c in set(range(3)) - mapped:
            if not (pts[:, c] == 0).all():
                fail("%s: column %d of the points, which no position component maps, is not 0" % (path, c))
        print("OK %s: %d particles, VERTEX cells, points %s and %d point arrays equal to the record components (h5py)"
              % (v["file"], n, "".join(sorted(a["name"][-1] for a in v["arrays"] if a["name"].startswith("Points/"))),
                 sum(not a["name"].startswith("Points/") for a in v["arrays"])))


main()
