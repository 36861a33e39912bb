#!/usr/bin/python3
"""blosc_gen.py - BP4/BP5 datasets compressed with ADIOS2's Blosc operator, written by the real ADIOS2,
and the values ADIOS2 itself reads back from them (the oracle for relayout's blosc decoder).

usage: /usr/bin/python3 blosc_gen.py write ENGINE OUT       (after `. ../shared/peers/env.sh`)
       /usr/bin/python3 blosc_gen.py zfp ENGINE OUT          variable "z" with the ZFP operator (refused by
                                                            relayout) and "b" with Blosc, float64 16x16, 1 step
       /usr/bin/python3 blosc_gen.py bench OUT               bench/lz4, bench/zstd: float64 256x128x64 (16 MiB) in
                                                            4 blocks, BLOSC_SHUFFLE, clevel 5 (BP5)
       /usr/bin/python3 blosc_gen.py time IN VAR REPS        seconds per adios2.FileReader read of VAR (median of REPS)
       /usr/bin/python3 blosc_gen.py big OUT                 "big": int64, 2^28+2^24 elements (2.1 GiB) in one block,
                                                            lz4 + SHUFFLE: more than c-blosc2's 2 GiB chunk limit, so
                                                            ADIOS2 writes 2 chunks; prints the sha256 of the values
                                                            adios2.FileReader reads back
       /usr/bin/python3 blosc_gen.py dump IN DIR             writes DIR/<var with / as _>.<step>.bin (raw
                                                            little-endian bytes read by adios2.FileReader)
                                                            and DIR/index.txt (var dtype shape per line)

Variables (2 steps, 2 blocks each along dimension 0 unless said):
  c/<codec>/<shuffle>   float64 64x48 for every compressor (blosclz lz4 lz4hc zlib zstd; c-blosc2, which
                        ADIOS2 >= 2.10 links, has no snappy) and shuffle mode (NOSHUFFLE SHUFFLE BITSHUFFLE)
  i4/<codec>            int32 40x30, BITSHUFFLE, blocksize 512 (many blosc blocks per chunk)
  f4/delta              float32 1000 in one block, SHUFFLE, blocksize 1024
  i2/odd                int16 1001 in one block, SHUFFLE (a short last block, a leftover element tail)
  small                 float64 10 (80 bytes: under the 128-byte threshold, stored raw)
  zeros                 float64 4096, all zeros
"""
import sys
import numpy as np
import adios2.bindings as ab

CODECS = ["blosclz", "lz4", "lz4hc", "zlib", "zstd"]  # c-blosc2 dropped snappy
SHUFFLES = ["BLOSC_NOSHUFFLE", "BLOSC_SHUFFLE", "BLOSC_BITSHUFFLE"]


def values(shape, dtype, step, salt):
    n = int(np.prod(shape))
    i = np.arange(n, dtype="f8")
    rng = np.random.default_rng(salt + 1000 * step)
    v = np.round((np.sin(i / 37.0 + salt) * 100 + step + (rng.random(n) < 0.1) * rng.random(n)) * 16) / 16
    if np.dtype(dtype).kind in "iu":
        v = np.round(v * 7)
    return v.astype(dtype).reshape(shape)


def write(engine, out):
    adios = ab.ADIOS()
    io = adios.DeclareIO("blosc")
    io.SetEngine(engine)
    op = adios.DefineOperator("blosc", "blosc", {})
    vars_ = []  # (name, dtype, shape, blocks along dim 0, params)
    for c in CODECS:
        for s in SHUFFLES:
            vars_.append((f"c/{c}/{s[6:].lower()}", "f8", (64, 48), 2, {"compressor": c, "doshuffle": s, "clevel": "5"}))
        vars_.append((f"i4/{c}", "i4", (40, 30), 2, {"compressor": c, "doshuffle": "BLOSC_BITSHUFFLE", "blocksize": "512"}))
    vars_ += [("f4/delta", "f4", (1000,), 1, {"compressor": "lz4", "doshuffle": "BLOSC_SHUFFLE", "blocksize": "1024"}),
              ("i2/odd", "i2", (1001,), 1, {"compressor": "blosclz", "doshuffle": "BLOSC_SHUFFLE", "blocksize": "256"}),
              ("small", "f8", (10,), 1, {"compressor": "zstd"}),
              ("zeros", "f8", (4096,), 1, {"compressor": "lz4"})]
    defined = []
    for k, (name, dt, shape, nb, params) in enumerate(vars_):
        rows = shape[0] // nb
        cnt = [rows] + list(shape[1:])
        var = io.DefineVariable(name, np.zeros(cnt, dt), list(shape), [0] * len(shape), cnt, False)
        var.AddOperation(op, params)
        defined.append((var, name, dt, shape, nb, k))
    w = io.Open(out, ab.Mode.Write)
    for step in range(2):
        w.BeginStep()
        for var, name, dt, shape, nb, k in defined:
            full = np.zeros(shape, dt) if name == "zeros" else values(shape, dt, step, k)
            rows = shape[0] // nb
            for b in range(nb):
                blk = np.ascontiguousarray(full[b * rows:(b + 1) * rows])
                var.SetSelection([[b * rows] + [0] * (len(shape) - 1), list(blk.shape)])
                w.Put(var, blk, ab.Mode.Sync)
        w.EndStep()
    w.Close()


def zfp(engine, out):
    adios = ab.ADIOS()
    io = adios.DeclareIO("zfp")
    io.SetEngine(engine)
    vz = io.DefineVariable("z", np.zeros((16, 16)), [16, 16], [0, 0], [16, 16], False)
    vz.AddOperation(adios.DefineOperator("zfp", "zfp", {}), {"accuracy": "0.001"})
    vb = io.DefineVariable("b", np.zeros((16, 16)), [16, 16], [0, 0], [16, 16], False)
    vb.AddOperation(adios.DefineOperator("blosc", "blosc", {}), {"compressor": "zstd"})
    w = io.Open(out, ab.Mode.Write)
    w.BeginStep()
    v = values((16, 16), "f8", 0, 3)
    w.Put(vz, v, ab.Mode.Sync)
    w.Put(vb, v, ab.Mode.Sync)
    w.EndStep()
    w.Close()


def bench(out):
    adios = ab.ADIOS()
    io = adios.DeclareIO("bench")
    io.SetEngine("BP5")
    op = adios.DefineOperator("blosc", "blosc", {})
    shape, rows = (256, 128, 64), 64
    i = np.arange(np.prod(shape), dtype="f8").reshape(shape)
    full = np.sin(i / 1000.0) * np.cos(i / 77.0) * 1e3
    w = io.Open(out, ab.Mode.Write)
    vs = []
    for c in ["lz4", "zstd"]:
        v = io.DefineVariable(f"bench/{c}", np.zeros((rows, 128, 64)), list(shape), [0, 0, 0], [rows, 128, 64], False)
        v.AddOperation(op, {"compressor": c, "doshuffle": "BLOSC_SHUFFLE", "clevel": "5"})
        vs.append(v)
    w.BeginStep()
    for v in vs:
        for b in range(shape[0] // rows):
            v.SetSelection([[b * rows, 0, 0], [rows, 128, 64]])
            w.Put(v, np.ascontiguousarray(full[b * rows:(b + 1) * rows]), ab.Mode.Sync)
    w.EndStep()
    w.Close()


def big(out):
    import adios2, hashlib
    n = (1 << 28) + (1 << 24)
    a = np.arange(n, dtype="i8")
    a %= 1000003
    adios = ab.ADIOS()
    io = adios.DeclareIO("big")
    io.SetEngine("BP5")
    v = io.DefineVariable("big", a, [n], [0], [n], False)
    v.AddOperation(adios.DefineOperator("blosc", "blosc", {}), {"compressor": "lz4", "doshuffle": "BLOSC_SHUFFLE"})
    w = io.Open(out, ab.Mode.Write)
    w.BeginStep()
    w.Put(v, a, ab.Mode.Sync)
    w.EndStep()
    w.Close()
    del a
    with adios2.FileReader(out) as f:
        print(hashlib.sha256(np.ascontiguousarray(f.read("big")).astype("<i8").tobytes()).hexdigest())


def timeit(path, var, reps):
    import adios2, time
    ts = []
    with adios2.FileReader(path) as f:
        f.read(var)
        for _ in range(reps):
            t0 = time.perf_counter()
            f.read(var)
            ts.append(time.perf_counter() - t0)
    ts.sort()
    print(ts[len(ts) // 2])


def dump(path, out):
    import adios2
    with adios2.FileReader(path) as f, open(f"{out}/index.txt", "w") as idx:
        avail = f.available_variables()
        for name in sorted(avail):
            steps = int(avail[name]["AvailableStepsCount"])
            for s in range(steps):
                a = f.read(name, step_selection=[s, 1])
                a = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"))
                a.tofile(f"{out}/{name.replace('/', '_')}.{s}.bin")
            idx.write(f"{name} {a.dtype.str} {steps}\n")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "bench":
        bench(sys.argv[2])
    elif sys.argv[1] == "big":
        big(sys.argv[2])
    elif sys.argv[1] == "time":
        timeit(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "zfp":
        zfp(sys.argv[2], sys.argv[3])
    else:
        dump(sys.argv[2], sys.argv[3])
