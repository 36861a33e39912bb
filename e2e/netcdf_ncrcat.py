"""Appends one relayout time series to another with NCO's ncrcat.

  netcdf_ncrcat.py CAT OUT1 OUT2 FILE...

OUT1 and OUT2 are relayout outputs of two consecutive parts of a stream of
history files (OUT1 the earlier); FILEs are the whole stream's files in
time order. For every record variable of OUT1's relayout.json, `ncrcat OUT1/file
OUT2/file CAT/file` joins its two files along the record dimension (which
ncrcat finds only where it is unlimited), and the joined file read through
netCDF4-python must have the record dimension unlimited with every record
of the FILEs, and every variable of it (the variable, its coordinates and
ancillaries) equal to the FILEs' read through netCDF4-python: a record
variable concatenated over all of them, a fixed one from the first.
Prints one line per variable; exits 1 on any difference.
"""
import json
import os
import subprocess
import sys

import netCDF4
import numpy as np

cat, out1, out2, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
m1 = json.load(open(os.path.join(out1, "relayout.json")))
m2 = json.load(open(os.path.join(out2, "relayout.json")))
second = {v["name"]: v["file"] for v in m2["variables"]}
dss = [netCDF4.Dataset(f) for f in files]
for d in dss:
    d.set_auto_maskandscale(False)
first = dss[0]
rec = [n for n, d in first.dimensions.items() if d.isunlimited()]
if len(rec) != 1:
    sys.exit("want one record dimension in %s, have %s" % (files[0], rec))
rec = rec[0]
total = sum(len(d.dimensions[rec]) for d in dss)
bad = 0
for v in m1["variables"]:
    name = v["name"]
    if rec not in first.variables[name].dimensions:
        continue  # a fixed variable's file has no record to append (ncrcat refuses it)
    if name not in second:
        print("MISSING from", out2, name)
        bad += 1
        continue
    joined = os.path.join(cat, v["file"])
    r = subprocess.run(["ncrcat", "-O", os.path.join(out1, v["file"]), os.path.join(out2, second[name]), joined],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print("NCRCAT", name, r.stdout.strip())
        bad += 1
        continue
    nbad = 0
    with netCDF4.Dataset(joined) as o:
        o.set_auto_maskandscale(False)
        if rec in o.dimensions and (not o.dimensions[rec].isunlimited() or len(o.dimensions[rec]) != total):
            print("RECORD", joined, rec, o.dimensions[rec].isunlimited(), len(o.dimensions[rec]), "want", total)
            nbad += 1
        for n, ov in o.variables.items():
            iv = first.variables[n]
            if iv.dimensions and iv.dimensions[0] == rec:
                want = np.concatenate([np.asarray(d.variables[n][...]) for d in dss])
            else:
                want = np.asarray(iv[...])
            got = np.asarray(ov[...])
            if got.dtype != want.dtype or not np.array_equal(got, want, equal_nan=want.dtype.kind == "f"):
                print("DIFF", joined, n, got.dtype, got.shape, "input", want.dtype, want.shape)
                nbad += 1
    print("OK " if nbad == 0 else "BAD", name)
    bad += nbad
sys.exit(1 if bad else 0)
