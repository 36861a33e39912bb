#!/usr/bin/python3
"""gen_chunks.py - Blosc chunks written by the real libraries, with the bytes they hold.

usage: /usr/bin/python3 gen_chunks.py LIBBLOSC2 OUT
  LIBBLOSC2: path of c-blosc2's libblosc2.so (../shared/peers/lib/libblosc2.so.7, the one ADIOS2 links)
  writes OUT/<case>.chunk (one chunk) and OUT/<case>.raw (what it decodes to), for:
  - c-blosc2 (ctypes, blosc2_compress_ctx): every codec, filter pipelines (shuffle, shuffle with
    meta, bitshuffle, delta, delta+shuffle, trunc_prec), split modes, typesizes 1..16 and odd ones,
    block sizes, incompressible data (memcpyed), and the special chunks (zeros, NaN, repeated
    value, uninitialised: blosc2_chunk_*);
  - c-blosc1 (Debian python3-blosc): every codec incl. snappy, shuffle modes, typesizes.
"""
import ctypes, os, sys
import numpy as np


class CParams(ctypes.Structure):  # blosc2_cparams of c-blosc2 2.23
    _fields_ = [("compcode", ctypes.c_uint8), ("compcode_meta", ctypes.c_uint8), ("clevel", ctypes.c_uint8),
                ("use_dict", ctypes.c_int), ("typesize", ctypes.c_int32), ("nthreads", ctypes.c_int16),
                ("blocksize", ctypes.c_int32), ("splitmode", ctypes.c_int32), ("schunk", ctypes.c_void_p),
                ("filters", ctypes.c_uint8 * 6), ("filters_meta", ctypes.c_uint8 * 6),
                ("prefilter", ctypes.c_void_p), ("preparams", ctypes.c_void_p), ("tuner_params", ctypes.c_void_p),
                ("tuner_id", ctypes.c_int), ("instr_codec", ctypes.c_bool), ("codec_params", ctypes.c_void_p),
                ("filter_params", ctypes.c_void_p * 6)]


def data(kind, n, dtype):
    rng = np.random.default_rng(n)
    if kind == "smooth":
        v = np.round(np.sin(np.arange(n) / 50.0) * 1000) / 8
    elif kind == "ramp":
        v = np.arange(n) * 3 + 7
    else:
        return rng.integers(0, 256, n * np.dtype(dtype).itemsize, dtype="u1").tobytes()
    return v.astype(dtype).tobytes()


def main():
    lib = ctypes.CDLL(sys.argv[1])
    out = sys.argv[2]
    lib.blosc2_init()
    lib.blosc2_create_cctx.restype = ctypes.c_void_p
    lib.blosc2_create_cctx.argtypes = [CParams]
    lib.blosc2_compress_ctx.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32]
    lib.blosc2_free_ctx.argtypes = [ctypes.c_void_p]

    def put(name, chunk, raw):
        open(os.path.join(out, name + ".chunk"), "wb").write(chunk)
        open(os.path.join(out, name + ".raw"), "wb").write(raw)

    def b2(name, raw, typesize, codec=1, filters=(0, 0, 0, 0, 0, 1), meta=(0,) * 6, blocksize=0, split=4, clevel=5):
        cp = CParams(compcode=codec, clevel=clevel, typesize=typesize, nthreads=1, blocksize=blocksize, splitmode=split)
        for i in range(6):
            cp.filters[i], cp.filters_meta[i] = filters[i], meta[i]
        ctx = lib.blosc2_create_cctx(cp)
        dst = ctypes.create_string_buffer(len(raw) + 64)
        n = lib.blosc2_compress_ctx(ctx, raw, len(raw), dst, len(dst))
        lib.blosc2_free_ctx(ctx)
        if n <= 0:
            raise SystemExit(f"{name}: blosc2_compress_ctx returned {n}")
        put("b2-" + name, dst.raw[:n], raw)

    codecs = {"blosclz": 0, "lz4": 1, "lz4hc": 2, "zlib": 4, "zstd": 5}
    pipelines = {"noshuffle": (0,) * 6, "shuffle": (0, 0, 0, 0, 0, 1), "bitshuffle": (0, 0, 0, 0, 0, 2),
                 "delta": (0, 0, 0, 0, 3, 0), "delta-shuffle": (0, 0, 0, 0, 3, 1),
                 "delta-bitshuffle": (0, 0, 0, 0, 3, 2), "truncprec-shuffle": (0, 0, 0, 0, 4, 1)}
    for cname, code in codecs.items():
        for pname, pipe in pipelines.items():
            meta = (0, 0, 0, 0, 20, 0) if pname.startswith("truncprec") else (0,) * 6
            raw = data("smooth", 5000, "f8")
            if pname.startswith("truncprec"):  # what trunc_prec keeps: the decoder cannot undo it
                continue
            b2(f"{cname}-{pname}-f8", raw, 8, code, pipe, meta, blocksize=8192)
        for ts, dt in [(1, "u1"), (2, "i2"), (4, "i4"), (8, "i8")]:
            b2(f"{cname}-ramp-ts{ts}", data("ramp", 3001, dt), ts, code, (0, 0, 0, 0, 0, 1), blocksize=1024)
        for split, sname in [(1, "always"), (2, "never"), (3, "auto")]:
            b2(f"{cname}-split-{sname}", data("smooth", 4000, "f4"), 4, code, (0, 0, 0, 0, 0, 2), split=split)
    for ts in [3, 5, 12, 16, 17]:
        raw = data("ramp", 777 * ts, "u1")
        b2(f"odd-ts{ts}-shuffle", raw, ts, 0, (0, 0, 0, 0, 0, 1), blocksize=512)
        b2(f"odd-ts{ts}-bitshuffle", raw, ts, 1, (0, 0, 0, 0, 0, 2), blocksize=512)
        b2(f"odd-ts{ts}-delta", raw, ts, 5, (0, 0, 0, 0, 3, 1), blocksize=512)
    b2("shuffle-meta4-f8", data("smooth", 3000, "f8"), 8, 1, (0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 4))
    b2("random-memcpyed", data("random", 4000, "u1"), 1, 1, (0,) * 6)
    b2("random-f8", data("random", 4000, "f8"), 8, 5, (0, 0, 0, 0, 0, 1), blocksize=4096)
    b2("tiny", b"\x01\x02\x03", 1, 0)
    b2("empty", b"", 1, 0)
    b2("clevel0", data("smooth", 1000, "f8"), 8, 1, clevel=0)

    # Special chunks.
    for fn, name, ts, raw in [("blosc2_chunk_zeros", "zeros", 8, bytes(8 * 1000)),
                              ("blosc2_chunk_uninit", "uninit", 4, None),
                              ("blosc2_chunk_nans", "nans-f8", 8, np.full(1000, np.nan).tobytes()),
                              ("blosc2_chunk_nans", "nans-f4", 4, np.full(1000, np.nan, "f4").tobytes())]:
        f = getattr(lib, fn)
        f.argtypes = [CParams, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32]
        dst = ctypes.create_string_buffer(64)
        nbytes = 8000 if ts == 8 else 4000
        n = f(CParams(typesize=ts, nthreads=1, clevel=5, compcode=1), nbytes, dst, 64)
        if n <= 0:
            raise SystemExit(f"{fn}: {n}")
        put("b2-special-" + name, dst.raw[:n], raw if raw is not None else b"")
    f = lib.blosc2_chunk_repeatval
    f.argtypes = [CParams, ctypes.c_int32, ctypes.c_void_p, ctypes.c_int32, ctypes.c_void_p]
    v = np.array([2.5], "f8").tobytes()
    dst = ctypes.create_string_buffer(64)
    n = f(CParams(typesize=8, nthreads=1, clevel=5, compcode=1), 8000, dst, 64, v)
    if n <= 0:
        raise SystemExit(f"repeatval: {n}")
    put("b2-special-repeat", dst.raw[:n], v * 1000)

    # c-blosc1 (Debian python3-blosc), as the HDF5 filter 32001 and ADIOS2 2.7 write.
    import blosc
    for cname in ["blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"]:
        if cname not in blosc.compressor_list():
            continue
        for shuf, sname in [(blosc.NOSHUFFLE, "noshuffle"), (blosc.SHUFFLE, "shuffle"), (blosc.BITSHUFFLE, "bitshuffle")]:
            for ts, dt, n in [(8, "f8", 5000), (4, "i4", 70001), (2, "i2", 999), (1, "u1", 300)]:
                raw = data("smooth" if dt[0] == "f" else "ramp", n, dt)
                put(f"b1-{cname}-{sname}-ts{ts}", blosc.compress(raw, typesize=ts, clevel=5, shuffle=shuf, cname=cname), raw)
    raw = data("random", 3000, "u1")
    put("b1-random", blosc.compress(raw, typesize=1, clevel=9, cname="lz4"), raw)


main()
