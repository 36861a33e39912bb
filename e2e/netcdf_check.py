"""Compares a relayout output of netCDF classic input with netCDF4-python.

  netcdf_check.py OUT FILE...

FILEs are the input's history files in time order (one file: itself). For
every variable of relayout.json, the output dataset read through h5py must
equal the variable read through netCDF4-python (netCDF-C; no masking or
scaling): a record variable concatenated over the FILEs along its first
axis, a fixed one from the first FILE; its attributes must be the
variable's. Every numeric variable of the input must be in the output, and
every char variable listed under "skipped". Prints one line per variable;
exits 1 on any difference.
"""
import json
import os
import sys

import h5py
import netCDF4
import numpy as np

out, files = sys.argv[1], sys.argv[2:]
man = json.load(open(os.path.join(out, "relayout.json")))
dss = [netCDF4.Dataset(f) for f in files]
for d in dss:
    d.set_auto_maskandscale(False)
first = dss[0]
bad = 0
written = {v["name"]: v for v in man["variables"]}
for name, v in first.variables.items():
    if v.dtype == np.dtype("S1"):
        if not any(("variable " + name + ":") in s for s in man.get("skipped", [])):
            print("MISSING from skipped: char variable", name)
            bad += 1
        continue
    if name not in written:
        print("MISSING from the output:", name)
        bad += 1
        continue
    rec = v.dimensions and first.dimensions[v.dimensions[0]].isunlimited()
    want = np.concatenate([np.asarray(d.variables[name][...]) for d in dss]) if rec else np.asarray(v[...])
    m = written[name]
    ds = m["datasets"][0]
    with h5py.File(os.path.join(out, m["file"]), "r") as h:
        got = h[ds["path"]][...]
        attrs = dict(h[ds["path"]].attrs)
    same = got.shape == want.shape and got.dtype.kind == want.dtype.kind and got.dtype.itemsize == want.dtype.itemsize \
        and np.array_equal(got, want, equal_nan=want.dtype.kind == "f")
    for k in v.ncattrs():
        a, b = v.getncattr(k), attrs.get(k)
        if isinstance(b, bytes):
            b = b.decode()
        if isinstance(a, str) or isinstance(b, str):
            ok = a == b
        else:
            ok = b is not None and np.array_equal(np.atleast_1d(a), np.atleast_1d(b))
        if not ok:
            print("ATTR", name, k, repr(a), repr(b))
            bad += 1
    print("OK " if same else "DIFF", name, got.shape, got.dtype)
    bad += not same
sys.exit(1 if bad else 0)
