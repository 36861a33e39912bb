"""Write small Chombo-layout files with h5py for reader/chombo's tests.

usage: make_chombo.py <outdir>

ghost.2d.hdf5   2 levels, outputGhost (1,2), float32, components "u", "v";
                valid cell (i, j) of level l, component c = l*10000 + c*1000 + i*10 + j,
                ghost cells -1
chunked.2d.hdf5 as ghost.2d.hdf5 but data:datatype=0 chunked + deflate
outside.2d.hdf5 level 1 box reaching past its prob_domain
levels.2d.hdf5  num_levels = 3 with only two level groups
"""
import sys

import h5py
import numpy as np

out = sys.argv[1]
box_t = np.dtype([("lo_i", "<i4"), ("lo_j", "<i4"), ("hi_i", "<i4"), ("hi_j", "<i4")])
iv_t = np.dtype([("intvecti", "<i4"), ("intvectj", "<i4")])
GHOST = (1, 2)
LEVELS = [
    ((0, 0, 15, 7), [(0, 0, 7, 7), (8, 0, 15, 7)]),
    ((0, 0, 31, 15), [(4, 2, 11, 9), (20, 6, 27, 13), (12, 2, 19, 5)]),
]


def write(name, chunked=False, outside=False, num_levels=2):
    with h5py.File("%s/%s" % (out, name), "w") as f:
        f.attrs["num_levels"] = np.int32(num_levels)
        f.attrs["num_components"] = np.int32(2)
        f.attrs["component_0"] = np.bytes_("u")
        f.attrs["component_1"] = np.bytes_("v")
        f.attrs["iteration"] = np.int32(42)
        f.attrs["time"] = 1.5
        g = f.create_group("Chombo_global")
        g.attrs["SpaceDim"] = np.int32(2)
        g.attrs["testReal"] = np.float32(0)
        for l, (dom, boxes) in enumerate(LEVELS):
            if outside and l == 1:
                boxes = boxes[:-1] + [(12, 2, 19, 16)]
            lv = f.create_group("level_%d" % l)
            lv.attrs["dx"] = 1.0 / (l + 1)
            lv.attrs["ref_ratio"] = np.int32(2)
            lv.attrs["time"] = 1.5
            lv.attrs["prob_domain"] = np.array(dom, dtype="<i4").view(box_t)[0]
            lv.create_dataset("boxes", data=np.array(boxes, dtype="<i4").view(box_t).reshape(-1))
            lv.create_dataset("Processors", data=np.arange(len(boxes), dtype="<i4"))
            chunks, offsets = [], [0]
            for (li, lj, hi, hj) in boxes:
                gi, gj = GHOST
                for c in range(2):
                    a = np.full((hi - li + 1 + 2 * gi, hj - lj + 1 + 2 * gj), -1, dtype="<f4")
                    for i in range(li, hi + 1):
                        for j in range(lj, hj + 1):
                            a[i - li + gi, j - lj + gj] = l * 10000 + c * 1000 + i * 10 + j
                    chunks.append(a.ravel(order="F"))
                offsets.append(offsets[-1] + 2 * a.size)
            data = np.concatenate(chunks)
            if chunked:
                lv.create_dataset("data:datatype=0", data=data, chunks=(64,), compression="gzip")
            else:
                lv.create_dataset("data:datatype=0", data=data)
            lv.create_dataset("data:offsets=0", data=np.array(offsets, dtype="<i8"))
            da = lv.create_group("data_attributes")
            da.attrs["comps"] = np.int32(2)
            da.attrs["objectType"] = np.bytes_("FArrayBox")
            da.attrs["outputGhost"] = np.array(GHOST, dtype="<i4").view(iv_t)[0]
            da.attrs["ghost"] = np.array(GHOST, dtype="<i4").view(iv_t)[0]


write("ghost.2d.hdf5")
write("chunked.2d.hdf5", chunked=True)
write("outside.2d.hdf5", outside=True)
write("levels.2d.hdf5", num_levels=3)
