# Writes HDF5 test inputs with plugin filters, through h5py and hdf5plugin
# (Debian python3-hdf5plugin; the filters themselves are Debian's
# hdf5-filter-plugin, hdf5-filter-plugin-zfp-serial, ... found on the HDF5
# plugin path).
#
# usage: plugins_gen.py write FILE    every filter the library offers (see below)
#        plugins_gen.py mystery FILE  a dataset whose pipeline names filter 40000,
#                                     which no plugin provides
#
# `write` prints the names of the filters it wrote, one per line; filters the
# library does not offer (Debian 12 has no bitshuffle, zstd or blosc2 plugin)
# are left out. Chunk shapes leave partial edge chunks; element types include
# big-endian ones; one virtual dataset maps lz4 sources of the same file.
import sys
import numpy as np, h5py, hdf5plugin
from h5py import h5p, h5z, h5t, h5s, h5d

def write(path):
    rng = np.random.default_rng(16)
    f8 = np.round(np.sin(np.arange(70 * 90) / 40.0).reshape(70, 90) * 512) / 8
    i4 = (np.arange(9 * 30 * 20, dtype="<i4") * 7 % 1001 - 500).reshape(9, 30, 20)
    f4 = (np.cos(np.arange(40 * 36 * 11) / 9.0) * 100).astype("<f4").reshape(40, 36, 11)
    be = np.arange(5000, dtype=">i8") * 3 - 7000
    u1 = rng.integers(0, 256, 10000, dtype="u1")
    filters = {
        "lz4": (32004, lambda: hdf5plugin.LZ4()),
        "bzip2": (307, lambda: hdf5plugin.BZip2()),
        "zfp": (32013, lambda: hdf5plugin.Zfp(reversible=True)),
        "bitshuffle": (32008, lambda: hdf5plugin.Bitshuffle()),
        "zstd": (32015, lambda: hdf5plugin.Zstd()),
        "lzf": (32000, lambda: dict(compression="lzf")),
    }
    if hasattr(hdf5plugin, "Blosc2"):
        filters["blosc2"] = (32026, lambda: hdf5plugin.Blosc2())
    wrote = []
    with h5py.File(path, "w") as f:
        for name, (fid, kw) in filters.items():
            if name != "lzf" and not h5z.filter_avail(fid):
                continue
            g = f.create_group(name)
            g.create_dataset("f8", data=f8, chunks=(32, 40), **kw())
            g.create_dataset("i4", data=i4, chunks=(4, 16, 20), **kw())
            g.create_dataset("f4", data=f4, chunks=(16, 16, 11), **kw())
            if name != "zfp":  # zfp takes floating-point and 32/64-bit integers only
                g.create_dataset("be_i8", data=be, chunks=(1024,), **kw())
                g.create_dataset("u1", data=u1, chunks=(4096,), **kw())
            wrote.append(name)
        # Plugin filters with HDF5's own shuffle and fletcher32 in the pipeline.
        f.create_dataset("mixed/shuffle_lz4", data=f8, chunks=(20, 30), shuffle=True, **hdf5plugin.LZ4())
        f.create_dataset("mixed/bzip2_fletcher32", data=i4, chunks=(3, 30, 7), fletcher32=True, **hdf5plugin.BZip2())
        # The native path beside it.
        f.create_dataset("native/deflate", data=f8, chunks=(32, 40), compression="gzip", shuffle=True)
        # A virtual dataset over two lz4 datasets of this file.
        f.create_dataset("vsrc/a", data=f8[:30], chunks=(16, 32), **hdf5plugin.LZ4())
        f.create_dataset("vsrc/b", data=f8[30:], chunks=(16, 32), **hdf5plugin.LZ4())
        layout = h5py.VirtualLayout(shape=f8.shape, dtype=f8.dtype)
        layout[:30] = h5py.VirtualSource(".", "vsrc/a", shape=(30, 90))
        layout[30:] = h5py.VirtualSource(".", "vsrc/b", shape=(40, 90))
        f.create_virtual_dataset("virtual/lz4", layout, fillvalue=-1.0)
    for w in wrote:
        print(w)

def mystery(path):
    # A mandatory unknown filter cannot be set; an optional one can, and
    # chunks written directly with mask 0 say it was applied: HDF5 itself
    # cannot read them without the plugin.
    with h5py.File(path, "w") as f:
        dcpl = h5p.create(h5p.DATASET_CREATE)
        dcpl.set_chunk((8,))
        dcpl.set_filter(40000, h5z.FLAG_OPTIONAL, (1, 2))
        d = h5d.create(f.id, b"mystery", h5t.IEEE_F64LE, h5s.create_simple((16,)), dcpl)
        d.write_direct_chunk((0,), b"\x01" * 40, filter_mask=0)
        d.write_direct_chunk((8,), b"\x02" * 40, filter_mask=0)
        f.create_dataset("plain", data=np.arange(16.0))

if __name__ == "__main__":
    {"write": write, "mystery": mystery}[sys.argv[1]](sys.argv[2])
