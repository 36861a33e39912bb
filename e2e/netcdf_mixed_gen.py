"""Writes a stream of history files whose members mix netCDF classic and netCDF-4.

  netcdf_mixed_gen.py OUT [bad]

Six monthly files OUT/case.eam.h0.0001-MM.nc written through netCDF-C
(netCDF4-python), the way a model that switched its output format mid-run
leaves them: months 1, 3 and 6 NETCDF3_64BIT_OFFSET (CDF-2), months 2, 4 and 5
NETCDF4 with deflate and shuffle in chunks that do not follow the records
(PS: two records a chunk in a one-record file; area: a fixed variable in
chunks), months 2 and 5 of two records. Variables: time (with units,
calendar, bounds), time_bnds, date (int), date_str (text), lat, lon, lev,
area (fixed), T (float, time x lev x lat x lon, _FillValue), PS (double),
FLAG (short). Every record's values depend on its global record number,
so an output in the wrong order differs. With "bad", month 4's PS is over
(time, lat, nbnd) instead of (time, lat, lon): not the same stream.
"""
import os
import sys

import netCDF4
import numpy as np

out = sys.argv[1]; bad = len(sys.argv) > 2
os.makedirs(out, exist_ok=True)
formats = ["NETCDF3_64BIT_OFFSET", "NETCDF4", "NETCDF3_64BIT_OFFSET", "NETCDF4", "NETCDF4", "NETCDF3_64BIT_OFFSET"]
nrec = [1, 2, 1, 1, 2, 1]
g = 0
for m, fmt in enumerate(formats, 1):
    d = netCDF4.Dataset(os.path.join(out, "case.eam.h0.0001-%02d.nc" % m), "w", format=fmt)
    d.title = "mixed stream"; d.case = "F2010"
    d.createDimension("time", None); d.createDimension("nbnd", 2); d.createDimension("lev", 3)
    d.createDimension("lat", 10); d.createDimension("lon", 16); d.createDimension("chars", 8)
    nc4 = fmt == "NETCDF4"
    kw = dict(zlib=True, complevel=4, shuffle=True) if nc4 else {}
    t = d.createVariable("time", "f8", ("time",), **({"chunksizes": (512,)} if nc4 else {}))
    t.units = "days since 0001-01-01 00:00:00"; t.calendar = "noleap"; t.bounds = "time_bnds"
    tb = d.createVariable("time_bnds", "f8", ("time", "nbnd"))
    dw = d.createVariable("date_str", "S1", ("time", "chars"))
    date = d.createVariable("date", "i4", ("time",)); date.long_name = "current date (YYYYMMDD)"
    lat = d.createVariable("lat", "f8", ("lat",)); lat.units = "degrees_north"
    lon = d.createVariable("lon", "f8", ("lon",)); lon.units = "degrees_east"
    lev = d.createVariable("lev", "f8", ("lev",))
    area = d.createVariable("area", "f8", ("lat", "lon"), **({"chunksizes": (5, 16), "zlib": True} if nc4 else {}))
    T = d.createVariable("T", "f4", ("time", "lev", "lat", "lon"), fill_value=np.float32(1e36),
                         **({"chunksizes": (1, 3, 5, 8), **kw} if nc4 else {}))
    T.units = "K"; T.long_name = "temperature"; T.cell_methods = "time: mean"
    shape = (2, 10) if bad and m == 4 else (10, 16)
    P = d.createVariable("PS", "f8", ("time", "lat", "lon") if shape == (10, 16) else ("time", "lat", "nbnd"), fill_value=1e36,
                         **({"chunksizes": (2, 10, 16) if shape == (10, 16) else (1, 10, 2), **kw} if nc4 else {}))
    P.units = "Pa"
    I = d.createVariable("FLAG", "i2", ("time", "lat"), **({"contiguous": False} if nc4 else {}))
    lat[:] = np.linspace(-90, 90, 10); lon[:] = np.linspace(0, 360, 16, endpoint=False); lev[:] = [1, 500, 1000]
    area[:] = np.cos(np.radians(lat[:]))[:, None] * np.ones(16)
    for r in range(nrec[m - 1]):
        day = 30.0 * (m - 1) + 10 * r
        t[r] = day + 5; tb[r] = [day, day + 10]; date[r] = 10000 + m * 100 + 1 + r
        dw[r] = netCDF4.stringtochar(np.array(["01/%02d/01" % m], "S8"))[0]
        T[r] = np.arange(480, dtype=np.float32).reshape(3, 10, 16) + 1000 * g
        P[r] = (np.arange(160.0).reshape(10, 16) + 0.5 * g) if shape == (10, 16) else np.zeros((10, 2))
        I[r] = np.arange(10, dtype=np.int16) * (g + 1)
        g += 1
    d.close()
