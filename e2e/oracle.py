"""Independent oracle for relayout's end-to-end tests (h5py + numpy only).

usage: oracle.py IN OUT

Reads IN with h5py using its own reading of the openPMD standard (or the plain
HDF5 / ADIOS2-HDF5-engine conventions), reads every dataset listed in
OUT/relayout.json with h5py, and checks: same shape, every element equal (NaNs
equal), output little-endian with the input's kind and size, the manifest's
sha256 of the row-major little-endian bytes, the manifest's layout and chunk
shape against the file. openPMD constant record components (groups with
value and shape attributes) count as the full arrays they stand for, on both
sides (the manifest's "constants"). Prints one line per dataset; exit 1 on any mismatch.
"""
import hashlib
import json
import os
import re
import sys

import h5py
import numpy as np


def attr_str(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def is_constant(obj):
    """An openPMD constant record component: a group with value and shape."""
    return isinstance(obj, h5py.Group) and "value" in obj.attrs and "shape" in obj.attrs


def constant(obj):
    v = obj.attrs["value"]
    return np.full(tuple(int(n) for n in obj.attrs["shape"]), v, dtype=np.asarray(v).dtype)


def input_arrays(path):
    """{(var, step): numpy array} for every numeric array relayout should rewrite."""
    files = [path]
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith((".h5", ".hdf5")))
    out, attrs = {}, {}
    for fn in files:
        with h5py.File(fn, "r") as f:
            if "openPMD" in f.attrs:
                base = attr_str(f.attrs["basePath"])
                meshes = attr_str(f.attrs.get("meshesPath", b"meshes/"))
                data = f[base.split("%T")[0]]
                for it in data:
                    # relayout's own output keeps rank-0 values (a step's
                    # "time") outside the meshes, in relayout_values.
                    vg = data[it].get("relayout_values")
                    if vg is not None:
                        def visit_values(name, obj, it=int(it)):
                            if isinstance(obj, h5py.Dataset):
                                out[(name, it)] = obj[()]
                                attrs[(name, it)] = dict(obj.attrs)
                        vg.visititems(visit_values)
                    # particle record components: variable
                    # "particles/<species>/<record>[/<component>]", 1-D,
                    # empty ones too; attributes of species, record and
                    # component (which win)
                    pg = data[it].get(attr_str(f.attrs.get("particlesPath", b"particles/")).rstrip("/"))
                    for sp in (pg if isinstance(pg, h5py.Group) else []):
                        spg = pg[sp]
                        if not isinstance(spg, h5py.Group):
                            continue
                        def visit_particles(name, obj, it=int(it), spg=spg, sp=sp):
                            if is_constant(obj):  # charge, mass, positionOffset
                                out[("particles/%s/%s" % (sp, name), it)] = constant(obj)
                            elif isinstance(obj, h5py.Dataset) and obj.dtype.kind in "iuf":
                                key = ("particles/%s/%s" % (sp, name), it)
                                out[key] = obj[()]
                                a = dict(spg.attrs)
                                if obj.parent.name != spg.name:
                                    a.update(obj.parent.attrs)
                                a.update(obj.attrs)
                                attrs[key] = a
                        spg.visititems(visit_particles)
                    mg = data[it].get(meshes.rstrip("/"))
                    if mg is None:
                        continue
                    for rec in mg:
                        obj = mg[rec]
                        if is_constant(obj):  # a scalar constant record
                            out[(rec, int(it))] = constant(obj)
                            continue
                        if isinstance(obj, h5py.Dataset):
                            out[(rec, int(it))] = obj[()]
                            attrs[(rec, int(it))] = dict(obj.attrs)
                            continue
                        for comp in obj:
                            if is_constant(obj[comp]):
                                out[(rec + "/" + comp, int(it))] = constant(obj[comp])
                            if isinstance(obj[comp], h5py.Dataset):
                                out[(rec + "/" + comp, int(it))] = obj[comp][()]
                                # record attributes, then the component's own (which win)
                                attrs[(rec + "/" + comp, int(it))] = {**dict(obj.attrs), **dict(obj[comp].attrs)}
            elif "NumSteps" in f.attrs:
                for g in f:
                    m = re.fullmatch(r"Step(\d+)", g)
                    if not m:
                        continue
                    def visit(name, obj, step=int(m.group(1))):
                        if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "iuf" and obj.size > 0:
                            out[(name, step)] = obj[()]
                    f[g].visititems(visit)
            else:
                def visit(name, obj):
                    if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "iuf" and obj.size > 0:
                        out[(name, 0)] = obj[()]
                f.visititems(visit)
    return out, attrs


def same_attr(a, b):
    """Equal attribute values: strings by text, numbers by value as float64/int."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "SUO" or b.dtype.kind in "SUO":
        dec = lambda x: [v.decode() if isinstance(v, bytes) else str(v) for v in np.atleast_1d(x).tolist()]
        return dec(a) == dec(b)
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return a.shape == b.shape and np.array_equal(a.astype(np.float64), b.astype(np.float64), equal_nan=True)
    return a.shape == b.shape and np.array_equal(a, b)


def main():
    src, dst = sys.argv[1], sys.argv[2]
    want, want_attrs = input_arrays(src)
    with open(os.path.join(dst, "relayout.json")) as fh:
        man = json.load(fh)
    bad = 0
    seen = set()
    for var in man["variables"]:
        with h5py.File(os.path.join(dst, var["file"]), "r") as f:
            for d in var["datasets"]:
                key = (var["name"], d["step"])
                seen.add(key)
                problems = []
                if key not in want:
                    problems.append("not in input")
                else:
                    a = np.asarray(want[key])
                    ds = f[d["path"]]
                    b = ds[()]
                    if ds.dtype.kind != a.dtype.kind or ds.dtype.itemsize != a.dtype.itemsize:
                        problems.append(f"dtype {ds.dtype} vs input {a.dtype}")
                    if ds.dtype.itemsize > 1 and ds.dtype.byteorder not in "<=":
                        problems.append(f"output byte order {ds.dtype.byteorder}")
                    if np.shape(b) != np.shape(a) or list(np.shape(b)) != list(d["shape"]):
                        problems.append(f"shape {np.shape(b)} vs input {np.shape(a)} vs manifest {d['shape']}")
                    elif not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
                        idx = np.argwhere(~((a == b) | (np.isnan(a) & np.isnan(b)) if a.dtype.kind == "f" else a != b))
                        problems.append(f"values differ, first at {idx[0].tolist() if len(idx) else '?'}")
                    le = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
                    # "" is run --digest none: no digest recorded, none to check.
                    if d["sha256"] != "" and hashlib.sha256(le).hexdigest() != d["sha256"]:
                        problems.append("manifest sha256 differs from the input's")
                    # openPMD: a vector record's attributes are on its group,
                    # the component's own on the dataset (which win).
                    got_attrs = dict(ds.attrs)
                    if var.get("species"):
                        # particles: species group, record group, dataset
                        sp = "/".join(d["path"].split("/")[:5])
                        got_attrs = {**dict(f[sp].attrs), **(dict(ds.parent.attrs) if ds.parent.name != sp else {}), **got_attrs}
                    elif not ds.parent.name.endswith("/meshes"):
                        got_attrs = {**dict(ds.parent.attrs), **got_attrs}
                    for name, value in want_attrs.get(key, {}).items():
                        if name not in got_attrs:
                            problems.append(f"attribute {name} missing")
                        elif not same_attr(value, got_attrs[name]):
                            problems.append(f"attribute {name}: {got_attrs[name]!r} vs input {value!r}")
                    chunks = list(ds.chunks) if ds.chunks else None
                    if d["layout"] == "chunked" and chunks != d["chunk"]:
                        problems.append(f"chunks {chunks} vs manifest {d['chunk']}")
                    if d["layout"] == "contiguous" and chunks is not None:
                        problems.append(f"contiguous in manifest but chunked {chunks} in file")
                print(("OK  " if not problems else "BAD ") + f"{var['name']} step {d['step']} {d['path']} " + "; ".join(problems))
                bad += bool(problems)
        # constant record components: groups with value and shape
        with h5py.File(os.path.join(dst, var["file"]), "r") as f:
            for d in var.get("constants", []):
                key = (var["name"], d["step"])
                seen.add(key)
                problems = []
                obj = f.get(d["path"])
                if key not in want:
                    problems.append("not in input")
                elif obj is None or not is_constant(obj):
                    problems.append("not a constant record (value and shape) in the file")
                else:
                    a, b = np.asarray(want[key]), constant(obj)
                    if a.shape != b.shape or a.dtype != b.dtype or not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
                        problems.append(f"constant {b.dtype} {b.shape} {b.flat[0] if b.size else None} vs input {a.dtype} {a.shape}")
                    le = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
                    if d["sha256"] != "" and hashlib.sha256(le).hexdigest() != d["sha256"]:
                        problems.append("manifest sha256 differs from the input's")
                print(("OK  " if not problems else "BAD ") + f"{var['name']} step {d['step']} {d['path']} constant " + "; ".join(problems))
                bad += bool(problems)
    for key in sorted(set(want) - seen):
        print(f"BAD {key[0]} step {key[1]} missing from output")
        bad += 1
    print(f"oracle: {len(seen)} datasets checked, {bad} bad")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
