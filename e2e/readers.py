"""External readers against a relayout output (for ecosystem_test.go).

usage: readers.py links OUT IN
    h5py: every dataset of OUT/relayout.json read through OUT/series.h5
    (virtual datasets for meshes, external links for rank-0 values and empty
    arrays) equals the per-variable file's; the per-variable files and
    series.h5 carry the group-based openPMD series attributes (an openPMD
    input's meshesPath and software kept); vector
    records keep record attributes on the group, component ones on the
    dataset; iterations carry time/dt/timeUnitSI.
usage: readers.py yt OUT IN_FILE ITERATION
    yt loads OUT/series.h5 (a group-based series) and IN_FILE and returns the
    same covering-grid values for every mesh field of the output.
usage: readers.py yt-raw OUT IN_FILE ITERATION
    as yt, but the input is read with h5py (record component * unitSI): for
    inputs whose constant record components make yt's view of the original
    differ from the rewritten meshes.
usage: readers.py yt-out OUT ITERATION
    as yt-raw, with the output's own per-variable files (read with h5py) as
    the reference: for inputs that no reader here but relayout's opens (BP),
    whose equality with the output `relayout verify` establishes.
usage: readers.py pmd IN|- OUT
    openPMD-api reads every mesh and constant record of OUT/series.h5 equal to
    the openPMD input IN (or, with "-", to the per-variable files) with the
    input's attributes; a mesh missing from the output must be in skipped.
usage: readers.py viewer IN SERIES [MISSING]
    openpmd-viewer reads every field of SERIES (OUT/series.h5) with both
    backends equal to the input series IN (openpmd-api backend); MISSING
    lists fields or field/component not written yet (comma-separated).
usage: readers.py particles IN OUT
    openPMD-api reads every particle species of OUT/series.h5, and each
    species' component in its per-variable file of OUT/relayout.json, equal
    to the input series IN (elements, dtype, constant or not, and the
    species, record and component attributes), for every iteration.
usage: readers.py xarray OUT
    xarray (netCDF-4 engine) opens the group of every dataset of an output
    written with --netcdf and reads the same values as h5py, over named
    dimensions none of which shares a variable's name.
usage: readers.py aligned OUT ALIGN THRESHOLD
    every chunk of at least THRESHOLD bytes of every chunked dataset starts
    at a multiple of ALIGN (h5py's chunk index).
"""
import json
import os
import sys

import h5py
import numpy as np

RECORD = ["unitDimension", "timeOffset", "geometry", "dataOrder", "axisLabels", "gridSpacing",
          "gridGlobalOffset", "gridUnitSI"]
COMPONENT = ["unitSI", "position"]
PRECORD = ["unitDimension", "timeOffset", "macroWeighted", "weightingPower"]  # particle records


def s(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def manifest(out):
    with open(os.path.join(out, "relayout.json")) as fh:
        return json.load(fh)


def check_root(f, where, bad, want_root):
    want = {"openPMD": None, "basePath": "/data/%T/", "iterationEncoding": "groupBased",
            "iterationFormat": "/data/%T/", **{k: v for k, v in want_root.items() if k != "openpmd_input"}}
    for k, v in want.items():
        if k not in f.attrs:
            bad.append(f"{where}: root attribute {k} missing")
        elif v is not None and s(f.attrs[k]) != v:
            bad.append(f"{where}: root attribute {k} = {s(f.attrs[k])!r}, want {v!r}")
    if "openPMDextension" not in f.attrs or f.attrs["openPMDextension"].dtype != np.uint32:
        bad.append(f"{where}: openPMDextension missing or not uint32")
    pp = want_root.get("particlesPath")
    if pp is None and "particlesPath" in f.attrs and not want_root.get("openpmd_input"):
        bad.append(f"{where}: particlesPath without particles or an openPMD input's particlesPath")
    elif pp is not None and s(f.attrs.get("particlesPath", b"")) != pp:
        bad.append(f"{where}: particlesPath {f.attrs.get('particlesPath')!r}, want {pp!r}")
    if "particlesPath" in f.attrs:  # its group in every iteration, possibly empty
        g = s(f.attrs["particlesPath"]).strip("/")
        for it in f["data"]:
            if g not in f["data"][it]:
                bad.append(f"{where}: particlesPath {g!r} but no /data/{it}/{g}")


def input_root(path):
    """The root attributes an output must keep from an openPMD-HDF5 input
    (meshesPath, software); relayout's own for any other input."""
    fn = path
    if os.path.isdir(path):
        fs = sorted(f for f in os.listdir(path) if f.endswith((".h5", ".hdf5")))
        fn = os.path.join(path, fs[0]) if fs else None
    if fn and fn.endswith((".h5", ".hdf5")):
        with h5py.File(fn, "r") as f:
            if "openPMD" in f.attrs:
                return {"meshesPath": s(f.attrs.get("meshesPath", b"meshes/")),
                        "software": s(f.attrs["software"]) if "software" in f.attrs else "relayout",
                        "particlesPath": s(f.attrs["particlesPath"]) if "particlesPath" in f.attrs else None}
    return {"meshesPath": None, "software": None}


def links(out, inp):
    m = manifest(out)
    bad, n = [], 0
    want_root = input_root(inp)
    openpmd_input = m["input"]["format"].startswith("openpmd")
    if any(v.get("species") for v in m["variables"]):
        # particles written: the input's particlesPath (openPMD-HDF5), else
        # whatever one-level name the output chose
        want_root["particlesPath"] = want_root.get("particlesPath") or None
        with h5py.File(os.path.join(out, m["series"]), "r") as f:
            want_root["particlesPath"] = want_root["particlesPath"] or s(f.attrs.get("particlesPath", b"particles/"))
    elif want_root.get("particlesPath") is None:
        want_root.pop("particlesPath", None)
    series = h5py.File(os.path.join(out, m["series"]), "r")
    # an openPMD input's particlesPath is kept, with its (maybe empty) group
    want_root["openpmd_input"] = openpmd_input
    check_root(series, "series.h5", bad, want_root)
    for v in m["variables"]:
        with h5py.File(os.path.join(out, v["file"]), "r") as f:
            check_root(f, v["file"], bad, want_root)
            if v["file"] not in m.get("series_files", []):
                bad.append(f"manifest series_files lacks {v['file']}")
            for d in v["datasets"]:
                p = d["path"]
                link = series.get(p, getlink=True)
                if d["shape"] and 0 not in d["shape"]:
                    # a mesh: a virtual dataset of the whole same-path dataset
                    # of its file (openPMD-api reads VDS, not external links)
                    vs = series[p].virtual_sources() if isinstance(link, h5py.HardLink) and series[p].is_virtual else []
                    if len(vs) != 1 or vs[0].file_name != v["file"] or vs[0].dset_name != p:
                        bad.append(f"series.h5:{p}: {vs!r}, want one virtual source {v['file']}:{p}")
                        continue
                    for k, val in f[p].attrs.items():
                        if k not in series[p].attrs and k != "DIMENSION_LIST":  # --netcdf: per-variable files only
                            bad.append(f"series.h5:{p}: attribute {k} missing")
                elif v.get("species") and d["shape"]:
                    # a particle component without particles: an empty
                    # dataset of its own (openPMD-api reads no external links)
                    if not isinstance(link, h5py.HardLink) or series[p].shape != f[p].shape or series[p].dtype != f[p].dtype:
                        bad.append(f"series.h5:{p}: {link!r}, want an empty dataset like {v['file']}:{p}")
                        continue
                elif not isinstance(link, h5py.ExternalLink) or link.filename != v["file"] or link.path != p:
                    bad.append(f"series.h5:{p}: {link!r}, want an external link to {v['file']}:{p}")
                    continue
                a, b = f[p][()], series[p][()]
                if np.shape(a) != np.shape(b) or not np.array_equal(a, b, equal_nan=f[p].dtype.kind == "f"):
                    bad.append(f"series.h5:{p}: values differ from {v['file']}")
                ds = f[p]
                it = f["/data/%d" % d["step"]]
                for k in ("time", "dt", "timeUnitSI"):
                    if k not in it.attrs or k not in series["/data/%d" % d["step"]].attrs:
                        bad.append(f"{v['file']}: /data/{d['step']} lacks {k}")
                if v.get("species"):
                    # particle record component: record attributes on the record
                    # group (on the dataset of a scalar record), unitSI on the
                    # dataset, no mesh attributes anywhere
                    sp = "/".join(p.split("/")[:5])
                    scalar = ds.parent.name == sp or ds.parent.name == sp + "/particlePatches"
                    rec = ds if scalar else ds.parent
                    for k in PRECORD if "/particlePatches/" not in p else []:
                        if k not in rec.attrs or (not scalar and k in ds.attrs):
                            bad.append(f"{v['file']}:{p}: particle record attribute {k} not (only) on {rec.name}")
                        if k not in series[rec.name].attrs:
                            bad.append(f"series.h5:{rec.name}: particle record attribute {k} missing")
                    if "unitSI" not in ds.attrs or "unitSI" not in series[p].attrs:
                        bad.append(f"{v['file']}:{p}: unitSI missing")
                    for k in RECORD[2:] + ["position"]:
                        if k in ds.attrs or k in rec.attrs:
                            bad.append(f"{v['file']}:{p}: mesh attribute {k} on a particle record")
                elif not d["shape"]:
                    if "/relayout_values/" not in p:
                        bad.append(f"{v['file']}:{p}: a rank-0 value inside the meshes")
                elif "/" in v["name"]:  # vector record: split attributes
                    rec = ds.parent
                    for k in RECORD:
                        if k not in rec.attrs or k in ds.attrs:
                            bad.append(f"{v['file']}:{p}: record attribute {k} not (only) on {rec.name}")
                        if k not in series[rec.name].attrs:
                            bad.append(f"series.h5:{rec.name}: record attribute {k} missing")
                    for k in COMPONENT:
                        if k not in ds.attrs or k in rec.attrs:
                            bad.append(f"{v['file']}:{p}: component attribute {k} not (only) on the dataset")
                else:
                    for k in RECORD + COMPONENT:
                        if k not in ds.attrs:
                            bad.append(f"{v['file']}:{p}: attribute {k} missing on the scalar record")
                n += 1
    for b in bad:
        print("BAD", b)
    print(f"links: {n} datasets read through series.h5, {len(bad)} problems")
    return not bad


def xr_check(out):
    """xarray (netCDF-4 engine) opens the group of every dataset of a --netcdf
    output: the variable has the manifest's shape, no dimension shares its
    name, and every element equals h5py's."""
    import xarray as xr
    m = manifest(out)
    bad, n = [], 0
    for v in m["variables"]:
        fn = os.path.join(out, v["file"])
        for d in v["datasets"]:
            if not d["shape"] or 0 in d["shape"]:
                continue
            grp, name = d["path"].rsplit("/", 1)
            with xr.open_dataset(fn, engine="netcdf4", group=grp) as ds:
                if name not in ds:
                    bad.append(f"{v['file']}:{d['path']}: xarray does not see {name} ({list(ds.variables)})")
                    continue
                da = ds[name]
                with h5py.File(fn, "r") as f:
                    want = f[d["path"]][()]
                if list(da.shape) != d["shape"]:
                    bad.append(f"{v['file']}:{d['path']}: xarray shape {da.shape}, manifest {d['shape']}")
                elif not np.array_equal(da.values, want, equal_nan=want.dtype.kind == "f"):
                    bad.append(f"{v['file']}:{d['path']}: xarray values differ from h5py's")
                if name in da.dims or any(dim.startswith("phony_dim") for dim in da.dims):
                    bad.append(f"{v['file']}:{d['path']}: dimensions {da.dims}")
                n += 1
    for b in bad:
        print("BAD", b)
    print(f"xarray: {n} datasets, {len(bad)} problems")
    return not bad


def viewer(inp, series, missing):
    """openpmd-viewer: get_field on SERIES (OUT/series.h5, h5py and openpmd-api
    backends) equals get_field on the input (openpmd-api backend) for every
    iteration, field and component; those named in MISSING (comma-separated
    "field" or "field/component", not written yet) are only reported."""
    from openpmd_viewer import OpenPMDTimeSeries
    allowed = set(m for m in missing.split(",") if m)
    ti = OpenPMDTimeSeries(inp, backend="openpmd-api", check_all_files=False)
    bad, n = [], 0
    for be in ("h5py", "openpmd-api"):
        to = OpenPMDTimeSeries(series, backend=be, check_all_files=False)
        if list(to.iterations) != list(ti.iterations):
            bad.append(f"{be}: iterations {list(to.iterations)}, input {list(ti.iterations)}")
            continue
        for it in ti.iterations:
            for field in ti.avail_fields:
                meta = ti.fields_metadata[field]
                comps = [None] if meta["type"] == "scalar" else meta["avail_components"]
                for comp in comps:
                    name = field if comp is None else field + "/" + comp
                    if field not in to.avail_fields or (comp is not None and comp not in to.fields_metadata[field]["avail_components"]):
                        if name not in allowed:
                            bad.append(f"{be}: iteration {it}: {name} missing")
                        else:
                            print(f"{be}: iteration {it}: {name} not written (allowed)")
                        continue
                    a, _ = ti.get_field(field, comp, iteration=it)
                    b, _ = to.get_field(field, comp, iteration=it)
                    if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
                        bad.append(f"{be}: iteration {it}: {name} differs")
                    n += 1
        # particles: every record component openpmd-viewer lists
        # (x, y, z, ux, uy, uz, w, id, charge, mass, ...)
        if sorted(to.avail_species or []) != sorted(ti.avail_species or []):
            bad.append(f"{be}: species {to.avail_species}, input {ti.avail_species}")
            continue
        for it in ti.iterations:
            for sp in ti.avail_species or []:
                for rc in ti.avail_record_components[sp]:
                    if rc not in to.avail_record_components[sp]:
                        bad.append(f"{be}: iteration {it}: particle {sp} {rc} missing")
                        continue
                    a, = ti.get_particle([rc], species=sp, iteration=it)
                    b, = to.get_particle([rc], species=sp, iteration=it)
                    if a.shape != b.shape or not np.array_equal(a, b, equal_nan=True):
                        bad.append(f"{be}: iteration {it}: particle {sp} {rc} differs")
                    n += 1
    for b in bad:
        print("BAD", b)
    print(f"viewer: {n} fields and particle components equal, {len(bad)} problems")
    return not bad


def _pmd_attrs(o):
    out = {}
    for k in o.attributes:
        v = o.get_attribute(k)
        out[k] = v.tolist() if isinstance(v, np.ndarray) else v
    return out


def _pmd_species(path):
    """{it: {species: ({var: (array, constant)}, {owner: attrs})}} of an openPMD series
    (owner: "" the species group, else the record or "record/component")."""
    import openpmd_api as io
    s = io.Series(path, io.Access.read_only)
    if s.iteration_encoding == io.Iteration_Encoding.variable_based:
        s.close()
        s = io.Series(path, io.Access.read_linear)
        pairs = ((it.iteration_index, it) for it in s.read_iterations())
    else:
        pairs = list(s.iterations.items())
    out = {}
    for itn, it in pairs:
        d = {}
        for sp, species in it.particles.items():
            vals, attrs = {}, {"": _pmd_attrs(species)}
            for rname, rec in species.items():
                attrs[rname] = _pmd_attrs(rec)
                for cname, rc in rec.items():
                    var = rname if cname == io.Record_Component.SCALAR else rname + "/" + cname
                    if var != rname:
                        attrs[var] = _pmd_attrs(rc)
                    if rc.constant:
                        a = None if 0 in rc.shape else np.full(rc.shape, rc.get_attribute("value"))
                    else:
                        a = rc.load_chunk()
                        s.flush()
                    vals[var] = (a, bool(rc.constant))
            for rname, rec in species.particle_patches.items():
                for cname, rc in rec.items():
                    var = "particlePatches/" + (rname if cname == io.Record_Component.SCALAR else rname + "/" + cname)
                    a = rc.load()
                    s.flush()
                    vals[var] = (a, False)
            d[sp] = (vals, attrs)
        out[itn] = d
        it.close()
    s.close()
    return out


def particles(inp, out):
    want = _pmd_species(inp)
    man = json.load(open(os.path.join(out, "relayout.json")))
    targets = [("series.h5", None)] + [(v["file"], v["name"]) for v in man["variables"] if v.get("species")]
    bad, n = [], 0
    if not any(want[it] for it in want):
        bad.append(f"{inp}: no particle species in the input")
    for fname, only in targets:
        got = _pmd_species(os.path.join(out, fname))
        for itn, species in want.items():
            for sp, (vals, attrs) in species.items():
                g = got.get(itn, {}).get(sp)
                for var, (a, const) in vals.items():
                    name = "particles/%s/%s" % (sp, var)
                    if only is not None and only != name:
                        continue
                    if g is None or var not in g[0]:
                        bad.append(f"{fname}: iteration {itn}: {name} missing")
                        continue
                    b, gconst = g[0][var]
                    if gconst != const:
                        bad.append(f"{fname}: iteration {itn}: {name} constant {gconst}, input {const}")
                    if (a is None) != (b is None) or a is not None and (
                            a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)):
                        bad.append(f"{fname}: iteration {itn}: {name} differs (in {getattr(a, 'dtype', None)} {getattr(a, 'shape', None)}, "
                                   f"out {getattr(b, 'dtype', None)} {getattr(b, 'shape', None)})")
                    elif a is not None:
                        n += a.size
                    rec = var.split("/")[0] if not var.startswith("particlePatches/") else "particlePatches"
                    # attributes of the species, the record and the component
                    for owner in ("", rec, var):
                        for k, v in attrs.get(owner, {}).items():
                            gv = g[1].get(owner, {}).get(k)
                            if gv is None:
                                bad.append(f"{fname}: iteration {itn}: {sp} {owner or '(species)'} attribute {k} missing")
                            elif gv != v:
                                bad.append(f"{fname}: iteration {itn}: {sp} {owner or '(species)'} attribute {k}: in {v!r} out {gv!r}")
    bad = sorted(set(bad))
    for b in bad[:60]:
        print("BAD", b)
    print(f"particles: {len(targets)} files, {n} particle elements equal, {len(bad)} problems")
    return not bad


def pmd(inp, out):
    """openPMD-api reads OUT/series.h5 and every per-variable file: each mesh
    (and constant record) equals the same mesh of the openPMD input IN read by
    openPMD-api (IN "-": the per-variable files are the reference, for inputs
    openPMD-api cannot read, such as AMReX plotfiles), the record and component
    attributes of the input are there, and nothing is left out but what the
    manifest's skipped names. Uses openpmd_gen.py's reader (../shared/peers)."""
    sys.path.insert(0, os.environ["PEERS_DIR"])  # ../shared/peers (testkit.PeersEnv)
    import openpmd_gen
    m = manifest(out)
    series, _ = openpmd_gen.read_series(os.path.join(out, "series.h5"))
    bad, n = [], 0
    if inp != "-":
        want, _ = openpmd_gen.read_series(inp)
    else:
        want = {}
        for v in m["variables"]:
            got, _ = openpmd_gen.read_series(os.path.join(out, v["file"]))
            for it, d in got.items():
                want.setdefault(it, {"meshes": {}, "rec_attrs": {}})["meshes"].update(d["meshes"])
    for it, d in want.items():
        if it not in series:
            bad.append(f"series.h5: iteration {it} missing")
            continue
        for var, (arr, attrs, const) in d["meshes"].items():
            got = series[it]["meshes"].get(var)
            if got is None:
                if not any(var in sk for sk in m.get("skipped", [])):
                    bad.append(f"series.h5: it {it} mesh {var} missing and not in skipped")
                continue
            if arr.shape != got[0].shape or arr.dtype != got[0].dtype or not np.array_equal(arr, got[0], equal_nan=arr.dtype.kind == "f"):
                bad.append(f"series.h5: it {it} {var} differs (in {arr.dtype} {arr.shape}, out {got[0].dtype} {got[0].shape})")
                continue
            for k, val in attrs.items():
                if k not in got[1]:
                    bad.append(f"series.h5: it {it} {var} component attribute {k} missing")
            n += arr.size
        for rec, ra in d.get("rec_attrs", {}).items():
            ga = series[it]["rec_attrs"].get(rec, {})
            for k in ra:
                if k not in ga:
                    bad.append(f"series.h5: it {it} record {rec} attribute {k} missing")
    for b in bad[:40]:
        print("BAD", b)
    print(f"openPMD-api: {n} elements of series.h5 equal the input, {len(bad)} problems")
    return not bad


def yt_load(fn, it):
    import yt
    yt.set_log_level(50)
    ds = yt.load(fn)
    if hasattr(ds, "_pre_outputs"):  # a group-based series
        ds = ds[it]
    return ds


def grid(ds, field):
    return np.asarray(ds.covering_grid(0, ds.domain_left_edge, ds.domain_dimensions)[field])


def yt_compare(out, infile, it, raw):
    db = yt_load(os.path.join(out, "series.h5"), it)
    fields = sorted(f for f in db.field_list if f[0] == "openPMD")
    if not fields:
        print("BAD yt finds no mesh field in series.h5")
        return False
    ok = True
    if raw == "out":
        f = h5py.File(os.path.join(out, "series.h5"), "r")
        meshes = "/data/%d/%s" % (it, s(f.attrs["meshesPath"]).strip("/"))
    elif raw:
        f = h5py.File(infile, "r")
        meshes = "/data/%d/%s" % (it, s(f.attrs["meshesPath"]).strip("/"))
    else:
        da = yt_load(infile, it)
    for fld in fields:
        got = grid(db, fld)
        if raw:
            # yt names a field <record>_<component>, or <record> for a
            # scalar record (whose name may itself hold "_").
            name = fld[1].replace("-", "_")  # yt shows "_" in record names as "-"
            if name in f[meshes]:
                obj = f[meshes][name]
            else:
                rec, _, comp = name.rpartition("_")
                obj = f[meshes][rec][comp]
            want = obj[()] * obj.attrs["unitSI"]
        else:
            want = grid(da, fld)
        same = got.shape == want.shape and np.array_equal(got, want)
        print(("OK " if same else "BAD ") + f"yt {fld[1]} iteration {it}: {got.shape} sum {float(got.sum())!r}")
        ok &= same
    return ok


def aligned(out, align, threshold):
    m = manifest(out)
    bad, n = 0, 0
    for v in m["variables"]:
        with h5py.File(os.path.join(out, v["file"]), "r") as f:
            for d in v["datasets"]:
                ds = f[d["path"]]
                if ds.chunks is None:
                    continue
                for i in range(ds.id.get_num_chunks()):
                    c = ds.id.get_chunk_info(i)
                    if c.size >= threshold:
                        n += 1
                        if c.byte_offset % align:
                            bad += 1
                            print(f"BAD {v['file']}:{d['path']} chunk {c.chunk_offset} at {c.byte_offset}")
    print(f"aligned: {n} chunks of >= {threshold} bytes checked, {bad} misaligned")
    return n > 0 and bad == 0


def main():
    cmd = sys.argv[1]
    if cmd == "pmd":
        ok = pmd(sys.argv[2], sys.argv[3])
    elif cmd == "viewer":
        ok = viewer(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "")
    elif cmd == "particles":
        ok = particles(sys.argv[2], sys.argv[3])
    elif cmd == "xarray":
        ok = xr_check(sys.argv[2])
    elif cmd == "links":
        ok = links(sys.argv[2], sys.argv[3])
    elif cmd in ("yt", "yt-raw"):
        ok = yt_compare(sys.argv[2], sys.argv[3], int(sys.argv[4]), cmd == "yt-raw")
    elif cmd == "yt-out":
        ok = yt_compare(sys.argv[2], None, int(sys.argv[3]), "out")
    elif cmd == "aligned":
        ok = aligned(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(f"unknown command {cmd}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
