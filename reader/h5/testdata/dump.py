# Oracle for reader/h5 tests: dumps every numeric, non-empty dataset of the
# given HDF5 files with h5py (libhdf5 does the decoding), and every openPMD
# constant record component (a group with "value" and "shape" attributes)
# as the full array it stands for.
# usage: dump.py OUTDIR FILE...  -> OUTDIR/index.json, OUTDIR/<n>.bin
# index.json: {"<file basename>:<dataset path>": {"dtype": "<f8", "shape": [..], "bin": "<n>.bin"}}
import json, os, sys
import h5py, numpy as np

out = sys.argv[1]
index = {}
for fn in sys.argv[2:]:
    with h5py.File(fn, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Group) and "value" in obj.attrs and "shape" in obj.attrs:
                v = obj.attrs["value"]
                data = np.full(tuple(int(n) for n in obj.attrs["shape"]), v, dtype=np.asarray(v).dtype)
                b = "%d.bin" % len(index)
                with open(os.path.join(out, b), "wb") as w:
                    w.write(data.tobytes())
                index[os.path.basename(fn) + ":/" + name] = {"dtype": data.dtype.str, "shape": list(data.shape), "bin": b}
                return
            if not isinstance(obj, h5py.Dataset) or obj.dtype.kind not in "iuf" or obj.size == 0:
                return
            data = np.ascontiguousarray(obj[()])  # in the file's dtype and byte order
            b = "%d.bin" % len(index)
            with open(os.path.join(out, b), "wb") as w:
                w.write(data.tobytes())
            index[os.path.basename(fn) + ":/" + name] = {"dtype": obj.dtype.str, "shape": list(obj.shape), "bin": b}
        f.visititems(visit)
json.dump(index, open(os.path.join(out, "index.json"), "w"))
