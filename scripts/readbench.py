#!/usr/bin/python3
"""readbench.py - make bench's read benchmark through the libraries users read with.

usage: /usr/bin/python3 scripts/readbench.py [--var fields/Bx] [--step S] [--runs 3]
           [--readers 1,2,4,8] [--patterns whole,xy,...] [--mode fork|spawn] [--json FILE] [--check]
           NAME=PATH [NAME=PATH ...]
  (after `. ../shared/peers/env.sh`, which puts the adios2 module on PYTHONPATH)

Each NAME=PATH is one layout of the same 3-D variable:
  - an ADIOS2 BP3/BP4/BP5 dataset (a directory with md.idx, or a .bp file): read through
    adios2.FileReader, read(var, start, count) per reader part;
  - a relayout output directory (relayout.json names the variable's file and dataset), or
    FILE.h5:/path/to/dataset: read through h5py, dataset[i0:i1, j0:j1, k0:k1] per reader part.

Patterns (the planner's StandardPatterns where it has them: planner/cost.go; (x, y, z) = axes
0, 1, 2, z fastest):
  whole   the whole array, readers split along x
  xy      the plane z = Nz/2, readers over x and y (the plane across the fastest axis)
  xz      the plane y = Ny/2, readers over x and z
  yz      the plane x = Nx/2, readers over y and z
  sub     the central box of half the extent per axis, readers over every axis
  2x1x1   one half of a 2x1x1 decomposition (x < Nx/2), readers over every axis
  line    the line along x at y = Ny/2, z = Nz/2 (one reader: it is too thin to share)
R readers are R processes (multiprocessing, fork) arranged in the planner's reader grid
(ReaderGrid: the prime factors of R, largest first, each to the axis with the largest parts).
Each opens the file itself, reads its part and closes it; a measurement is the wall time from
releasing the readers until the last has closed its file. --mode fork (the default) forks them
from this interpreter just before the release: they pay its copy-on-write faults inside the
measurement (about 25 ms on the 2-core VM of bench/RESULTS.md, more than a line read costs);
--mode spawn starts fresh interpreters that import their library and say they are ready before
the release (a reading script after its imports). Before every measurement the page
cache of every file of every layout is dropped (posix_fadvise DONTNEED). Layouts alternate
within each run; the median of --runs is reported, with the ratio to the best layout of the
pattern and reader count, and the fastest run ("min": on a machine shared with other work, the noise
is mostly added time, so the minimum shows what the layout can do). --json writes every figure; --check compares, untimed, every
layout's values for every pattern (one reader) with the first layout's.
"""
import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import time

import numpy as np


def reader_grid(count, split, n):
    """The planner's ReaderGrid (planner/cost.go)."""
    g = [1] * len(count)
    factors, m, p = [], n, 2
    while m > 1:
        if p * p > m:
            factors.append(m)
            break
        if m % p == 0:
            factors.append(p)
            m //= p
        else:
            p += 1
    for f in sorted(factors, reverse=True):
        best, best_part = -1, 0
        for a in range(len(g)):
            if not split[a] or g[a] * f > count[a]:
                continue
            part = count[a] // g[a]
            if part > best_part:
                best, best_part = a, part
        if best >= 0:
            g[best] *= f
    return g


def parts(lower, count, split, n):
    """The reader parts of a region (the planner's forEachPart), as (start, count) lists."""
    g = reader_grid(count, split, n)
    out = [([], [])]
    for d in range(len(count)):
        nxt = []
        for s, c in out:
            for i in range(g[d]):
                lo, hi = count[d] * i // g[d], count[d] * (i + 1) // g[d]
                if hi > lo:
                    nxt.append((s + [lower[d] + lo], c + [hi - lo]))
        out = nxt
    return out


def patterns(shape):
    X, Y, Z = shape
    h = [max(1, n // 2) for n in shape]
    return {
        "whole": ([0, 0, 0], [X, Y, Z], [1, 0, 0]),
        "xy": ([0, 0, Z // 2], [X, Y, 1], [1, 1, 0]),
        "xz": ([0, Y // 2, 0], [X, 1, Z], [1, 0, 1]),
        "yz": ([X // 2, 0, 0], [1, Y, Z], [0, 1, 1]),
        "sub": ([(n - c) // 2 for n, c in zip(shape, h)], h, [1, 1, 1]),
        "2x1x1": ([0, 0, 0], [h[0], Y, Z], [1, 1, 1]),
        "line": ([0, Y // 2, Z // 2], [X, 1, 1], [1, 0, 0]),
    }


class Layout:
    def __init__(self, name, path, var, step):
        self.name, self.path, self.var, self.step = name, path, var, step
        if os.path.isdir(path) and os.path.exists(os.path.join(path, "relayout.json")):
            m = json.load(open(os.path.join(path, "relayout.json")))
            v = next((v for v in m["variables"] if v["name"] == var), None)
            if v is None:
                sys.exit(f"readbench: {path}: no variable {var} in relayout.json")
            ds = [d for d in v["datasets"] if d.get("level", 0) == 0 and (step is None or d["step"] == step)]
            if not ds:
                sys.exit(f"readbench: {path}: {var} has no dataset at step {step}")
            self.kind, self.file, self.dset = "h5", os.path.join(path, v["file"]), ds[0]["path"]
            self.files = [self.file]
        elif ".h5:" in path:
            self.kind = "h5"
            self.file, self.dset = path.split(".h5:", 1)
            self.file += ".h5"
            self.files = [self.file]
        else:
            self.kind, self.file = "bp", path
            root = path if os.path.isdir(path) else os.path.dirname(path) or "."
            self.files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
        if self.kind == "h5":
            import h5py
            with h5py.File(self.file, "r") as f:
                d = f[self.dset]
                self.shape, self.chunks = list(d.shape), d.chunks
        else:
            import adios2
            with adios2.FileReader(self.file) as f:
                self.shape, self.chunks = list(f.inquire_variable(var).shape()), None

    def read(self, start, count):
        """Opens the layout, reads one box and closes it (what one reader process does)."""
        if self.kind == "h5":
            import h5py
            with h5py.File(self.file, "r") as f:
                return f[self.dset][tuple(slice(s, s + c) for s, c in zip(start, count))]
        import adios2
        with adios2.FileReader(self.file) as f:
            if self.step is None:
                return f.read(self.var, start, count)
            return f.read(self.var, start, count, step_selection=[self.step, 1])

    def drop(self):
        for p in self.files:
            try:
                fd = os.open(p, os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


def worker(layout, start, count, go, done):
    go.wait()
    a = layout.read(start, count)
    done.put((time.monotonic(), a.nbytes))


def spawned(layout, start, count, ready, go, done):
    """A reader in a fresh interpreter: its library imported before it says it is ready."""
    if layout.kind == "h5":
        import h5py  # noqa: F401
    else:
        import adios2  # noqa: F401
    ready.put(None)
    worker(layout, start, count, go, done)


def measure(layout, ps, mode="fork"):
    """Wall seconds for the parts ps read at once, one process each: from the release of the
    readers to the last one's close. mode "fork": forked from this process at the release (their
    copy-on-write faults on this interpreter's pages counted); "spawn": fresh interpreters that
    have imported their library before the release (what a reading script costs after its imports)."""
    ctx = mp.get_context(mode)
    go, done = ctx.Event(), ctx.Queue()
    if mode == "spawn":
        ready = ctx.Queue()
        procs = [ctx.Process(target=spawned, args=(layout, s, c, ready, go, done)) for s, c in ps]
    else:
        procs = [ctx.Process(target=worker, args=(layout, s, c, go, done)) for s, c in ps]
    for p in procs:
        p.start()
    if mode == "spawn":
        for _ in procs:
            ready.get()
    t0 = time.monotonic()
    go.set()
    ends = [done.get() for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode != 0:
            sys.exit(f"readbench: a reader of {layout.name} failed (exit {p.exitcode})")
    return max(e for e, _ in ends) - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("layouts", nargs="+", metavar="NAME=PATH")
    ap.add_argument("--var", default="fields/Bx")
    ap.add_argument("--step", type=int, default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--readers", default="1,2,4,8")
    ap.add_argument("--patterns", default="whole,xy,xz,yz,sub,2x1x1,line")
    ap.add_argument("--json", default="")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--mode", choices=("fork", "spawn"), default="fork",
                    help="how reader processes start (see measure): fork (default), spawn")
    a = ap.parse_args()
    ls = []
    for spec in a.layouts:
        name, _, path = spec.partition("=")
        if not path:
            name, path = os.path.basename(spec.rstrip("/")), spec
        ls.append(Layout(name, path, a.var, a.step))
    shape = ls[0].shape
    for l in ls:
        if l.shape != shape or len(shape) != 3:
            sys.exit(f"readbench: {l.name}: shape {l.shape}, want the 3-D shape {shape} of {ls[0].name}")
    readers = [int(r) for r in a.readers.split(",")]
    pats = patterns(shape)
    names = a.patterns.split(",")
    for n in names:
        if n not in pats:
            sys.exit(f"readbench: unknown pattern {n} (want {', '.join(pats)})")
    width = max(len(l.name) for l in ls)
    print(f"# {a.var} shape {shape}, {a.runs} runs per case (median), caches dropped before each, readers started by {a.mode}; layouts:")
    for l in ls:
        how = "adios2.FileReader" if l.kind == "bp" else f"h5py, chunks {l.chunks}" if l.chunks else "h5py, contiguous"
        print(f"#   {l.name}: {l.path} ({how})")
    print(f"{'pattern':8} {'readers':>7} {'layout':{width}} {'seconds':>9} {'÷ best':>7} {'min':>9} {'÷ best':>7}")
    res = []
    for pn in names:
        lo, cnt, split = pats[pn]
        for r in readers:
            if pn == "line" and r > 1:
                continue
            ps = parts(lo, cnt, split, r)
            times = {l.name: [] for l in ls}
            for run in range(a.runs):
                order = ls[run % len(ls):] + ls[:run % len(ls)]  # rotate who goes first
                for l in order:
                    for m in ls:
                        m.drop()
                    times[l.name].append(measure(l, ps, a.mode))
            med = {k: statistics.median(v) for k, v in times.items()}
            best = min(med.values())
            bestmin = min(min(v) for v in times.values())
            for l in ls:
                s, m = med[l.name], min(times[l.name])
                print(f"{pn:8} {r:7d} {l.name:{width}} {s:9.4f} {s / best if best > 0 else 1:7.2f}"
                      f" {m:9.4f} {m / bestmin if bestmin > 0 else 1:7.2f}", flush=True)
                res.append({"pattern": pn, "readers": r, "layout": l.name, "seconds": s, "min_seconds": m,
                            "runs": times[l.name], "ratio_to_best": s / best if best > 0 else 1.0,
                            "parts": len(ps)})
    # Totals per reader count over the patterns measured for it.
    print()
    print(f"{'total':8} {'readers':>7} {'layout':{width}} {'seconds':>9} {'÷ best':>7} {'min':>9} {'÷ best':>7}"
          "   (sums over the patterns)")
    totals = []
    for r in readers:
        tot, tmin = {}, {}
        for x in res:
            if x["readers"] == r:
                tot[x["layout"]] = tot.get(x["layout"], 0.0) + x["seconds"]
                tmin[x["layout"]] = tmin.get(x["layout"], 0.0) + x["min_seconds"]
        if not tot:
            continue
        best, bestmin = min(tot.values()), min(tmin.values())
        for l in ls:
            print(f"{'total':8} {r:7d} {l.name:{width}} {tot[l.name]:9.4f} {tot[l.name] / best:7.2f}"
                  f" {tmin[l.name]:9.4f} {tmin[l.name] / bestmin:7.2f}")
            totals.append({"readers": r, "layout": l.name, "seconds": tot[l.name], "ratio_to_best": tot[l.name] / best,
                           "min_seconds": tmin[l.name]})
    ok = True
    if a.check:
        for pn in names:
            lo, cnt, _ = pats[pn]
            ref = ls[0].read(lo, cnt)
            for l in ls[1:]:
                if not np.array_equal(l.read(lo, cnt), ref):
                    print(f"check: {pn}: {l.name} differs from {ls[0].name}", file=sys.stderr)
                    ok = False
        print(f"check: every layout equal to {ls[0].name} on {len(names)} patterns" if ok else "check: FAILED")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"var": a.var, "shape": shape, "runs": a.runs, "patterns": {n: pats[n] for n in names},
                       "layouts": [{"name": l.name, "path": l.path, "kind": l.kind, "chunks": l.chunks} for l in ls],
                       "results": res, "totals": totals}, f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
