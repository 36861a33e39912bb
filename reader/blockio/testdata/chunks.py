# Writes HDF5 chunks through h5py/libhdf5 and dumps each chunk's raw stored
# bytes and its decoded contents, as an oracle for blockio's decoders.
# usage: chunks.py OUTDIR  -> OUTDIR/cases.json, OUTDIR/<case>.raw, OUTDIR/<case>.want
import json, sys, os
import numpy as np, h5py

out = sys.argv[1]
names = {1: "deflate", 2: "shuffle", 3: "fletcher32", 32000: "lzf"}
cases = [
    # name, dtype, shape, chunk, kwargs
    ("f8_all", "<f8", (64, 32), (16, 32), dict(compression="gzip", shuffle=True, fletcher32=True)),
    ("i4_gzip", "<i4", (1000,), (250,), dict(compression="gzip", compression_opts=9)),
    ("i2_shuffle", ">i2", (30,), (30,), dict(shuffle=True)),
    ("u1_fletcher_odd", "u1", (7,), (7,), dict(fletcher32=True)),
    ("u1_fletcher_long", "u1", (1501,), (1501,), dict(fletcher32=True)),
    ("f4_shuf_flet", "<f4", (777,), (777,), dict(shuffle=True, fletcher32=True)),
    ("u8_gzip_flet", "<u8", (4, 5, 6), (4, 5, 6), dict(compression="gzip", fletcher32=True)),
    # LZF (HDF5 filter 32000, h5py's own): long repeats, literals, with
    # shuffle and fletcher32 around it.
    ("f8_lzf", "<f8", (64, 32), (16, 32), dict(compression="lzf")),
    ("i4_lzf_shuffle", "<i4", (3000,), (1000,), dict(compression="lzf", shuffle=True)),
    ("u1_lzf_flet", "u1", (5000,), (5000,), dict(compression="lzf", fletcher32=True)),
    ("u2_lzf_zeros", "<u2", (4096,), (4096,), dict(compression="lzf")),
]
rng = np.random.default_rng(7)
meta = []
with h5py.File(os.path.join(out, "chunks.h5"), "w") as f:
    for name, dt, shape, chunk, kw in cases:
        n = int(np.prod(shape))
        if name.endswith("zeros"):
            data = np.zeros(shape, dt)
        elif dt.endswith("f8") or dt.endswith("f4"):
            data = (np.arange(n) * 0.37 + rng.normal(size=n)).astype(dt).reshape(shape)
        else:
            data = (np.arange(n) * 2654435761 % 251 + np.arange(n) // 3).astype(dt).reshape(shape)
        d = f.create_dataset(name, data=data, chunks=chunk, **kw)
        dcpl = d.id.get_create_plist()
        codecs = []
        for i in range(dcpl.get_nfilters()):
            code, flags, values, fname = dcpl.get_filter(i)
            codecs.append({"name": names[code], "params": [int(v) for v in values]})
        for k in range(d.id.get_num_chunks()):
            info = d.id.get_chunk_info(k)
            mask, raw = d.id.read_direct_chunk(info.chunk_offset)
            sl = tuple(slice(o, o + c) for o, c in zip(info.chunk_offset, chunk))
            case = "%s_%d" % (name, k)
            open(os.path.join(out, case + ".raw"), "wb").write(raw)
            open(os.path.join(out, case + ".want"), "wb").write(np.ascontiguousarray(data[sl]).tobytes())
            meta.append({"case": case, "elem": np.dtype(dt).itemsize, "mask": mask,
                         "codecs": [c for j, c in enumerate(codecs) if not mask & (1 << j)]})
json.dump(meta, open(os.path.join(out, "cases.json"), "w"))
