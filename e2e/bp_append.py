"""Writes or appends steps of a BP4/BP5 dataset with the real ADIOS2 writer
(run --append's e2e test): T (12x10 float64, two blocks) and P (12 float32)
per step s, T[i, j] = i*10 + j + 1000*s + bias, P[i] = i + s + bias.

    bp_append.py write|append PATH ENGINE FIRST COUNT [BIAS]
    bp_append.py check OUT STEPS...   (h5py: every step's T and P in OUT)
"""
import sys

import numpy as np

NX, NY = 12, 10


def values(s, bias=0.0):
    t = np.arange(NX * NY, dtype=np.float64).reshape(NX, NY) + 1000.0 * s + bias
    p = (np.arange(NX) + s + bias).astype(np.float32)
    return t, p


def write(path, engine, mode, first, n, bias):
    import adios2
    ad = adios2.Adios()
    io = ad.declare_io("w")
    io.set_engine(engine)
    v = io.define_variable("T", np.zeros((6, NY)), [NX, NY], [0, 0], [6, NY])
    u = io.define_variable("P", np.zeros((NX,), dtype=np.float32), [NX], [0], [NX])
    e = io.open(path, adios2.Mode.Write if mode == "write" else adios2.Mode.Append)
    for s in range(first, first + n):
        t, p = values(s, bias)
        e.begin_step()
        for r in range(2):
            v.set_selection([[6 * r, 0], [6, NY]])
            e.put(v, np.ascontiguousarray(t[6 * r:6 * r + 6]), adios2.Mode.Sync)
        e.put(u, p, adios2.Mode.Sync)
        e.end_step()
    e.close()


def check(out, steps):
    import json, os
    import h5py
    m = json.load(open(os.path.join(out, "relayout.json")))
    bad = 0
    for v in m["variables"]:
        got = sorted(d["step"] for d in v["datasets"])
        if got != steps:
            print(f"{v['name']}: steps {got}, want {steps}")
            bad += 1
        with h5py.File(os.path.join(out, v["file"]), "r") as f:
            for d in v["datasets"]:
                t, p = values(d["step"])
                want = t if v["name"] == "T" else p
                a = f[d["path"]][...]
                if a.shape != want.shape or not np.array_equal(a, want):
                    print(f"{v['name']} step {d['step']}: values differ from the writer's")
                    bad += 1
    print("ok" if bad == 0 else f"{bad} problems")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    if sys.argv[1] == "check":
        check(sys.argv[2], [int(s) for s in sys.argv[3:]])
    else:
        bias = float(sys.argv[6]) if len(sys.argv) > 6 else 0.0
        write(sys.argv[2], sys.argv[3], sys.argv[1], int(sys.argv[4]), int(sys.argv[5]), bias)
