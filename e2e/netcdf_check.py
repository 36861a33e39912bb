"""Compares a relayout output of netCDF input with netCDF4-python.

  netcdf_check.py OUT FILE...

FILEs are the input's history files in time order (one file: itself). For
every variable of relayout.json, the output dataset read through h5py must
equal the variable read through netCDF4-python (netCDF-C; no masking or
scaling): a record variable concatenated over the FILEs along its first
axis, a fixed one from the first FILE; its attributes must be the
variable's. Every variable of the input, text (char) included, must be in
the output.

Each output file is also opened as netCDF, the way climate users read it:
through netCDF4-python, where the variable has the input's dimension names,
values and attributes, every other variable of the file (its coordinate
and ancillary variables) equals the input's variable of that name, and the
global attributes are the input's (history with one line prepended);
through xarray (open_dataset of each file, open_mfdataset of them all, or
merge where the files have no coordinates to order them by); and
through ncdump -h. The input's record (unlimited) dimension must be
unlimited in each file, with every file's records (netCDF4-python's
isunlimited(), ncdump's "time = UNLIMITED ; // (N currently)"), the other
dimensions fixed with their lengths. Prints one line per variable; exits 1
on any difference.
"""
import subprocess
import json
import os
import xarray
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


def input_values(name):
    v = first.variables[name]
    if v.dimensions and first.dimensions[v.dimensions[0]].isunlimited():
        return np.concatenate([np.asarray(d.variables[name][...]) for d in dss])
    return np.asarray(v[...])


def same_attr(a, b):
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return np.array_equal(np.atleast_1d(a), np.atleast_1d(b)) and np.asarray(a).dtype == np.asarray(b).dtype


def check_netcdf(path, name):
    """The file of variable name read through netCDF-C: 0 when equal."""
    nbad = 0
    header = subprocess.run(["ncdump", "-h", path], check=True, stdout=subprocess.PIPE, text=True).stdout
    with netCDF4.Dataset(path) as o:
        o.set_auto_maskandscale(False)
        for dn, dim in o.dimensions.items():
            # The input's record (unlimited) dimension stays unlimited,
            # holding every file's records; the others keep their length.
            unlimited = dn in first.dimensions and first.dimensions[dn].isunlimited()
            n = sum(len(d.dimensions[dn]) for d in dss) if unlimited else len(first.dimensions.get(dn, []))
            if dim.isunlimited() != unlimited or len(dim) != n:
                print("NETCDF DIMENSION", path, dn, "unlimited", dim.isunlimited(), len(dim), "input", unlimited, n)
                nbad += 1
            line = "\t%s = UNLIMITED ; // (%d currently)\n" % (dn, n) if unlimited else "\t%s = %d ;\n" % (dn, n)
            if line not in header:
                print("NCDUMP", path, "lacks", repr(line))
                nbad += 1
        for n, ov in o.variables.items():
            iv = first.variables[n]
            want = input_values(n)
            got = np.asarray(ov[...])
            if list(ov.dimensions) != list(iv.dimensions) or got.dtype != want.dtype or not np.array_equal(got, want, equal_nan=want.dtype.kind == "f"):
                print("NETCDF", path, n, ov.dimensions, got.dtype, got.shape, "input", iv.dimensions, want.dtype, want.shape)
                nbad += 1
            for k in iv.ncattrs():
                if k not in ov.ncattrs() or not same_attr(iv.getncattr(k), ov.getncattr(k)):
                    print("NETCDF ATTR", path, n, k, repr(iv.getncattr(k)), repr(ov.getncattr(k) if k in ov.ncattrs() else None))
                    nbad += 1
            if set(ov.ncattrs()) != set(iv.ncattrs()):
                print("NETCDF ATTRS", path, n, sorted(set(ov.ncattrs()) ^ set(iv.ncattrs())))
                nbad += 1
        if name not in o.variables:
            print("NETCDF", path, "lacks", name)
            nbad += 1
        for k in first.ncattrs():
            a, b = first.getncattr(k), o.getncattr(k) if k in o.ncattrs() else None
            if k == "history":
                ok = isinstance(b, str) and b.endswith("\n" + a) and b.split("\n")[0].find("relayout") > 0
            else:
                ok = b is not None and same_attr(a, b)
            if not ok:
                print("NETCDF GLOBAL", path, k, repr(a)[:80], repr(b)[:80])
                nbad += 1
    return nbad
for name, v in first.variables.items():
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
    if same and m["file"].endswith(".nc"):
        bad += check_netcdf(os.path.join(out, m["file"]), name)
    print("OK " if same else "DIFF", name, got.shape, got.dtype)
    bad += not same
if any(v["file"].endswith(".nc") for v in man["variables"]):
    paths = [os.path.join(out, v["file"]) for v in man["variables"]]
    for p in paths:
        xarray.open_dataset(p).close()
    try:
        mf = xarray.open_mfdataset(paths)
    except ValueError as e:
        # Without coordinate variables (MPAS: its times are text, not
        # written yet) xarray cannot order the files by coordinates: it
        # merges them instead.
        if "needs a coordinate" not in str(e):
            raise
        mf = xarray.merge([xarray.open_dataset(p) for p in paths])
    with mf:
        missing = [n for n in written if n not in mf.variables]
        if missing:
            print("XARRAY open_mfdataset lacks", missing)
            bad += 1
sys.exit(1 if bad else 0)
