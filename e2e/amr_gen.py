"""Write an openPMD mesh-refinement series with openPMD-api (for amr_test.go).

usage: amr_gen.py write OUT_FILE   (openpmd.bp, openpmd.bp4 or openpmd.h5: the backend by extension)
usage: amr_gen.py check IN OUT SPARSE
    openPMD-api reads OUT/series.h5: rho, rho_lvl1 and E_lvl1 (x, y) with
    refinementRatio [2, 2], every patch cell by the rule and every other
    cell of a level NaN (SPARSE=1), else what openPMD-api reads there in IN
    (HDF5 input: the dataset is dense, its holes hold the file's fill); h5py: each level dataset in its file is chunked,
    its box table lists the patches and, with SPARSE=1 (BP input, whose
    patches are its blocks), only the chunks the patches touch are allocated.

Iteration 100, meshes: "rho" (16x16, level 0, every cell i*100 + j; a charge
density, unitDimension I T / L^3, unitSI 1e-3 on every level), "E" (16x16,
level 0, components x and y, cell (i, j) of component c 10000 * (c + 1) + i * 100
+ j; an electric field, unitDimension M L / (I T^3), unitSI 1), 2-D particles
"e" (100, position x and y, positionOffset constant 0, weighting) and, as the
openPMD MeshRefinement extension describes, "rho_lvl1" (scalar) and "E_lvl1"
(components x, y) of 32x32 (level 0 refined by 2, refinementRatio [2, 2])
holding two patches stored as chunks: cell (i, j) of component c is
10000 * (c + 1) + i * 100 + j, the rest of the level never written.
"""
import sys

import numpy as np
import openpmd_api as io

PATCHES = [((0, 0), (8, 16)), ((16, 8), (8, 8))]  # (offset, extent) in level-1 cells


def write(out):
    s = io.Series(out, io.Access.create)
    it = s.iterations[100]
    it.time, it.dt = 1.0, 0.5

    units = {
        "rho": ({io.Unit_Dimension.I: 1, io.Unit_Dimension.T: 1, io.Unit_Dimension.L: -3}, 1e-3),
        "E": ({io.Unit_Dimension.M: 1, io.Unit_Dimension.L: 1, io.Unit_Dimension.I: -1, io.Unit_Dimension.T: -3}, 1.0),
    }

    def mesh(rec, comps, shape, ratio):
        m = it.meshes[rec]
        dim, si = units[rec.split("_lvl")[0]]
        m.unit_dimension = dim
        m.grid_spacing = [1.0 / ratio, 1.0 / ratio]
        m.grid_global_offset = [0.0, 0.0]
        m.axis_labels = ["x", "y"]
        if ratio > 1:
            m.set_attribute("refinementRatio", np.array([2, 2], dtype=np.int32))
        for c in comps:
            rc = m[c] if c else m[io.Mesh_Record_Component.SCALAR]
            rc.position = [0.5, 0.5]
            rc.unit_SI = si
            rc.reset_dataset(io.Dataset(np.dtype("float64"), shape))
            yield rc

    for rc in mesh("rho", [None], [16, 16], 1):
        i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
        rc.store_chunk(np.ascontiguousarray((i * 100 + j).astype(np.float64)), [0, 0], [16, 16])
    for c, rc in enumerate(mesh("E", ["x", "y"], [16, 16], 1)):
        i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
        rc.store_chunk(np.ascontiguousarray(rule(c, i, j).astype(np.float64)), [0, 0], [16, 16])
    for rec, comps in (("rho_lvl1", [None]), ("E_lvl1", ["x", "y"])):
        for c, rc in enumerate(mesh(rec, comps, [32, 32], 2)):
            for off, ext in PATCHES:
                i, j = np.meshgrid(np.arange(off[0], off[0] + ext[0]), np.arange(off[1], off[1] + ext[1]), indexing="ij")
                rc.store_chunk(np.ascontiguousarray(rule(c, i, j).astype(np.float64)), list(off), list(ext))
    # 2-D particles as WarpX writes them: position x and y, positionOffset
    # constant 0; particle p at (p / 8, 16 - p / 8), weighting 1 + p % 3.
    n = 100
    e = it.particles["e"]
    p = np.arange(n, dtype=np.float64)
    for rec, comps in (("position", "xy"), ("positionOffset", "xy"), ("weighting", [None])):
        for comp in comps:
            rc = e[rec][comp if comp else io.Record_Component.SCALAR]
            rc.reset_dataset(io.Dataset(np.dtype("float64"), [n]))
            if rec == "positionOffset":
                rc.make_constant(0.0)
                continue
            v = {"x": p / 8, "y": 16 - p / 8, None: 1 + p % 3}[comp]
            rc.store_chunk(np.ascontiguousarray(v), [0], [n])
    s.flush()
    s.close()


def rule(c, i, j):
    return 10000 * (c + 1) + i * 100 + j


def check(inp, out, sparse):
    import json
    import os

    import h5py
    bad = []
    s = io.Series(os.path.join(out, "series.h5"), io.Access.read_only)
    it = s.iterations[100]
    si = io.Series(inp, io.Access.read_only)
    iti = si.iterations[100]
    for rec, comps in (("rho_lvl1", [None]), ("E_lvl1", ["x", "y"])):
        m = it.meshes[rec]
        if list(m.get_attribute("refinementRatio")) != [2, 2]:
            bad.append(f"{rec}: refinementRatio {m.get_attribute('refinementRatio')}")
        for c, name in enumerate(comps):
            rc = m[name] if name else m[io.Mesh_Record_Component.SCALAR]
            v = rc.load_chunk()
            s.flush()
            want = np.full((32, 32), np.nan)
            if not sparse:
                mi = iti.meshes[rec]
                want = mi[name] if name else mi[io.Mesh_Record_Component.SCALAR]
                want = want.load_chunk()
                si.flush()
            for off, ext in PATCHES:
                i, j = np.meshgrid(np.arange(off[0], off[0] + ext[0]), np.arange(off[1], off[1] + ext[1]), indexing="ij")
                want[off[0]:off[0] + ext[0], off[1]:off[1] + ext[1]] = rule(c, i, j)
            if v.shape != (32, 32) or not np.array_equal(v, want, equal_nan=True):
                bad.append(f"{rec}/{name}: openPMD-api reads {v.shape}, not the patches + NaN")
            else:
                print(f"OK openPMD-api {rec}/{name}: {v.shape}, patches equal, holes " + ("NaN" if sparse else "as in the input"))
    rho = it.meshes["rho"][io.Mesh_Record_Component.SCALAR].load_chunk()
    s.flush()
    i, j = np.meshgrid(np.arange(16), np.arange(16), indexing="ij")
    if not np.array_equal(rho, i * 100 + j):
        bad.append("rho differs")
    s.close()
    si.close()
    with open(os.path.join(out, "relayout.json")) as fh:
        man = json.load(fh)
    for v in man["variables"]:
        if "_lvl1" not in v["name"]:
            continue
        d = v["datasets"][0]
        with h5py.File(os.path.join(out, v["file"]), "r") as f:
            ds = f[d["path"]]
            table = sorted(tuple(map(tuple, b.tolist())) for b in f[d["boxes"]][()]) if d.get("boxes") else []
            want_table = sorted((tuple(o), tuple(a + n - 1 for a, n in zip(o, e))) for o, e in PATCHES)
            if ds.chunks is None or d["layout"] != "chunked" or not d.get("note"):
                bad.append(f"{v['name']}: layout {d['layout']} chunks {ds.chunks}")
                continue
            if sparse:
                ch = ds.chunks
                touched = set()
                for o, e in PATCHES:
                    for a in range(o[0] // ch[0], (o[0] + e[0] - 1) // ch[0] + 1):
                        for b in range(o[1] // ch[1], (o[1] + e[1] - 1) // ch[1] + 1):
                            touched.add((a * ch[0], b * ch[1]))
                alloc = {tuple(ds.id.get_chunk_info(k).chunk_offset) for k in range(ds.id.get_num_chunks())}
                if alloc != touched or table != want_table:
                    bad.append(f"{v['name']}: {len(alloc)} chunks allocated, patches touch {len(touched)}; box table {table}")
                else:
                    print(f"OK h5py {v['name']}: chunks {ch}, {len(alloc)} of 16 allocated, storage {ds.id.get_storage_size()} bytes, box table = the patches")
    for b in bad:
        print("BAD", b)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4] == "1")
