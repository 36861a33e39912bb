"""netCDF4-python (netCDF-C) as the oracle of reader/netcdf's tests.

  nc_oracle.py dump FILE OUTDIR [VAR...]
      writes OUTDIR/VAR.bin: VAR's values as netCDF-C reads them (no masking,
      no scaling), big-endian, row-major; prints JSON of every attribute:
      {"global": {name: attr}, "vars": {var: {name: attr}}, "types": {var: dtype}}
      attr = {"type": numpy dtype name or "string", "values": [...]} with
      floats as repr strings (NaN and infinities survive JSON).
      "fills": {var: hex of the fill value (_FillValue, else netCDF-C's default)}
      "dims": {var: [dimension names]}
  nc_oracle.py gen DIR
      writes the edge-case files the tests open (see gen below).
  nc_oracle.py genstream DIR
      writes a stream of history files and broken streams (gen_stream).
  nc_oracle.py stack OUT VAR FILE...
      writes VAR of the FILEs, in the order given, concatenated along the
      record axis (big-endian bytes) to OUT.
"""
import json
import os
import sys

import netCDF4
import numpy as np


def attr(v):
    if isinstance(v, str):
        return {"type": "string", "values": [v]}
    a = np.atleast_1d(np.asarray(v))
    if a.dtype.kind == "f":
        vals = [repr(float(x)) for x in a]
    elif a.dtype.kind in "iu":
        vals = [int(x) for x in a]
    else:
        vals = [str(x) for x in a]
    return {"type": a.dtype.name, "values": vals}


def dump(path, out, names):
    ds = netCDF4.Dataset(path)
    ds.set_auto_maskandscale(False)
    res = {"global": {k: attr(ds.getncattr(k)) for k in ds.ncattrs()}, "vars": {}, "types": {}, "fills": {}, "dims": {}}
    for name, v in ds.variables.items():
        res["vars"][name] = {k: attr(v.getncattr(k)) for k in v.ncattrs()}
        res["types"][name] = v.dtype.name if v.dtype != np.dtype("S1") else "char"
        res["dims"][name] = list(v.dimensions)
        if "_FillValue" in v.ncattrs():
            fv = v.getncattr("_FillValue")
        else:
            fv = netCDF4.default_fillvals[v.dtype.str[1:]]
        res["fills"][name] = np.asarray(fv, dtype=v.dtype.newbyteorder(">")).reshape(-1)[:1].tobytes().hex()
    for name in names:
        v = ds.variables[name]
        v.set_auto_maskandscale(False)
        a = np.asarray(v[...])
        a = a.astype(a.dtype.newbyteorder(">"))
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(np.ascontiguousarray(a).tobytes())
    print(json.dumps(res))


def gen(d):
    """Edge cases, each value a known function of its index."""
    fmts = {"cdf1": "NETCDF3_CLASSIC", "cdf2": "NETCDF3_64BIT_OFFSET", "cdf5": "NETCDF3_64BIT_DATA"}
    types = ["i1", "i2", "i4", "f4", "f8"]
    cdf5 = ["u1", "u2", "u4", "i8", "u8"]
    for key, fmt in fmts.items():
        # every type, fixed and record, a scalar, attributes of every type
        ds = netCDF4.Dataset(os.path.join(d, "types-%s.nc" % key), "w", format=fmt)
        ds.createDimension("t", None)
        ds.createDimension("x", 3)
        ds.createDimension("y", 5)
        ds.title = "every type"
        ts = types + (cdf5 if key == "cdf5" else [])
        for i, ty in enumerate(ts):
            dt = np.dtype(ty)
            vals = np.array([1, 2, 3], dtype=dt)
            ds.setncattr("g_" + dt.name, vals)
            f = ds.createVariable("fix_" + dt.name, dt, ("x", "y"))
            f[:] = (np.arange(15).reshape(3, 5) + i).astype(dt)
            f.setncattr("one", np.array([7], dtype=dt))
            r = ds.createVariable("rec_" + dt.name, dt, ("t", "x"), fill_value=np.array(5, dtype=dt))
            r[0:4, :] = (np.arange(12).reshape(4, 3) * (i + 1)).astype(dt)
            r.units = "m"
        s = ds.createVariable("scalar", "f8", ())
        s[...] = 3.25
        c = ds.createVariable("text", "S1", ("t", "y"))
        c[0:4] = netCDF4.stringtochar(np.array(["ab", "cd", "ef", "gh"], dtype="S5"))
        ds.close()
        # exactly one record variable of shorts: records unpadded (6 bytes)
        ds = netCDF4.Dataset(os.path.join(d, "onerec-%s.nc" % key), "w", format=fmt)
        ds.createDimension("time", None)
        ds.createDimension("n", 3)
        v = ds.createVariable("s", "i2", ("time", "n"))
        v[0:5, :] = np.arange(15).reshape(5, 3) - 7
        fx = ds.createVariable("fixed", "i2", ("n",))
        fx[:] = [1, 2, 3]
        ds.close()
        # a record dimension with 0 records, record variables included
        ds = netCDF4.Dataset(os.path.join(d, "zerorec-%s.nc" % key), "w", format=fmt)
        ds.createDimension("time", None)
        ds.createDimension("n", 2)
        ds.createVariable("r", "f4", ("time", "n"))
        f = ds.createVariable("f", "i4", ("n",))
        f[:] = [10, 20]
        ds.close()
        # the last variable in file order is numeric: the tests cut the
        # file inside its last slab (a record one, a fixed one)
        ds = netCDF4.Dataset(os.path.join(d, "short-%s.nc" % key), "w", format=fmt)
        ds.createDimension("t", None)
        for n, m in zip("xyz", (4, 5, 3)):
            ds.createDimension(n, m)
        a = ds.createVariable("a", "f8", ("t", "x"))
        a[0:2, :] = np.arange(8).reshape(2, 4) + 0.5
        b = ds.createVariable("b", "i2", ("t", "x", "y", "z"), fill_value=np.int16(-5))
        b[0:2] = np.arange(120).reshape(2, 4, 5, 3) + 1
        ds.close()
        ds = netCDF4.Dataset(os.path.join(d, "shortfix-%s.nc" % key), "w", format=fmt)
        for n, m in zip("xyz", (4, 5, 3)):
            ds.createDimension(n, m)
        f = ds.createVariable("f", "f4", ("x", "y", "z"))
        f[:] = np.arange(60).reshape(4, 5, 3) * 2
        g = ds.createVariable("g", "i4", ("x", "y", "z"))
        g[:] = np.arange(60).reshape(4, 5, 3) + 100
        ds.close()


def gen_stream(d):
    """A stream of three history files (time 0..5, v[t, i] = 10*t + i, fixed
    w = 100, 101, 102), and files that break it: an overlap, a duplicated
    time, another dimension length, another type, other fixed values."""
    def one(name, times, n=3, ty="f4", fmt="NETCDF3_64BIT_OFFSET", w0=100):
        ds = netCDF4.Dataset(os.path.join(d, name), "w", format=fmt)
        ds.createDimension("time", None)
        ds.createDimension("n", n)
        t = ds.createVariable("time", "f8", ("time",))
        t.units = "days since 0001-01-01"
        v = ds.createVariable("v", ty, ("time", "n"))
        w = ds.createVariable("w", "i4", ("n",))
        w[:] = np.arange(n) + w0
        for k, tt in enumerate(times):
            t[k] = tt
            v[k, :] = 10 * tt + np.arange(n)
        ds.close()
    os.makedirs(os.path.join(d, "good"))
    one("good/case.h0.0001-01.nc", [0, 1])
    one("good/case.h0.0001-02.nc", [2, 3, 4], fmt="NETCDF3_64BIT_DATA")
    one("good/case.h0.0001-03.nc", [5])
    for bad, kw in {"overlap": dict(times=[3.5]), "duplicate": dict(times=[4]), "dims": dict(times=[9], n=4), "type": dict(times=[9], ty="f8"),
                    "fixed": dict(times=[9], w0=101)}.items():
        os.makedirs(os.path.join(d, bad))
        one(bad + "/case.h0.0001-01.nc", [0, 1])
        one(bad + "/case.h0.0001-02.nc", [2, 3, 4])
        one(bad + "/case.h0.0001-03.nc", **kw)


def stack(out, var, files):
    """var of files concatenated along the record axis, big-endian bytes."""
    parts = []
    for f in files:
        ds = netCDF4.Dataset(f)
        ds.set_auto_maskandscale(False)
        a = np.asarray(ds.variables[var][...])
        parts.append(a)
        ds.close()
    a = np.concatenate(parts)
    with open(out, "wb") as f:
        f.write(np.ascontiguousarray(a.astype(a.dtype.newbyteorder(">"))).tobytes())


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif sys.argv[1] == "gen":
        gen(sys.argv[2])
    elif sys.argv[1] == "genstream":
        gen_stream(sys.argv[2])
    elif sys.argv[1] == "stack":
        stack(sys.argv[2], sys.argv[3], sys.argv[4:])
