"""Check relayout's yt view (GDF) of an AMR output against yt's own reading
of the input plotfile.

Usage: python3 yt_amr.py OUT/view-amr_<step>.gdf PLOTFILE

yt.load of both (yt's gdf and AMReX/boxlib frontends): the same number of
grids and levels, domain and refinement; every grid of the GDF view equals,
element by element, the plotfile's grid at the same level and left edge;
every field dimensionless (a plotfile carries no units); per level the sums
of every field equal the plotfile's, and over the whole
domain (all_data) the values, sorted (all_data's order differs). Prints OK lines; exits 1 with a DIFF line at the first
mismatch.
"""

import sys

import numpy as np
import yt


def fail(msg):
    print("DIFF " + msg)
    sys.exit(1)


def main():
    yt.set_log_level(40)
    a, b = yt.load(sys.argv[1]), yt.load(sys.argv[2])
    if a.index.num_grids != b.index.num_grids or a.index.max_level != b.index.max_level:
        fail("%d grids, %d levels; the plotfile %d, %d" % (a.index.num_grids, a.index.max_level + 1, b.index.num_grids, b.index.max_level + 1))
    if list(a.domain_dimensions) != list(b.domain_dimensions) or a.refine_by != b.refine_by:
        fail("domain %s refined by %s; the plotfile %s by %s" % (a.domain_dimensions, a.refine_by, b.domain_dimensions, b.refine_by))
    for e, f in ((a.domain_left_edge, b.domain_left_edge), (a.domain_right_edge, b.domain_right_edge)):
        if not np.allclose(e.d[: a.dimensionality], f.to("code_length").d[: a.dimensionality], rtol=1e-12):
            fail("domain edge %s, the plotfile's %s" % (e, f))
    fields = sorted(f for t, f in a.field_list)
    pfields = {f for t, f in b.field_list if t == "boxlib"}
    if set(fields) != pfields:
        fail("fields %s, the plotfile's %s" % (fields, sorted(pfields)))
    # A plotfile carries no units: the view says none (yt: dimensionless).
    for f in fields:
        if a.field_info[("gdf", f)].units not in ("", "dimensionless"):
            fail("%s: units %r; the plotfile gives none" % (f, a.field_info[("gdf", f)].units))
    key = lambda g: (int(g.Level), tuple(np.rint(g.LeftEdge.to("code_length").d / g.dds.to("code_length").d).astype(int)))
    pgrids = {key(g): g for g in b.index.grids}
    values = 0
    for g in a.index.grids:
        p = pgrids.get(key(g))
        if p is None or list(p.ActiveDimensions) != list(g.ActiveDimensions):
            fail("grid %d (level %d, %s): no such grid in the plotfile" % (g.id, g.Level, key(g)))
        for f in fields:
            x, y = g[("gdf", f)].d, p[("boxlib", f)].d
            if not np.array_equal(x, y):
                fail("grid %d (level %d) %s differs from the plotfile's" % (g.id, g.Level, f))
            values += x.size
    for f in fields:
        for L in range(a.index.max_level + 1):
            sa = sum(g[("gdf", f)].d.sum() for g in a.index.grids if g.Level == L)
            sb = sum(g[("boxlib", f)].d.sum() for g in b.index.grids if g.Level == L)
            if sa != sb:
                fail("%s level %d: sum %r, the plotfile's %r" % (f, L, sa, sb))
        # The whole domain: the same values (all_data's order differs, so
        # sums may differ in the last bit: compared sorted, then summed).
        x, y = np.sort(a.all_data()[("gdf", f)].d), np.sort(b.all_data()[("boxlib", f)].d)
        if not np.array_equal(x, y):
            fail("%s: whole-domain values differ from the plotfile's (sums %r, %r)" % (f, x.sum(), y.sum()))
    print("OK %s: %d grids on %d levels, %d fields, %d values equal to the plotfile's grids; per-level sums and whole-domain values equal"
          % (sys.argv[1], a.index.num_grids, a.index.max_level + 1, len(fields), values))


main()
