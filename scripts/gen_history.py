#!/usr/bin/python3
"""Writes a stream of climate-model history files through netCDF-C (python3-netcdf4), the way
EAM/CAM write them: one file per output interval, every variable in each, record variables
interleaved record by record in the classic formats.

    gen_history.py OUT_DIR [--files 12] [--records 1] [--format NETCDF3_64BIT_OFFSET]
                   [--vars3d 20] [--vars2d 103] [--lev 72] [--lat 96] [--lon 144]
                   [--prefix bench.eam.h0] [--shuffle]

Files are OUT_DIR/<prefix>.0001-MM.nc (month MM of year 1, then year 2, ...). Variables:
time(time) double with units/calendar/bounds, time_bnds(time,nbnd), date(time) int, lat, lon,
lev, area(lat,lon) and hyam(lev) fixed, the 3-D record variables T001.. float32
(time,lev,lat,lon) and the 2-D ones V001.. float32 (time,lat,lon), each with units, long_name,
cell_methods and _FillValue. Every element of a record variable is a known function of its
variable number k, global record r and flat index i within the record:
    k*1000 + r + (i % 4096) / 4096      (exact in float32 for the sizes used here)
--format is any netCDF4.Dataset format (NETCDF3_CLASSIC, NETCDF3_64BIT_OFFSET,
NETCDF3_64BIT_DATA, NETCDF4). The default sizes write 12 files of ~86 MB (1.0 GiB).
"""
import argparse
import os

import netCDF4
import numpy as np


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--files", type=int, default=12)
    p.add_argument("--records", type=int, default=1, help="records per file")
    p.add_argument("--format", default="NETCDF3_64BIT_OFFSET")
    p.add_argument("--vars3d", type=int, default=20)
    p.add_argument("--vars2d", type=int, default=103)
    p.add_argument("--lev", type=int, default=72)
    p.add_argument("--lat", type=int, default=96)
    p.add_argument("--lon", type=int, default=144)
    p.add_argument("--prefix", default="bench.eam.h0")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    frac2 = (np.arange(a.lat * a.lon) % 4096 / 4096).astype(np.float32).reshape(a.lat, a.lon)
    frac3 = (np.arange(a.lev * a.lat * a.lon) % 4096 / 4096).astype(np.float32).reshape(a.lev, a.lat, a.lon)
    for f in range(a.files):
        year, month = 1 + f // 12, 1 + f % 12
        path = os.path.join(a.out, "%s.%04d-%02d.nc" % (a.prefix, year, month))
        d = netCDF4.Dataset(path, "w", format=a.format)
        d.set_fill_off()
        d.title = "relayout benchmark history stream"
        d.source = "scripts/gen_history.py"
        d.createDimension("time", None)
        d.createDimension("nbnd", 2)
        d.createDimension("lev", a.lev)
        d.createDimension("lat", a.lat)
        d.createDimension("lon", a.lon)
        t = d.createVariable("time", "f8", ("time",))
        t.units, t.calendar, t.bounds = "days since 0001-01-01 00:00:00", "noleap", "time_bnds"
        tb = d.createVariable("time_bnds", "f8", ("time", "nbnd"))
        date = d.createVariable("date", "i4", ("time",))
        date.long_name = "current date (YYYYMMDD)"
        lat = d.createVariable("lat", "f8", ("lat",))
        lat.units = "degrees_north"
        lon = d.createVariable("lon", "f8", ("lon",))
        lon.units = "degrees_east"
        lev = d.createVariable("lev", "f8", ("lev",))
        lev.units, lev.positive = "hPa", "down"
        area = d.createVariable("area", "f8", ("lat", "lon"))
        area.units = "steradian"
        hyam = d.createVariable("hyam", "f8", ("lev",))
        names = []
        for k in range(a.vars3d):
            v = d.createVariable("T%03d" % (k + 1), "f4", ("time", "lev", "lat", "lon"), fill_value=np.float32(1e36))
            v.units, v.long_name, v.cell_methods = "K", "3-D field %d" % (k + 1), "time: mean"
            names.append((v, k + 1, frac3))
        for k in range(a.vars2d):
            v = d.createVariable("V%03d" % (k + 1), "f4", ("time", "lat", "lon"), fill_value=np.float32(1e36))
            v.units, v.long_name, v.cell_methods = "W/m2", "2-D field %d" % (k + 1), "time: mean"
            names.append((v, a.vars3d + k + 1, frac2))
        lat[:] = np.linspace(-90, 90, a.lat)
        lon[:] = np.linspace(0, 360, a.lon, endpoint=False)
        lev[:] = np.linspace(1, 1000, a.lev)
        hyam[:] = np.linspace(0, 1, a.lev)
        area[:] = np.cos(np.radians(lat[:]))[:, None] * np.ones(a.lon)
        for r in range(a.records):
            g = f * a.records + r  # global record
            day = 365.0 * (year - 1) + 30.0 * (month - 1) + r
            t[r] = day + 15
            tb[r] = [day, day + 30]
            date[r] = year * 10000 + month * 100 + 1 + r
            for v, k, frac in names:
                v[r] = frac + np.float32(k * 1000 + g)
        d.close()


if __name__ == "__main__":
    main()
