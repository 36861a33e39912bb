"""Independent oracle for BP3 input: ADIOS 1.x's own `bpls` (Debian libadios-bin).

usage: bpls_oracle.py list BP
       bpls_oracle.py compare BP OUT [OUT ...]

list: prints JSON [{name, type, dtype, steps, shape, blocks}] from `bpls -l -D`,
where blocks is the number of blocks at each step and dtype the numpy type string.

compare: dumps every variable with `bpls -d` and checks every dataset listed in
each OUT/relayout.json against it: same shape, same numpy kind and size, every
element equal (NaNs equal); variables with a `value_rule` this script knows (the
ADIOS 1.x writer in testdata/adios1) are also checked against the rule evaluated
here. Prints one line per dataset; exit 1 on any mismatch.
"""
import json
import os
import re
import subprocess
import sys

import h5py
import numpy as np

# bpls type name -> (printf format for one element, numpy type)
TYPES = {
    "byte": ("%d", np.int8), "short": ("%d", np.int16), "integer": ("%d", np.int32), "long": ("%lld", np.int64),
    "unsigned byte": ("%u", np.uint8), "unsigned short": ("%u", np.uint16),
    "unsigned integer": ("%u", np.uint32), "unsigned long": ("%llu", np.uint64),
    "real": ("%.9g", np.float32), "double": ("%.17g", np.float64),
}
HEAD = re.compile(r"^\s+(" + "|".join(sorted(map(re.escape, TYPES), key=len, reverse=True)) +
                  r"|long double|string|complex|double complex)\s+(\S+)\s+(?:(\d+)\*)?(\{[^}]*\}|scalar)")
STEP = re.compile(r"^\s+step\s+(\d+):")
BLOCK = re.compile(r"^\s+block\s+\d+:")

# Value rules of testdata/adios1/write_bp3.py, by variable name.
RULES = {
    "rho": lambda s, i, j, k, NX, NY, NZ: (((s * NX + i) * NY + j) * NZ + k).astype(np.float64),
    "ncell": lambda s, i, j, MX, MY: ((s * MX + i) * MY + j - 7).astype(np.int32),
}


def bpls(*args):
    return subprocess.run(["bpls", *args], check=True, capture_output=True, text=True).stdout


def listing(bp):
    out, cur = [], None
    for line in bpls("-l", "-D", bp).splitlines():
        m = HEAD.match(line)
        if m:
            typ, name, nsteps, dims = m.groups()
            shape = [] if dims == "scalar" else [int(x) for x in dims.strip("{}").split(",") if x.strip()]
            cur = {"name": name, "type": typ, "dtype": np.dtype(TYPES[typ][1]).str if typ in TYPES else "",
                   "steps": int(nsteps or 1), "shape": shape, "blocks": []}
            out.append(cur)
        elif cur is not None and STEP.match(line):
            cur["blocks"].append(0)
        elif cur is not None and BLOCK.match(line):
            if not cur["blocks"]:  # single-step variables list blocks without a step line
                cur["blocks"].append(0)
            cur["blocks"][-1] += 1
    return out


def dump(bp, v):
    """Every element of variable v, shape (steps, *shape)."""
    fmt, typ = TYPES[v["type"]]
    lines = bpls("-d", "-n", "1", "-y", "-f", fmt, bp, v["name"]).splitlines()
    vals = [l.strip() for l in lines[1:] if l.strip()]  # line 0 repeats the listing
    want = v["steps"] * int(np.prod(v["shape"], dtype=np.int64))
    if len(vals) != want:
        raise SystemExit("bpls -d %s: %d values, want %d" % (v["name"], len(vals), want))
    conv = float if np.dtype(typ).kind == "f" else int
    return np.array([conv(x) for x in vals], dtype=typ).reshape([v["steps"]] + v["shape"])


def rule(name, step, shape):
    idx = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    return RULES[name](step, *idx, *shape)


def compare(bp, outs):
    vars_ = {v["name"].lstrip("/"): v for v in listing(bp)}
    cache, bad, n = {}, 0, 0
    for name, v in vars_.items():
        if name in RULES:  # the writer itself obeyed its rule, as ADIOS reads it back
            got = dump(bp, v)
            cache[name] = got
            for s in range(v["steps"]):
                if not np.array_equal(got[s], rule(name, s, v["shape"])):
                    print("BAD  bpls %s step %d differs from its value_rule" % (name, s))
                    bad += 1
    for out in outs:
        m = json.load(open(os.path.join(out, "relayout.json")))
        for mv in m["variables"]:
            v = vars_.get(mv["name"].lstrip("/"))
            if v is None or v["type"] not in TYPES:
                print("BAD  %s: %s not a numeric variable in bpls" % (out, mv["name"]))
                bad += 1
                continue
            if mv["name"] not in cache:
                cache[mv["name"]] = dump(bp, v)
            ref = cache[mv["name"]]
            with h5py.File(os.path.join(out, mv["file"]), "r") as f:
                for d in mv["datasets"]:
                    s = d["step"]
                    got = f[d["path"]][()]
                    what = "%s %s step %d" % (os.path.basename(out), mv["name"], s)
                    if not 0 <= s < v["steps"]:
                        print("BAD  %s: bpls has %d steps" % (what, v["steps"]))
                        bad += 1
                        continue
                    want = ref[s]
                    if got.dtype.kind != want.dtype.kind or got.dtype.itemsize != want.dtype.itemsize:
                        print("BAD  %s: dtype %s, bpls %s" % (what, got.dtype, want.dtype))
                        bad += 1
                    elif got.shape != want.shape:
                        print("BAD  %s: shape %s, bpls %s" % (what, got.shape, want.shape))
                        bad += 1
                    elif not np.array_equal(got, want, equal_nan=want.dtype.kind == "f"):
                        at = np.argwhere(got != want)[0]
                        print("BAD  %s at %s: out=%s bpls=%s (%d elements differ)" % (
                            what, list(at), got[tuple(at)], want[tuple(at)], int((got != want).sum())))
                        bad += 1
                    else:
                        ok = ""
                        if mv["name"] in RULES:
                            if not np.array_equal(got, rule(mv["name"], s, list(got.shape))):
                                print("BAD  %s: differs from value_rule" % what)
                                bad += 1
                                continue
                            ok = ", value_rule ok"
                        print("OK   %s %s %d elements = bpls -d%s" % (what, got.dtype, got.size, ok))
                        n += 1
    if bad or not n:
        sys.exit(1)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "list":
        json.dump(listing(sys.argv[2]), sys.stdout)
    elif len(sys.argv) >= 4 and sys.argv[1] == "compare":
        compare(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
