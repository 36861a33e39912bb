#!/usr/bin/python3
"""bench_openpmd.py - the openPMD input of `make bench` (scripts/bench-peers.sh), written by the real
openPMD-api: a file-based series OUTDIR/bench_%06T.bp (ADIOS2 BP4, what openpmd-pipe reads), meshes
cut into B^3 boxes dealt to the writer ranks after a load-balancing shuffle, each rank storing its
boxes with one storeChunk per box and component.

usage: PEERS_MPI=1 . ../shared/peers/env.sh
       mpirun -np W /usr/bin/python3 scripts/bench_openpmd.py OUTDIR N B [--iterations 0,100]
              [--aggregators A] [--move PERCENT] [--seed S]
  (without mpirun, or with a serial openPMD-api, one process writes every rank's boxes)

Meshes per iteration (iteration index s = position in --iterations, global index i,j,k of N^3,
lin = (i*N + j)*N + k): E/x float64 = s*N^3 + lin; rho float32 = (lin % 2^24) + s (exact in
float32). 12 bytes per cell and iteration: N=384 with 2 iterations is 1.36 GB.
"""
import argparse
import json
import os
import random

import numpy as np
import openpmd_api as io


def main():
    p = argparse.ArgumentParser()
    p.add_argument("outdir")
    p.add_argument("N", type=int)
    p.add_argument("B", type=int)
    p.add_argument("--iterations", default="0,100")
    p.add_argument("--aggregators", type=int, default=2)
    p.add_argument("--move", type=int, default=60)
    p.add_argument("--seed", type=int, default=7)
    a = p.parse_args()
    comm, rank, size = None, 0, 1
    if io.variants.get("mpi") and "OMPI_COMM_WORLD_SIZE" in os.environ:
        from mpi4py import MPI

        comm = MPI.COMM_WORLD
        rank, size = comm.rank, comm.size
    N, B = a.N, a.B
    assert N % B == 0, "N must be a multiple of B"
    nb = N // B
    boxes = [(i, j, k) for i in range(nb) for j in range(nb) for k in range(nb)]
    # Equal runs of boxes per rank, then a share of them moved to random ranks.
    owner = [b * size // len(boxes) for b in range(len(boxes))]
    rng = random.Random(a.seed)
    for b in range(len(boxes)):
        if rng.randrange(100) < a.move:
            owner[b] = rng.randrange(size)
    mine = [boxes[b] for b in range(len(boxes)) if owner[b] == rank]

    cfg = {"backend": "adios2", "adios2": {"engine": {"type": "bp4", "parameters": {"NumAggregators": str(a.aggregators)}}}}
    os.makedirs(a.outdir, exist_ok=True)
    path = os.path.join(a.outdir, "bench_%06T.bp")
    if comm is not None:
        series = io.Series(path, io.Access.create, comm, json.dumps(cfg))
    else:
        series = io.Series(path, io.Access.create, json.dumps(cfg))
    series.set_software("relayout bench_openpmd.py", "1")
    series.set_meshes_path("fields/")
    series.set_attribute("value_rule", "E/x float64 s*N^3 + lin; rho float32 (lin % 2^24) + s; lin = (i*N+j)*N+k")
    ii, jj, kk = np.meshgrid(np.arange(B), np.arange(B), np.arange(B), indexing="ij")
    local = (ii * N + jj) * N + kk
    its = series.write_iterations()
    for s, itn in enumerate(int(x) for x in a.iterations.split(",")):
        it = its[itn]
        it.set_time(1e-15 * itn)
        it.set_dt(1e-15)
        for rec, comp, dt in (("E", "x", np.float64), ("rho", None, np.float32)):
            m = it.meshes[rec]
            m.geometry = io.Geometry.cartesian
            m.data_order = "C"
            m.axis_labels = ["x", "y", "z"]
            m.grid_spacing = [1.0, 1.0, 1.0]
            m.grid_global_offset = [0.0, 0.0, 0.0]
            m.grid_unit_SI = 1e-6
            rc = m[comp if comp is not None else io.Mesh_Record_Component.SCALAR]
            rc.set_attribute("position", [0.0, 0.0, 0.0])
            rc.unit_SI = 1.0
            rc.reset_dataset(io.Dataset(np.dtype(dt), [N, N, N]))
            held = []  # the chunks stay alive until the flush
            for bi, bj, bk in mine:
                lin = local + ((bi * B * N + bj * B) * N + bk * B)
                if dt == np.float64:
                    v = (float(s) * N ** 3 + lin).astype(np.float64)
                else:
                    v = ((lin % (1 << 24)) + s).astype(np.float32)
                held.append(v)
                rc.store_chunk(v, [bi * B, bj * B, bk * B], [B, B, B])
            series.flush()
            del held
        it.close()
    series.close()


if __name__ == "__main__":
    main()
