#!/usr/bin/python3
"""Writes the synthetic SCORPIO decomposition maps of issue 42's benchmark.

  gen_scorpio_maps.py DIR [--ncol 100000] [--lev 72] [--tasks 16] [--run 4] [--seed 42]

DIR/map1d.dat  the ncol columns cut into runs of --run consecutive columns, the runs shuffled
               (numpy default_rng(--seed)) and dealt round-robin to the --tasks tasks; each task
               keeps its runs in the order they were dealt (no pads, no holes).
DIR/map2d.dat  the matching lev x ncol map: for each task, its columns' entries over all levels,
               in the order of the real E3SM 2-D maps (../shared/peers/e3sm-io/
               piodecomp16tasks16io02dims_ioid_548.dat): level-major, and within a level the
               task's columns in its 1-D order, i.e. entry lev*ncol + col + 1.

The format is the one scorpio_gen's -m DIR -1 map1d.dat -2 map2d.dat reads (SCORPIO's text map,
as E3SM saves it): "version 2001 npes P ndims N", the global dims in FORTRAN order (fastest first:
"ncol" or "ncol lev"), then per task "task maplen" and maplen 1-based linear offsets (C row-major
over the non-record dims; 0 would be a pad).
"""
import argparse
import os

import numpy as np


def write_map(path, fdims, tasks):
    with open(path, "w") as f:
        f.write("version 2001 npes %d ndims %d \n" % (len(tasks), len(fdims)))
        f.write(" ".join(str(d) for d in fdims) + " \n")
        for t, ent in enumerate(tasks):
            f.write("%d %d\n" % (t, len(ent)))
            n = len(ent) - len(ent) % 20  # 20 entries a line, the rest on one line
            np.savetxt(f, ent[:n].reshape(-1, 20), fmt="%d")
            if n < len(ent):
                f.write(" ".join(str(e) for e in ent[n:]) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--ncol", type=int, default=100000)
    ap.add_argument("--lev", type=int, default=72)
    ap.add_argument("--tasks", type=int, default=16)
    ap.add_argument("--run", type=int, default=4)
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)

    starts = np.arange(0, a.ncol, a.run, dtype=np.int64)
    np.random.default_rng(a.seed).shuffle(starts)
    cols = []  # 0-based columns of each task, in dealt order
    for t in range(a.tasks):
        s = starts[t :: a.tasks]
        c = (s[:, None] + np.arange(a.run, dtype=np.int64)[None, :]).ravel()
        cols.append(c[c < a.ncol])  # the last run may be short
    allc = np.concatenate(cols)
    assert len(allc) == a.ncol and np.array_equal(np.sort(allc), np.arange(a.ncol))

    write_map(os.path.join(a.dir, "map1d.dat"), [a.ncol], [c + 1 for c in cols])
    lev = np.arange(a.lev, dtype=np.int64)[:, None] * a.ncol
    write_map(os.path.join(a.dir, "map2d.dat"), [a.ncol, a.lev], [(lev + c[None, :]).ravel() + 1 for c in cols])
    print("gen_scorpio_maps: %s: %d columns in %d shuffled runs of %d over %d tasks (%d..%d columns each), %d levels"
          % (a.dir, a.ncol, len(starts), a.run, a.tasks, min(map(len, cols)), max(map(len, cols)), a.lev))


if __name__ == "__main__":
    main()
