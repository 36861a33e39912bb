#!/usr/bin/python3
"""Writes a real sub-filed BP3 dataset with ADIOS 1.x (Debian python3-adios).

    mpirun -np 4 /usr/bin/python3 write_bp3.py OUT.bp [options]

Produces OUT.bp (global metadata) and OUT.bp.dir/OUT.bp.0..A-1 through the
MPI_AGGREGATE method with A aggregators. Each variable is cut into uneven
blocks (seeded cut points); at every step the blocks are dealt to ranks by a
seeded permutation, like a load balancer reshuffling boxes, so a rank writes
several blocks at scattered offsets and a block moves between ranks and
sub-files from step to step. Steps are ADIOS 1 timesteps: open "w" for the
first, "a" for the rest.

Every element is a known function of its global index and step (also stored as
the `value_rule` attribute of each variable):
    rho   (float64, 3-D NX x NY x NZ): ((step*NX + i)*NY + j)*NZ + k
    ncell (int32,   2-D MX x MY):      (step*MX + i)*MY + j - 7
Block boxes and their ranks are written to OUT.bp.blocks.json by rank 0 so a
test can compare a catalog with what was written.
"""
import argparse
import json
import sys

import numpy as np
from mpi4py import MPI
import adios_mpi as ad


def parse_ints(s):
    return [int(x) for x in s.split(",")]


def cuts(n, parts, rng):
    """parts uneven pieces of [0, n): sorted distinct interior cut points."""
    if parts > n:
        sys.exit("write_bp3: %d blocks along a dimension of %d" % (parts, n))
    inner = sorted(rng.choice(np.arange(1, n), size=parts - 1, replace=False)) if parts > 1 else []
    edges = [0] + [int(c) for c in inner] + [n]
    return list(zip(edges[:-1], edges[1:]))


def boxes(shape, grid, rng, regular):
    """Row-major list of (start, count) for a grid of blocks over shape."""
    axes = []
    for n, p in zip(shape, grid):
        if regular:
            step = -(-n // p)
            axes.append([(a, min(step, n - a)) for a in range(0, n, step)])
        else:
            axes.append([(a, b - a) for a, b in cuts(n, p, rng)])
    out = [((), ())]
    for ax in axes:
        out = [(s + (a,), c + (n,)) for s, c in out for a, n in ax]
    return out


def rho(step, shape, start, count):
    NX, NY, NZ = shape
    i, j, k = np.meshgrid(*[np.arange(s, s + c) for s, c in zip(start, count)], indexing="ij")
    return (((step * NX + i) * NY + j) * NZ + k).astype(np.float64)


def ncell(step, shape, start, count):
    MX, MY = shape
    i, j = np.meshgrid(*[np.arange(s, s + c) for s, c in zip(start, count)], indexing="ij")
    return ((step * MX + i) * MY + j - 7).astype(np.int32)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", help="NAME.bp")
    p.add_argument("--shape", default="24,20,16", help="rho global shape")
    p.add_argument("--blocks", default="2,3,2", help="rho blocks per dimension")
    p.add_argument("--int-shape", default="30,18", help="ncell global shape; empty = no ncell")
    p.add_argument("--int-blocks", default="5,3", help="ncell blocks per dimension")
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--aggregators", type=int, default=2)
    p.add_argument("--seed", type=int, default=20240611)
    p.add_argument("--regular", action="store_true", help="equal blocks (for very many blocks)")
    p.add_argument("--no-stats", action="store_true", help="skip min/max statistics")
    a = p.parse_args()

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = np.random.default_rng(a.seed)  # same stream on every rank
    variables = [("rho", ad.DATATYPE.double, parse_ints(a.shape), parse_ints(a.blocks), rho,
                  "((step*NX + i)*NY + j)*NZ + k")]
    if a.int_shape:
        variables.append(("ncell", ad.DATATYPE.integer, parse_ints(a.int_shape), parse_ints(a.int_blocks), ncell,
                          "(step*MX + i)*MY + j - 7"))
    layout = []  # per variable: list of boxes
    for _, _, shape, grid, _, _ in variables:
        layout.append(boxes(shape, grid, rng, a.regular))
    # owner[v][step][b] = rank writing block b of variable v at step.
    owner = []
    for bl in layout:
        per_step = []
        for step in range(a.steps):
            perm = np.random.default_rng([a.seed, step, len(bl)]).permutation(len(bl))
            o = [0] * len(bl)
            for pos, b in enumerate(perm):
                o[int(b)] = pos % size
            per_step.append(o)
        owner.append(per_step)

    ad.init_noxml(comm)
    total = sum(int(np.prod(c)) * 8 for bl in layout for _, c in bl)
    ad.set_max_buffer_size(max(64, 2 * total // size // (1 << 20) + 64))  # a rank writes ~1/size of a step
    stats = ad.STATISTICS.NONE if a.no_stats else ad.STATISTICS.DEFAULT
    g = ad.declare_group("fields", "", stats)
    ad.select_method(g, "MPI_AGGREGATE", "num_aggregators=%d;num_ost=%d" % (a.aggregators, a.aggregators), "")
    # One definition per block this rank ever writes (literal dimensions, as in
    # ADIOS 1's no_xml_write_byid example); only written definitions reach the file.
    ids = []
    for v, (name, atype, shape, _, _, rule) in enumerate(variables):
        mine = {b for st in owner[v] for b, r in enumerate(st) if r == rank}
        d = {}
        for b in sorted(mine):
            start, count = layout[v][b]
            d[b] = ad.define_var(g, name, "", atype, ",".join(map(str, count)), ",".join(map(str, shape)),
                                 ",".join(map(str, start)))
        ids.append(d)
        ad.define_attribute(g, "value_rule", name, ad.DATATYPE.string, rule, "")
    ad.define_attribute(g, "value_rule", "", ad.DATATYPE.string,
                        "; ".join("%s: %s" % (v[0], v[5]) for v in variables), "")

    for step in range(a.steps):
        fd = ad.open("fields", a.out, "w" if step == 0 else "a", comm)
        for v, (name, _, shape, _, fn, _) in enumerate(variables):
            for b, r in enumerate(owner[v][step]):
                if r == rank:
                    start, count = layout[v][b]
                    ad.write_byid(fd, ids[v][b], fn(step, shape, start, count))
        ad.close(fd)
    ad.finalize()

    if rank == 0:
        desc = {"ranks": size, "aggregators": a.aggregators, "steps": a.steps, "variables": []}
        for v, (name, _, shape, _, _, rule) in enumerate(variables):
            desc["variables"].append({
                "name": name, "shape": shape, "value_rule": rule,
                "blocks": [{"start": list(s), "count": list(c)} for s, c in layout[v]],
                "owner": owner[v],
            })
        with open(a.out + ".blocks.json", "w") as f:
            json.dump(desc, f)


if __name__ == "__main__":
    main()
