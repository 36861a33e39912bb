"""AMR levels of a relayout output against independent readers of the input
(for amr_test.go).

usage: amr.py IN OUT ORACLE FIELD...
    ORACLE is "yt" (yt loads IN: an AMReX plotfile or a Chombo file) or "fab"
    (an AMReX plotfile read here with numpy from its Header, Cell_H and FABs:
    yt aborts on some plotfiles). For every FIELD and level L it checks the
    output's level dataset (record FIELD, or FIELD_lvl<L> for L > 0, read with
    h5py through OUT/series.h5 and in its per-variable file):
      - shape = the domain in the level's cells (level-0 domain x cumulative
        refinement ratio), refinementRatio = the ratio to level L-1;
      - every grid (box) of the input equal to the dataset at the grid's
        index, and every cell outside the level's boxes NaN (the fill value);
      - level L > 0: layout "chunked" with a note in relayout.json; the
        allocated chunks (h5py's chunk index) are exactly those the boxes
        touch, and the storage size is their bytes, so no NaN-filled
        bounding box is stored;
      - the box table (the dataset's "boxes" attribute) lists the input's
        boxes;
    and that yt on OUT/series.h5 (its openPMD frontend, which takes every
    record for a level-0 mesh) shows each FIELD's level-0 record as the
    input's level 0, cell for cell. Prints one line per check, exits 1 on a
    problem.
"""
import json
import os
import re
import sys

import h5py
import numpy as np


def s(v):
    return v.decode() if isinstance(v, bytes) else str(v)


class Level:
    def __init__(self):
        self.grids = []  # (start, dims, {field: array indexed [x][y][z]})
        self.domain = None  # extent in the level's cells
        self.ratio = None  # to the previous level


def yt_oracle(path, fields):
    import yt
    yt.set_log_level(50)
    ds = yt.load(path)
    dim = ds.dimensionality
    chombo = ds.dataset_type == "chombo_hdf5"
    levels = {}
    dds = {}
    for g in sorted(ds.index.grids, key=lambda g: g.id):
        lv = levels.setdefault(int(g.Level), Level())
        dds.setdefault(int(g.Level), g.dds.d)
        start = g.get_global_startindex()
        if chombo:
            # yt's Chombo frontend assumes level 0's ratio on every level
            # (mushy-layer refines by 4 then 2): the index from the edges.
            start = np.rint((g.LeftEdge - ds.domain_left_edge).d / g.dds.d)
        start = [int(x) for x in start[:dim]]
        dims = [int(x) for x in g.ActiveDimensions[:dim]]
        data = {}
        for f in fields:
            v = np.asarray(g[("chombo" if chombo else "boxlib", f)].d)
            data[f] = v.reshape(v.shape[:dim])
        g.clear_data()
        lv.grids.append((start, dims, data))
    for l, lv in levels.items():
        lv.domain = [int(x) for x in np.rint(ds.domain_width.d / dds[l])[:dim]]
        if l > 0:
            lv.ratio = [int(round(a / b)) for a, b in zip(dds[l - 1][:dim], dds[l][:dim])]
    return levels, dim


def fab_oracle(path, fields):
    with open(os.path.join(path, "Header")) as fh:
        hdr = fh.read().split("\n")
    nvar = int(hdr[1])
    names = hdr[2:2 + nvar]
    dim = int(hdr[2 + nvar])
    finest = int(hdr[4 + nvar])
    ratios = [int(x) for x in hdr[7 + nvar].split()]
    doms = re.findall(r"\(\(([-\d,]+)\) \(([-\d,]+)\) \([\d,]+\)\)", hdr[8 + nvar])
    levels = {}
    for l in range(finest + 1):
        lv = levels.setdefault(l, Level())
        lo, hi = [int(x) for x in doms[l][0].split(",")], [int(x) for x in doms[l][1].split(",")]
        lv.domain = [h - o + 1 for o, h in zip(lo, hi)]
        if l > 0:
            lv.ratio = [ratios[l - 1]] * dim
        ldir = os.path.join(path, "Level_%d" % l)
        with open(os.path.join(ldir, "Cell_H")) as fh:
            cellh = fh.read()
        ngrow = int(cellh.split("\n")[3].split()[0])
        if ngrow != 0:
            sys.exit("fab oracle: ghost cells not handled")
        for m in re.finditer(r"FabOnDisk: (\S+) (\d+)", cellh):
            with open(os.path.join(ldir, m.group(1)), "rb") as fh:
                fh.seek(int(m.group(2)))
                line = fh.readline().decode()
                hm = re.match(r"FAB \(\((\d+), \(([\d ]+)\)\),\((\d+), \(([\d ]+)\)\)\)\(\(([-\d,]+)\) \(([-\d,]+)\) \([\d,]+\)\) (\d+)", line)
                size, order = int(hm.group(3)), [int(x) for x in hm.group(4).split()]
                blo = [int(x) for x in hm.group(5).split(",")]
                bhi = [int(x) for x in hm.group(6).split(",")]
                ncomp = int(hm.group(7))
                dims = [h - o + 1 for o, h in zip(blo, bhi)]
                npts = int(np.prod(dims))
                if order == list(range(size, 0, -1)):
                    dt = "<f%d" % size
                elif order == list(range(1, size + 1)):
                    dt = ">f%d" % size
                else:
                    sys.exit("fab oracle: byte order %s" % order)
                raw = np.frombuffer(fh.read(npts * ncomp * size), dtype=dt)
            data = {}
            for f in fields:
                c = names.index(f)
                # Fortran order: the first index runs fastest.
                data[f] = raw[c * npts:(c + 1) * npts].reshape(dims[::-1]).transpose().astype("<f8")
            lv.grids.append((blo, dims, data))
    return levels, dim


def record(field, level):
    return field if level == 0 else "%s_lvl%d" % (field, level)


def main():
    inp, out, oracle, fields = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    levels, dim = (yt_oracle if oracle == "yt" else fab_oracle)(inp, fields)
    with open(os.path.join(out, "relayout.json")) as fh:
        m = json.load(fh)
    byvar = {v["name"]: v for v in m["variables"]}
    series = h5py.File(os.path.join(out, "series.h5"), "r")
    bad = []
    step = None
    for f in fields:
        v = byvar[f]
        pv = h5py.File(os.path.join(out, v["file"]), "r")
        for l, lv in sorted(levels.items()):
            ents = [d for d in v["datasets"] if d["level"] == l]
            if len(ents) != 1:
                bad.append(f"{f} level {l}: {len(ents)} manifest entries")
                continue
            e = ents[0]
            step = e["step"]
            want_path = "/data/%d/meshes/%s" % (e["step"], record(f, l))
            if e["path"] != want_path:
                bad.append(f"{f} level {l}: path {e['path']}, want {want_path}")
                continue
            ds, sd = pv[e["path"]], series[e["path"]]
            where = f"{f} level {l}"
            if list(ds.shape) != lv.domain or list(sd.shape) != lv.domain:
                bad.append(f"{where}: shape {ds.shape} (series.h5 {sd.shape}), want the domain in level cells {lv.domain}")
                continue
            attrs = ds.attrs if "gridSpacing" in ds.attrs else ds.parent.attrs
            if l > 0:
                rr = list(attrs.get("refinementRatio", []))
                if rr != lv.ratio:
                    bad.append(f"{where}: refinementRatio {rr}, want {lv.ratio}")
            got = sd[()]
            mask = np.zeros(got.shape, dtype=bool)
            cells = 0
            for (start, dims, data) in lv.grids:
                sl = tuple(slice(a, a + n) for a, n in zip(start, dims))
                mask[sl] = True
                cells += int(np.prod(dims))
                if not np.array_equal(got[sl], data[f], equal_nan=True):
                    bad.append(f"{where}: grid at {start} {dims} differs from the input")
            outside = got[~mask]
            if not np.all(np.isnan(outside)):
                bad.append(f"{where}: {int(np.sum(~np.isnan(outside)))} cells outside the boxes are not NaN")
            if not np.isnan(ds.fillvalue):
                bad.append(f"{where}: fill value {ds.fillvalue}, want NaN")
            table = sorted(map(tuple, f_boxes(pv, ds)))
            want_table = sorted((tuple(st), tuple(a + n - 1 for a, n in zip(st, dm))) for st, dm, _ in lv.grids)
            if table != want_table:
                bad.append(f"{where}: box table {table[:3]}..., want {want_table[:3]}...")
            if l == 0:
                print(f"OK {where}: {ds.shape} {len(lv.grids)} boxes equal the input ({e['layout']})")
                continue
            if e["layout"] != "chunked" or not e.get("note") or ds.chunks is None:
                bad.append(f"{where}: layout {e['layout']} chunks {ds.chunks} note {e.get('note')!r}, want chunked with a note")
                continue
            chunk = ds.chunks
            touched = set()
            for (start, dims, _) in lv.grids:
                lo = [a // c for a, c in zip(start, chunk)]
                hi = [(a + n - 1) // c for a, n, c in zip(start, dims, chunk)]
                for idx in np.ndindex(*[h - o + 1 for o, h in zip(lo, hi)]):
                    touched.add(tuple((o + i) * c for o, i, c in zip(lo, idx, chunk)))
            n = ds.id.get_num_chunks()
            allocated = {tuple(ds.id.get_chunk_info(i).chunk_offset) for i in range(n)}
            cbytes = int(np.prod(chunk)) * ds.dtype.itemsize
            storage = ds.id.get_storage_size()
            full = int(np.prod(ds.shape)) * ds.dtype.itemsize
            if allocated != touched:
                bad.append(f"{where}: {len(allocated)} chunks allocated, the boxes touch {len(touched)} ({len(allocated - touched)} others)")
            if storage > len(touched) * cbytes:
                bad.append(f"{where}: storage {storage} bytes > the boxes' {len(touched)} chunks of {cbytes}")
            print(f"OK {where}: {ds.shape} chunks {chunk}: {len(lv.grids)} boxes ({cells * ds.dtype.itemsize} bytes) in {n} of "
                  f"{int(np.prod([-(-a // c) for a, c in zip(ds.shape, chunk)]))} chunks, storage {storage} of {full} bytes")
        pv.close()

    # yt's openPMD frontend on series.h5: every record is a level-0 mesh to
    # it; the grids of a field's level-0 record hold the input's level 0.
    import yt
    yt.set_log_level(50)
    db = yt.load(os.path.join(out, "series.h5"))
    if hasattr(db, "_pre_outputs"):
        db = db[step]
    l0 = levels[0]
    for f in fields:
        name = f.replace("_", "-")
        want = np.full(l0.domain, np.nan)
        for (start, dims, data) in l0.grids:
            want[tuple(slice(a, a + n) for a, n in zip(start, dims))] = data[f]
        got = np.full(l0.domain, np.nan)
        seen = 0
        # yt cuts each record into grids of its own cell size: those of
        # level 0's cell size come from the level-0 record.
        for g in db.index.grids:
            dx = (g.RightEdge - g.LeftEdge).d[:dim] / g.ActiveDimensions[:dim]
            cell0 = (db.domain_width.d[:dim] / np.asarray(l0.domain))
            if not np.allclose(dx, cell0):
                continue
            start = np.rint((g.LeftEdge - db.domain_left_edge).d[:dim] / cell0).astype(int)
            v = np.asarray(g[("openPMD", name)].d)
            v = v.reshape(v.shape[:dim])
            got[tuple(slice(a, a + n) for a, n in zip(start, v.shape))] = v
            seen += v.size
        if seen != int(np.prod(l0.domain)) or not np.array_equal(got, want, equal_nan=True):
            bad.append(f"yt series.h5 {name}: {seen} level-0 cells seen, equal to the input: {np.array_equal(got, want, equal_nan=True)}")
        else:
            print(f"OK yt series.h5 {name}: level 0 {l0.domain} equal to the input")
    for b in bad[:40]:
        print("BAD", b)
    print(f"amr: {len(fields)} fields, {len(levels)} levels, {len(bad)} problems")
    sys.exit(1 if bad else 0)


def f_boxes(pv, ds):
    t = pv[s(ds.attrs["boxes"])][()]
    return [(tuple(int(x) for x in b[0]), tuple(int(x) for x in b[1])) for b in t]


if __name__ == "__main__":
    main()
